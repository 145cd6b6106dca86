"""Bad input reaches Python as one clear exception of the right class, never a crash or a hang;
Ctrl-C in the loop raises KeyboardInterrupt promptly and the next epoch works."""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import pytest

import gpufeed

from conftest import pixels


def test_the_exception_classes():
    assert issubclass(gpufeed.FormatError, gpufeed.Error)
    assert issubclass(gpufeed.PipelineError, gpufeed.Error)
    assert issubclass(gpufeed.UsageError, gpufeed.Error)
    assert issubclass(gpufeed.UsageError, ValueError)
    assert issubclass(gpufeed.Error, Exception)


def test_missing_file(tmp_path):
    path = str(tmp_path / "missing.h5")
    with pytest.raises(gpufeed.FormatError, match="missing.h5"):
        gpufeed.Loader(path)


def test_not_an_hdf5_file(tmp_path):
    path = tmp_path / "text.h5"
    path.write_text("hello\n" * 100)
    with pytest.raises(gpufeed.FormatError, match="text.h5"):
        gpufeed.Loader(path)


def test_a_labels_dataset_that_is_not_there(h5py_file):
    with pytest.raises(gpufeed.FormatError, match="no dataset /nope"):
        gpufeed.Loader(h5py_file, labels="/nope")


@pytest.mark.parametrize(
    "keywords, keyword",
    [
        (dict(batch_size=0), "batch_size"),
        (dict(batch_size=100000), "batch_size"),
        (dict(batch_size="64"), "batch_size"),
        (dict(workers=-1), "workers"),
        (dict(prefetch=1000), "prefetch"),
        (dict(order="shuffled"), "order"),
        (dict(echo=0), "echo"),
        (dict(echo="sometimes"), "echo"),
        (dict(augment="rotate"), "augment"),
        (dict(augment="crop-flip"), "augment"),
        (dict(dtype="int8"), "dtype"),
        (dict(device="tpu"), "device"),
        (dict(size=(0, 4)), "size"),
        (dict(size=(8, 8)), "size"),
        (dict(mean=[1.0]), "mean"),
        (dict(shard=(3, 2)), "shard"),
        (dict(cache_bytes=-5), "cache_bytes"),
        (dict(on_error="ignore"), "on_error"),
        (dict(layout="hwc"), "layout"),
        (dict(output="jax"), "output"),
    ],
)
def test_bad_keyword_values_are_usage_errors_naming_the_keyword(h5py_file, keywords, keyword):
    with pytest.raises(gpufeed.UsageError) as raised:
        gpufeed.Loader(h5py_file, **keywords)
    message = str(raised.value)
    assert keyword in message, message
    loader_part = message.split("h5pack convert")[0]  # a tool's command line may follow
    assert "--" not in loader_part, f"a command-line flag in a Python error: {message}"
    assert "\n" not in message


def test_unknown_keyword_is_a_type_error(h5py_file):
    with pytest.raises(TypeError):
        gpufeed.Loader(h5py_file, batch=64)


def damaged_file(directory) -> str:
    """A deflated file whose chunk 3 holds garbage (h5py's chunk query finds its bytes)."""
    import h5py

    path = os.path.join(directory, "damaged.h5")
    data = pixels(200)
    with h5py.File(path, "w") as f:
        f.create_dataset("images", data=data, chunks=(20,) + data.shape[1:], compression="gzip")
        f.create_dataset("labels", data=np.zeros(200, dtype=np.int64))
    with h5py.File(path, "r") as f:
        info = f["images"].id.get_chunk_info(3)
    with open(path, "r+b") as f:
        f.seek(info.byte_offset + info.size // 4)
        f.write(b"\x5a" * (info.size // 2))
    return path


def test_a_damaged_chunk_is_a_pipeline_error_with_the_file(tmp_path):
    path = damaged_file(str(tmp_path))
    loader = gpufeed.Loader(path, batch_size=20, workers=2, order="sequential")
    for epoch in range(2):  # and the loader can start the next epoch
        with pytest.raises(gpufeed.PipelineError) as raised:
            for _ in loader.epoch(epoch):
                pass
        assert "damaged.h5" in str(raised.value) and "chunk 3" in str(raised.value)


def test_a_malformed_injected_stall_is_a_usage_error_naming_the_variable(h5py_file, monkeypatch):
    monkeypatch.setenv("GPUFEED_INJECT_STALL", "sleep")
    with pytest.raises(gpufeed.UsageError, match="GPUFEED_INJECT_STALL=sleep: expected STAGE:MS"):
        gpufeed.Loader(h5py_file)


def test_ctrl_c_in_the_loop_raises_keyboard_interrupt_promptly(synthetic_file, monkeypatch):
    # Every epoch's first batch takes 1.5 s to read; Ctrl-C comes 0.2 s into the wait.
    monkeypatch.setenv("GPUFEED_INJECT_STALL", "read:1500@100")
    loader = gpufeed.Loader(synthetic_file, batch_size=100, workers=2)
    timer = threading.Timer(0.2, os.kill, args=(os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        for _ in loader.epoch(0):
            pass
    waited = time.monotonic() - start
    timer.join()
    assert waited < 1.0, f"KeyboardInterrupt came after {waited:.2f} s"
    assert sum(images.shape[0] for images, _ in loader.epoch(1)) == 1000


def test_an_output_framework_that_is_not_installed(h5py_file, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "numpy", None)  # what `import numpy` sees without NumPy
    with pytest.raises(gpufeed.UsageError, match="output='numpy' needs the numpy package"):
        gpufeed.Loader(h5py_file, output="numpy")
