"""The inputs a profile times: every torch DataLoader (its iterators' ``next()`` timed while the
profile runs, torch_patches; its settings read, its counters kept apart from the other
DataLoaders', its worker pools watched) and any iterable given to ``prof.input()``."""

from __future__ import annotations

import weakref
from typing import Any, Optional

from .. import _native
from .fetches import FetchCounters, add_worker_fetches, route_fetches, worker_totals
from .pools import PoolWatch
from .state import LOADER_KEY
from .torch_patches import TimedIterator
from .worker_side import WorkerTiming


class ProfiledInput:
    """``prof.input(iterable)``: iterates `iterable`, each ``next()`` timed as a wait for input
    on the profile running at the time."""

    def __init__(self, iterable: Any) -> None:
        self._iterable = iterable

    def __iter__(self) -> TimedIterator:
        return TimedIterator(iter(self._iterable))

    def __len__(self) -> int:
        return len(self._iterable)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._iterable, name)


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
        self.wait_ns = 0  # the loop's waits for its batches
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


def describe(facts: dict) -> str:
    """A DataLoader as its facts show it: DataLoader(num_workers=N, batch_size=B)."""
    return f"DataLoader(num_workers={facts['num_workers']}, batch_size={facts['batch_size']})"


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

    RECENT_POOLS = 4  # worker pools kept after their iterators are gone

    def __init__(self) -> None:
        self.facts: dict[int, dict] = {}  # id(DataLoader) -> its facts
        self.counters: dict[int, InputCounters] = {}  # id(DataLoader) -> its counters
        self.datasets: dict[int, Any] = {}  # id(DataLoader) -> its dataset
        self.main_fetches = FetchCounters()  # this process's fetches for no DataLoader seen
        self.cuda_batches = False  # a DataLoader batch held CUDA tensors
        # The stall threshold now (s; 0: off), from which a worker pool's faulthandler is armed.
        self.stall_threshold: Any = lambda: 0.0
        self._of: dict[int, int] = {}  # id(iterator) -> its DataLoader's id
        self._starting: dict[int, int] = {}  # id(iterator) -> when it started, until a batch
        # Each worker pool started while the profile runs, by its iterator; and the last few
        # pools, their iterators gone or not (a worker's death is found after the exception it
        # caused dropped the iterator).
        self._pools: "weakref.WeakKeyDictionary[Any, PoolWatch]" = weakref.WeakKeyDictionary()
        self._recent: list = []
        # Tasks a pool sent while its iterator was being made (its first prefetch), before
        # started() could watch it: handed to its PoolWatch then.
        self._early: "weakref.WeakKeyDictionary[Any, list]" = weakref.WeakKeyDictionary()

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

    def worker_init(self, loader: Any, init: Any) -> WorkerTiming:
        """The worker_init_fn `loader`'s workers start with while the profile runs (then
        `init`, the loader's own)."""
        return WorkerTiming(self.worker_dir(loader), init, self.stall_threshold())

    def started(self, iterator: Any, loader: Any) -> None:
        """`loader` made `iterator` (started its workers, if it has any)."""
        self._starting[id(iterator)] = _native.now_ns()
        counters = self.counters_of(loader)
        counters.starts += 1
        self._of[id(iterator)] = id(loader)
        route_fetches(iterator, counters.fetches)
        if counters.workers_dir is not None and getattr(iterator, "_workers", None):
            pool = PoolWatch(iterator, describe(self.facts[id(loader)]), counters.workers_dir,
                             id(loader))
            self._pools[iterator] = pool
            self._recent = self._recent[-(self.RECENT_POOLS - 1):] + [pool]
            for send_index, samples, sent_ns in self._early.pop(iterator, []):
                pool.sent(send_index, samples, sent_ns)

    def sent(self, iterator: Any, send_index: int, samples: Any) -> None:
        """`iterator`'s pool sent task `send_index` (a batch of `samples`) to a worker."""
        pool = self._pools.get(iterator)
        if pool is not None:
            pool.sent(send_index, samples)
        else:
            self._early.setdefault(iterator, []).append((send_index, samples, _native.now_ns()))

    def pools(self) -> list:
        """The worker pools running (the watchdog's thread may call it)."""
        running = list(self._pools.values())
        return running + [p for p in self._recent if all(p is not r for r in running)]

    def pool_of(self, iterator: Any) -> Optional[PoolWatch]:
        try:
            return self._pools.get(iterator)
        except TypeError:
            return None

    def describe(self, key: Optional[int]) -> str:
        """The input `key` (a DataLoader's id) in the user's words."""
        if key == LOADER_KEY:
            return "a gpufeed.Loader's next batch"
        facts = self.facts.get(key) if key is not None else None
        return describe(facts) if facts else "prof.input()'s next batch"

    def main_sample(self) -> Optional[int]:
        """The sample this process is fetching now (a DataLoader without workers), if any."""
        for counters in [c.fetches for c in list(self.counters.values())] + [self.main_fetches]:
            board = counters.board.read()
            if board is not None and board[0] >= 0:
                return board[0]
        return None

    def stage_totals(self, key: Optional[int]) -> tuple:
        """({"dataset": ns, "collate": ns}, samples) fetched so far for DataLoader `key`, its
        workers' included (as their files last said)."""
        counters = self.counters.get(key) if key is not None else None
        if counters is None:
            return {}, 0
        fetches = counters.fetches
        dataset, collate, samples = fetches.fetch_ns, fetches.collate_ns, fetches.samples
        if counters.workers_dir is not None:
            workers = worker_totals(counters.workers_dir)
            dataset, collate = dataset + workers.fetch_ns, collate + workers.collate_ns
            samples += workers.samples
        return {"dataset": dataset - collate, "collate": collate}, samples

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
