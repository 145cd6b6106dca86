"""The inputs a profile times: every torch DataLoader (its iterators' ``next()`` patched while the
profile runs, its settings read, its counters kept apart from the other DataLoaders') and any
iterable given to ``prof.input()``."""

from __future__ import annotations

import sys
from typing import Any, Optional

from .. import _native, _profile_state
from . import probe
from .fetches import FetchCounters, WorkerTiming, add_worker_fetches, route_fetches, time_fetchers


class ProfiledInput:
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
        current = _profile_state.active
        if current is None:
            return self._next()
        return current._timed_next(self._next, None)  # not a DataLoader: no facts


class InputCounters:
    """What one DataLoader did during a profile (an iterator made before it counts as one),
    kept apart from the others': a training loader's counters are never its validation
    loader's. Its fetches are its own process's, plus its workers' from `workers_dir`."""

    def __init__(self, source: Any) -> None:
        self.source = source  # held until the profile ends: its id stays its own
        self.fetches = FetchCounters()
        self.workers_dir: Optional[str] = None
        self.starts = 0  # iterators started: worker pools, when it has workers
        self.startup_ns = 0  # from each start to its first batch
        self.samples = 0  # its batches' samples (the first dimension of each batch's images)
        self.training_batches = 0  # batches a module in training mode was run on
        self.evaluation_batches = 0  # batches a module in eval mode was run on
        self._last_training = self._last_evaluation = -1

    def used(self, batch: int, training: bool) -> None:
        """A module in training mode (or in eval mode) ran on batch number `batch`: counted
        once a batch."""
        if training and self._last_training != batch:
            self._last_training = batch
            self.training_batches += 1
        elif not training and self._last_evaluation != batch:
            self._last_evaluation = batch
            self.evaluation_batches += 1

    def role(self) -> Optional[str]:
        """"training" when a module in training mode ran on its batches, "evaluation" when
        only modules in eval mode did, None when none ran inside the steps."""
        if self.training_batches:
            return "training"
        return "evaluation" if self.evaluation_batches else None


_dataloader_patches: dict = {}  # (class, attribute) -> the original while a profile times them


def time_dataloaders(main_fetches: FetchCounters) -> None:
    """While a profile runs: every torch DataLoader iterator's ``__next__`` is timed as a wait
    for input, the main process's fetches (into `main_fetches`, unless routed to a DataLoader's
    counters) and every worker's are timed, and each iterator's start is noted (the loop itself
    is not changed)."""
    if "torch" not in sys.modules:
        return
    if _dataloader_patches:  # still in place: a batch the last profile's probe took is held
        time_fetchers(main_fetches)
        return
    try:
        from torch.utils.data import dataloader
    except ImportError:
        return
    iterator_cls = dataloader._BaseDataLoaderIter
    next_original = iterator_cls.__next__
    get_iterator = dataloader.DataLoader._get_iterator

    def timed_next(iterator: Any) -> Any:
        current = _profile_state.active
        if current is None:
            # No profile: a batch its probe took early is still returned, first.
            try:
                took, batch, _ = probe.take_held(iterator)
            finally:
                if not probe.holding():
                    untime_dataloaders()
            return batch if took else next_original(iterator)
        return current._timed_next(next_original, iterator)

    def started_iterator(loader: Any) -> Any:
        current = _profile_state.active
        if current is None or loader.num_workers == 0:
            iterator = get_iterator(loader)
        else:
            init = loader.worker_init_fn
            loader.worker_init_fn = WorkerTiming(current._dataloaders.worker_dir(loader), init)
            try:
                iterator = get_iterator(loader)
            finally:
                loader.worker_init_fn = init
        if current is not None:
            current._dataloaders.started(iterator, loader)
        return iterator

    _dataloader_patches[(iterator_cls, "__next__")] = next_original
    _dataloader_patches[(dataloader.DataLoader, "_get_iterator")] = get_iterator
    iterator_cls.__next__ = timed_next
    dataloader.DataLoader._get_iterator = started_iterator
    time_fetchers(main_fetches)


