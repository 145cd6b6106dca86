"""The run's figures as the loop goes: windows and epochs kept (run.py) and, with
``gpufeed.profile(every=...)``, one line a period on stderr (what a long job's log needs), the
same figures handed to a callback and to a TensorBoard ``SummaryWriter``. All of it happens on the
loop's own thread when a batch arrives and something is due: a comparison a batch otherwise."""

from __future__ import annotations

import dataclasses
import sys
from typing import Any, Callable, Optional

from .run import MAX_EPOCHS, MAX_WINDOWS, Figures, Series, Totals

FIRST_WINDOW_S = 1.0


@dataclasses.dataclass(frozen=True)
class LiveFigures:
    """One period of a running loop, as ``every=`` prints it and a callback receives it."""

    elapsed_s: float
    steps: int
    steps_busy: float  # the share of the period inside steps: utilization on a CPU loop
    input_wait: float  # the share of the period waiting for input
    samples_per_s: float
    worst_stage: Optional[str]  # the input stage that cost most a sample, if the input has any
    worst_stage_ms: float  # its cost a sample (ms)

    def line(self) -> str:
        elapsed = int(self.elapsed_s)
        clock = f"{elapsed // 3600}:{elapsed // 60 % 60:02d}:{elapsed % 60:02d}"
        stage = (f"  worst stage {self.worst_stage} {self.worst_stage_ms:.2f} ms a sample"
                 if self.worst_stage else "")
        return (f"gpufeed {clock}  step {self.steps}  steps busy {self.steps_busy:.0%}  "
                f"input wait {self.input_wait:.0%}  {self.samples_per_s:.0f} samples/s{stage}")

    def scalars(self) -> dict:
        """The figures as TensorBoard scalars (their tags without the "gpufeed/" prefix)."""
        out = {"steps_busy": self.steps_busy, "input_wait": self.input_wait,
               "samples_per_s": self.samples_per_s}
        if self.worst_stage:
            out[f"stage_ms/{self.worst_stage}"] = self.worst_stage_ms
        return out


def live_figures(figures: Figures, elapsed_s: float, steps: int) -> LiveFigures:
    costs = figures.stage_ms()
    worst = max(costs, key=costs.get) if costs else None
    return LiveFigures(elapsed_s, steps, figures.share(figures.busy_ns),
                       figures.share(figures.wait_ns), figures.samples_per_s(), worst,
                       costs.get(worst, 0.0) if worst else 0.0)


class RunRecord:
    """The windows and epochs of a run, and the live output. `totals(now, key)` gives the running
    totals (of input `key`'s waits and samples, or all inputs' with None)."""

    def __init__(self, totals: Callable[[int, Any], Totals], start_ns: int,
                 every: Optional[float], callback: Optional[Callable],
                 tensorboard: Any) -> None:
        self._totals = totals
        self.start_ns = start_ns
        self.windows = Series(MAX_WINDOWS)
        self.epochs: dict = {}  # input key -> Series of its epochs
        self._window_s = FIRST_WINDOW_S
        self._window = totals(start_ns, None)
        self._epoch_start: dict = {}  # input key -> its totals when its epoch began
        self._every_ns = int(every * 1e9) if every else 0
        self._callback = callback
        self._tensorboard = tensorboard
        self._live = self._window
        self.live_failures: list = []
        self.due = self._next_due(start_ns)

    @property
    def window_seconds(self) -> float:
        return self._window_s

    def _next_due(self, now: int) -> int:
        window_end = self._window.at_ns + int(self._window_s * 1e9)
        live = self._live.at_ns + self._every_ns if self._every_ns else window_end
        return max(now, min(window_end, live))

    def tick(self, now: int) -> None:
        """Something is due at `now` (a batch arrived at or after `due`)."""
        totals = self._totals(now, None)
        if now >= self._window.at_ns + int(self._window_s * 1e9):
            self.windows.add(totals.minus(self._window))
            self._window_s = FIRST_WINDOW_S * 2 ** self.windows.merges
            self._window = totals
        if self._every_ns and now >= self._live.at_ns + self._every_ns:
            self._emit(live_figures(totals.minus(self._live), (now - self.start_ns) * 1e-9,
                                    totals.steps))
            self._live = totals
        self.due = self._next_due(now)

    def epoch_start(self, key: Any, now: int) -> None:
        if key not in self._epoch_start:
            self._epoch_start[key] = self._totals(now, key)

    def epoch_end(self, key: Any, now: int) -> None:
        """Input `key` ended an epoch (its iterator's StopIteration)."""
        start = self._epoch_start.pop(key, None)
        if start is None:
            return
        figures = self._totals(now, key).minus(start)
        if figures.batches:
            self.epochs.setdefault(key, Series(MAX_EPOCHS)).add(figures)

    def finish(self, now: int) -> None:
        """The run ended: its last window is kept."""
        totals = self._totals(now, None)
        if totals.at_ns > self._window.at_ns:
            self.windows.add(totals.minus(self._window))

    def _emit(self, figures: LiveFigures) -> None:
        print(figures.line(), file=sys.stderr, flush=True)
        if self._tensorboard is not None:
            for tag, value in figures.scalars().items():
                self._tensorboard.add_scalar(f"gpufeed/{tag}", value, figures.steps)
        if self._callback is not None:
            try:
                self._callback(figures)
            except Exception as error:  # noqa: BLE001 - said once; the loop goes on without it
                self._callback = None
                self.live_failures.append(f"the callback raised {type(error).__name__}: {error}; "
                                          "it is not called again")
                print(f"gpufeed.profile: {self.live_failures[-1]}", file=sys.stderr)

