"""What making batches costs a DataLoader's fetchers (the dataset's items, and collate_fn), timed
in this process and in every worker process: a worker writes its counters to a file of its
own (_FileCounters) that the profile adds up when it ends, and each fetch's times (its
"dataset" and "collate" ranges on the profile's timeline) to another. Each fetch also says which
of its samples it is in and since when (a SampleBoard: what the stall watchdog names), and in a
worker arms faulthandler to write the worker's stack if the fetch outlasts half the stall
threshold. torch_patches puts timed_fetch in place."""

from __future__ import annotations

import json as _json
import os
import threading
from array import array
from typing import Any, Iterator, Optional, Tuple

from .boards import SampleBoard, StackFile

from .. import _native


class FetchCounters:
    """What making batches cost a DataLoader's fetcher in one process: batches, samples, the
    time in the dataset's items plus collate, and collate alone."""

    #: Fetches whose times are kept for the timeline, at most (a process's; 32 bytes each): as
    #: many as the recorder keeps of a thread's ranges, so that a run of days stays flat.
    MAX_SPANS = 65_536

    def __init__(self, board: Optional[SampleBoard] = None,
                 stacks: Optional[StackFile] = None) -> None:
        self.board = board or SampleBoard()  # the sample being fetched, since when
        self.stacks = stacks  # a worker's: faulthandler's output for a fetch that hangs
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

    def __init__(self, path: str, board: SampleBoard, stacks: Optional[StackFile]) -> None:
        super().__init__(board, stacks)
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


def set_counters(counters: Optional[FetchCounters]) -> None:
    """Where this process's fetches are counted from now on (None: not counted)."""
    global _fetch_counters, _fetch_routes
    import weakref

    _fetch_counters = counters
    _fetch_routes = None if counters is None else weakref.WeakKeyDictionary()


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


class _Noted(list):
    """A batch's sample indices that tell `board` which one the fetcher is in, as it goes."""

    __slots__ = ("board",)

    def __iter__(self) -> Iterator[Any]:
        return self.board.samples(list.__iter__(self))


def timed_fetch(original: Any) -> Any:
    """A fetcher class's ``fetch``, timed into this process's counters (torch_patches)."""

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
        board = counters.board
        board.begin()
        if fetcher.auto_collation and type(index) is list:
            index = _Noted(index)
            index.board = board
        stacks = counters.stacks
        if stacks is not None:
            stacks.arm()
        begin = _native.now_ns()
        try:
            batch = original(fetcher, index)
        finally:
            board.leave()
            if stacks is not None:
                stacks.disarm()
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


def worker_totals(directory: str) -> FetchCounters:
    """What a DataLoader's worker processes counted so far (each wrote its own file in
    `directory`, at most 0.1 s ago): batches, samples and times, no spans."""
    total = FetchCounters()
    try:
        names = os.listdir(directory)
    except OSError:
        return total
    for name in names:
        if name.endswith(".json"):
            try:
                with open(os.path.join(directory, name)) as f:
                    one = _json.load(f)
            except (OSError, ValueError):
                continue  # a worker killed while writing: its last file is gone
            total.batches += one["batches"]
            total.samples += one["samples"]
            total.fetch_ns += one["fetch_ns"]
            total.collate_ns += one["collate_ns"]
    return total


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
    workers = worker_totals(directory)
    total.batches += workers.batches
    total.samples += workers.samples
    total.fetch_ns += workers.fetch_ns
    total.collate_ns += workers.collate_ns
    shutil.rmtree(directory, ignore_errors=True)
