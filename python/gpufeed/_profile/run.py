"""A run, not a window: the loop's figures over its whole run, in bounded memory. Windows of time
(at most MAX_WINDOWS: when full, neighbours merge and windows last twice as long) and epochs
(each input's, ended by its StopIteration) each hold the input wait, the steps' busy time,
samples/s and each input stage's cost, taken as differences of running totals at their ends
(nothing is kept per batch). A trend is input wait or a stage's cost growing epoch after
epoch, named with the stage."""

from __future__ import annotations

import dataclasses
from typing import Optional

MAX_WINDOWS = 256
MAX_EPOCHS = 1024


@dataclasses.dataclass
class Totals:
    """Running totals of a run at one moment (the recorder's ns)."""

    at_ns: int = 0
    steps: int = 0
    busy_ns: int = 0
    batches: int = 0
    samples: int = 0
    wait_ns: int = 0
    stage_ns: dict = dataclasses.field(default_factory=dict)  # stage -> busy ns so far
    stage_samples: int = 0  # samples the stages' times are for

    def minus(self, earlier: "Totals") -> "Figures":
        return Figures(
            earlier.at_ns, self.at_ns, self.steps - earlier.steps,
            self.busy_ns - earlier.busy_ns, self.batches - earlier.batches,
            self.samples - earlier.samples, self.wait_ns - earlier.wait_ns,
            {k: v - earlier.stage_ns.get(k, 0) for k, v in self.stage_ns.items()},
            self.stage_samples - earlier.stage_samples)


@dataclasses.dataclass
class Figures:
    """One window or one epoch of the run."""

    begin_ns: int
    end_ns: int
    steps: int
    busy_ns: int
    batches: int
    samples: int
    wait_ns: int
    stage_ns: dict
    stage_samples: int

    @property
    def wall_s(self) -> float:
        return max(0, self.end_ns - self.begin_ns) * 1e-9

    def share(self, ns: int) -> float:
        wall = self.end_ns - self.begin_ns
        return min(1.0, ns / wall) if wall > 0 else 0.0

    def samples_per_s(self) -> float:
        return self.samples / self.wall_s if self.wall_s > 0 else 0.0

    def stage_ms(self) -> dict:
        """Each stage's cost a sample (ms), where its samples were counted."""
        if self.stage_samples <= 0:
            return {}
        return {k: v * 1e-6 / self.stage_samples for k, v in self.stage_ns.items()}

    def merged(self, later: "Figures") -> "Figures":
        stages = dict(self.stage_ns)
        for k, v in later.stage_ns.items():
            stages[k] = stages.get(k, 0) + v
        return Figures(self.begin_ns, later.end_ns, self.steps + later.steps,
                       self.busy_ns + later.busy_ns, self.batches + later.batches,
                       self.samples + later.samples, self.wait_ns + later.wait_ns, stages,
                       self.stage_samples + later.stage_samples)

    def as_dict(self, start_ns: int) -> dict:
        return {"begin_s": (self.begin_ns - start_ns) * 1e-9,
                "end_s": (self.end_ns - start_ns) * 1e-9, "steps": self.steps,
                "batches": self.batches, "samples": self.samples,
                "samples_per_s": self.samples_per_s(), "input_wait": self.share(self.wait_ns),
                "steps_busy": self.share(self.busy_ns),
                "stage_ms_per_sample": self.stage_ms()}


class Series:
    """Figures in order, at most `limit`: when full, neighbours merge in pairs."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.items: list = []
        self.merges = 0  # how often the series halved: each item spans 2**merges of the first

    def add(self, figures: Figures) -> None:
        self.items.append(figures)
        if len(self.items) >= self.limit:
            items = self.items
            self.items = [items[i].merged(items[i + 1]) if i + 1 < len(items) else items[i]
                          for i in range(0, len(items), 2)]
            self.merges += 1


@dataclasses.dataclass
class Trend:
    """A figure that grew epoch after epoch: what, in which stage, its values."""

    what: str  # "stage" or "input_wait"
    stage: Optional[str]
    values: list
    unit: str

    def text(self) -> str:
        shown = ", ".join(_value(v, self.unit) for v in self.values[-8:])
        ratio = self.values[-1] / self.values[0] if self.values[0] > 0 else float("inf")
        if self.what == "stage":
            return (f"trend       {self.stage}'s cost a sample grew epoch after epoch: {shown} "
                    f"({ratio:.1f}x in {len(self.values)} epochs): a leak, an evicted cache or "
                    "a throttled store in that stage")
        return (f"trend       input wait grew epoch after epoch: {shown} ({ratio:.1f}x in "
                f"{len(self.values)} epochs)")

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


def _value(v: float, unit: str) -> str:
    return f"{v * 100:.0f}%" if unit == "share" else f"{v:.2f} {unit}"


def _grows(values: list) -> bool:
    """At least three epochs, each mostly above the one before (one dip allowed), and the
    last at least 1.5 times the first."""
    if len(values) < 3 or values[0] <= 0:
        return False
    rises = sum(b > a * 1.02 for a, b in zip(values, values[1:]))
    return rises >= len(values) - 2 and values[-1] >= 1.5 * values[0]


# A stage's growth is named only where it matters to the run: what it added a sample is at least
# this share of the last epoch's wall time a sample (a collate that went from 0.014 to 0.023 ms
# beside 1.3 ms a sample grew by half, and changed nothing).
MIN_GROWTH_SHARE = 0.05


def trends(epochs: list) -> list:
    """The trends of a run's epochs (Figures of one input, the first epoch aside when there
    are enough: it pays the start-up)."""
    epochs = epochs[1:] if len(epochs) > 3 else epochs
    found = []
    stages = sorted({k for e in epochs for k in e.stage_ns})
    last = epochs[-1] if epochs else None
    wall_ms_a_sample = (last.wall_s * 1e3 / last.samples) if last and last.samples else 0.0
    for stage in stages:
        values = [e.stage_ms().get(stage, 0.0) for e in epochs]
        if _grows(values) and values[-1] - values[0] >= MIN_GROWTH_SHARE * wall_ms_a_sample:
            found.append(Trend("stage", stage, values, "ms"))
    waits = [e.share(e.wait_ns) for e in epochs]
    if _grows(waits) and waits[-1] >= 0.05:
        found.append(Trend("input_wait", None, waits, "share"))
    return found
