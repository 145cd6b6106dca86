"""The wheel where a user installs it: a machine with none of the build dependencies (no
compiler, no -dev packages, no CUDA), NumPy and PyPI's h5py (which bundles its own HDF5)
beside it. Run as ``python smoke.py h5py-first|gpufeed-first``: the two HDF5 libraries meet
in one process in that import order, each writes a file the other reads, and the pixels are
compared; then the command lines and a profile around a loop.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

order = sys.argv[1] if len(sys.argv) > 1 else "h5py-first"
if order == "h5py-first":
    import h5py
    import gpufeed
elif order == "gpufeed-first":
    import gpufeed
    import h5py
else:
    sys.exit(f"usage: smoke.py h5py-first|gpufeed-first (not {order!r})")
import numpy as np  # noqa: E402

scripts = os.path.dirname(sys.executable)


def loader_images(path: str, **keywords) -> tuple:
    """Every sample of `path` in file order as the loader delivers it: NCHW floats of the bytes."""
    loader = gpufeed.Loader(path, batch_size=16, order="sequential", workers=2, mean=[0, 0, 0],
                            stddev=[1, 1, 1], output="numpy", **keywords)
    images, labels = [], []
    for x, y in loader:
        images.append(x.copy())
        labels.append(y.copy())
    loader.close()
    return np.concatenate(images), np.concatenate(labels)


with tempfile.TemporaryDirectory() as work:
    # gpufeed writes, h5py reads: the same bytes the loader delivers.
    ours = gpufeed.write_synthetic(os.path.join(work, "ours.h5"), 96, (12, 10, 3), chunk=16)
    with h5py.File(ours, "r") as f:
        pixels, labels = f["images"][...], f["labels"][...]
    images, read_labels = loader_images(ours)
    assert np.array_equal(images, pixels.transpose(0, 3, 1, 2).astype(np.float32))
    assert np.array_equal(read_labels, labels)

    # h5py writes a file of its own layout, gpufeed reads it by naming its datasets.
    theirs = os.path.join(work, "theirs.h5")
    rng = np.random.default_rng(7)
    written = rng.integers(0, 256, (40, 9, 11, 3), dtype=np.uint8)
    with h5py.File(theirs, "w") as f:
        f.create_dataset("x", data=written, chunks=(8, 9, 11, 3))
        f.create_dataset("y", data=np.arange(40) % 5)
    images, read_labels = loader_images(theirs, images="/x", labels="/y")
    assert np.array_equal(images, written.transpose(0, 3, 1, 2).astype(np.float32))
    assert np.array_equal(read_labels, np.arange(40) % 5)
    print(f"{order}: gpufeed (HDF5 inside the wheel) and h5py (HDF5 {h5py.version.hdf5_version})"
          " read each other's files, pixels equal")

    # The command lines from the wheel.
    info = subprocess.run([os.path.join(scripts, "h5pack"), "info", ours, "--json"],
                          check=True, capture_output=True, text=True).stdout
    assert json.loads(info)["samples"] == 96, info
    model = subprocess.run([os.path.join(scripts, "pipebench"), "--data", ours, "--batch", "16",
                            "--model", "cnn"], capture_output=True, text=True)
    assert model.returncode == 2 and model.stderr.count("\n") == 1, model.stderr
    assert "--model none" in model.stderr, model.stderr  # what works without LibTorch
    print("pipebench --model cnn:", model.stderr.strip())

    # A profile around a loop, its trace read back by pipebench analyze.
    trace = os.path.join(work, "run.json")
    loader = gpufeed.Loader(ours, batch_size=16, workers=2, output="numpy")
    with gpufeed.profile(trace=trace) as prof:
        for x, y in loader:
            time.sleep(0.002)
    loader.close()
    assert prof.results().steps == 6, prof.summary()
    analysis = os.path.join(work, "analysis.json")
    subprocess.run([os.path.join(scripts, "pipebench"), "analyze", trace, "--json", analysis],
                   check=True, capture_output=True)
    with open(analysis) as f:
        assert json.load(f)["verdict"], "pipebench analyze gave a verdict"
    # A torch.profiler trace (Kineto's format) of a DataLoader loop: read without torch.
    kineto = os.path.join(work, "kineto.json")
    events = []
    for step in range(12):
        begin = 1000 + step * 10000
        events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}",
                       "pid": 1, "tid": 1, "ts": begin, "dur": 9000})
        events.append({"ph": "X", "cat": "user_annotation",
                       "name": "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
                       "pid": 1, "tid": 1, "ts": begin, "dur": 6000})
    with open(kineto, "w") as f:
        json.dump({"schemaVersion": 1, "traceEvents": events}, f)
    subprocess.run([os.path.join(scripts, "pipebench"), "analyze", kineto, "--json", analysis],
                   check=True, capture_output=True)
    with open(analysis) as f:
        verdict = json.load(f)["verdict"]
    assert verdict == "highly input-bound", verdict
    print("h5pack info, pipebench analyze and gpufeed.profile ran from the wheel")
    shutil.rmtree(work, ignore_errors=True)
print("wheel smoke test passed")
