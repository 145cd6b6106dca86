"""What a running profile keeps, in explicit pieces: its clocks, its steps, its waits for input,
the loop's habits inside the steps and the warm-step probe's times. The modules that read them
(habits, advice, outputs, the watchdog, the run's figures) take the piece they need, not the
profile."""

from __future__ import annotations

import collections
import dataclasses
import os
from typing import Any, Optional

from .. import _native


@dataclasses.dataclass
class Clock:
    """The run's wall and CPU clocks (the recorder's ns; the process's CPU ns)."""

    entered_ns: int = 0
    entered_cpu_ns: int = 0
    exited_ns: int = 0
    exited_cpu_ns: int = 0
    # The machine's busy CPU time on the cores the process may run on, every process's
    # (machine_busy_ns(); -1: unknown).
    entered_machine_ns: int = -1
    exited_machine_ns: int = -1

    def wall_ns(self) -> int:
        """The run's wall time: from the profile's start to its exit (0 before the exit)."""
        return self.exited_ns - self.entered_ns if self.exited_ns else 0


def machine_busy_ns() -> int:
    """The CPU time the cores this process may run on have spent busy since boot, every
    process's (user, nice, system, irq, softirq, steal in /proc/stat), in ns; -1 where it cannot
    be read."""
    try:
        allowed = os.sched_getaffinity(0)
        ticks = 0
        with open("/proc/stat") as f:
            for line in f:
                if not (line.startswith("cpu") and line[3:4].isdigit()):
                    continue
                name, *fields = line.split()
                if int(name[3:]) in allowed:
                    user, nice, system, _idle, _iowait, irq, softirq, steal = map(int, fields[:8])
                    ticks += user + nice + system + irq + softirq + steal
        return ticks * 1_000_000_000 // os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, AttributeError):
        return -1


@dataclasses.dataclass
class Steps:
    """The loop's steps: marked ones (``prof.step()``) and implicit ones (from a batch to the
    next request for input), with the time they were busy."""

    marked: int = 0
    implicit: int = 0
    # The last timed batch's arrival, while its implicit step is open (no request since).
    begin: Optional[int] = None
    marked_at_batch: int = 0  # `marked` when the last batch arrived: none since, it is implicit
    depth: int = 0  # inside `with prof.step()`
    busy_ns: int = 0  # the steps' wall time, marked and implicit

    def inside(self) -> bool:
        """Inside a marked step, or inside an implicit one (a batch arrived, no step marked)."""
        return self.depth > 0 or (self.begin is not None and self.marked == self.marked_at_batch)

    @property
    def count(self) -> int:
        return self.marked + self.implicit


LOADER_KEY = -1  # Waits.input_key while a gpufeed.Loader's batch is awaited


@dataclasses.dataclass
class Waits:
    """The loop's waits for input and the batches they brought."""

    batches: int = 0
    samples: int = 0  # the first dimension of each batch's images
    wait_ns: int = 0
    wait_cpu_ns: int = 0  # the process's CPU time in the waits (loading, unpickling)
    since: Optional[int] = None  # when the wait in progress began (the stall watchdog reads it)
    input_key: Optional[int] = None  # the DataLoader waited for (or the last one), if any
    exhausted: bool = False  # the last request for input ended its iteration (StopIteration)
    last_batch: Any = None  # moving its tensors is expected
    last_storages: Optional[set] = None  # found only when a host tensor is moved
    # The batch before it, while the step runs: a DataLoader's batch from its workers lives in
    # shared memory, and releasing it (unmapping it, closing its file) took 0.16 ms of a 1.5 ms
    # step. Held until the next wait for input releases it, it is the input's cost, not the
    # step's (a batch on a CUDA device is never held: its memory is the device's).
    previous_batch: Any = None


@dataclasses.dataclass
class Habits:
    """What the loop did inside its steps: {(file, line, method): count} of host reads and of
    host tensors moved to the device, empty_cache calls, a DataParallel forward, and what the
    module forwards showed. Counts made inside an implicit step wait in `pending` until a
    request for input closes it: the code after a loop's last batch (a teardown's `.cpu()`)
    is not a step."""

    host_reads: dict = dataclasses.field(default_factory=dict)
    host_moves: dict = dataclasses.field(default_factory=dict)
    empty_cache_calls: int = 0
    data_parallel: bool = False
    forwards: Any = dataclasses.field(default_factory=lambda: _native.LoopHabits())
    pending: list = dataclasses.field(default_factory=list)  # (counts, key) of an open step

    def count(self, counts: dict, key: tuple, marked: bool) -> None:
        if marked:
            counts[key] = counts.get(key, 0) + 1
        else:
            self.pending.append((counts, key))

    def commit(self) -> None:
        """The implicit step was one: its counts are the loop's."""
        for counts, key in self.pending:
            counts[key] = counts.get(key, 0) + 1
        self.pending.clear()


@dataclasses.dataclass
class Probes:
    """The warm-step probe (probe.py): the number of the batch a probe held, once delivered,
    and the step times on such batches per DataLoader (the latest few hundred: a median)."""

    KEPT = 256
    warm_batch: int = -1
    warm_steps: dict = dataclasses.field(default_factory=dict)  # id(DataLoader) -> deque

    def add(self, key: Optional[int], ns: int) -> None:
        times = self.warm_steps.get(key)
        if times is None:
            times = self.warm_steps[key] = collections.deque(maxlen=self.KEPT)
        times.append(ns)
