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


class _ProfiledInput:
    """``prof.input(iterable)``: iterates `iterable`, each ``next()`` timed as a wait for input
    on the profile running at the time."""

    def __init__(self, iterable: Any) -> None:
        self._iterable = iterable

    def __iter__(self) -> "_TimedIterator":
        return _TimedIterator(iter(self._iterable))

    def __len__(self) -> int:
        return len(self._iterable)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._iterable, name)


class _TimedIterator:
    __slots__ = ("_next",)

    def __init__(self, iterator: Any) -> None:
        self._next = iterator.__next__

    def __iter__(self) -> "_TimedIterator":
        return self

    def __next__(self) -> Any:
        current = _active
        if current is None:
            return self._next()
        return current._timed_next(self._next, None)


_dataloader_next: Optional[Any] = None  # DataLoader's own __next__ while a profile times it


def _time_dataloaders() -> None:
    """Times every torch DataLoader iterator's ``__next__`` as a wait for input while a profile
    runs (the loop itself is not changed)."""
    global _dataloader_next
    if "torch" not in sys.modules or _dataloader_next is not None:
        return
    try:
        from torch.utils.data import dataloader
    except ImportError:
        return
    cls = dataloader._BaseDataLoaderIter
    original = cls.__next__

    def timed_next(iterator: Any) -> Any:
        current = _active
        if current is None:
            return original(iterator)
        return current._timed_next(lambda: original(iterator), iterator)

    _dataloader_next = original
    cls.__next__ = timed_next


def _untime_dataloaders() -> None:
    global _dataloader_next
    if _dataloader_next is None:
        return
    from torch.utils.data import dataloader

    dataloader._BaseDataLoaderIter.__next__ = _dataloader_next
    _dataloader_next = None


def _dataloader_facts(iterator: Any) -> dict:
    """What a DataLoader iterator tells of its loader's settings."""
    dataset = getattr(iterator, "_dataset", None)
    try:
        length = len(dataset)
    except TypeError:
        length = None
    context = getattr(iterator, "_multiprocessing_context", None)
    return {
        "kind": "torch.utils.data.DataLoader",
        "num_workers": getattr(iterator, "_num_workers", None),
        "batch_size": getattr(getattr(iterator, "_index_sampler", None), "batch_size", None),
        "pin_memory": getattr(iterator, "_pin_memory", None),
        "prefetch_factor": getattr(iterator, "_prefetch_factor", None),
        "persistent_workers": getattr(iterator, "_persistent_workers", None),
        "multiprocessing_context": None if context is None else context.get_start_method(),
        "dataset": None if dataset is None else type(dataset).__name__,
        "dataset_length": length,
    }


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

    Any loop over a torch DataLoader is recorded as it is: while the profile runs, every
    DataLoader iterator's ``next()`` is timed as a wait for input, and without ``prof.step()``
    a step is the time from one batch to the request for the next, so

        with gpufeed.profile() as prof:
            for images, labels in dataloader:
                train_step(images, labels)

    is enough. ``prof.input(iterable)`` times any other input the same way (a generator, a
    WebDataset or Hugging Face pipeline, a DALI iterator); a gpufeed.Loader times itself.

    Mark each training step with ``prof.step()`` where it is not the whole loop body: the steps
    are what utilization is measured against (on a CUDA device CUPTI's kernel records are, and
    the steps set the window). On a
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
        self._wait_name = _native.range_name("wait")
        self._batches = 0  # batches the timed inputs delivered
        self._implicit_steps = 0
        self._step_begin: Optional[int] = None  # the last timed batch's arrival
        self._steps_at_batch = 0
        self._inputs: dict[int, dict] = {}  # id(DataLoader iterator) -> its facts

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
        _time_dataloaders()
        return self

    def input(self, iterable: Any) -> Any:
        """``for batch in prof.input(iterable):`` times each ``next()`` of any iterable as a
        wait for input (DataLoaders are timed without it; a gpufeed.Loader times itself and is
        returned as it is)."""
        if hasattr(iterable, "__gpufeed_counters__"):
            return iterable
        return _ProfiledInput(iterable)

    def _timed_next(self, fetch: Any, source: Any) -> Any:
        """One batch from a timed input: the wait for it is a "wait" range; without prof.step()
        the time since the previous batch, less this wait, is a step."""
        native = self._native
        if native is None:
            return fetch()
        begin = _native.now_ns()
        self._close_step(begin)
        try:
            item = fetch()
        except StopIteration:
            native.record(self._wait_name, begin, _native.now_ns(), self._batches)
            raise
        end = _native.now_ns()
        native.record(self._wait_name, begin, end, self._batches)
        self._batches += 1
        self._step_begin = end
        self._steps_at_batch = self._steps
        if source is not None and id(source) not in self._inputs:
            self._inputs[id(source)] = _dataloader_facts(source)
        return item

    def _close_step(self, end: int) -> None:
        """Records the work between the last timed batch and `end` as a step, unless the loop
        marked its steps itself."""
        begin, self._step_begin = self._step_begin, None
        if begin is None or self._steps != self._steps_at_batch or self._native is None:
            return
        self._native.record(self._step_name, begin, end, self._implicit_steps)
        self._implicit_steps += 1

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
        self._close_step(_native.now_ns())  # the loop left after its last batch's work
        with _active_lock:
            _active = None
        _untime_dataloaders()
        native, self._native = self._native, None
        loop = _native.LoopFacts()
        loop.steps = self._steps + self._implicit_steps
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
                f.write(_json.dumps(self.results(), indent=2) + "\n")
            os.replace(temporary, path)

    def _finished(self) -> _native.ProfileReport:
        if self._report is None:
            raise _native.UsageError("the profile has not finished: use it after its `with` block")
        return self._report

    def summary(self) -> str:
        """The text pipebench prints: utilization, idle time by cause, verdict, bottleneck
        stage, recommendations, practice checks."""
        text = self._finished().summary()
        if self._batches:
            # The loop's input was timed even though no gpufeed.Loader fed it.
            inputs = ", ".join(
                f"DataLoader(num_workers={i['num_workers']}, batch_size={i['batch_size']})"
                for i in self._inputs.values()
            ) or "prof.input()"
            text = text.replace(
                "note: no gpufeed.Loader ran inside the profile; input stages unknown\n",
                f"input       {self._batches} batches from {inputs}, each next() timed as a "
                "wait for input; the stages inside it are not recorded\n",
            )
        return text

    def results(self) -> dict:
        """The diagnosis as data: pipebench's --json keys (samples_per_s, device_util,
        idle_by_cause, bottleneck_stage, verdict, stages, echo, practices, profile, ...), and
        ``inputs``: the DataLoaders the loop read, with their settings."""
        out = _json.loads(self._finished().json())
        out["inputs"] = list(self._inputs.values())
        out["timed_batches"] = self._batches
        return out
