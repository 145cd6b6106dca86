"""The profile's own thread while a loop runs: it samples each DataLoader worker's memory, notes
a worker's death as it happens, and when no batch has come for the stall threshold it says once,
to stderr and in the outputs, where the input is (reports.StallReport). It reads and never
acts: no signal, no reaping, nothing of the user's code; its failures are its own."""

from __future__ import annotations

import sys
import threading
import traceback
from typing import Any, Optional

from .. import _native
from .reports import StallReport, loader_places, worker_places
from .state import LOADER_KEY

DEFAULT_STALL_S = 30.0  # the least threshold: a loop with a batch a second hears within it
_KEPT_REPORTS = 16


class Watchdog:
    """Watches profile `prof`'s waits and worker pools; `stall_s` None: the default threshold
    (DEFAULT_STALL_S, or 30 times the loop's mean time a batch where that is longer), 0: never
    report a stall."""

    def __init__(self, prof: Any, stall_s: Optional[float]) -> None:
        self._prof = prof
        self._fixed = stall_s
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._reported_wait: Optional[int] = None
        self._main = threading.main_thread().ident
        self.reports: list = []  # StallReport, the first few of the run
        self.deaths: list = []  # (WorkerDeath, PoolWatch)

    def threshold_s(self) -> float:
        if self._fixed is not None:
            return self._fixed
        prof = self._prof
        batches = max(1, prof.waits.batches)
        period_s = (_native.now_ns() - prof.clock.entered_ns) * 1e-9 / batches
        return max(DEFAULT_STALL_S, 30.0 * period_s)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="gpufeed-profile-watchdog",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        while True:
            threshold = self.threshold_s()
            period = min(0.5, threshold / 10) if threshold > 0 else 0.5
            if self._stop.wait(period):
                return
            try:
                self.tick(threshold)
            except Exception as error:  # noqa: BLE001 - the watchdog's failure is its own
                print(f"gpufeed.profile: the stall watchdog stopped ({type(error).__name__}: "
                      f"{error})", file=sys.stderr)
                return

    def tick(self, threshold: float) -> None:
        """One look: memory, deaths, and a stall of the wait in progress."""
        pools = self._prof._dataloaders.pools()
        for pool in pools:
            pool.sample_memory()
            self.deaths += [(death, pool) for death in pool.check_deaths()]
        since = self._prof.waits.since
        now = _native.now_ns()
        if (threshold > 0 and since is not None and since != self._reported_wait
                and now - since > threshold * 1e9):
            self._reported_wait = since
            report = self._report(pools, since, now, threshold)
            if len(self.reports) < _KEPT_REPORTS:
                self.reports.append(report)
            print(report.text(), file=sys.stderr, flush=True)

    def _report(self, pools: list, since: int, now: int, threshold: float) -> StallReport:
        prof = self._prof
        source = prof._dataloaders.describe(prof.waits.input_key)
        workers = []
        for pool in pools:
            workers += worker_places(pool, now)
        main_sample = prof._dataloaders.main_sample()
        loader_work, requests = [], []
        if prof.waits.input_key == LOADER_KEY:
            loader_work, requests = loader_places(_native.work_in_flight(),
                                                  _native.requests_in_flight(), now)
        main_stack = "" if workers or loader_work else self._main_stack()
        return StallReport((now - since) * 1e-9, threshold, source, workers, main_stack,
                           main_sample, loader_work, requests)

    def _main_stack(self) -> str:
        """The loop's own thread's stack, most recent call first."""
        frame = sys._current_frames().get(self._main)
        if frame is None:
            return ""
        lines = []
        for entry in reversed(traceback.extract_stack(frame)):
            lines.append(f'File "{entry.filename}", line {entry.lineno} in {entry.name}')
        return "\n".join(lines)
