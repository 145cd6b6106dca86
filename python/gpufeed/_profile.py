"""gpufeed.profile: the diagnosis pipebench makes of its runs, made of a Python training loop."""

from __future__ import annotations

import json as _json
import os
import sys
import threading
from typing import Any, Optional, Union

from . import _native

PathLike = Union[str, "os.PathLike[str]"]

_active: Optional["profile"] = None
_active_lock = threading.Lock()


def note_input(source: Any) -> None:
    """Called by an input source (every gpufeed.Loader) when it is made or starts an epoch: the
    running profile, if any, takes the input side's facts (workers, prefetch, stage counters)
    from the sources it sees. A source implements the input protocol:
    ``__gpufeed_counters__()`` (a snapshot of its counters, taken when the profile first sees
    it) and ``__gpufeed_facts__(since)`` (its settings and its counters since that snapshot),
    plus ``stats()["samples"]`` and ``closed``."""
    current = profile.current()
    if current is not None:
        current._see(source)


def _job_place(torch: Any) -> tuple:
    """(rank, world_size) of this process in a distributed job, or (-1, 0)."""
    distributed = getattr(torch, "distributed", None) if torch is not None else None
    if distributed is not None and distributed.is_available() and distributed.is_initialized():
        return distributed.get_rank(), distributed.get_world_size()
    try:
        rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    except (KeyError, ValueError):
        return -1, 0
    return (rank, world) if world > 1 else (-1, 0)


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


