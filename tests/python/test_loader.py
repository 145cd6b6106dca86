"""gpufeed.Loader's contract: every sample once per epoch, the file's pixels, the same batches as
the C++ loader, the keywords and their defaults, DLPack outputs."""

from __future__ import annotations

import ctypes
import inspect
import json
import os
import shutil
import subprocess
import warnings

import numpy as np
import pytest
import torch

import gpufeed
from gpufeed import _native

from conftest import SAMPLES, SHAPE, epoch_samples, labels_of, pixels


@pytest.mark.parametrize("order", ["sequential", "random", "chunk"])
@pytest.mark.parametrize("batch_size", [64, 100])
def test_every_sample_exactly_once_per_epoch(h5py_file, order, batch_size):
    loader = gpufeed.Loader(h5py_file, batch_size=batch_size, workers=2, order=order, seed=3)
    assert len(loader) == -(-SAMPLES // batch_size)
    for epoch in range(2):
        seen = epoch_samples(loader, epoch)
        assert sorted(seen) == list(range(SAMPLES)), f"epoch {epoch}"


def test_orders_differ_between_epochs_and_repeat_for_a_seed(h5py_file):
    a = gpufeed.Loader(h5py_file, batch_size=50, workers=2, order="random", seed=9)
    b = gpufeed.Loader(h5py_file, batch_size=50, workers=1, order="random", seed=9)
    assert epoch_samples(a, 0) == epoch_samples(b, 0), "not a function of the seed alone"
    assert epoch_samples(a, 0) != epoch_samples(a, 1)


def test_iterating_the_loader_runs_the_next_epoch(h5py_file):
    # The DataLoader habit: `for x, y in loader` is epoch 0, then 1, ...; set_epoch() chooses
    # the next one (DistributedSampler's), epoch(n) is followed by n + 1.
    loader = gpufeed.Loader(h5py_file, batch_size=64, workers=2, order="random", seed=5)
    def order(batches):
        return [(b.epoch, tuple(b.indices)) for b in batches]
    first, second = order(loader), order(loader)
    assert {e for e, _ in first} == {0} and {e for e, _ in second} == {1}
    assert first == order(loader.epoch(0)) and second == order(loader.epoch(1))
    loader.set_epoch(7)
    assert order(loader) == order(loader.epoch(7))
    assert {e for e, _ in order(loader)} == {8}
    with pytest.raises(gpufeed.UsageError, match="set_epoch"):
        loader.set_epoch(-1)


def test_drop_last_drops_the_partial_batch(h5py_file):
    loader = gpufeed.Loader(h5py_file, batch_size=64, workers=2, drop_last=True)
    sizes = [images.shape[0] for images, _ in loader.epoch(0)]
    assert sizes == [64] * (SAMPLES // 64) == [64] * len(loader)


def test_pixels_and_labels_equal_h5pys_read(h5py_file):
    import h5py

    with h5py.File(h5py_file, "r") as f:
        stored = f["images"][:]
        stored_labels = f["labels"][:]
    loader = gpufeed.Loader(
        h5py_file, batch_size=64, workers=2, order="random", mean=[0, 0, 0], stddev=[1, 1, 1]
    )
    checked = 0
    for batch in loader.epoch(0):
        images, labels = batch
        assert images.dtype == torch.float32 and labels.dtype == torch.int64
        assert tuple(images.shape[1:]) == (SHAPE[2], SHAPE[0], SHAPE[1])  # NCHW
        expected = stored[batch.indices].transpose(0, 3, 1, 2).astype(np.float32)
        np.testing.assert_array_equal(images.numpy(), expected)
        np.testing.assert_array_equal(labels.numpy(), stored_labels[batch.indices])
        checked += images.shape[0]
    assert checked == SAMPLES


def test_default_normalization_is_zero_to_one(h5py_file):
    loader = gpufeed.Loader(h5py_file, batch_size=SAMPLES, workers=2, order="sequential")
    (images, _), = list(loader.epoch(0))
    expected = pixels(SAMPLES).transpose(0, 3, 1, 2).astype(np.float32) / 255.0
    np.testing.assert_allclose(images.numpy(), expected, rtol=1e-6)


def test_nchw_file_with_its_layout_named(data_dir):
    import h5py

    path = os.path.join(data_dir, "nchw.h5")
    data = pixels(120).transpose(0, 3, 1, 2).copy()
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=data, chunks=(20,) + data.shape[1:])
    loader = gpufeed.Loader(
        path, images="/x", labels=None, layout="nchw", batch_size=40, mean=[0] * 3, stddev=[1] * 3
    )
    for batch in loader.epoch(0):
        images, labels = batch
        assert labels is None
        np.testing.assert_array_equal(images.numpy(), data[batch.indices].astype(np.float32))


def run_cpp(path: str, prefix: str, **settings) -> tuple[list[dict], np.ndarray]:
    tool = os.environ.get("GPUFEED_LOADER_DUMP")
    if not tool:
        pytest.skip("GPUFEED_LOADER_DUMP is not set")
    args = [tool, path, prefix]
    for key, value in settings.items():
        args += ["--" + key, str(value)]
    subprocess.run(args, check=True)
    with open(prefix + ".json") as f:
        batches = json.load(f)
    return batches, np.fromfile(prefix + ".bin", dtype=np.float32)


@pytest.mark.parametrize(
    "settings",
    [
        dict(order="chunk", seed=1, batch=96, epoch=0),
        dict(order="random", seed=7, batch=64, epoch=2),
        dict(order="sequential", seed=0, batch=100, epoch=1, rank=1, world=3),
        dict(order="random", seed=4, batch=64, epoch=1, echo=2, augment="flip"),
    ],
)
def test_same_batches_as_the_cpp_loader(synthetic_file, tmp_path, settings):
    cpp, cpp_images = run_cpp(synthetic_file, str(tmp_path / "cpp"), workers=2, **settings)
    loader = gpufeed.Loader(
        synthetic_file,
        batch_size=settings["batch"],
        workers=2,
        order=settings["order"],
        seed=settings["seed"],
        shard=(settings.get("rank", 0), settings.get("world", 1)),
        echo=settings.get("echo", 1),
        augment=settings.get("augment", "none"),
    )
    offset = 0
    delivered = 0
    for got, want in zip(loader.epoch(settings["epoch"]), cpp, strict=True):
        assert got.indices == want["indices"]
        assert got.labels.tolist() == want["labels"]
        assert got.echoed == want["echoed"] and got.index == want["index"]
        flat = got.images.numpy().ravel()
        np.testing.assert_array_equal(flat, cpp_images[offset : offset + flat.size])
        offset += flat.size
        delivered += 1
    assert delivered == len(cpp) and offset == cpp_images.size


@pytest.mark.parametrize("augment", ["none", "crop-flip"])
def test_jpeg_layout_decodes_as_the_cpp_loader_does(jpeg_file, tmp_path, augment):
    settings = dict(order="random", seed=2, batch=16, epoch=1, size="24x32", augment=augment)
    cpp, cpp_images = run_cpp(jpeg_file, str(tmp_path / "cpp"), workers=2, **settings)
    loader = gpufeed.Loader(jpeg_file, batch_size=16, workers=2, order="random", seed=2,
                            size=(24, 32), augment=augment)
    offset = 0
    for got, want in zip(loader.epoch(1), cpp, strict=True):
        assert tuple(got.images.shape[1:]) == (3, 24, 32)
        assert got.indices == want["indices"]
        flat = got.images.numpy().ravel()
        np.testing.assert_array_equal(flat, cpp_images[offset : offset + flat.size])
        offset += flat.size
    assert offset == cpp_images.size and len(cpp) == len(loader) == 5


def test_labels_are_none_without_a_labels_dataset(h5py_file):
    loader = gpufeed.Loader(h5py_file, labels=None, batch_size=200)
    for images, labels in loader.epoch(0):
        assert labels is None and images.shape[0] == 200


def test_keyword_defaults_are_the_cpp_defaults():
    signature = inspect.signature(gpufeed.Loader)
    native = _native.default_keywords()
    for name, default in native.items():
        assert name in signature.parameters, f"Loader has no keyword {name}"
        assert signature.parameters[name].default == default, name
    python_only = {"path", "output", "unknown", "transform"}
    assert set(signature.parameters) - set(native) == python_only


def test_the_field_table_names_every_keyword():
    # One table names the settings in every front end: its keywords are the Loader's keywords
    # (path included), no more and no fewer, and a C++ field reads as its keyword in errors.
    fields = _native.loader_fields()
    keywords = {keyword for _, keyword in fields}
    signature = inspect.signature(gpufeed.Loader)
    assert keywords == set(signature.parameters) - {"output", "unknown", "transform"}
    by_field = dict(fields)
    # C++ and Python share names and units; only `size` stands for two fields.
    assert all(field == keyword for field, keyword in by_field.items() if keyword != "size")
    with pytest.raises(gpufeed.UsageError, match="batch_size"):
        gpufeed.Loader("unused.h5", batch_size=0)


@pytest.mark.parametrize(
    "keywords, hint",
    [
        (dict(cache_mb=512), "cache_bytes"),
        (dict(memory_mb=64), "memory_bytes"),
        (dict(std=[1, 1, 1]), "stddev"),
        (dict(workerz=2), "unexpected keyword argument 'workerz'$"),
    ],
)
def test_an_old_or_unknown_keyword_says_what_to_use(keywords, hint):
    # A TypeError, as Python raises for any call's unknown keyword; a renamed one names its
    # replacement.
    with pytest.raises(TypeError, match=hint):
        gpufeed.Loader("unused.h5", **keywords)


@pytest.mark.parametrize(
    "keyword, value, text",
    [
        ("workers", 1025, "workers=1025: use 0 to 1024, or auto"),
        ("workers", "many", "workers='many': use 0 to 1024, or auto"),
        ("prefetch", 0, "prefetch=0: use 1 to 256, or auto"),
        ("cpu_budget", -1, "cpu_budget=-1: use 0 to 1024"),
        ("cache_bytes", 1 << 41, "cache_bytes=2199023255552: use 0 to 1099511627776"),
        ("chunk_window", 0, "chunk_window=0: use 1 to 1048576"),
    ],
)
def test_ranges_are_the_field_tables(keyword, value, text):
    # The one range the loader checks, in Python's words: the same table pipebench reads.
    with pytest.raises(gpufeed.UsageError) as raised:
        gpufeed.Loader("unused.h5", **{keyword: value})
    assert text in str(raised.value)


def cpp_defaults() -> dict:
    """LoaderOptions' defaults as loader_dump --defaults reads them from the C++ struct."""
    tool = os.environ.get("GPUFEED_LOADER_DUMP")
    if not tool:
        pytest.skip("GPUFEED_LOADER_DUMP is not set")
    out = subprocess.run([tool, "--defaults"], check=True, capture_output=True, text=True)
    return {k: tuple(v) if isinstance(v, list) else v for k, v in json.loads(out.stdout).items()}


def test_every_keyword_default_is_the_loader_options_default(synthetic_file):
    # Against LoaderOptions itself, not the module's default_keywords(): a default the module
    # writes out by hand (resize_filter, on_error) must follow the C++ one too.
    cpp = cpp_defaults()
    signature = inspect.signature(gpufeed.Loader)
    assert set(signature.parameters) - {"path", "output", "unknown", "transform"} == set(cpp)
    for name, default in cpp.items():
        assert signature.parameters[name].default == default, name
    assert cpp["resize_filter"] == "bilinear" and cpp["on_error"] == "fail"
    # What a loader made without keywords was really given.
    made = gpufeed.Loader(synthetic_file).options()
    assert made.pop("output") == "torch"
    assert made.pop("transform") is None
    assert made == cpp
    native = _native.default_keywords()
    for name, default in cpp.items():
        assert native[name] == default, name


def test_the_default_resize_filter_is_bilinear(jpeg_file):
    def pixels_with(**keywords) -> np.ndarray:
        loader = gpufeed.Loader(
            jpeg_file, batch_size=16, workers=2, order="sequential", size=(24, 32), **keywords
        )
        return np.concatenate([images.numpy().ravel() for images, _ in loader.epoch(0)])

    default = pixels_with()
    np.testing.assert_array_equal(default, pixels_with(resize_filter="bilinear"))
    assert not np.array_equal(default, pixels_with(resize_filter="area"))


def test_by_default_a_damaged_image_fails_the_epoch(jpeg_file, tmp_path):
    import h5py

    path = str(tmp_path / "damaged.h5")
    shutil.copyfile(jpeg_file, path)
    broken = 13
    with h5py.File(path, "r+") as f:
        offsets = f["jpeg/offsets"][...]
        begin, end = int(offsets[broken]), int(offsets[broken + 1])
        f["jpeg/bytes"][begin:end] = np.full(end - begin, 0x42, dtype=np.uint8)

    def run(**keywords) -> gpufeed.Loader:
        loader = gpufeed.Loader(path, batch_size=16, workers=2, order="sequential", **keywords)
        for _ in loader.epoch(0):
            pass
        return loader

    for keywords in ({}, {"on_error": "fail"}):
        with pytest.raises(gpufeed.PipelineError) as raised:
            run(size=(24, 32), **keywords)
        assert f"sample {broken}" in str(raised.value), keywords
    # The damage is one a loader may skip: only the default keeps it from doing so.
    assert run(size=(24, 32), on_error="skip").stats().skipped_samples == 1


def test_properties_and_stats(synthetic_file):
    loader = gpufeed.Loader(synthetic_file, batch_size=100, workers=2, prefetch=2)
    assert loader.sample_shape == (16, 16, 3)
    assert loader.samples_per_epoch == 1000 and len(loader) == 10
    assert loader.device == "cpu" and loader.workers == 2
    for _ in loader.epoch(0):
        pass
    stats = loader.stats()
    assert stats.batches == 10 and stats.samples == 1000
    assert stats.fresh_batches == 10 and stats.echoed_batches == 0
    assert set(stats.stages) == {"read", "decode", "assemble", "h2d", "normalize", "echo",
                                    "transform", "wait"}
    assert stats.stages["read"].items > 0 and stats.stages["normalize"].busy_s > 0
    assert stats.cache.chunk_reads == 32  # 1000 samples in chunks of 32
    assert stats.memory.slot_bytes > 0
    loader.reset_stats()
    assert loader.stats().batches == 0
    assert "10 batches per epoch" in repr(loader)


def test_echoes_are_reaugmented_in_a_python_loop(synthetic_file):
    # The loop variable holds the previous batch while the next is asked for: every echo must
    # still show a new flip of its batch (the loader's echo slot), as the C++ loader's do.
    loader = gpufeed.Loader(
        synthetic_file, batch_size=100, workers=2, echo=3, augment="flip", seed=2
    )
    deliveries = []
    for batch in loader.epoch(0):
        deliveries.append((batch.index, batch.echoed, batch.images.clone()))
    assert len(deliveries) == 3 * len(loader)
    assert [echoed for _, echoed, _ in deliveries[:3]] == [False, True, True]
    for k in range(0, len(deliveries), 3):
        fresh, first, second = (d[2] for d in deliveries[k : k + 3])
        assert deliveries[k][0] == deliveries[k + 1][0] == deliveries[k + 2][0]
        mirrored = fresh.flip(-1)  # an echo shows each sample as it was, or mirrored
        for echo in (first, second):
            same = (echo == fresh).flatten(1).all(1)
            flipped = (echo == mirrored).flatten(1).all(1)
            assert bool((same | flipped).all())
            assert 0 < int(flipped.sum()) < 100, "every echo draws a new flip per sample"
    stats = loader.stats()
    assert stats.fresh_batches == 10 and stats.echoed_batches == 20
    assert stats.reaugmented_batches == 20


def test_numpy_output_and_raw_dlpack_arrays(synthetic_file):
    loader = gpufeed.Loader(synthetic_file, batch_size=100, output="numpy")
    images, labels = next(iter(loader.epoch(0)))
    assert isinstance(images, np.ndarray) and images.shape == (100, 3, 16, 16)
    assert labels.dtype == np.int64
    raw = gpufeed.Loader(synthetic_file, batch_size=100, output="dlpack")
    batch = next(iter(raw.epoch(0)))
    array = batch.images
    assert array.shape == (100, 3, 16, 16) and array.dtype == "float32"
    assert array.__dlpack_device__() == (1, 0) and array.device == "cpu"
    a = torch.from_dlpack(array)
    b = np.from_dlpack(array)
    assert a.data_ptr() == b.ctypes.data, "not the same memory: a copy was made"
    np.testing.assert_array_equal(a.numpy(), b)


def capsule_name(capsule) -> bytes:
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype = ctypes.c_char_p
    get_name.argtypes = [ctypes.py_object]
    return get_name(capsule)


def test_dlpack_versions(synthetic_file):
    loader = gpufeed.Loader(synthetic_file, batch_size=100, output="dlpack")
    array = next(iter(loader.epoch(0))).images
    assert capsule_name(array.__dlpack__()) == b"dltensor"
    assert capsule_name(array.__dlpack__(max_version=(1, 0))) == b"dltensor_versioned"
    with pytest.raises(BufferError):
        array.__dlpack__(copy=True)


def test_starting_an_epoch_ends_the_previous_one(synthetic_file):
    loader = gpufeed.Loader(synthetic_file, batch_size=100, workers=2)
    first = loader.epoch(0)
    next(first)
    second = loader.epoch(1)
    assert list(first) == [], "an old epoch must not hand out the new epoch's batches"
    assert sum(b.images.shape[0] for b in second) == 1000


def test_close_keeps_held_batches_valid(synthetic_file):
    with gpufeed.Loader(synthetic_file, batch_size=100, workers=2) as loader:
        images, _ = next(iter(loader.epoch(0)))
        copy = images.clone()
    with pytest.raises(gpufeed.UsageError, match="closed"):
        loader.epoch(1)
    assert torch.equal(images, copy)


def test_write_synthetic_is_deterministic(tmp_path):
    a = gpufeed.write_synthetic(tmp_path / "a.h5", 64, (8, 8, 3), chunk=16, seed=1)
    b = gpufeed.write_synthetic(tmp_path / "b.h5", 64, (8, 8, 3), chunk=16, seed=1)
    la = gpufeed.Loader(a, batch_size=64, order="sequential")
    lb = gpufeed.Loader(b, batch_size=64, order="sequential")
    (xa, ya), = list(la.epoch(0))
    (xb, yb), = list(lb.epoch(0))
    assert torch.equal(xa, xb) and torch.equal(ya, yb)
    assert set(ya.tolist()) <= set(range(10))


def test_decode_gpu_without_a_cuda_device_is_refused_in_one_line(jpeg_file):
    with pytest.raises(gpufeed.UsageError) as caught:
        gpufeed.Loader(jpeg_file, batch_size=16, device="cpu", decode="gpu")
    message = str(caught.value)
    assert "decode=gpu needs a CUDA device" in message
    assert "\n" not in message
    with pytest.raises(gpufeed.UsageError, match="decode 'engines'; use cpu, gpu or auto"):
        gpufeed.Loader(jpeg_file, batch_size=16, decode="engines")


def test_decode_auto_on_the_cpu_decodes_there_and_counts_it(jpeg_file):
    keywords = dict(batch_size=16, workers=2, order="random", seed=1, size=(24, 32))
    want = [images.clone() for images, _ in gpufeed.Loader(jpeg_file, **keywords).epoch(0)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no GPU here: nothing to warn about
        loader = gpufeed.Loader(jpeg_file, decode="auto", **keywords)
    got = [images.clone() for images, _ in loader.epoch(0)]
    assert all(torch.equal(a, b) for a, b in zip(got, want)) and len(got) == len(want)
    decode = loader.stats().decode
    assert decode.mode == "cpu"
    assert decode.cpu_images == 80 and decode.engine_images == 0
    assert decode.engines is None


def test_nvjpeg_is_found_in_the_environments_wheels():
    from gpufeed import _nvjpeg

    dirs = _nvjpeg.candidate_dirs()
    assert all(os.path.isdir(d) for d in dirs)
    library = _native.nvjpeg_library()
    assert set(library) == {"loaded", "path", "version", "why"}
    assert library["loaded"] or library["why"]


def test_a_torch_device_is_taken_where_a_string_is(synthetic_file):
    loader = gpufeed.Loader(synthetic_file, batch_size=64, device=torch.device("cpu"))
    images, _ = next(iter(loader.epoch(0)))
    assert images.device.type == "cpu" and loader.device == "cpu"
    with pytest.raises(gpufeed.UsageError, match="device.*a str or a torch.device"):
        gpufeed.Loader(synthetic_file, device=0)


def test_a_constant_channel_does_not_refuse_the_file(tmp_path):
    h5py = pytest.importorskip("h5py")
    path = str(tmp_path / "alpha.h5")
    gpufeed.write_synthetic(path, 64, (8, 8, 4), chunk=16, seed=1)
    with h5py.File(path, "r+") as f:  # an alpha plane that is the same everywhere
        std = f["/meta/std"][...]
        std[3] = 0
        f["/meta/std"][...] = std
        mean = f["/meta/mean"][...]
    raw = gpufeed.Loader(path, batch_size=16, dtype="uint8", order="sequential")
    assert next(iter(raw.epoch(0)))[0].dtype == torch.uint8
    loader = gpufeed.Loader(path, batch_size=16, order="sequential")
    images, _ = next(iter(loader.epoch(0)))
    assert torch.isfinite(images).all()
    # The constant channel is divided by 255 (as without statistics), the others by their std.
    pixels = next(iter(raw.epoch(0)))[0].float()
    torch.testing.assert_close(images[:, 3], (pixels[:, 3] - float(mean[3])) / 255.0)
    torch.testing.assert_close(images[:, 0], (pixels[:, 0] - float(mean[0])) / float(std[0]))
