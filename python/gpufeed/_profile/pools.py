"""A DataLoader's worker pool as the profile watches it: the samples sent to each worker and not
returned (noted as the pool sends them), each worker's sample and stack from its board and
stack file, its memory sampled while it runs, and a worker's death (its signal or status, what it
held, its memory against the machine's and the cgroup's limits and the cgroup's OOM-kill
counter). Read from the watchdog's thread without asking the workers anything: no signal is
sent, no worker process is reaped (a dead worker's status is read from /proc while it is a
zombie, or from the pool's own Process once torch reaped it)."""

from __future__ import annotations

import dataclasses
import signal
import weakref
from typing import Any, Optional

from .. import _native
from .boards import SampleBoard, StackFile
from .memory import MemoryLimits, oom_kills, rss_bytes
from .worker_side import board_path, stack_path


@dataclasses.dataclass
class Task:
    """Samples sent to a worker: its batch's sample indices and when they were sent."""

    worker: int
    samples: list
    sent_ns: int


@dataclasses.dataclass
class WorkerMemory:
    """A worker's resident memory as sampled: the first and the peak, with the sample it was in
    at the peak and at its first sampling."""

    first_bytes: int = 0
    peak_bytes: int = 0
    peak_sample: Optional[int] = None


@dataclasses.dataclass
class WorkerDeath:
    """A worker that ended while its pool ran: which, how, what it held, its memory."""

    worker: int
    pid: int
    signal: Optional[str]  # "SIGKILL", or None when it exited with a status
    status: Optional[int]
    held: list  # [Task]
    sample: Optional[tuple]  # (sample, when its fetch began, ns) it was in, from its board
    memory: WorkerMemory
    limits: MemoryLimits
    oom_kills_before: Optional[int]
    seen_ns: int


def _exit_of(process: Any) -> Optional[int]:
    """A worker's exit code as multiprocessing tells it (-N: signal N), None while it runs;
    read without reaping it (the pool's own poll does that)."""
    popen = getattr(process, "_popen", None)
    code = getattr(popen, "returncode", None)
    if code is not None:
        return code
    try:
        with open(f"/proc/{process.pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    if fields[0] != b"Z" or len(fields) < 50:
        return None
    status = int(fields[-1])  # exit_code, as waitpid() gives it
    return -(status & 0x7F) if status & 0x7F else status >> 8


class PoolWatch:
    """One worker pool (a DataLoader iterator with workers) watched while a profile runs."""

    def __init__(self, iterator: Any, name: str, directory: str, key: int) -> None:
        self._iterator = weakref.ref(iterator)
        self.key = key  # its DataLoader's id
        self.name = name
        self.directory = directory
        self.tasks: dict = {}  # send index -> Task, until returned
        self.memory: dict = {}  # worker id -> WorkerMemory
        self.deaths: list = []
        self._dead: set = set()
        self._oom_kills = oom_kills()
        # Kept beyond the iterator: an exception raised from torch's SIGCHLD handler unwinds
        # the loop and drops the iterator before the profile's end looks at its workers.
        self._workers = list(getattr(iterator, "_workers", []))
        self._task_info = iterator._task_info
        self._received = iterator._rcvd_idx

    def sent(self, send_index: int, samples: Any, sent_ns: Optional[int] = None) -> None:
        iterator = self._iterator()
        if iterator is None:
            return
        tasks = self.tasks
        received = iterator._rcvd_idx
        while tasks and next(iter(tasks)) < received:
            del tasks[next(iter(tasks))]  # returned: the loop has had its batch
        worker = iterator._task_info[send_index][0]
        tasks[send_index] = Task(worker, list(samples), sent_ns or _native.now_ns())

    def held(self) -> dict:
        """worker id -> [Task] it was sent and has not returned."""
        iterator = self._iterator()
        if iterator is not None:
            self._task_info, self._received = iterator._task_info, iterator._rcvd_idx
        out: dict = {}
        info, received = self._task_info, self._received
        for index, task in list(self.tasks.items()):
            entry = info.get(index)
            if index >= received and entry is not None and len(entry) == 1:
                out.setdefault(task.worker, []).append(task)
        return out

    def workers(self) -> list:
        """(worker id, pid, exit code or None) of the pool's workers. Once torch shut the pool
        down (its iterator gone, or told to), a worker's end by SIGTERM (torch's own) or a
        status of 0 is no death."""
        iterator = self._iterator()
        shut = iterator is None or getattr(iterator, "_shutdown", False)
        found = [(i, w.pid, _exit_of(w)) for i, w in enumerate(self._workers)]
        return [(i, pid, code) for i, pid, code in found
                if not shut or code not in (None, 0, -signal.SIGTERM)]

    def board(self, worker: int) -> Optional[tuple]:
        return SampleBoard.read_file(board_path(self.directory, worker))

    def stack(self, worker: int) -> str:
        return StackFile.read(stack_path(self.directory, worker))

    def sample_memory(self) -> None:
        """Each running worker's resident memory now, with the sample it is in."""
        for worker, pid, code in self.workers():
            if code is not None:
                continue
            rss = rss_bytes(pid)
            seen = self.memory.setdefault(worker, WorkerMemory(first_bytes=rss))
            if rss > seen.peak_bytes:
                board = self.board(worker)
                seen.peak_bytes = rss
                seen.peak_sample = board[0] if board and board[0] >= 0 else None

    def check_deaths(self) -> list:
        """The workers found dead since the last call (each said once)."""
        found = []
        held = None
        for worker, pid, code in self.workers():
            if code is None or code == 0 or pid in self._dead:
                continue
            self._dead.add(pid)
            held = self.held() if held is None else held
            board = self.board(worker)
            death = WorkerDeath(
                worker, pid, signal.Signals(-code).name if code < 0 else None,
                code if code > 0 else None, held.get(worker, []),
                (board[0], board[1]) if board else None,
                self.memory.get(worker, WorkerMemory()), MemoryLimits.now(), self._oom_kills,
                _native.now_ns())
            self.deaths.append(death)
            found.append(death)
        return found
