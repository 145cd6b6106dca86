"""The GPU decode path's figures for headline.py: where JPEGs are decoded (decode="cpu", "gpu",
"auto") measured on the same file, alone and feeding resnet18, against torchvision's own GPU
decode (``torchvision.io.decode_jpeg(..., device="cuda")`` on batches of bytes from a
DataLoader, then the same random-resized-crop, flip and normalize on the device, image by image
as torchvision's transforms take them).

Busy cores are the CPU time of the process and its children (DataLoader workers) over the wall
time of the measured steps: what the feeding costs in cores, the training loop's own thread
included.
"""
import os
import statistics
import time

import torch

MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)


def cpu_seconds():
    """CPU time of this process and its live children, in seconds."""
    try:
        import psutil
    except ImportError:
        return time.process_time()
    me = psutil.Process()
    total = sum(me.cpu_times()[:2])
    for child in me.children(recursive=True):
        try:
            total += sum(child.cpu_times()[:2])
        except psutil.Error:
            pass
    return total


def timed_with_cores(batches, step, warmup, steps, batch, device):
    """(images/s, busy cores) over `steps` steps after `warmup`, ending at a synchronize."""
    it = iter(batches)
    for _ in range(warmup):
        step(*next(it))
    torch.cuda.synchronize(device)
    c0, t0 = cpu_seconds(), time.perf_counter()
    for _ in range(steps):
        step(*next(it))
    torch.cuda.synchronize(device)
    wall = time.perf_counter() - t0
    return steps * batch / wall, (cpu_seconds() - c0) / wall


def gpufeed_loader(path, batch, size, decode, workers, device, dtype="bfloat16", **extra):
    import gpufeed

    return gpufeed.Loader(path, batch_size=batch, workers=workers, device=str(device),
                          dtype=dtype, augment="crop-flip", size=size, order="random",
                          output_layout="nhwc", drop_last=True, decode=decode,
                          mean=[m * 255 for m in MEAN], stddev=[s * 255 for s in STD], **extra)


def gpufeed_feed(loader):
    epoch = 0
    while True:
        for images, labels in loader.epoch(epoch):
            yield images.permute(0, 3, 1, 2), labels.long()
        epoch += 1


class JpegBytes(torch.utils.data.Dataset):
    """An ImageFolder's files as encoded bytes (what decode_jpeg on the GPU takes)."""

    def __init__(self, folder):
        import torchvision

        self.samples = torchvision.datasets.ImageFolder(folder).samples

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, i):
        import torchvision

        path, label = self.samples[i]
        return torchvision.io.read_file(path), label


def collate_bytes(items):
    return [b for b, _ in items], torch.tensor([label for _, label in items])


def torchvision_gpu_feed(folder, batch, size, workers, device):
    """DataLoader of bytes -> decode_jpeg on the GPU -> RandomResizedCrop + flip per image ->
    normalize: torchvision's GPU decode as its documentation composes it."""
    from torchvision.io import decode_jpeg
    from torchvision.transforms import v2

    loader = torch.utils.data.DataLoader(JpegBytes(folder), batch_size=batch, shuffle=True,
                                         num_workers=workers, persistent_workers=workers > 0,
                                         collate_fn=collate_bytes, drop_last=True)
    crop = v2.Compose([v2.RandomResizedCrop(size, antialias=True), v2.RandomHorizontalFlip()])
    mean = torch.tensor(MEAN, device=device).view(1, 3, 1, 1) * 255
    std = torch.tensor(STD, device=device).view(1, 3, 1, 1) * 255

    def feed():
        while True:
            for data, labels in loader:
                images = decode_jpeg(data, device=device)
                images = torch.stack([crop(im) for im in images])
                images = ((images.float() - mean) / std).contiguous(
                    memory_format=torch.channels_last)
                yield images, labels.to(device, non_blocking=True)

    return loader, feed()


def loader_only(path, batch, size, decode, workers, device, batches=40, **extra):
    """images/s and busy cores of the Loader alone (no model): the decode path's own rate."""
    loader = gpufeed_loader(path, batch, size, decode, workers, device, **extra)
    feed = gpufeed_feed(loader)
    for _ in range(8):
        next(feed)
    torch.cuda.synchronize(device)
    c0, t0 = cpu_seconds(), time.perf_counter()
    for _ in range(batches):
        next(feed)
    torch.cuda.synchronize(device)
    wall = time.perf_counter() - t0
    stats = loader.stats()
    feed.close()
    loader.close()
    return {"images_per_s": batches * batch / wall, "busy_cores": (cpu_seconds() - c0) / wall,
            "workers": stats.workers, "decode": stats.decode.to_dict()}


