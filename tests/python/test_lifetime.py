"""A batch lives as long as Python holds it: kept tensors keep their pixels, tensors may be freed
on any thread, and a consumer that keeps every slot gets an error instead of a hang."""

from __future__ import annotations

import gc
import queue
import threading
import time

import pytest
import torch

import gpufeed


def test_a_held_tensor_keeps_its_pixels_while_the_loader_runs_on(synthetic_file):
    loader = gpufeed.Loader(synthetic_file, batch_size=100, workers=2, prefetch=4, order="random")
    kept = []
    for epoch in range(3):
        for i, (images, labels) in enumerate(loader.epoch(epoch)):
            if i == 3:
                kept.append((images, labels, images.clone(), labels.clone()))
    # Three of the five slots are held by `kept`; the loader reused the others for 27 batches.
    for images, labels, images_copy, labels_copy in kept:
        assert torch.equal(images, images_copy) and torch.equal(labels, labels_copy)


def test_a_tensor_kept_past_the_loop_and_the_loader(synthetic_file):
    loader = gpufeed.Loader(synthetic_file, batch_size=100, workers=2)
    images, _ = next(iter(loader.epoch(0)))
    copy = images.clone()
    del loader
    gc.collect()
    assert torch.equal(images, copy)


def test_tensors_released_on_another_thread(synthetic_file):
    # prefetch=1: two slots. The consumer hands every batch to a thread that lets it go a bit
    # later, so the consumer often asks while both slots are held elsewhere.
    loader = gpufeed.Loader(synthetic_file, batch_size=50, workers=2, prefetch=1, order="random")
    handoff: queue.Queue = queue.Queue()

    def release_later():
        while True:
            item = handoff.get()
            if item is None:
                return
            time.sleep(0.01)
            del item

    thread = threading.Thread(target=release_later)
    thread.start()
    seen = []
    try:
        for epoch in range(2):
            for images, labels in loader.epoch(epoch):
                seen.extend(labels.tolist())
                handoff.put((images, labels))
                del images, labels
    finally:
        handoff.put(None)
        thread.join()
    assert len(seen) == 2000


def test_keeping_every_slot_is_an_error_naming_prefetch(synthetic_file):
    loader = gpufeed.Loader(synthetic_file, batch_size=100, workers=2, prefetch=2)
    kept = []
    with pytest.raises(gpufeed.UsageError, match="batch slots are held.*prefetch"):
        for batch in loader.epoch(0):
            kept.append(batch)
    assert len(kept) == 3  # prefetch + 1 slots
    kept.clear()
    assert sum(images.shape[0] for images, _ in loader.epoch(1)) == 1000
