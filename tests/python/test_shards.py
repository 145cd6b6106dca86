"""Datasets of shards: gpufeed.pack(shard_size=) and h5pack convert --shard-size write a
directory of shards and its manifest; gpufeed.Loader reads it (or a glob, or a list of files,
local or s3://) as one dataset; parts packed by separate processes join in one manifest; a
pack killed mid-way goes on from its last whole shard."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import gpufeed
from test_s3 import moto, s3_env, upload  # noqa: F401 (fixtures)

HERE = os.path.dirname(os.path.abspath(__file__))
SHAPE = (8, 8, 3)
SAMPLES = 300


class Items:
    """A map-style dataset of distinct (pixels, label) items; `delay` seconds an item."""

    def __init__(self, n: int = SAMPLES, delay: float = 0.0) -> None:
        self.n, self.delay = n, delay

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int):
        if self.delay:
            time.sleep(self.delay)
        pixels = np.full(SHAPE, i % 251, dtype=np.uint8)
        pixels[0, 0, 0] = i // 251
        return pixels, i % 10


def samples_of(loader: gpufeed.Loader, epoch: int = 0) -> list:
    """(sample's first two pixels, label) in delivery order."""
    out = []
    for images, labels in loader.epoch(epoch):
        for image, label in zip(np.asarray(images), np.asarray(labels)):
            out.append((int(image.reshape(-1)[0]), int(image.reshape(-1)[1]), int(label)))
    return out


def shard_file(root: str, k: int, shards: int = 5) -> str:
    """Shard k's file in a directory packed in `shards` (under its prefix folder)."""
    return os.path.join(root, f"{k % min(16, shards):02d}", f"shard-{k:05d}-of-{shards:05d}.h5")


SETTINGS = dict(batch_size=32, workers=2, order="sequential", device="cpu", dtype="uint8")
SHARD_BYTES = 64 * 8 * 8 * 3  # 64 samples a shard


def test_packed_shards_read_as_the_one_file_of_the_same_items(tmp_path):
    one = gpufeed.pack(Items(), str(tmp_path / "one.h5"), seed=4)
    shards = gpufeed.pack(Items(), str(tmp_path / "shards"), seed=4, shard_size=SHARD_BYTES)
    manifest = json.load(open(os.path.join(shards, "manifest.json")))
    assert [s["samples"] for s in manifest["shards"]] == [64, 64, 64, 64, 44]
    assert manifest["samples"] == SAMPLES and manifest["layout"] == "raw"
    assert samples_of(gpufeed.Loader(shards, **SETTINGS)) == samples_of(gpufeed.Loader(one, **SETTINGS))
    # The same shards by a glob and by a list of files.
    files = [shard_file(shards, k) for k in range(5)]
    assert [s["path"] for s in manifest["shards"]] == [f[len(shards) + 1:] for f in files]
    # A glob sorts by path: the prefix folders' order, not the shards'.
    by_glob = gpufeed.Loader(str(tmp_path / "shards" / "0[0-4]" / "shard-*.h5"), **SETTINGS)
    by_list = gpufeed.Loader(files, **SETTINGS)
    assert samples_of(by_glob) == samples_of(by_list) == samples_of(gpufeed.Loader(one, **SETTINGS))
    assert "and 4 more" in by_list.path


def test_shards_mix_classes_across_the_whole_dataset(tmp_path):
    # A class-sorted source: each shard holds a slice of one permutation, not one class.
    class Sorted(Items):
        def __getitem__(self, i):
            pixels, _ = super().__getitem__(i)
            return pixels, i * 10 // SAMPLES

    shards = gpufeed.pack(Sorted(), str(tmp_path / "s"), shard_size=SHARD_BYTES)
    for k in range(4):  # the full shards (the last holds 44 samples)
        shard = gpufeed.Loader(shard_file(shards, k),
                               batch_size=64, device="cpu")
        assert len({int(v) for _, ls in shard.epoch(0) for v in np.asarray(ls)}) == 10
    # Read as one in chunk order, batches hold as many classes as a random order's.
    with __import__("warnings").catch_warnings():
        __import__("warnings").simplefilter("error", gpufeed.OrderWarning)
        gpufeed.Loader(shards, batch_size=32, order="chunk", device="cpu")


def test_parts_packed_by_two_processes_join_in_one_manifest(tmp_path):
    out = str(tmp_path / "parts")
    script = ("import sys; sys.path[:0] = [sys.argv[3]]; import gpufeed, test_shards; "
              "gpufeed.pack(test_shards.Items(), sys.argv[1], seed=4, shard_size=%d, part=sys.argv[2])"
              % SHARD_BYTES)
    procs = [subprocess.Popen([sys.executable, "-c", script, out, f"{i}/2", HERE]) for i in range(2)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    one = gpufeed.pack(Items(), str(tmp_path / "one.h5"), seed=4)
    assert samples_of(gpufeed.Loader(out, **SETTINGS)) == samples_of(gpufeed.Loader(one, **SETTINGS))


def test_a_killed_pack_goes_on_from_its_last_whole_shard(tmp_path):
    out = str(tmp_path / "killed")
    script = ("import sys; sys.path[:0] = [sys.argv[2]]; import gpufeed, test_shards; "
              "gpufeed.pack(test_shards.Items(delay=0.004), sys.argv[1], seed=4, shard_size=%d)"
              % SHARD_BYTES)
    proc = subprocess.Popen([sys.executable, "-c", script, out, HERE])
    first = shard_file(out, 0)
    deadline = time.monotonic() + 60
    while not os.path.exists(shard_file(out, 1)) and proc.poll() is None:
        assert time.monotonic() < deadline, "the pack wrote no shard"
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not os.path.exists(os.path.join(out, "manifest.json"))
    kept = os.stat(first).st_mtime_ns
    gpufeed.pack(Items(), out, seed=4, shard_size=SHARD_BYTES)
    assert os.stat(first).st_mtime_ns == kept  # not packed again
    assert not [f for _, _, fs in os.walk(out) for f in fs if ".tmp." in f]
    one = gpufeed.pack(Items(), str(tmp_path / "one.h5"), seed=4)
    assert samples_of(gpufeed.Loader(out, **SETTINGS)) == samples_of(gpufeed.Loader(one, **SETTINGS))


def test_a_pack_goes_on_only_with_the_plan_it_began_with(tmp_path):
    # Shards kept from a pack of another order or size would hold samples twice and lose others.
    out = str(tmp_path / "s")
    gpufeed.pack(Items(), out, seed=4, shard_size=SHARD_BYTES, part="0/2")
    with pytest.raises(gpufeed.UsageError, match=r"holds shards of another pack \(order \w+ "
                       r"then, \w+ now\): give the arguments it began with"):
        gpufeed.pack(Items(), out, seed=5, shard_size=SHARD_BYTES, part="1/2")
    with pytest.raises(gpufeed.UsageError, match=r"shard_samples 64 then, 128 now, shards 5 "
                       r"then, 3 now"):
        gpufeed.pack(Items(), out, seed=4, shard_size=2 * SHARD_BYTES)
    gpufeed.pack(Items(), out, seed=4, shard_size=SHARD_BYTES, part="1/2")
    assert sorted(s[:2] for s in samples_of(gpufeed.Loader(out, **SETTINGS))) == \
        sorted(s[:2] for s in samples_of(gpufeed.Loader(gpufeed.pack(
            Items(), str(tmp_path / "one.h5"), seed=4), **SETTINGS)))


def test_a_missing_shard_is_named(tmp_path):
    shards = gpufeed.pack(Items(), str(tmp_path / "s"), shard_size=SHARD_BYTES)
    os.remove(shard_file(shards, 2))
    with pytest.raises(gpufeed.FormatError, match=r"shard 2 of 5 \(.*shard-00002-of-00005.h5\)"):
        gpufeed.Loader(shards, device="cpu")


def test_h5pack_packs_shards_in_parts_and_resumes(tmp_path):
    tool = os.environ.get("GPUFEED_H5PACK")
    if not tool:
        pytest.skip("GPUFEED_H5PACK is not set (h5pack was not built)")
    out = str(tmp_path / "h5")
    run = lambda *a: subprocess.run([tool, "convert", "1000:16x16x3", out, "--shard-size",
                                     "200KB", "--workers", "1", *a], capture_output=True,
                                    text=True, timeout=120)
    part0 = run("--part", "0/2")
    assert part0.returncode == 0, part0.stderr
    assert not os.path.exists(os.path.join(out, "manifest.json"))
    part1 = run("--part", "1/2")
    assert part1.returncode == 0, part1.stderr
    manifest = json.load(open(os.path.join(out, "manifest.json")))
    assert manifest["samples"] == 1000 and len(manifest["shards"]) == 4
    again = run()
    assert "kept 4 whole shards" in again.stderr
    whole = subprocess.run([tool, "convert", "1000:16x16x3", str(tmp_path / "one.h5")],
                           capture_output=True, text=True, timeout=120)
    assert whole.returncode == 0
    settings = dict(SETTINGS, batch_size=100)
    assert samples_of(gpufeed.Loader(out, **settings)) == \
        samples_of(gpufeed.Loader(str(tmp_path / "one.h5"), **settings))


def stored_chunks(path: str):
    """(samples, samples a chunk, bytes stored) of each .h5 under `path` (a file or a directory
    of shards, in shard order)."""
    import glob

    import h5py

    files = [path] if os.path.isfile(path) else sorted(
        glob.glob(os.path.join(path, "**", "*.h5"), recursive=True), key=os.path.basename)
    out = []
    for name in files:
        with h5py.File(name, "r") as f:
            images = f["images"]
            out.append((images.shape[0], images.chunks[0], images.id.get_storage_size()))
    return out


def test_raw_shards_hold_whole_chunks_and_store_what_one_file_does(tmp_path):
    # A short chunk is stored at its full size: shards of 130 samples in chunks of 64 stored
    # 1,472 rows for 1,000 samples (one file: 1,024). Shards of 192 (the 100 KB asked, rounded
    # up to whole chunks) store no row more than their samples: the last one's chunk is its 40.
    tool = os.environ.get("GPUFEED_H5PACK")
    if not tool:
        pytest.skip("GPUFEED_H5PACK is not set (h5pack was not built)")
    pack = lambda out, *a: subprocess.run(
        [tool, "convert", "1000:16x16x3", str(tmp_path / out), "--chunk", "64", "--workers", "1",
         *a], capture_output=True, text=True, timeout=120, check=True)
    pack("one.h5")
    pack("h5", "--shard-size", "100KB")
    one, shards = stored_chunks(str(tmp_path / "one.h5")), stored_chunks(str(tmp_path / "h5"))
    assert [n for n, _, _ in shards] == [192] * 5 + [40]
    assert sum(stored for _, _, stored in shards) == 1000 * 16 * 16 * 3
    assert one[0][2] == 16 * 64 * 16 * 16 * 3
    # gpufeed.pack the same way: shards of 40 samples asked, 48 (3 chunks of 16) written.
    packed = gpufeed.pack(Items(), str(tmp_path / "p"), seed=4, chunk=16,
                          shard_size=40 * 8 * 8 * 3)
    assert [(n, k) for n, k, _ in stored_chunks(packed)] == [(48, 16)] * 6 + [(12, 12)]
    settings = dict(SETTINGS, batch_size=100)
    one_file = gpufeed.pack(Items(), str(tmp_path / "p.h5"), seed=4, chunk=16)
    assert samples_of(gpufeed.Loader(packed, **settings)) == \
        samples_of(gpufeed.Loader(one_file, **settings))


def test_shards_in_object_storage_by_prefix_glob_and_mixed_list(s3_env, tmp_path):
    shards = gpufeed.pack(Items(), str(tmp_path / "s"), seed=4, shard_size=SHARD_BYTES)
    for folder, _, names in os.walk(shards):
        for name in names:
            local_file = os.path.join(folder, name)
            upload(local_file, "ds/" + os.path.relpath(local_file, shards))
    local = samples_of(gpufeed.Loader(shards, **SETTINGS))
    assert samples_of(gpufeed.Loader("s3://data/ds/", **SETTINGS)) == local
    assert samples_of(gpufeed.Loader("s3://data/ds/0?/shard-*.h5", **SETTINGS)) == local
    mixed = [shard_file(shards, 0), "s3://data/ds/0[1-4]/shard-*.h5"]
    assert samples_of(gpufeed.Loader(mixed, **SETTINGS)) == local
    # Chunk order reads every shard's chunks through one plan; cache_dir keeps each shard's.
    cache = str(tmp_path / "cache")
    loader = gpufeed.Loader("s3://data/ds/", batch_size=32, order="chunk", device="cpu",
                            cache_dir=cache)
    first = sorted(s[2] for s in samples_of(loader, 0))
    assert first == sorted(s[2] for s in local)
    cached = [d for d in os.listdir(os.path.join(cache, "gpufeed-objects"))]
    assert len(cached) == 5  # a folder for each shard's URL and ETag


@pytest.mark.parametrize("store", ["raw", "jpeg"])
def test_the_manifest_says_where_each_shards_metadata_lies(s3_env, tmp_path, store):
    # The bytes before each shard's first image and after its last: what opening it in object
    # storage fetches (formats_test counts the GETs and bytes); the shards read as the local ones.
    class Big(Items):
        def __getitem__(self, i: int):
            rng = np.random.default_rng(i)
            return rng.integers(0, 256, (64, 64, 3), dtype=np.uint8), i % 10

    shard_size = 256 * 64 * 64 * 3 if store == "raw" else 1_100_000  # JPEGs of noise: ~4.3 KB
    shards = gpufeed.pack(Big(1024), str(tmp_path / "s"), seed=4, shard_size=shard_size,
                          store=store)
    with open(os.path.join(shards, "manifest.json")) as f:
        listed = json.load(f)["shards"]
    assert len(listed) >= 2, listed
    for s in listed:
        assert 0 < s["head_bytes"] < 64 << 10 and 0 < s["tail_bytes"] < 64 << 10, s
        assert s["head_bytes"] + s["tail_bytes"] < s["bytes"] // 8, s
    for folder, _, names in os.walk(shards):
        for name in names:
            local_file = os.path.join(folder, name)
            upload(local_file, "big/" + os.path.relpath(local_file, shards))
    settings = dict(batch_size=64, order="sequential", device="cpu", dtype="uint8")
    local = samples_of(gpufeed.Loader(shards, **settings))
    assert samples_of(gpufeed.Loader("s3://data/big/", **settings)) == local


def test_a_glob_that_matches_no_object_is_a_usage_error(s3_env):
    with pytest.raises(gpufeed.UsageError, match="no file matches"):
        gpufeed.Loader("s3://data/nothing-here/*.h5", device="cpu")


@pytest.fixture
def gs_env(moto, monkeypatch):
    """gs:// through Google Cloud Storage's XML API, spelled as for GCS (its endpoint variable and
    an HMAC key), against the local S3 server: no AWS variable is set."""
    for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_SESSION_TOKEN",
                 "AWS_NO_SIGN_REQUEST", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("GS_ENDPOINT_URL", moto.url)
    monkeypatch.setenv("GS_ACCESS_KEY_ID", "GOOG1EHMACKEYID")
    monkeypatch.setenv("GS_SECRET_ACCESS_KEY", "hmac-secret-never-shown")
    return moto


def test_gs_urls_read_through_the_xml_api(gs_env, tmp_path):
    shards = gpufeed.pack(Items(), str(tmp_path / "s"), seed=4, shard_size=SHARD_BYTES)
    for folder, _, names in os.walk(shards):
        for name in names:
            local_file = os.path.join(folder, name)
            gpufeed._native.upload_file(local_file, "gs://data/gcs/" + os.path.relpath(local_file, shards))
    local = samples_of(gpufeed.Loader(shards, **SETTINGS))
    assert samples_of(gpufeed.Loader("gs://data/gcs/", **SETTINGS)) == local
    by_glob = gpufeed.Loader("gs://data/gcs/0?/shard-*.h5", **SETTINGS)
    assert samples_of(by_glob) == local
    assert by_glob.stats().network.requests > 0
    with pytest.raises(gpufeed.FormatError, match=r"gs://data/gcs/missing.h5") as error:
        gpufeed.Loader("gs://data/gcs/missing.h5", device="cpu")
    assert "hmac-secret-never-shown" not in str(error.value)


def test_pipebench_reads_shards_by_directory_and_by_list(tmp_path):
    tool = os.environ.get("GPUFEED_PIPEBENCH")
    if not tool:
        pytest.skip("GPUFEED_PIPEBENCH is not set (pipebench was not built)")
    shards = gpufeed.pack(Items(), str(tmp_path / "s"), shard_size=SHARD_BYTES)
    for data in ([shards], [shard_file(shards, 0), str(tmp_path / "s" / "0[1-4]" / "shard-*.h5")]):
        out = str(tmp_path / "run.json")
        done = subprocess.run([tool, "--data", *data, "--model", "none", "--steps", "3",
                               "--batch", "32", "--device", "cpu", "--json", out],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert json.load(open(out))["dataset"]["samples"] == SAMPLES
