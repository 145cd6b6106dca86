#!/usr/bin/env python3
"""The headline: one resnet18 training, fed by gpufeed and by the PyTorch DataLoader.

    headline.py --jpeg FILE [--raw FILE] [--out DIR] [--folder DIR] [--steps 40] [--warmup 12] [--rounds 2]
                [--workers 16] [--batch 256] [--json FILE] [--sections decode,dataloader,...]

The same training (torchvision resnet18, bfloat16 autocast, channels-last, SGD, batch 256) on
the same JPEG images (a gpufeed jpeg-layout file) at 224x224 with random-resized-crop + flip:

  gpufeed     gpufeed.Loader(FILE, device="cuda", dtype="bfloat16", augment="crop-flip",
              size=224, order="random", workers=0 (every core), output_layout="nhwc"); the
              batch goes to the model as it comes (a channels-last view, no copy).
  dataloader  the tutorials' way: the same images written out as a torchvision ImageFolder,
              RandomResizedCrop(224) + RandomHorizontalFlip + ToTensor + Normalize,
              DataLoader(batch_size=256, shuffle=True, num_workers=--workers, pin_memory=True,
              persistent_workers=True, drop_last=True), .to(device, non_blocking=True).
  model only  the same steps on one batch already on the device: what the GPU can train, the
              ceiling both are compared with (utilization = images/s / this).

Each side runs --warmup steps (worker start-up, cuDNN's autotuning), then --steps timed steps
ending at a device synchronize; each round starts both sides afresh, alternating which goes
first, --rounds times, and the medians are compared. Then each side runs once more inside
gpufeed.profile, whose diagnosis (utilization from CUPTI, idle by cause, verdict, bottleneck) is
kept for both. Once more, gpufeed with one worker fewer than the cores (what the diagnosis
advises when launch gaps come with a loader on every core). With --raw, a gpufeed run on that
raw file too (the Python loop to set against pipebench's C++ loop on the same file).

The decode section (first: the GPU decode path's targets) measures decode="cpu", "gpu" and
"auto" on the same file, alone and feeding the model, against torchvision's own GPU decode
(decode_paths.py). --sections picks and orders the sections: decode, dataloader (the rounds
above), profile (the profiled runs), spare (one worker fewer), raw; the JSON is written after
each, so a run stopped at a deadline keeps what it measured.

Prints one JSON document (also to --json). Without a CUDA device: "no CUDA device: not
measured", exit 0. --device cpu rehearses the script (float32 batches, tiny --steps).
"""
import argparse
import json
import os
import statistics
import sys
import time

import h5py
import torch

import decode_paths

BATCH = 256
SIZE = 224
MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)


def log(text):
    print(text, file=sys.stderr, flush=True)


def synchronize(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def make_model(device):
    import torchvision

    model = torchvision.models.resnet18(num_classes=1000).to(device)
    model = model.to(memory_format=torch.channels_last)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step(images, labels):
        with torch.autocast(device.type, dtype=torch.bfloat16):
            loss = loss_fn(model(images), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    return step


def timed(batches, step, warmup, steps, device):
    """images/s over `steps` steps after `warmup` (ending at a device synchronize)."""
    it = iter(batches)
    for _ in range(warmup):
        step(*next(it))
    synchronize(device)
    start = time.perf_counter()
    for _ in range(steps):
        step(*next(it))
    synchronize(device)
    return steps * BATCH / (time.perf_counter() - start)


def forever(make_epoch):
    epoch = 0
    while True:
        yield from make_epoch(epoch)
        epoch += 1


def gpufeed_batches(path, workers, augment, device):
    import gpufeed

    cuda = device.type == "cuda"
    loader = gpufeed.Loader(path, batch_size=BATCH, workers=workers, device=str(device),
                            dtype="bfloat16" if cuda else "float32", augment=augment, size=SIZE,
                            order="random", output_layout="nhwc" if cuda else "nchw",
                            drop_last=True, mean=[m * 255 for m in MEAN],
                            stddev=[s * 255 for s in STD])

    def epoch(e):
        for images, labels in loader.epoch(e):
            if cuda:  # NHWC storage seen as NCHW: the channels-last tensor the model wants
                images = images.permute(0, 3, 1, 2)
            else:  # the CPU device delivers NCHW
                images = images.contiguous(memory_format=torch.channels_last)
            yield images, labels.long()

    return loader, forever(epoch)


def write_image_folder(path, folder):
    """The jpeg file's images as an ImageFolder: one folder per label, one file per image."""
    done = os.path.join(folder, ".complete")
    if os.path.exists(done):
        return
    with h5py.File(path, "r") as f:
        data = f["/jpeg/bytes"][...]
        offsets = f["/jpeg/offsets"][...]
        labels = f["/labels"][...]
    for i, label in enumerate(labels):
        directory = os.path.join(folder, f"c{int(label):04d}")
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, f"{i:07d}.jpg"), "wb") as out:
            out.write(data[offsets[i]:offsets[i + 1]].tobytes())
    open(done, "w").close()


def dataloader_batches(folder, workers, device):
    import torchvision
    from torchvision import transforms

    dataset = torchvision.datasets.ImageFolder(folder, transforms.Compose([
        transforms.RandomResizedCrop(SIZE),
        transforms.RandomHorizontalFlip(),
        transforms.ToTensor(),
        transforms.Normalize(MEAN, STD),
    ]))
    loader = torch.utils.data.DataLoader(dataset, batch_size=BATCH, shuffle=True,
                                         num_workers=workers, pin_memory=True,
                                         persistent_workers=True, drop_last=True)

    def epoch(_):
        for images, labels in loader:
            images = images.to(device, non_blocking=True).to(memory_format=torch.channels_last)
            yield images, labels.to(device, non_blocking=True)

    return loader, forever(epoch)


