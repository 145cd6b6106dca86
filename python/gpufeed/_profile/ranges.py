"""The ranges a profile records from Python (``prof.step()``, ``prof.sync()``), and where CUPTI
is found when no CUDA toolkit is installed (PyTorch's nvidia wheels)."""

from __future__ import annotations

import os
import sys
from typing import Any

from .. import _native


_cupti_searched = False


def add_cupti_directories() -> None:
    """Once a process: the directories of PyTorch's nvidia wheels that hold CUPTI
    (nvidia/<package>/lib/libcupti.so.*), for the native profiler to load it from when no CUDA
    toolkit is installed."""
    global _cupti_searched
    if _cupti_searched:
        return
    _cupti_searched = True
    import glob

    for entry in sys.path:
        for library in sorted(glob.glob(os.path.join(entry or ".", "nvidia", "*", "lib",
                                                     "libcupti.so*"))):
            _native.add_cupti_directory(os.path.dirname(library))


class _Range:
    """`with`: records one range of a registered name on the calling thread."""

    __slots__ = ("_native", "_name", "_index", "_begin")

    def __init__(self, native: _native.Profile, name: int, index: int) -> None:
        self._native = native
        self._name = name
        self._index = index
        self._begin = 0

    def __enter__(self) -> "_Range":
        self._begin = _native.now_ns()
        return self

    def __exit__(self, *exc: object) -> None:
        self._native.record(self._name, self._begin, _native.now_ns(), self._index)


class _StepRange(_Range):
    """``with prof.step():``: a "step" range, during which the profile counts the loop's
    habits (host reads of tensors) as the step's."""

    __slots__ = ("_prof",)

    def __init__(self, prof: Any, native: _native.Profile, name: int, index: int) -> None:
        super().__init__(native, name, index)
        self._prof = prof

    def __enter__(self) -> "_StepRange":
        self._prof.steps.depth += 1
        super().__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        end = _native.now_ns()
        super().__exit__(*exc)
        prof = self._prof
        steps = prof.steps
        steps.depth -= 1
        steps.busy_ns += end - self._begin
        if prof.probes.warm_batch == prof.waits.batches and self._index == steps.marked_at_batch:
            prof._warm_step(end - self._begin)  # the first step on a probe's batch


