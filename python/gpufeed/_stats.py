"""gpufeed.LoaderStats: a loader's counters (Loader.stats()), typed; the JSON pipebench writes
for them is ``to_dict()`` (diagnosis::stats_json)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from ._record import DeprecatedMapping, Record, json_key


@dataclass(frozen=True, repr=False)
class StageStats(Record):
    """One loader stage's work.

    Attributes:
        busy_s: Thread-seconds the stage was busy.
        busy_frac: Its busy time over the wall time and its threads (0 to 1).
        items: What it handled: chunks read, images decoded, batches assembled or copied.
        extra: Keys this version has no field for.
    """

    busy_s: float
    busy_frac: float
    items: int
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, repr=False)
class TuningChange(Record):
    """A change the loader made to its own settings (``workers="auto"``, ``prefetch="auto"``).

    Attributes:
        time_s: When, in seconds on the profiler's clock.
        knob: The setting changed ("workers" or "prefetch").
        from_: Its value before (the JSON key "from").
        to: Its value after.
        stage: The stage that was busiest when it decided.
        reason: What it measured.
        extra: Keys this version has no field for.
    """

    time_s: float
    knob: str
    from_: int = field(metadata=json_key("from"))
    to: int
    stage: str
    reason: str
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, repr=False)
class QueueStats(Record):
    """The batches ready for the consumer.

    Attributes:
        mean_ready: Ready batches on average when the consumer asked for one.
        max_ready: The most ready at once.
        ready: Ready now.
        extra: Keys this version has no field for.
    """

    mean_ready: float
    max_ready: int
    ready: int
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, repr=False)
class CacheStats(Record):
    """The chunk cache and the reads from the file.

    Attributes:
        hits: Chunks found in the cache.
        misses: Chunks read.
        hit_rate: hits / (hits + misses); None before any lookup.
        peak_bytes: The most the cache held.
        chunk_reads: Chunk reads from the file.
        bytes_read: Bytes read from the file.
        extra: Keys this version has no field for.
    """

    hits: int
    misses: int
    hit_rate: Optional[float]
    peak_bytes: int
    chunk_reads: int
    bytes_read: int
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, repr=False)
class NetworkStats(Record):
    """What reading a file in object storage asked of the network.

    Attributes:
        requests: GET requests sent.
        bytes: Bytes received.
        retries: Requests sent again after a failure.
        throttled: Answers that asked to slow down (503 SlowDown, 429).
        peak_in_flight: The most requests running at once.
        read_requests: The requests the loader keeps in flight at most.
        backoff_s: Seconds spent backing off before retries.
        rate_wait_s: Seconds spent waiting on the client's own rate limit.
        rate_limit: Requests a second the client allows itself now (0: no limit).
        mean_first_byte_ms: Mean time to a response's first byte.
        request_s: Seconds the requests took, summed.
        extra: Keys this version has no field for.
    """

    requests: int
    bytes: int
    retries: int
    throttled: int
    peak_in_flight: int
    read_requests: int
    backoff_s: float
    rate_wait_s: float
    rate_limit: float
    mean_first_byte_ms: float
    request_s: float
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, repr=False)
class DecodeStats(Record):
    """Where each image of a jpeg-layout file was decoded (docs/gpu-decode.md).

    Attributes:
        mode: The ``decode=`` setting ("cpu", "gpu" or "auto").
        engines: The device decoders used, or None.
        engine_images: Images the device decoded.
        cpu_images: Images decoded on the host.
        cpu_reasons: Why an image went to the host: {reason: images}.
        failed_parts: Device decodes that failed and were done on the host.
        engine_device_s: Device seconds of the decodes.
        extra: Keys this version has no field for.
    """

    mode: str
    engines: Optional[List[str]]
    engine_images: int
    cpu_images: int
    cpu_reasons: Dict[str, int]
    failed_parts: int
    engine_device_s: float
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, repr=False)
class MemoryStats(Record):
    """The loader's batch memory.

    Attributes:
        slot_bytes: Bytes of one batch slot.
        pinned: Whether the host slots are pinned.
        pinned_bytes: Pinned host bytes held.
        device_bytes: Device bytes held.
        extra: Keys this version has no field for.
    """

    slot_bytes: int
    pinned: bool
    pinned_bytes: int
    device_bytes: int
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, repr=False)
class H2DRates(Record):
    """Host-to-device copy rates measured when the loader started.

    Attributes:
        pinned_bytes_per_s: From pinned memory.
        pageable_bytes_per_s: From pageable memory.
        extra: Keys this version has no field for.
    """

    pinned_bytes_per_s: float
    pageable_bytes_per_s: float
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, repr=False)
class LoaderStats(DeprecatedMapping, Record):
    """A loader's counters since it started or since ``reset_stats()`` (``Loader.stats()``).

    ``to_dict()`` is the JSON object pipebench writes for them (its ``cache``, ``memory``,
    ``tuning``), key for key; a key this version has no field for is kept in ``extra``.
    Reading it as a dict (``stats()["decode"]``) still works for one release, with a
    DeprecationWarning.

    Attributes:
        wall_s: Seconds the counters cover.
        workers: Worker threads now.
        cpu_share: This rank's share of the machine's cores.
        prefetch: Batches prepared ahead now.
        tuning: The changes the loader made to its settings, in order.
        batches: Batches delivered.
        samples: Samples delivered.
        fresh_batches: Batches read and decoded for the first time this epoch.
        echoed_batches: Batches delivered again by data echoing.
        reaugmented_batches: Echoed batches with a fresh augmentation.
        skipped_samples: Samples skipped after a decode failure (``on_error="skip"``).
        stages: Each loader stage's work, by stage name ("read", "decode", ...).
        bottleneck: The stage that holds the loader back, or None.
        queue: The batches ready for the consumer.
        cache: The chunk cache and the reads.
        network: Object storage's counters; None for a local file.
        decode: Where the images were decoded.
        memory: The batch memory.
        h2d: The host-to-device copy rates.
        extra: Keys this version has no field for.
    """

    wall_s: float
    workers: int
    cpu_share: int
    prefetch: int
    tuning: List[TuningChange]
    batches: int
    samples: int
    fresh_batches: int
    echoed_batches: int
    reaugmented_batches: int
    skipped_samples: int
    stages: Dict[str, StageStats]
    bottleneck: Optional[str]
    queue: QueueStats
    cache: CacheStats
    network: Optional[NetworkStats]
    decode: DecodeStats
    memory: MemoryStats
    h2d: H2DRates
    extra: Dict[str, Any] = field(default_factory=dict)