def untime_dataloaders() -> None:
    """The DataLoaders' own methods again, unless a probe's batch is still held: then the
    patched ``__next__`` returns it first and restores them once it did."""
    if not _dataloader_patches:
        return
    time_fetchers(None)
    if probe.holding():
        return
    for (cls, name), original in _dataloader_patches.items():
        setattr(cls, name, original)
    _dataloader_patches.clear()


def _dataloader_facts(loader: Any) -> dict:
    """A DataLoader's settings, read from its public attributes (or, for an iterator made
    before the profile started, from the iterator's own copies of them)."""
    if not hasattr(loader, "num_workers"):  # an iterator: its loader is not kept
        loader = _IteratorView(loader)
    dataset = loader.dataset
    try:
        length = len(dataset)
    except TypeError:
        length = None
    context = loader.multiprocessing_context
    if context is None and loader.num_workers > 0:
        import multiprocessing

        context = multiprocessing.get_start_method()
    elif context is not None and not isinstance(context, str):
        context = context.get_start_method()
    collate = getattr(loader, "collate_fn", None)
    return {
        "kind": "torch.utils.data.DataLoader",
        "num_workers": loader.num_workers,
        "batch_size": loader.batch_size,
        "pin_memory": loader.pin_memory,
        "prefetch_factor": loader.prefetch_factor if loader.num_workers > 0 else None,
        "persistent_workers": loader.persistent_workers,
        "multiprocessing_context": context,
        "dataset": type(dataset).__name__,
        "dataset_length": length,
        "sampler": type(getattr(loader, "sampler", None)).__name__,
        "collate_fn": getattr(collate, "__name__", type(collate).__name__),
        "batches": 0,
    }


class _IteratorView:
    """A DataLoader iterator seen as its loader: the settings it copied at its start."""

    def __init__(self, iterator: Any) -> None:
        self.dataset = getattr(iterator, "_dataset", None)
        self.num_workers = getattr(iterator, "_num_workers", 0)
        self.batch_size = getattr(getattr(iterator, "_index_sampler", None), "batch_size", None)
        self.pin_memory = getattr(iterator, "_pin_memory", None)
        self.prefetch_factor = getattr(iterator, "_prefetch_factor", None)
        self.persistent_workers = getattr(iterator, "_persistent_workers", None)
        self.multiprocessing_context = getattr(iterator, "_multiprocessing_context", None)
        self.collate_fn = getattr(iterator, "_collate_fn", None)


def batch_shape(batch: Any) -> Optional[list]:
    """The shape of a batch's images: the tensor itself, or the first of a tuple/list."""
    if isinstance(batch, (tuple, list)) and batch:
        batch = batch[0]
    shape = getattr(batch, "shape", None)
    return None if shape is None else [int(d) for d in shape]


def _on_cuda(batch: Any) -> bool:
    """Whether a batch (a tensor, or a tuple/list/dict of them) holds a CUDA tensor."""
    if isinstance(batch, (tuple, list)):
        return any(_on_cuda(b) for b in batch)
    if isinstance(batch, dict):
        return any(_on_cuda(b) for b in batch.values())
    return bool(getattr(batch, "is_cuda", False))


