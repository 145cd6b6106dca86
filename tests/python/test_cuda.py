"""The package on a CUDA device: tensors on the GPU in the asked dtype, equal to the CPU loader's;
the DLPack stream handshake; held tensors; CUPTI finding an .item() in the user's step.
Skipped without a CUDA device (and a CUDA build of torch)."""

from __future__ import annotations

import time

import pytest
import torch

import gpufeed
from gpufeed import _native

pytestmark = pytest.mark.skipif(
    _native.cuda_device_count() == 0 or not torch.cuda.is_available(),
    reason="no CUDA device (or torch without CUDA)",
)


def cpu_batches(path, **keywords):
    loader = gpufeed.Loader(path, device="cpu", **keywords)
    return [(images.clone(), labels.clone()) for images, labels in loader.epoch(0)]


@pytest.mark.parametrize("dtype, tolerance", [("float32", 1e-6), ("float16", 2e-3),
                                              ("bfloat16", 1.6e-2)])
def test_cuda_batches_equal_the_cpu_loaders(synthetic_file, dtype, tolerance):
    keywords = dict(batch_size=100, workers=2, order="random", seed=3)
    want = cpu_batches(synthetic_file, **keywords)
    loader = gpufeed.Loader(synthetic_file, device="cuda", dtype=dtype, **keywords)
    got = 0
    # Compared as they come: a held CUDA batch keeps its device slot (prefetch + 1 of them).
    for (images, labels), (cpu_images, cpu_labels) in zip(loader.epoch(0), want):
        assert images.is_cuda and labels.is_cuda
        assert images.dtype == getattr(torch, dtype)
        torch.testing.assert_close(images.float().cpu(), cpu_images, rtol=tolerance,
                                   atol=tolerance)
        assert torch.equal(labels.cpu(), cpu_labels)
        got += 1
    assert got == len(want)


def test_channels_last_output(synthetic_file):
    loader = gpufeed.Loader(synthetic_file, batch_size=100, device="cuda", output_layout="nhwc")
    images, _ = next(iter(loader.epoch(0)))
    assert tuple(images.shape) == (100, 16, 16, 3)


def test_a_side_stream_consumer_sees_finished_batches(synthetic_file):
    keywords = dict(batch_size=100, workers=2, order="random", seed=4)
    want = cpu_batches(synthetic_file, **keywords)
    loader = gpufeed.Loader(synthetic_file, device="cuda", **keywords)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):  # torch.from_dlpack hands this stream to __dlpack__
        for (images, _), (cpu_images, _) in zip(loader.epoch(0), want):
            total = (images * 2).sum()  # queued on `stream`, after the batch's ready event
            torch.testing.assert_close(total.cpu(), (cpu_images * 2).sum(), rtol=1e-5,
                                       atol=1e-3)
    stream.synchronize()


def test_a_held_cuda_tensor_keeps_its_pixels(synthetic_file):
    loader = gpufeed.Loader(synthetic_file, batch_size=100, device="cuda", prefetch=2)
    kept = None
    for epoch in range(3):
        for i, (images, _) in enumerate(loader.epoch(epoch)):
            if epoch == 0 and i == 2:
                kept = (images, images.clone())
    torch.cuda.synchronize()
    assert torch.equal(kept[0], kept[1])


def test_cupti_finds_an_item_in_the_step(synthetic_file):
    loader = gpufeed.Loader(synthetic_file, batch_size=100, device="cuda", workers=2)
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 16 * 16, 10)).cuda()
    with gpufeed.profile() as prof:
        for epoch in range(3):
            for images, labels in loader.epoch(epoch):
                with prof.step():
                    loss = torch.nn.functional.cross_entropy(model(images), labels)
                    loss.backward()
                    loss.item()  # a device-to-host copy: the host waits, the queue drains
                    time.sleep(0.002)
    results = prof.results()
    check = {c.name: c for c in results.practices}["host_sync"]
    assert check.status == "warn", prof.summary()
    assert results.cupti is not None and results.cupti.records > 0


def engines_missing():
    """Why the JPEG engines cannot run here, or None."""
    library = _native.nvjpeg_library()
    return None if library["loaded"] else library["why"]


@pytest.mark.parametrize("decode", ["gpu", "auto"])
def test_decode_on_the_jpeg_engines_is_close_to_the_cpu_path(jpeg_file, decode):
    if engines_missing():
        pytest.skip(engines_missing())
    keywords = dict(batch_size=16, workers=2, order="random", seed=3, size=(32, 32),
                    augment="crop-flip", dtype="uint8", output_layout="nhwc")
    cpu = gpufeed.Loader(jpeg_file, device="cuda", decode="cpu", **keywords)
    gpu = gpufeed.Loader(jpeg_file, device="cuda", decode=decode, **keywords)
    differences = []
    for (a, la), (b, lb) in zip(cpu.epoch(0), gpu.epoch(0)):
        assert torch.equal(la.cpu(), lb.cpu())
        differences.append((a.cpu().int() - b.cpu().int()).abs().float())
    d = torch.cat([x.flatten() for x in differences])
    print(f"decode={decode} against decode=cpu: mean {d.mean():.2f}, max {d.max():.0f} levels")
    assert d.mean() < 4.0
    stats = gpu.stats().decode
    assert stats.mode == decode
    assert stats.engine_images + stats.cpu_images == 80
    if decode == "gpu":
        assert stats.engine_images == 80 and stats.engines
