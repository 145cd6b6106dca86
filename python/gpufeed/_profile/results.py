"""gpufeed.ProfileResults: a finished profile's results (profile.results()), typed; the JSON
the profile writes (``json=``) is ``to_dict()``: pipebench's --json keys and the profile's own."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from .._record import DeprecatedMapping, Record
from .._stats import DecodeStats


@dataclass(frozen=True, repr=False)
class IdleByCause(Record):
    """The device's idle time by cause, each a share of the steps' time (0 to 1); the causes
    but input_wait are None when there was nothing to analyze (no steps).

    Attributes:
        input_wait: Waiting for the next batch.
        host_sync: Host syncs (``.item()``, ``.cpu()``, ``synchronize``).
        launch: Launch overhead.
        other: The rest.
        extra: Keys this version has no field for.
    """

    input_wait: float
    host_sync: Optional[float]
    launch: Optional[float]
    other: Optional[float]
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, repr=False)
class ProfileStage(Record):
    """An input stage over the profile.

    Attributes:
        busy_frac: Its busy time over the wall time and its threads (0 to 1).
        items: What it handled.
        busy_ns: Thread-nanoseconds it was busy.
        share_during_wait: Threads busy in it, on average, while the loop waited for input;
            None where the diagnosis did not measure it.
        extra: Keys this version has no field for.
    """

    busy_frac: float
    items: int
    busy_ns: int
    share_during_wait: Optional[float]
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, repr=False)
class EchoCounts(Record):
    """The batches by how they were made (data echoing).

    Attributes:
        fresh_batches: Read and decoded for the first time this epoch.
        echoed_batches: Delivered again.
        reaugmented_batches: Delivered again with a fresh augmentation.
        extra: Keys this version has no field for.
    """

    fresh_batches: int
    echoed_batches: int
    reaugmented_batches: int
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, repr=False)
class RecorderCounts(Record):
    """The profile's own recorder.

    Attributes:
        enabled: Whether it recorded.
        events: Ranges recorded.
        dropped: Ranges lost to a full buffer.
        extra: Keys this version has no field for.
    """

    enabled: bool
    events: int
    dropped: int
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, repr=False)
class CuptiCounts(Record):
    """CUPTI's records of the device.

    Attributes:
        records: Activity records taken.
        dropped_records: Records CUPTI dropped.
        dropped_buffers: Buffers CUPTI dropped.
        clock_drift_ns: How far CUPTI's clock moved from the host's over the profile.
        extra: Keys this version has no field for.
    """

    records: int
    dropped_records: int
    dropped_buffers: int
    clock_drift_ns: int
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, repr=False)
class PracticeCheck(Record):
    """One practice check (docs/diagnosis.md).

    Attributes:
        name: The check ("host_sync", "determinism", "training_loop", ...).
        status: "ok", "info" or "warn".
        finding: What it found.
        advice: What to do, or None.
        extra: Keys this version has no field for.
    """

    name: str
    status: str
    finding: str
    advice: Optional[str]
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, repr=False)
class HostSites(Record):
    """Calls counted inside the training steps (host reads, tensors moved to the host).

    Attributes:
        count: Calls in all.
        per_step: Calls a step; None without steps.
        sites: Where they were, the commonest first: each {"where": "train.py:42",
            "call": ".item()", "count": n, "file": path}.
        extra: Keys this version has no field for.
    """

    count: int
    per_step: Optional[float]
    sites: List[Dict[str, Any]]
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, repr=False)
class ProfileResults(DeprecatedMapping, Record):
    """A finished profile's diagnosis as data (``profile.results()``).

    ``to_dict()`` is the JSON the profile writes (``json=``), key for key: pipebench's --json
    keys and the profile's own. A key this version has no field for is kept in ``extra``.
    Reading it as a dict (``results()["samples_per_s"]``) still works for one release, with a
    DeprecationWarning.

    Attributes:
        samples_per_s: Samples a second the loop took in.
        device_util: The device's busy share of the steps' time (CUPTI's kernels on a CUDA
            device, the steps elsewhere); None when there was nothing to analyze.
        idle_by_cause: The idle time by cause.
        bottleneck_stage: The input stage that holds the loop back, or None.
        stages: Each stage's work, by name, of the gpufeed.Loader that fed the loop; empty
            without one (a DataLoader's "dataset" and "collate" are in ``profile``).
        echo: The batches by how they were made.
        decode: Where the images were decoded; None when nothing was decoded.
        steps: Training steps.
        epochs: Epochs of the input.
        wall_s: Seconds the profile covers.
        samples: Samples that fed the training steps.
        device: "cuda" or "cpu".
        recorder: The profile's recorder.
        cupti: CUPTI's records; None without CUPTI.
        profile: The diagnosis in detail (its stages, gaps and ``recommendations``), as
            pipebench's --json writes it; None when nothing was recorded. Its shape follows
            the diagnosis, so it stays a dict.
        verdict: "highly input-bound", "not input-bound", ...; None when there was nothing to
            analyze (the key is then absent from ``to_dict()``).
        practices: The practice checks.
        inputs: The DataLoaders the loop read, each a dict of its settings and its own
            counters (batches, samples, fetches, starts), its ``role`` ("training" or
            "evaluation") and whether it is the one ``diagnosed``.
        timed_batches: Batches timed as waits for input.
        host_reads: Host reads inside the steps (``.item()``, ``.tolist()``, ...).
        host_tensor_moves: Tensors moved to the host inside the steps.
        run: The whole run: ``window_s``, its ``windows`` and ``epochs`` and their
            ``trends`` (docs/diagnosis.md).
        stalls: The stall reports, each a dict with its ``text``.
        worker_deaths: The DataLoader workers that died: worker, pid, signal, status, the
            samples held, their peak memory and ``notes``.
        notes: What the profile could not watch.
        extra: Keys this version has no field for.
    """

    samples_per_s: float
    device_util: Optional[float]
    idle_by_cause: IdleByCause
    bottleneck_stage: Optional[str]
    stages: Dict[str, ProfileStage]
    echo: EchoCounts
    decode: Optional[DecodeStats]
    steps: int
    epochs: int
    wall_s: float
    samples: int
    device: str
    recorder: RecorderCounts
    cupti: Optional[CuptiCounts]
    profile: Optional[Dict[str, Any]]
    verdict: Optional[str]
    practices: List[PracticeCheck]
    inputs: List[Dict[str, Any]]
    timed_batches: int
    host_reads: HostSites
    host_tensor_moves: HostSites
    run: Dict[str, Any]
    stalls: List[Dict[str, Any]]
    worker_deaths: List[Dict[str, Any]]
    notes: List[str]
    extra: Dict[str, Any] = field(default_factory=dict)
