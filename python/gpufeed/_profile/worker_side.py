"""What a profile runs inside each DataLoader worker process: its worker_init_fn while the
profile runs (WorkerTiming, picklable: a spawned worker imports this module to unpickle it). The
worker's fetches are timed into files of the DataLoader's own directory, its current sample is
on a board there, and faulthandler writes its stack there when a fetch outlasts half the stall
threshold; the profile's watchdog reads them."""

from __future__ import annotations

import os
from typing import Any

from .boards import SampleBoard, StackFile
from .fetches import _FileCounters
from .torch_patches import time_fetchers


def board_path(directory: str, worker_id: int) -> str:
    return os.path.join(directory, f"sample-{worker_id}")


def stack_path(directory: str, worker_id: int) -> str:
    return os.path.join(directory, f"stack-{worker_id}.txt")


class WorkerTiming:
    """A DataLoader's worker_init_fn while a profile runs: times the worker's fetches into a
    file of `directory`, puts its board and its stack file there, then runs the loader's own
    worker_init_fn."""

    def __init__(self, directory: str, init: Any, stall_s: float) -> None:
        self.directory = directory
        self.init = init
        self.stall_s = stall_s

    def __call__(self, worker_id: int) -> None:
        directory = self.directory
        try:
            board = SampleBoard.in_file(board_path(directory, worker_id))
            stacks = (StackFile(stack_path(directory, worker_id), self.stall_s / 2)
                      if self.stall_s > 0 else None)
            counters = _FileCounters(os.path.join(directory, f"worker-{os.getpid()}.json"),
                                     board, stacks)
        except OSError:
            counters = None  # the profile ended and took its directory: not timed
        if counters is not None:
            time_fetchers(counters)
        if self.init is not None:
            self.init(worker_id)
