"""What the profile says when a loop stalls or a worker dies: where each worker is (the samples it
holds and for how long, the sample it is in, its Python stack) and why a worker ended (its
signal, its samples, its memory against the limits, the OOM-kill counter), with what to do. The
texts go to stderr and the exception's notes; the figures to results()."""

from __future__ import annotations

import dataclasses
from typing import Optional

from .memory import oom_kills
from .pools import PoolWatch, WorkerDeath

_STACK_LINES = 8  # the deepest frames: where it is stuck


def _mib(n: int) -> str:
    return f"{n / (1 << 30):.1f} GiB" if n >= 1 << 30 else f"{n / (1 << 20):.0f} MiB"


def _samples(samples: list) -> str:
    if len(samples) > 2 and all(isinstance(s, int) for s in samples) and \
            samples == list(range(samples[0], samples[0] + len(samples))):
        return f"{samples[0]}-{samples[-1]}"
    shown = ", ".join(str(s) for s in samples[:16])
    return shown + (f", ... ({len(samples)} in all)" if len(samples) > 16 else "")


@dataclasses.dataclass
class WorkerPlace:
    """Where one worker was when the loop stalled."""

    worker: int
    pid: int
    held: list  # [{"samples": [...], "for_s": seconds since sent}]
    sample: Optional[int]  # the sample it is in, if a fetch is under way
    fetch_s: Optional[float]  # how long ago the fetch of its batch began
    stack: str  # its fetching thread's Python stack, most recent call first ("" if none)


@dataclasses.dataclass
class StallReport:
    """The loop waited `waited_s` for a batch (over `threshold_s`): where its input was."""

    waited_s: float
    threshold_s: float
    source: str
    workers: list  # [WorkerPlace]
    main_stack: str  # num_workers=0, or another input: the loop's own thread's stack
    main_sample: Optional[int]
    # A gpufeed.Loader's worker threads: [{"stage", "path", "epoch", "batch", "sample",
    # "for_s"}], and its object-store requests on the wire: [{"what", "attempt", "for_s"}].
    loader_work: list = dataclasses.field(default_factory=list)
    requests: list = dataclasses.field(default_factory=list)

    def text(self) -> str:
        lines = [f"gpufeed.profile: no batch for {self.waited_s:.0f} s (stall={self.threshold_s:g}"
                 f" s): the loop waits for {self.source}"]
        if self.main_stack:
            where = "" if self.main_sample is None else f" in sample {self.main_sample}"
            lines.append(f"  the loop's own thread{where}, at (most recent call first):")
            lines += ["    " + line for line in self.main_stack.splitlines()[:_STACK_LINES]]
        for place in self.workers:
            lines += _worker_lines(place)
        lines += _loader_lines(self.loader_work, self.requests)
        lines.append("  the loop goes on waiting; Ctrl-C ends it, and the profile's outputs keep "
                     "this report")
        return "\n".join(lines)

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


def _worker_lines(place: WorkerPlace) -> list:
    held = "; ".join(f"{_samples(h['samples'])} (sent {h['for_s']:.1f} s ago)"
                     for h in place.held) or "nothing (idle)"
    head = f"  worker {place.worker} (pid {place.pid}) holds samples {held}"
    if place.sample is not None:
        head += f"; in sample {place.sample}, of a fetch begun {place.fetch_s:.1f} s ago"
    if not place.stack:
        return [head]
    return [head + ", at (most recent call first):"] + [
        "    " + line for line in place.stack.splitlines()[:_STACK_LINES]]


def _loader_lines(work: list, requests: list) -> list:
    lines = []
    for w in work[:_STACK_LINES]:
        sample = f", sample {w['sample']}" if w["sample"] >= 0 else ""
        lines.append(f"  {w['stage']} of batch {w['batch']} (epoch {w['epoch']}) of "
                     f"{w['path']}{sample}, for {w['for_s']:.1f} s")
    for r in requests[:_STACK_LINES]:
        lines.append(f"  {r['what']} (attempt {r['attempt']}) on the wire for {r['for_s']:.1f} s")
    return lines