class DataLoaders:
    """The DataLoaders a profile saw, each with its facts (settings and, at the end, counters),
    its counters and its dataset (until the profile ends); an iterator made before the profile
    counts as a DataLoader of its own (its loader is not known)."""

    def __init__(self) -> None:
        self.facts: dict[int, dict] = {}  # id(DataLoader) -> its facts
        self.counters: dict[int, InputCounters] = {}  # id(DataLoader) -> its counters
        self.datasets: dict[int, Any] = {}  # id(DataLoader) -> its dataset
        self.main_fetches = FetchCounters()  # this process's fetches for no DataLoader seen
        self.cuda_batches = False  # a DataLoader batch held CUDA tensors
        self._of: dict[int, int] = {}  # id(iterator) -> its DataLoader's id
        self._starting: dict[int, int] = {}  # id(iterator) -> when it started, until a batch

    def counters_of(self, source: Any) -> InputCounters:
        """The counters of a DataLoader, or of an iterator made before the profile, with its
        facts: made the first time the profile sees it."""
        key = id(source)
        counters = self.counters.get(key)
        if counters is None:
            counters = self.counters[key] = InputCounters(source)
            self.facts[key] = _dataloader_facts(source)
            is_loader = hasattr(source, "num_workers")
            self.datasets[key] = getattr(source, "dataset" if is_loader else "_dataset", None)
        return counters

    def worker_dir(self, loader: Any) -> str:
        """Where `loader`'s worker processes write their counters: a directory of its own."""
        counters = self.counters_of(loader)
        if counters.workers_dir is None:
            import tempfile

            counters.workers_dir = tempfile.mkdtemp(prefix="gpufeed-profile-")
        return counters.workers_dir

    def started(self, iterator: Any, loader: Any) -> None:
        """`loader` made `iterator` (started its workers, if it has any)."""
        self._starting[id(iterator)] = _native.now_ns()
        counters = self.counters_of(loader)
        counters.starts += 1
        self._of[id(iterator)] = id(loader)
        route_fetches(iterator, counters.fetches)

    def key_of(self, iterator: Any) -> int:
        """The id of the DataLoader `iterator` belongs to (its own, if made before the
        profile)."""
        key = self._of.get(id(iterator))
        if key is None:
            route_fetches(iterator, self.counters_of(iterator).fetches)
            key = self._of[id(iterator)] = id(iterator)
        return key

    def delivered(self, key: int, iterator: Any, batch: Any, shape: Optional[list],
                  end: int) -> None:
        """`iterator` of DataLoader `key` delivered `batch` (its images' `shape`) at `end`."""
        facts, counters = self.facts[key], self.counters[key]
        facts["batches"] += 1
        if facts["batches"] == 1:
            facts["batch_shape"] = shape
        if shape:
            counters.samples += shape[0]
        if self._starting:
            started = self._starting.pop(id(iterator), None)
            if started is not None:
                counters.startup_ns += end - started
                self.cuda_batches = self.cuda_batches or _on_cuda(batch)  # a first batch
        elif facts["batches"] == 1:
            self.cuda_batches = self.cuda_batches or _on_cuda(batch)

    def fed(self) -> Optional[int]:
        """The DataLoader that fed the training steps: the one whose batches most went through
        a module in training mode; without modules in the steps, the one that delivered the
        most batches. A validation loader beside it is never it."""
        if not self.facts:
            return None
        return max(self.facts, key=lambda key: (self.counters[key].training_batches,
                                                self.facts[key]["batches"]))

    def add_fetch_ranges(self, native: _native.Profile) -> None:
        """Every kept fetch (in this process and in the workers) as a "dataset" range, then a
        "collate" one, on the thread or worker process that made it. After settle()."""
        every = [c.fetches for c in self.counters.values()] + [self.main_fetches]
        for fetches in every:
            for thread, begins, collates, ends in fetches.threads():
                native.add_ranges("dataset", thread, begins, collates)
                native.add_ranges("collate", thread, collates, ends)

    def settle(self) -> None:
        """At the end: each DataLoader's own counters (its workers' included) into its facts."""
        fed = self.fed()
        for key, facts in self.facts.items():
            counters = self.counters[key]
            directory, counters.workers_dir = counters.workers_dir, None
            if directory is not None:
                add_worker_fetches(directory, counters.fetches)
            facts["fetch"] = counters.fetches.as_dict()
            facts["samples"] = counters.samples
            facts["starts"] = counters.starts
            facts["startup_ns"] = counters.startup_ns
            facts["role"] = counters.role()
            facts["diagnosed"] = key == fed
            counters.source = None