def profiled(make_feed, step, steps, path):
    """A fresh feed run inside gpufeed.profile (its start-up included, as in a user's first
    epoch): the diagnosis's figures, the full JSON at `path`."""
    import gpufeed

    with gpufeed.profile(json=path, measure_pack=False):
        loader, batches = make_feed()
        it = iter(batches)
        for _ in range(steps):
            step(*next(it))
    close(loader, batches)
    with open(path) as f:
        report = json.load(f)
    profile = report.get("profile", report)
    keys = ("device_util", "verdict", "bottleneck_stage", "idle_by_cause", "samples_per_s",
            "echo_predicted_util", "recommendations")
    return {k: profile.get(k, report.get(k)) for k in keys}


def close(loader, batches):
    """Ends a feed's workers before the next one runs (they would compete for the cores)."""
    import gc

    batches.close()
    shutdown = getattr(loader, "close", None) or getattr(
        getattr(loader, "_iterator", None), "_shutdown_workers", None)
    if shutdown is not None:
        shutdown()
    del loader, batches
    gc.collect()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jpeg", required=True)
    parser.add_argument("--raw")
    parser.add_argument("--out", default="build/gpu-out/headline")
    parser.add_argument("--folder", help="where the ImageFolder copy goes (default OUT/imagefolder)")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--json")
    parser.add_argument("--device", default="cuda",
                        help="cuda (the measurement) or cpu (a rehearsal of the script)")
    parser.add_argument("--sections", default="decode,dataloader,profile,spare,raw")
    opts = parser.parse_args()
    opts.size = SIZE
    sections = opts.sections.split(",")
    global BATCH
    BATCH = opts.batch
    device = torch.device(opts.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        print("no CUDA device: not measured")
        return 0
    torch.backends.cudnn.benchmark = True
    os.makedirs(opts.out, exist_ok=True)
    folder = opts.folder or os.path.join(opts.out, "imagefolder")
    write_image_folder(opts.jpeg, folder)

    step = make_model(device)
    fixed = (torch.randn(BATCH, 3, SIZE, SIZE, device=device).to(
        memory_format=torch.channels_last), torch.randint(0, 1000, (BATCH,), device=device))
    model_only = timed(iter(lambda: fixed, None), step, opts.warmup, opts.steps, device)
    log(f"model only: {model_only:.0f} images/s")

    results = {
        "device": (torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"),
        "model_only_images_per_s": model_only,
        "settings": {"steps": opts.steps, "warmup": opts.warmup, "batch": BATCH,
                     "dataloader_workers": opts.workers, "gpufeed_workers": "all cores",
                     "images": opts.jpeg},
    }
    makers = {
        "gpufeed": lambda: gpufeed_batches(opts.jpeg, 0, "crop-flip", device),
        "dataloader": lambda: dataloader_batches(folder, opts.workers, device),
    }
    for section in sections:
        if section == "decode" and device.type == "cuda":
            results.update(decode_paths.measure(opts, step, model_only, folder, device, log))
        elif section == "dataloader":
            results.update(dataloader_rounds(makers, step, opts, device, model_only))
        elif section == "profile":
            diagnosis = {}
            for name, make_feed in makers.items():
                try:
                    diagnosis[name] = profiled(make_feed, step, opts.warmup + opts.steps,
                                               os.path.join(opts.out, f"{name}.profile.json"))
                except Exception as e:  # the timed figures stand without it
                    diagnosis[name] = {"error": f"{type(e).__name__}: {e}"}
            results["diagnosis"] = diagnosis
        elif section == "spare" and len(os.sched_getaffinity(0)) > 1:
            # The diagnosis's advice when launch gaps come with a loader on every core: one fewer.
            cores = len(os.sched_getaffinity(0))
            loader, batches = gpufeed_batches(opts.jpeg, cores - 1, "crop-flip", device)
            results["gpufeed_spare_core_images_per_s"] = timed(batches, step, opts.warmup,
                                                               opts.steps, device)
            close(loader, batches)
        elif section == "raw" and opts.raw:
            loader, raw = gpufeed_batches(opts.raw, 0, "none", device)
            results["gpufeed_raw_images_per_s"] = timed(raw, step, opts.warmup, opts.steps, device)
            close(loader, raw)
        write_results(results, opts.json)
    print(json.dumps(results, indent=2))
    return 0


def write_results(results, path):
    if path:
        with open(path + ".tmp", "w") as f:
            f.write(json.dumps(results, indent=2) + "\n")
        os.replace(path + ".tmp", path)


def dataloader_rounds(makers, step, opts, device, model_only):
    """gpufeed (decode on every core) against the tutorials' DataLoader, alternating rounds."""
    rates = {name: [] for name in makers}
    for r in range(opts.rounds):
        # Each round starts both feeds afresh (alternating which goes first); the warm-up
        # steps take their start-up out of the timing.
        for name in (list(makers) if r % 2 == 0 else list(reversed(makers))):
            loader, batches = makers[name]()
            rates[name].append(timed(batches, step, opts.warmup, opts.steps, device))
            close(loader, batches)
            log(f"round {r} {name}: {rates[name][-1]:.0f} images/s")
    median = {name: statistics.median(v) for name, v in rates.items()}
    return {
        "gpufeed_images_per_s": median["gpufeed"],
        "dataloader_images_per_s": median["dataloader"],
        "rounds": rates,
        "resnet18_jpeg_vs_dataloader": median["gpufeed"] / median["dataloader"],
        "gpufeed_util_estimate": median["gpufeed"] / model_only,
        "dataloader_util_estimate": median["dataloader"] / model_only,
    }


if __name__ == "__main__":
    sys.exit(main())