def loader_places(work: list, requests: list, now: int) -> tuple:
    """A gpufeed.Loader's work in flight (each batch's most precise entries: its samples,
    else the batch) and its requests on the wire, with their ages."""
    by_batch: dict = {}
    for w in work:
        by_batch.setdefault((w["path"], w["epoch"], w["batch"]), []).append(w)
    places = []
    for entries in by_batch.values():
        samples = [w for w in entries if w["sample"] >= 0] or entries[:1]
        places += [dict(w, for_s=(now - w.pop("since_ns")) * 1e-9) for w in samples]
    wire = [{"what": r["what"], "attempt": r["attempt"], "for_s": (now - r["sent_ns"]) * 1e-9}
            for r in requests]
    return sorted(places, key=lambda p: -p["for_s"]), wire


def worker_places(pool: PoolWatch, now: int) -> list:
    """Where each worker of `pool` is now."""
    held = pool.held()
    places = []
    for worker, pid, code in pool.workers():
        if code is not None:
            continue
        board = pool.board(worker)
        places.append(WorkerPlace(
            worker, pid,
            [{"samples": t.samples, "for_s": (now - t.sent_ns) * 1e-9}
             for t in held.get(worker, [])],
            board[0] if board and board[0] >= 0 else None,
            (now - board[1]) * 1e-9 if board else None,
            pool.stack(worker)))
    return places


def death_notes(death: WorkerDeath, pool: PoolWatch, facts: Optional[dict]) -> list:
    """The notes that explain one dead worker, the last one saying what to do."""
    how = f"was killed by {death.signal}" if death.signal else \
        f"exited with status {death.status}"
    first = f"gpufeed.profile: DataLoader worker {death.worker} (pid {death.pid}) of " \
            f"{pool.name} {how}"
    if death.held:
        first += " while it held samples " + "; ".join(
            f"{_samples(t.samples)} (sent {(death.seen_ns - t.sent_ns) * 1e-9:.2f} s before)"
            for t in death.held)
    if death.sample is not None and death.sample[0] >= 0:
        first += f", in sample {death.sample[0]} (its fetch begun " \
                 f"{(death.seen_ns - death.sample[1]) * 1e-9:.2f} s before)"
    memory = death.memory
    limits = death.limits
    kills = oom_kills()
    killed = (kills - death.oom_kills_before
              if kills is not None and death.oom_kills_before is not None else None)
    second = "gpufeed.profile: its memory, sampled while it ran: "
    if memory.peak_bytes:
        second += f"{_mib(memory.first_bytes)} at first, {_mib(memory.peak_bytes)} at most"
        if memory.peak_sample is not None:
            second += f" (in sample {memory.peak_sample})"
    else:
        second += "not sampled (it ended first)"
    second += f"; against {limits.describe()}"
    if killed is not None:
        second += f"; the cgroup's OOM killer killed {killed} process(es) during the run"
    return [first + ".", second + ".", "gpufeed.profile: what to do: " +
            _death_advice(death, killed, facts) + "."]


def _death_advice(death: WorkerDeath, killed: Optional[int], facts: Optional[dict]) -> str:
    workers = (facts or {}).get("num_workers") or 0
    prefetch = (facts or {}).get("prefetch_factor") or 2
    grew = death.memory.peak_sample
    if killed or death.signal == "SIGKILL":
        why = ("the cgroup's OOM killer ended it" if killed else
               "SIGKILL is the kernel's OOM killer's signal (`dmesg` says if it was)")
        advice = [f"num_workers={max(1, workers - 1)}" if workers > 1 else None,
                  f"prefetch_factor={max(1, prefetch // 2)}" if prefetch > 1 else None]
        fix = " or ".join(a for a in advice if a) or "less memory an item"
        item = f"; or look at sample {grew}, where its memory peaked" if grew is not None else ""
        return f"{why}: fewer samples in memory at once, {fix}{item}"
    if death.signal in ("SIGSEGV", "SIGBUS", "SIGABRT", "SIGILL", "SIGFPE"):
        sample = death.sample[0] if death.sample else None
        target = f"sample {sample}" if sample is not None else "the samples it held"
        return (f"native code crashed in the Dataset's item: load {target} with num_workers=0 "
                "(python -X faulthandler) to see where")
    return ("something in the worker ended its process (os._exit, sys.exit or a signal sent "
            "to it): look at the samples it held")


def explain_failure(error: BaseException, notes: list) -> None:
    """Adds `notes` to `error` (PEP 678; printed to stderr where Python has no notes)."""
    add = getattr(error, "add_note", None)
    for note in notes:
        if add is not None:
            add(note)
        else:
            import sys

            print(note, file=sys.stderr)

