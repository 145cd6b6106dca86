"""state_dict() / load_state_dict(): a restarted process finishes the epoch exactly as an
uninterrupted one, pixel for pixel; another world size gets every remaining sample once;
states of other files or seeds, and damaged ones, are refused."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap

import pytest

import gpufeed

# A worker process: consumes an epoch (or its first STOP batches) of the loader described by
# KEYWORDS, optionally after load_state_dict(STATE), and writes what it saw and its state.
WORKER = textwrap.dedent(
    """
    import hashlib, json, sys
    import gpufeed
    job = json.loads(sys.argv[1])
    loader = gpufeed.Loader(job["path"], **job["keywords"])
    if job.get("state") is not None:
        loader.load_state_dict(job["state"])
    seen = []
    for images, labels in loader.epoch(job["epoch"]):
        seen.append([hashlib.sha256(images.numpy().tobytes()).hexdigest(), labels.tolist()])
        if len(seen) == job.get("stop", -1):
            break
    json.dump({"seen": seen, "state": loader.state_dict()}, sys.stdout)
    """
)


def run_worker(path, keywords, epoch, stop=None, state=None) -> dict:
    job = {"path": path, "keywords": keywords, "epoch": epoch, "stop": stop, "state": state}
    out = subprocess.run([sys.executable, "-c", WORKER, json.dumps(job)], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def uninterrupted(path, keywords, epoch) -> list:
    loader = gpufeed.Loader(path, **keywords)
    return [[hashlib.sha256(images.numpy().tobytes()).hexdigest(), labels.tolist()]
            for images, labels in loader.epoch(epoch)]


@pytest.mark.parametrize("order", ["sequential", "random", "chunk"])
@pytest.mark.parametrize("echo", [1, 3])
def test_a_new_process_finishes_the_epoch_as_if_uninterrupted(synthetic_file, order, echo):
    keywords = dict(batch_size=64, workers=2, order=order, seed=7, augment="flip", echo=echo,
                    chunk_window=4)
    whole = uninterrupted(synthetic_file, keywords, epoch=2)
    stop = 5 if echo == 1 else 8  # with echo=3: between the echoes of the third batch
    first = run_worker(synthetic_file, keywords, epoch=2, stop=stop)
    second = run_worker(synthetic_file, keywords, epoch=2, state=first["state"])
    assert first["seen"] + second["seen"] == whole
    assert first["state"]["epoch"] == 2
    assert first["state"]["segments"] == [{"world_size": 1, "samples_per_rank": 64 * (
        stop if echo == 1 else 3)}]


@pytest.mark.parametrize("order", ["sequential", "random", "chunk"])
@pytest.mark.parametrize("new_world", [1, 3])
def test_another_world_size_gets_every_remaining_sample_once(synthetic_file, order, new_world):
    # 1000 samples; 2 ranks x 5 batches of 40 = 400 consumed; 600 left for 1 or 3 ranks.
    keywords = dict(batch_size=40, workers=2, order=order, seed=1)
    consumed = []
    state = None
    for rank in range(2):
        loader = gpufeed.Loader(synthetic_file, shard=(rank, 2), **keywords)
        for i, batch in enumerate(loader.epoch(0)):
            consumed.extend(batch.indices)
            if i == 4:
                break
        state = loader.state_dict()
    rest = []
    batches = set()
    for rank in range(new_world):
        loader = gpufeed.Loader(synthetic_file, shard=(rank, new_world), **keywords)
        loader.load_state_dict(state)
        epoch = loader.epoch(0)
        batches.add(len(epoch))
        for batch in epoch:
            rest.extend(batch.indices)
    assert len(batches) == 1, "every rank must run the same number of batches"
    assert sorted(consumed + rest) == list(range(1000))


def test_states_of_other_files_and_seeds_and_damaged_states_are_refused(synthetic_file,
                                                                          tmp_path):
    loader = gpufeed.Loader(synthetic_file, batch_size=50, seed=1)
    for _ in zip(range(3), loader.epoch(0)):
        pass
    state = loader.state_dict()
    json.dumps(state)  # plain data
    with pytest.raises(gpufeed.UsageError, match="seed=1 but this loader has seed=2"):
        gpufeed.Loader(synthetic_file, batch_size=50, seed=2).load_state_dict(state)
    other = gpufeed.write_synthetic(tmp_path / "other.h5", 1000, (16, 16, 3), chunk=32, seed=6)
    with pytest.raises(gpufeed.UsageError, match="belongs to another dataset"):
        gpufeed.Loader(other, batch_size=50, seed=1).load_state_dict(state)
    fresh = gpufeed.Loader(synthetic_file, batch_size=50, seed=1)
    for damage, message in [
        ({k: v for k, v in state.items() if k != "segments"}, 'no "segments"'),
        (dict(state, epoch="two"), '"epoch" is "two"'),
        (dict(state, segments=[{"world_size": 0, "samples_per_rank": 1}]), "world_size 0"),
        (dict(state, version=99), "version 99"),
        (dict(state, epoch=object()), "not the dict state_dict"),
        ("epoch 0", "not an object"),
    ]:
        with pytest.raises(gpufeed.UsageError, match=message):
            fresh.load_state_dict(damage)
    fresh.load_state_dict(state)  # the intact state still works
    assert sum(1 for _ in fresh.epoch(0)) == 17
