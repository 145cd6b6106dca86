"""What making batches costs a DataLoader's fetchers (the dataset's items, and collate_fn), timed
in this process and in every worker process: a worker writes its counters to a file of its
own (_FileCounters) that the profile adds up when it ends, and each fetch's times (its
"dataset" and "collate" ranges on the profile's timeline) to another. A spawned worker imports
this module by its path to unpickle its worker_init_fn (WorkerTiming)."""

from __future__ import annotations

import json as _json
import os
import threading
from array import array
from typing import Any, Iterator, Optional, Tuple

from .. import _native


class FetchCounters:
    """What making batches cost a DataLoader's fetcher in one process: batches, samples, the
    time in the dataset's items plus collate, and collate alone."""

    #: Fetches whose times are kept for the timeline, at most (a process's; 32 bytes each).
    MAX_SPANS = 250_000

    def __init__(self) -> None:
        self.batches = 0
        self.samples = 0
        self.fetch_ns = 0
        self.collate_ns = 0
        # Each fetch: the thread's id, its start, collate's start, its end (the recorder's clock).
        self.spans = array("q")
        self.kept_spans = 0

    def span(self, begin: int, collate_begin: int, end: int) -> None:
        if self.kept_spans < self.MAX_SPANS:
            self.kept_spans += 1
            self.spans.extend((threading.get_native_id(), begin, collate_begin, end))

    def threads(self) -> Iterator[Tuple[int, list, list, list]]:
        """The kept fetches by thread: (thread id, starts, collate's starts, ends)."""
        by_thread: dict = {}
        spans = self.spans
        for i in range(0, len(spans), 4):
            begins, collates, ends = by_thread.setdefault(spans[i], ([], [], []))
            begins.append(spans[i + 1])
            collates.append(spans[i + 2])
            ends.append(spans[i + 3])
        for thread, (begins, collates, ends) in by_thread.items():
            yield thread, begins, collates, ends

    def add(self, samples: int, fetch_ns: int, collate_ns: int) -> None:
        self.batches += 1
        self.samples += samples
        self.fetch_ns += fetch_ns
        self.collate_ns += collate_ns

    def as_dict(self) -> dict:
        return {"batches": self.batches, "samples": self.samples, "fetch_ns": self.fetch_ns,
                "collate_ns": self.collate_ns}


class _FileCounters(FetchCounters):
    """A worker process's counters, written to `path` at most every 0.1 s and when the worker
    exits, for the profile to read when it ends."""

    def __init__(self, path: str) -> None:
        super().__init__()
        self._path = path
        self._written = 0
        self._spans_path = f"{path}.spans"
        from multiprocessing import util

        # A worker ends through multiprocessing's exit, which runs its finalizers.
        util.Finalize(self, self.write, exitpriority=10)

    def add(self, samples: int, fetch_ns: int, collate_ns: int) -> None:
        super().add(samples, fetch_ns, collate_ns)
        if _native.now_ns() - self._written >= 100_000_000:
            self.write()

    def write(self) -> None:
        self._written = _native.now_ns()
        temporary = f"{self._path}.tmp"
        try:
            if self.spans:  # appended: whole records only, read by add_worker_fetches
                with open(self._spans_path, "ab") as f:
                    self.spans.tofile(f)
                del self.spans[:]
            with open(temporary, "w") as f:
                _json.dump(self.as_dict(), f)
            os.replace(temporary, self._path)
        except OSError:
            pass  # the profile ended and took its directory: nobody reads this any more


_fetch_counters: Optional[FetchCounters] = None  # where this process's fetch times go
_fetch_routes: Any = None  # fetcher -> its DataLoader's counters (weak keys), while profiled
_original_fetch: dict = {}  # fetcher class -> its own fetch while timed


class _TimedCollate:
    """A fetcher's collate_fn, timed: it keeps the time of its last call."""

    __slots__ = ("collate", "last_begin", "last_ns")

    def __init__(self, collate: Any) -> None:
        self.collate = collate
        self.last_begin = 0
        self.last_ns = 0

    def __call__(self, data: Any) -> Any:
        begin = self.last_begin = _native.now_ns()
        try:
            return self.collate(data)
        finally:
            self.last_ns = _native.now_ns() - begin


def _timed_fetch(original: Any) -> Any:
    def fetch(fetcher: Any, index: Any) -> Any:
        counters = _fetch_counters
        if counters is None:
            return original(fetcher, index)
        if _fetch_routes is not None:
            counters = _fetch_routes.get(fetcher, counters)
        collate = fetcher.collate_fn
        if not isinstance(collate, _TimedCollate):
            collate = fetcher.collate_fn = _TimedCollate(collate)  # once per fetcher
        collate.last_ns = 0
        begin = _native.now_ns()
        batch = original(fetcher, index)
        end = _native.now_ns()
        counters.add(len(index) if fetcher.auto_collation else 1, end - begin, collate.last_ns)
        counters.span(begin, collate.last_begin if collate.last_ns else end, end)
        return batch

    return fetch


def route_fetches(iterator: Any, fetches: FetchCounters) -> None:
    """This process's fetches for a DataLoader iterator (num_workers=0) go to its loader's
    counters, `fetches`."""
    fetcher = getattr(iterator, "_dataset_fetcher", None)
    if fetcher is not None and _fetch_routes is not None:
        _fetch_routes[fetcher] = fetches


def time_fetchers(counters: Optional[FetchCounters]) -> None:
    """Times DataLoader fetchers (the dataset's items and collate) in this process into
    `counters`; None stops it."""
    global _fetch_counters, _fetch_routes
    import weakref

    from torch.utils.data._utils import fetch as fetchers

    _fetch_counters = counters
    _fetch_routes = None if counters is None else weakref.WeakKeyDictionary()
    for cls in (fetchers._MapDatasetFetcher, fetchers._IterableDatasetFetcher):
        if counters is not None and cls not in _original_fetch:
            _original_fetch[cls] = cls.fetch
            cls.fetch = _timed_fetch(cls.fetch)
        elif counters is None and cls in _original_fetch:
            cls.fetch = _original_fetch.pop(cls)


class WorkerTiming:
    """A DataLoader's worker_init_fn while a profile runs: times the worker's fetches into a
    file of `directory`, then runs the loader's own worker_init_fn. Picklable, so spawned
    workers get it too."""

    def __init__(self, directory: str, init: Any) -> None:
        self.directory = directory
        self.init = init

    def __call__(self, worker_id: int) -> None:
        time_fetchers(_FileCounters(os.path.join(self.directory, f"worker-{os.getpid()}.json")))
        if self.init is not None:
            self.init(worker_id)


def add_worker_fetches(directory: str, total: FetchCounters) -> None:
    """Adds the counters and the kept fetches of a DataLoader's worker processes (each wrote its
    own files in `directory`) to `total`, and removes the directory."""
    import shutil

    for name in os.listdir(directory):
        if name.endswith(".spans"):
            spans = array("q")
            try:
                with open(os.path.join(directory, name), "rb") as f:
                    data = f.read()
            except OSError:
                continue
            spans.frombytes(data[: len(data) // 32 * 32])  # whole records (a worker killed)
            total.spans.extend(spans)
        elif name.endswith(".json"):
            try:
                with open(os.path.join(directory, name)) as f:
                    one = _json.load(f)
            except (OSError, ValueError):
                continue  # a worker killed while writing: its last file is gone
            total.batches += one["batches"]
            total.samples += one["samples"]
            total.fetch_ns += one["fetch_ns"]
            total.collate_ns += one["collate_ns"]
    shutil.rmtree(directory, ignore_errors=True)