def pixel_agreement(path, size, device):
    """decode="gpu" against decode="cpu" on the same samples (seed, epoch, crop and flip):
    the mean and largest difference of the uint8 batches, in levels. The CPU path decodes at a
    reduced DCT scale where the crop allows; the engines at full size."""
    got = {}
    for decode in ("gpu", "cpu"):
        loader = gpufeed_loader(path, 64, size, decode, 4, device, dtype="uint8")
        images, _ = next(iter(loader.epoch(0)))
        got[decode] = images.to("cpu", torch.int16)
        loader.close()
    diff = (got["gpu"] - got["cpu"]).abs()
    return {"mean_levels": diff.float().mean().item(), "max_levels": int(diff.max().item()),
            "samples": int(diff.shape[0])}


def measure(opts, step, model_only, folder, device, log):
    """The decode section of the headline: a dict of figures (see the module's docstring)."""
    cores = len(os.sched_getaffinity(0))
    out = {"decode_paths": {}}
    for decode, workers in (("cpu", 0), ("gpu", 4), ("auto", "auto")):
        try:
            out["decode_paths"][decode] = loader_only(opts.jpeg, opts.batch, opts.size, decode,
                                                      workers, device)
        except Exception as e:  # a path that fails is reported, the others still measured
            out["decode_paths"][decode] = {"error": f"{type(e).__name__}: {e}"}
        log(f"decode path {decode}: {out['decode_paths'][decode]}")
    try:
        out["decode_pixels_vs_cpu"] = pixel_agreement(opts.jpeg, opts.size, device)
    except Exception as e:
        out["decode_pixels_vs_cpu"] = {"error": f"{type(e).__name__}: {e}"}
    makers = {
        "gpu_4workers": lambda: gpufeed_loader(opts.jpeg, opts.batch, opts.size, "gpu", 4, device),
        "auto": lambda: gpufeed_loader(opts.jpeg, opts.batch, opts.size, "auto", "auto", device,
                                       cpu_budget=min(4, cores)),
    }
    rates = {name: [] for name in list(makers) + ["torchvision_gpu"]}
    busy = {name: [] for name in rates}
    for r in range(opts.rounds):
        order = list(rates) if r % 2 == 0 else list(reversed(list(rates)))
        for name in order:
            try:
                if name == "torchvision_gpu":
                    loader, feed = torchvision_gpu_feed(folder, opts.batch, opts.size,
                                                        min(4, cores), device)
                else:
                    loader = makers[name]()
                    feed = gpufeed_feed(loader)
                rate, cores_busy = timed_with_cores(feed, step, opts.warmup, opts.steps,
                                                    opts.batch, device)
                feed.close()
                close = getattr(loader, "close", None) or getattr(
                    getattr(loader, "_iterator", None), "_shutdown_workers", None)
                if close is not None:
                    close()
                rates[name].append(rate)
                busy[name].append(cores_busy)
                log(f"round {r} {name}: {rate:.0f} images/s, {cores_busy:.1f} cores")
            except Exception as e:
                log(f"round {r} {name}: {type(e).__name__}: {e}")
    median = {n: statistics.median(v) if v else None for n, v in rates.items()}
    cores_median = {n: statistics.median(v) if v else None for n, v in busy.items()}
    out["decode_rounds"] = rates
    out["decode_busy_cores"] = cores_median
    if median["auto"]:
        out["decode_auto_vs_model_only"] = median["auto"] / model_only
        out["decode_auto_busy_cores"] = cores_median["auto"]
    if median["gpu_4workers"]:
        out["decode_gpu_4workers_vs_model_only"] = median["gpu_4workers"] / model_only
    if median["torchvision_gpu"]:
        out["torchvision_gpu_decode_images_per_s"] = median["torchvision_gpu"]
        best = max(v for v in (median["auto"], median["gpu_4workers"]) if v) if (
            median["auto"] or median["gpu_4workers"]) else None
        if best:
            out["vs_torchvision_gpu_decode"] = best / median["torchvision_gpu"]
    return out