class profile:
    """Records a training loop and diagnoses it as pipebench does: device utilization, idle
    time by cause (waiting for input, host syncs, launch overhead, other), the verdict, the
    loader stage that holds it back, recommendations with their predicted effect, and the
    practice checks.

        with gpufeed.profile(report="run.html", trace="run.json", json="run.profile.json") as prof:
            for images, labels in loader.epoch(0):
                with prof.step():
                    loss = train_step(images, labels)
        print(prof.summary())

    Mark each training step with ``prof.step()``: the steps are what utilization is measured
    against (on a CUDA device CUPTI's kernel records are, and the steps set the window). On a
    CUDA device CUPTI also sees host syncs (``.item()``, ``.cpu()``, ``synchronize``) and
    launches by itself; ``prof.sync()`` marks a sync of your own. The gpufeed.Loader seen
    during the profile (the busiest, if several) supplies the input side. ``trace`` opens in
    Perfetto, ``pipebench analyze`` reads it too. The outputs are written when the block ends,
    also when it ends with an exception (Ctrl-C included).

    In a job of several ranks (torch.distributed initialized, or RANK/WORLD_SIZE set) each
    rank writes its own files: "{rank}" in a path becomes the rank, else ".rankR" goes before
    the extension (run.json -> run.rank1.json), and the trace records the rank.
    ``prof.watch(ddp_model)`` times DistributedDataParallel's gradient all-reduces as
    collectives, so ``pipebench analyze run.rank*.json`` can tell which rank the others waited
    for and how long.
    """

    def __init__(
        self,
        *,
        report: Optional[PathLike] = None,
        trace: Optional[PathLike] = None,
        json: Optional[PathLike] = None,
        cuda: Optional[bool] = None,
    ) -> None:
        self._outputs = {
            "report": None if report is None else os.fspath(report),
            "trace": None if trace is None else os.fspath(trace),
            "json": None if json is None else os.fspath(json),
        }
        self._cuda = cuda
        self._native: Optional[_native.Profile] = None
        self._report: Optional[_native.ProfileReport] = None
        self._loaders: dict[int, list] = {}  # id -> [loader, baseline, epochs]
        self._steps = 0
        self._step_name = _native.range_name("step")
        self._sync_name = _native.range_name("sync")
        self._collective_name = _native.range_name("collective")
        self._rank, self._world_size = -1, 0

    def __enter__(self) -> "profile":
        global _active
        for what, path in self._outputs.items():
            if path is not None:
                _native.check_writable(what, path)
        cuda = self._cuda if self._cuda is not None else _native.cuda_device_count() > 0
        with _active_lock:
            if _active is not None:
                raise _native.UsageError("a gpufeed.profile is already running in this process")
            self._native = _native.Profile(cuda)
            _active = self
        return self

    def step(self) -> _Range:
        """``with prof.step():`` around one training step (forward, backward, update)."""
        if self._native is None:
            raise _native.UsageError("prof.step() outside its `with gpufeed.profile()` block")
        index = self._steps
        self._steps += 1
        return _Range(self._native, self._step_name, index)

    def sync(self) -> _Range:
        """``with prof.sync():`` around a host synchronization of your own (CUPTI finds the
        CUDA ones by itself)."""
        if self._native is None:
            raise _native.UsageError("prof.sync() outside its `with gpufeed.profile()` block")
        return _Range(self._native, self._sync_name, self._steps)

    def watch(self, model: Any) -> Any:
        """Times the gradient all-reduces of a torch DistributedDataParallel ``model`` (its
        default hook, wrapped) as "collective" ranges: from the start of each bucket's
        all-reduce until every rank's part arrived. Returns the model."""
        from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

        native, name = self._native, self._collective_name
        if native is None:
            raise _native.UsageError("prof.watch() outside its `with gpufeed.profile()` block")

        def timed_allreduce(state, bucket):
            begin = _native.now_ns()
            future = default_hooks.allreduce_hook(state, bucket)

            def arrived(done):
                native.record(name, begin, _native.now_ns(), -1)
                return done.value()[0] if isinstance(done.value(), list) else done.value()

            return future.then(arrived)

        model.register_comm_hook(None, timed_allreduce)
        return model

    @staticmethod
    def current() -> Optional["profile"]:
        """The profile running in this process, or None."""
        return _active

    def _see(self, source: Any) -> None:
        entry = self._loaders.get(id(source))
        if entry is None:
            self._loaders[id(source)] = [source, source.__gpufeed_counters__(), 1]
        else:
            entry[2] += 1

    def _busiest_loader(self):
        best = None
        best_samples = -1
        for loader, baseline, epochs in self._loaders.values():
            if loader.closed:
                continue
            samples = loader.stats()["samples"]
            if samples > best_samples:
                best, best_samples = (loader, baseline, epochs), samples
        return best

    def __exit__(self, *exc: object) -> None:
        global _active
        with _active_lock:
            _active = None
        native, self._native = self._native, None
        loop = _native.LoopFacts()
        loop.steps = self._steps
        torch = sys.modules.get("torch")
        if torch is not None:
            loop.torch_threads = torch.get_num_threads()
            loop.deterministic = bool(torch.are_deterministic_algorithms_enabled())
        self._rank, self._world_size = _job_place(torch)
        loop.rank, loop.world_size = self._rank, self._world_size
        busiest = self._busiest_loader()
        if busiest is None:
            self._report = native.finish(None, loop)
        else:
            source, baseline, epochs = busiest
            loop.epochs = epochs
            self._report = native.finish(source.__gpufeed_facts__(baseline), loop)
        self._write_outputs()

    def _write_outputs(self) -> None:
        report = self._report
        paths = {what: None if path is None else
                 _native.per_rank_path(path, self._rank, self._world_size)
                 for what, path in self._outputs.items()}
        if paths["trace"]:
            report.write_trace(paths["trace"])
        if paths["report"]:
            report.write_report(paths["report"])
        if paths["json"]:
            path = paths["json"]
            temporary = f"{path}.tmp.{os.getpid()}"
            with open(temporary, "w") as f:
                f.write(report.json())
            os.replace(temporary, path)

    def _finished(self) -> _native.ProfileReport:
        if self._report is None:
            raise _native.UsageError("the profile has not finished: use it after its `with` block")
        return self._report

    def summary(self) -> str:
        """The text pipebench prints: utilization, idle time by cause, verdict, bottleneck
        stage, recommendations, practice checks."""
        return self._finished().summary()

    def results(self) -> dict:
        """The diagnosis as data: pipebench's --json keys (samples_per_s, device_util,
        idle_by_cause, bottleneck_stage, verdict, stages, echo, practices, profile, ...)."""
        return _json.loads(self._finished().json())
