"""What a finished profile writes and says: its output files (the HTML report with the run
plotted over time, run_plot.py), the summary's lines on the inputs it timed, the run's trend,
its stalls and its dead workers, and its results as data (the native diagnosis's JSON with the
timed inputs, the host reads and moves, the run's windows and epochs, the stalls, the deaths
and the profile's own notes added)."""

from __future__ import annotations

import json as _json
import os
from typing import Any

from .. import _native
from .habits import sites
from .run_plot import add_run_section


def write_outputs(prof: Any) -> None:
    """Writes profile `prof`'s trace, report and JSON where it was asked to (each rank's own)."""
    report = prof._report
    paths = {what: None if path is None else
             _native.per_rank_path(path, prof._rank, prof._world_size)
             for what, path in prof._outputs.items()}
    if paths["trace"]:
        report.write_trace(paths["trace"])
    if paths["report"]:
        report.write_report(paths["report"])
        add_run_section(paths["report"], prof._run_facts())
    if paths["json"]:
        path = paths["json"]
        temporary = f"{path}.tmp.{os.getpid()}"
        with open(temporary, "w") as f:
            f.write(_json.dumps(results(prof, report), indent=2) + "\n")
        os.replace(temporary, path)


def input_line(prof: Any) -> str:
    """The summary's line on the timed inputs: the DataLoaders, with their batches and what
    they fed when there are several, and the fetches of the one diagnosed."""
    def name(i: dict) -> str:
        return f"DataLoader(num_workers={i['num_workers']}, batch_size={i['batch_size']})"

    inputs = list(prof._dataloaders.facts.values())
    if len(inputs) <= 1:
        source = name(inputs[0]) if inputs else "prof.input()"
        sources = f"{prof.waits.batches} batches from {source}"
    else:
        parts = []
        for i in inputs:
            notes = ", ".join(n for n in (i["role"], i["diagnosed"] and "diagnosed") if n)
            parts.append(f"{i['batches']} from {name(i)}" + (f" ({notes})" if notes else ""))
        sources = f"{prof.waits.batches} batches: {', '.join(parts)}"
    fed = next((i for i in inputs if i["diagnosed"]), None)
    f = fed["fetch"] if fed is not None else None
    inside = "its work inside is not seen"
    if f and f["samples"]:
        item_ms = (f["fetch_ns"] - f["collate_ns"]) / f["samples"] * 1e-6
        collate_ms = f["collate_ns"] / f["batches"] * 1e-6
        whose = "its" if len(inputs) <= 1 else "the diagnosed one's"
        inside = (f"{whose} fetches: {item_ms:.2f} ms a sample in the dataset, "
                  f"{collate_ms:.2f} ms a batch in collate_fn")
    return f"input       {sources}, each next() timed as a wait for input; {inside}\n"


def fed_samples(prof: Any) -> int:
    """The samples of the batches that fed the training steps: the diagnosed DataLoader's (a
    validation loader's are not the loop's throughput), else every timed batch's."""
    fed = next((i for i in prof._dataloaders.facts.values() if i["diagnosed"]), None)
    return fed["samples"] if fed is not None and fed["samples"] else prof.waits.samples


def results(prof: Any, report: _native.ProfileReport) -> dict:
    """Profile `prof`'s results from its finished `report`, as the JSON object
    (gpufeed.profile.results() is its ProfileResults)."""
    out = _json.loads(report.json())
    out["inputs"] = list(prof._dataloaders.facts.values())
    out["timed_batches"] = prof.waits.batches
    samples = fed_samples(prof)
    if not out.get("samples") and samples:
        # No gpufeed.Loader counted them: the timed inputs' batches did, over the profile.
        wall_s = prof.clock.wall_ns() * 1e-9
        out["samples"] = samples
        out["wall_s"] = wall_s
        out["samples_per_s"] = samples / wall_s if wall_s > 0 else 0.0
    steps = out.get("steps") or 0
    habits = prof.habits
    for key, counts in (("host_reads", habits.host_reads),
                        ("host_tensor_moves", habits.host_moves)):
        found = sites(counts)
        out[key] = {
            "count": sum(s["count"] for s in found),
            "per_step": sum(s["count"] for s in found) / steps if steps else None,
            "sites": found,
        }
    out.update(prof._run_facts())
    return out


def run_lines(facts: dict) -> str:
    """The summary's lines on the run as a whole: its trends, its stalls, its dead workers and
    what the profile could not watch."""
    lines = [t["text"] for t in facts["run"]["trends"]]
    for stall in facts["stalls"]:
        lines.append(f"stall       no batch for {stall['waited_s']:.0f} s (see the report "
                     "printed then, kept in results().stalls)")
    for death in facts["worker_deaths"]:
        lines.append("worker      " + death["notes"][0].replace("gpufeed.profile: ", ""))
    lines += [f"note        {note}" for note in facts["notes"]]
    return "".join(line + "\n" for line in lines)
