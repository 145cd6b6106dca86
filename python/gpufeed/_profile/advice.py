"""The facts of the DataLoader pool that fed a profiled loop, for the diagnosis's advice, with
the remedy measured where the dataset's items were the cost: a sample of them packed as
gpufeed.pack would and read back by a gpufeed.Loader (gpufeed._pack does both)."""

from __future__ import annotations

import os
import statistics
import time
from typing import Any, Optional

from .. import _native
from .fetches import FetchCounters
from .probe import generator_states, set_generator_states


def input_pool(prof: Any) -> Optional[_native.InputPoolFacts]:
    """The pool of the DataLoader that fed profile `prof`'s training steps, with what its
    fetches cost."""
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
    warm = prof._warm_steps.get(key)
    if warm:
        pool.warm_step_ns = facts["warm_step_ns"] = int(statistics.median(warm))
    facts["fetch"] = fetches.as_dict()
    dataset = dataloaders.datasets.get(key)
    if prof._measure_pack and _dataset_is_the_cost(prof, fetches, dataset):
        from .._pack import PackedRate, measure_rate

        shape = facts.get("batch_shape") or []
        size = tuple(shape[-2:]) if len(shape) == 4 else None
        # Its items draw from the process's random generators (a transform's crop): the loop
        # goes on from the numbers it left, as without the profile.
        states = generator_states()
        try:
            packed = measure_rate(dataset, facts["batch_size"] or 1, size)
        except Exception as error:  # noqa: BLE001 - a remedy not measured never fails the loop
            packed = PackedRate(0.0, 0, "raw", "gpufeed could not read a packed sample of it "
                                f"({type(error).__name__}: {error})")
        finally:
            set_generator_states(states)
        pool.packed_samples_per_s, pool.packed_items = packed.samples_per_s, packed.items
        pool.packed_store, pool.pack_note = packed.store, packed.note
        pool.packed_core_ns_per_sample = packed.core_ns_per_sample
        pool.packed_consumer_ns_per_sample = packed.consumer_ns_per_sample
        facts["packed_sample"] = {"samples_per_s": packed.samples_per_s, "items": packed.items,
                                  "store": packed.store, "note": packed.note or None,
                                  "core_ns_per_sample": packed.core_ns_per_sample,
                                  "consumer_ns_per_sample": packed.consumer_ns_per_sample}
    if dataset is not None:
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
    wall = _native.now_ns() - prof._entered_ns - prof._wait_ns
    cpu = time.process_time_ns() - prof._entered_cpu_ns - prof._wait_cpu_ns
    return max(0.0, cpu / wall) if wall > 0 else 0.0


def _dataset_is_the_cost(prof: Any, fetches: FetchCounters, dataset: Any) -> bool:
    """The loop waited for input (TF's "moderately input-bound" or worse) and the dataset's
    items, not collate, took the workers' time: worth measuring what packing it would give.
    Only map-style datasets (len() and [i]) can be packed."""
    elapsed = _native.now_ns() - prof._entered_ns
    return (
        dataset is not None and hasattr(dataset, "__getitem__") and hasattr(dataset, "__len__")
        and elapsed > 0 and prof._wait_ns / elapsed >= 0.05 and fetches.samples > 0
        and fetches.fetch_ns - fetches.collate_ns >= fetches.collate_ns
    )
