"""The end of a profile: its patches undone and its thread stopped whatever happens, then the
diagnosis and the outputs. After a loop that failed nothing of the user's code runs (no item, no
transform, no callback), the profile's own failure is a note on the user's exception and never
replaces it, and the exception gets what the profile knows (a dead worker, a stall, where the
outputs are)."""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Optional

from .. import _native, _profile_state
from . import advice, outputs, torch_patches
from .habits import loop_habits, unwatch_habits
from .reports import death_notes, explain_failure
from .run import trends
from .state import machine_busy_ns


def finish(prof: Any, error: Optional[BaseException], started: bool = True) -> None:
    """Ends profile `prof`; `error`: the exception the loop ended with, if any. `started`:
    False when its start failed (then it is only undone)."""
    prof.clock.exited_ns = _native.now_ns()
    prof.clock.exited_cpu_ns = time.process_time_ns()
    prof.clock.exited_machine_ns = machine_busy_ns()
    if not started:
        _stop(prof)
        return
    try:
        native = _stop(prof)
    except BaseException:
        if error is None:
            raise
        native = None
    if error is None:
        _diagnose(prof, native, failed=False)
        return
    notes = []
    try:
        for pool in prof._dataloaders.pools():  # a death the watchdog has not looked at yet
            prof._watchdog.deaths += [(death, pool) for death in pool.check_deaths()]
        if native is not None:
            _diagnose(prof, native, failed=True)
        notes = _failure_notes(prof, error)
    except Exception as failure:  # noqa: BLE001 - the user's exception stays the one raised
        notes.append(f"gpufeed.profile: its diagnosis failed ({type(failure).__name__}: "
                     f"{failure}); the loop's own exception is above")
    explain_failure(error, notes)


def _stop(prof: Any) -> Any:
    """Undoes what the profile changed in the process, and stops its recording."""
    watchdog = prof._watchdog
    try:
        if watchdog is not None:
            watchdog.stop()
    finally:
        with _profile_state.lock:
            _profile_state.active = None
        torch_patches.untime_dataloaders()
        unwatch_habits()
    # The open implicit step: after a batch the loop never asked past (a `break`), the code
    # after its last batch, not a step; after its input ran out (a loop that asks for the next
    # batch before its step, as Lightning's does), its last step and what followed it. Neither
    # is watched for habits: a teardown's reads and moves are not the loop's.
    prof.habits.pending.clear()
    if prof.waits.exhausted:
        prof._close_step(prof.clock.exited_ns)
    prof.steps.begin = None
    native, prof._native = prof._native, None
    native.stop()  # the run ends here: measuring a remedy below is not part of it
    prof._run.finish(prof.clock.exited_ns)
    return native


def _diagnose(prof: Any, native: Any, failed: bool) -> None:
    loop = _native.LoopFacts()
    loop.steps = prof.steps.count
    torch = sys.modules.get("torch")
    if torch is not None:
        loop.torch_threads = torch.get_num_threads()
        loop.deterministic = bool(torch.are_deterministic_algorithms_enabled())
    prof._rank, prof._world_size = _job_place(torch)
    loop.rank, loop.world_size = prof._rank, prof._world_size
    # The loader's counters as the run ended: measuring a remedy below is not part of it.
    busiest = prof._busiest_loader()
    input_facts = None
    if busiest is not None:
        source, baseline, loop.epochs = busiest
        input_facts = source.profile_facts(baseline)
    dataloaders = prof._dataloaders
    dataloaders.settle()
    dataloaders.add_fetch_ranges(native)
    loop.input_pool = advice.input_pool(prof, failed)
    loop.habits = loop_habits(prof.habits, torch)
    dataloaders.datasets.clear()
    prof.waits.last_batch = prof.waits.last_storages = prof.waits.previous_batch = None
    prof._report = native.finish(input_facts, loop)
    prof._finished_facts = run_facts(prof)
    outputs.write_outputs(prof)


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


def _failure_notes(prof: Any, error: BaseException) -> list:
    """What the profile adds to the exception the loop ended with."""
    notes = []
    if not any(e is error for e in prof._explained):
        for death, pool in prof._watchdog.deaths:
            notes += death_notes(death, pool, prof._dataloaders.facts.get(pool.key))
    for report in prof._watchdog.reports:
        notes.append(f"gpufeed.profile: the loop had stalled: no batch for "
                     f"{report.waited_s:.0f} s; where each worker was is in the outputs")
    written = [path for path in prof._outputs.values() if path is not None]
    if written and prof._report is not None:
        notes.append("gpufeed.profile: the profile's outputs were written: " +
                     ", ".join(written))
    return notes


def run_facts(prof: Any) -> dict:
    """The run as a whole, for results() and the report: its windows, the epochs of the input
    that fed the training steps, its trends, its stalls, its dead workers and notes."""
    record = prof._run
    start = record.start_ns
    epochs = _training_epochs(prof._dataloaders, record.epochs)
    found = trends(epochs)
    deaths = []
    for death, pool in prof._watchdog.deaths:
        key = pool.key
        deaths.append({"worker": death.worker, "pid": death.pid, "signal": death.signal,
                       "status": death.status, "samples": [t.samples for t in death.held],
                       "peak_memory_bytes": death.memory.peak_bytes,
                       "notes": death_notes(death, pool, prof._dataloaders.facts.get(key))})
    return {
        "run": {"window_s": record.window_seconds,
                "windows": [w.as_dict(start) for w in record.windows.items],
                "epochs": [e.as_dict(start) for e in epochs],
                "trends": [dict(t.as_dict(), text=t.text()) for t in found]},
        "stalls": [dict(r.as_dict(), text=r.text()) for r in prof._watchdog.reports],
        "worker_deaths": deaths,
        "notes": list(prof._notes) + list(record.live_failures),
    }


def _training_epochs(dataloaders: Any, epochs: dict) -> list:
    """The epochs of the input that fed the training steps, in order: of its DataLoader and of
    every DataLoader over the same dataset with the same batch size (a loop that makes its
    DataLoader anew each epoch); of the input with the most epochs where no DataLoader fed it."""
    facts = dataloaders.facts
    fed = dataloaders.fed()
    if fed is None or fed not in facts:
        longest = max(epochs.values(), key=lambda s: len(s.items), default=None)
        return longest.items if longest is not None else []

    def kind(key: Any) -> Any:
        f = facts.get(key)
        return None if f is None else (f["dataset"], f["dataset_length"], f["batch_size"])

    same = [e for key, series in epochs.items() if kind(key) == kind(fed) for e in series.items]
    return sorted(same, key=lambda e: e.begin_ns)
