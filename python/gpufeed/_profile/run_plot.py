"""The HTML report's view of the whole run (the native report shows its steady-state window): the
run's windows plotted over time (input wait and steps busy as shares, samples/s), its epochs'
trends, its stalls and its dead workers, as a section added before the page's end. Plain SVG in
the page, as the native report's plots are: it opens anywhere, offline."""

from __future__ import annotations

import html
import os

_WIDTH, _HEIGHT, _PAD = 900, 180, 40
_COLORS = {"input_wait": "#e4572e", "steps_busy": "#2e86ab", "samples_per_s": "#3bb273"}


def _polyline(points: list, color: str) -> str:
    path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    return f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{path}"/>'


def _plot(windows: list, keys: tuple, top: float, unit: str) -> str:
    """An SVG of `keys` of each window against the run's time, 0 to `top`."""
    end = max((w["end_s"] for w in windows), default=0.0) or 1.0
    inner_w, inner_h = _WIDTH - 2 * _PAD, _HEIGHT - 2 * _PAD

    def xy(t: float, value: float) -> tuple:
        return (_PAD + inner_w * t / end,
                _HEIGHT - _PAD - inner_h * min(1.0, value / top if top > 0 else 0.0))

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_WIDTH}" height="{_HEIGHT}" '
             f'viewBox="0 0 {_WIDTH} {_HEIGHT}" role="img">',
             f'<rect x="{_PAD}" y="{_PAD}" width="{inner_w}" height="{inner_h}" fill="#f7f7f7" '
             'stroke="#ccc"/>']
    for key in keys:
        points = [xy((w["begin_s"] + w["end_s"]) / 2, w[key]) for w in windows]
        parts.append(_polyline(points, _COLORS[key]))
    label = f"{top * 100:.0f}%" if unit == "share" else f"{top:.0f} samples/s"
    parts += [f'<text x="2" y="{_PAD + 4}" font-size="11">{label}</text>',
              f'<text x="2" y="{_HEIGHT - _PAD}" font-size="11">0</text>',
              f'<text x="{_WIDTH - _PAD}" y="{_HEIGHT - 8}" font-size="11" '
              f'text-anchor="end">{end:.1f} s</text>', "</svg>"]
    return "".join(parts)


def _legend(keys: tuple) -> str:
    names = {"input_wait": "input wait", "steps_busy": "steps busy",
             "samples_per_s": "samples/s"}
    return '<p class="legend">' + "".join(
        f'<span><i class="sw" style="background:{_COLORS[k]}"></i>{names[k]} </span>'
        for k in keys) + "</p>"


def run_section(facts: dict) -> str:
    """The section's HTML from the profile's run facts (results()' "run", "stalls", ...)."""
    run = facts["run"]
    windows = run["windows"]
    out = ["<h2>The whole run over time</h2>"]
    if windows:
        out.append(f"<p>{len(windows)} windows of {run['window_s']:g} s over "
                   f"{windows[-1]['end_s']:.1f} s; the shares are of each window's time.</p>")
        out += [_plot(windows, ("input_wait", "steps_busy"), 1.0, "share"),
                _legend(("input_wait", "steps_busy"))]
        top = max(w["samples_per_s"] for w in windows) * 1.1
        out += [_plot(windows, ("samples_per_s",), top, "rate"), _legend(("samples_per_s",))]
    else:
        out.append("<p>No window of the run was recorded.</p>")
    for trend in run["trends"]:
        out.append(f'<p class="warn">{html.escape(trend["text"].split(None, 1)[1])}</p>')
    for stall in facts["stalls"]:
        out.append(f"<h3>Stall: no batch for {stall['waited_s']:.0f} s</h3>"
                   f"<pre>{html.escape(stall['text'])}</pre>")
    for death in facts["worker_deaths"]:
        out.append("<h3>A DataLoader worker died</h3><pre>" +
                   html.escape("\n".join(death["notes"])) + "</pre>")
    for note in facts["notes"]:
        out.append(f'<p class="warn">note: {html.escape(note)}</p>')
    return "".join(out)


def add_run_section(path: str, facts: dict) -> None:
    """Adds the run's section to the report written at `path` (replaced atomically)."""
    with open(path, encoding="utf-8") as f:
        page = f.read()
    at = page.rfind("</body>")
    if at < 0:
        return
    page = page[:at] + run_section(facts) + page[at:]
    temporary = f"{path}.tmp.{os.getpid()}"
    with open(temporary, "w", encoding="utf-8") as f:
        f.write(page)
    os.replace(temporary, path)
