"""The facts of the DataLoader pool that fed a profiled loop, for the diagnosis's advice, with
the remedy measured where the dataset's items were the cost: a sample of them packed as
gpufeed.pack would and read back by a gpufeed.Loader, in a child process with limits
(remedy.py). After a loop that failed nothing of the user's runs: no item, no transform."""

from __future__ import annotations

import os
import statistics
from typing import Any, Optional

from .. import _native
from .fetches import FetchCounters
from .outputs import fed_samples


def input_pool(prof: Any, failed: bool) -> Optional[_native.InputPoolFacts]:
    """The pool of the DataLoader that fed profile `prof`'s training steps, with what its
    fetches cost; `failed`: the loop ended with an exception (no remedy measured)."""
    dataloaders = prof._dataloaders
    key = dataloaders.fed()
    if key is None:
        return None
    facts, counters = dataloaders.facts[key], dataloaders.counters[key]
    fetches = counters.fetches
    pool = _native.InputPoolFacts()
    pool.workers = facts["num_workers"] or 0
    pool.batches = fetches.batches
    pool.samples = fetches.samples
    pool.fetch_ns = fetches.fetch_ns
    pool.collate_ns = fetches.collate_ns
    pool.startup_ns = counters.startup_ns
    pool.starts = counters.starts
    pool.persistent_workers = bool(facts["persistent_workers"])
    pool.pin_memory = bool(facts["pin_memory"])
    pool.prefetch_factor = facts["prefetch_factor"] or 0
    pool.cuda = bool(dataloaders.cuda_batches)
    pool.cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 0
    pool.step_cores = facts["step_cores"] = _step_cores(prof)
    # The run's samples a second as results() gives them: the advice predicts that figure.
    pool.run_wall_ns = prof.clock.wall_ns()
    pool.run_samples = fed_samples(prof)
    pool.other_cores = facts["other_cores"] = _other_cores(prof, fetches, pool.workers)
    warm = prof.probes.warm_steps.get(key)
    if warm:
        pool.warm_step_ns = facts["warm_step_ns"] = int(statistics.median(warm))
    facts["fetch"] = fetches.as_dict()
    dataset = dataloaders.datasets.get(key)
    if not failed and prof._measure_pack and _dataset_is_the_cost(prof, fetches, dataset):
        from .remedy import measure_apart

        shape = facts.get("batch_shape") or []
        size = tuple(shape[-2:]) if len(shape) == 4 else None
        # In a child process: its items may end it, hang or take the memory, never this one;
        # its random draws are its own.
        packed = measure_apart(dataset, facts["batch_size"] or 1, size)
        pool.packed_samples_per_s, pool.packed_items = packed.samples_per_s, packed.items
        pool.packed_store, pool.pack_note = packed.store, packed.note
        pool.packed_core_ns_per_sample = packed.core_ns_per_sample
        pool.packed_consumer_ns_per_sample = packed.consumer_ns_per_sample
        facts["packed_sample"] = {"samples_per_s": packed.samples_per_s, "items": packed.items,
                                  "store": packed.store, "note": packed.note or None,
                                  "core_ns_per_sample": packed.core_ns_per_sample,
                                  "consumer_ns_per_sample": packed.consumer_ns_per_sample}
    if dataset is not None and not failed:
        from .._pack import transform_advice

        # The advice keeps the dataset's transform: the model sees the same inputs.
        pool.pack_loader_keywords, pool.pack_transform_note = transform_advice(dataset)
        facts["transform"] = pool.pack_transform_note or None
    return pool


def _step_cores(prof: Any) -> float:
    """Cores the loop's steps kept busy: the process's CPU time outside its waits for input
    over the steps' wall time. The waits' CPU time is the input's, not the step's: the loading
    a loop without workers does itself (and the intra-op threads its transforms start), the
    batches a loop with workers takes from them."""
    wall = prof.clock.wall_ns() - prof.waits.wait_ns
    cpu = prof.clock.exited_cpu_ns - prof.clock.entered_cpu_ns - prof.waits.wait_cpu_ns
    return max(0.0, cpu / wall) if wall > 0 else 0.0


def _other_cores(prof: Any, fetches: FetchCounters, workers: int) -> float:
    """Cores the machine's other processes kept busy over the run, on average: the machine's
    busy CPU time on this process's cores less this process's own and its DataLoader workers'
    (their fetches' time). A step and a loader share what is left."""
    clock = prof.clock
    wall = clock.wall_ns()
    if clock.entered_machine_ns < 0 or clock.exited_machine_ns < 0 or wall <= 0:
        return 0.0
    busy = clock.exited_machine_ns - clock.entered_machine_ns
    own = clock.exited_cpu_ns - clock.entered_cpu_ns + (fetches.fetch_ns if workers else 0)
    return max(0.0, (busy - own) / wall)


def _dataset_is_the_cost(prof: Any, fetches: FetchCounters, dataset: Any) -> bool:
    """The loop waited for input (TF's "moderately input-bound" or worse) and the dataset's
    items, not collate, took the workers' time: worth measuring what packing it would give.
    Only map-style datasets (len() and [i]) can be packed."""
    elapsed = prof.clock.wall_ns()
    return (
        dataset is not None and hasattr(dataset, "__getitem__") and hasattr(dataset, "__len__")
        and elapsed > 0 and prof.waits.wait_ns / elapsed >= 0.05 and fetches.samples > 0
        and fetches.fetch_ns - fetches.collate_ns >= fetches.collate_ns
    )
