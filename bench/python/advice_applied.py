#!/usr/bin/python3
"""Does the advice predict speed? An imagenet-style loop (examples/python/imagenet_style.py: an
ImageFolder of JPEGs, RandomResizedCrop + flip + ToTensor + ColorJitter + Normalize, a small
CNN on the CPU) fed by DataLoader(num_workers=0) under gpufeed.profile; the profile's first
recommendation applied as it is written (pack + Loader(transform=dataset.transform), or
DataLoader(num_workers=N)); the loop measured again. Target: measured samples/s within 15% of
the advice's predicted_samples_per_s, device utilization within 10 points of its prediction.
Each round measures before and after again, after one unmeasured warm-up run of the loop, in
a process whose malloc thresholds are fixed (same_allocator_state); medians over --rounds. Each
loop runs 2 epochs of 160 steps (2,560 JPEGs): at 40 steps an epoch, one loop's step time moved
by 30% from round to round on a shared 2-core machine.

    PYTHONPATH=build/ci/python /usr/bin/python3 bench/python/advice_applied.py [--rounds 5] \
        [--workers 0]   # the loop's DataLoader(num_workers=...) before the advice
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile

import torchvision
from torch.utils.data import DataLoader

import gpufeed

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "examples", "python"))
from imagenet_style import TRANSFORM, make_folder, model_and_optimizer, train  # noqa: E402


def measure(batches, epochs: int) -> gpufeed.ProfileResults:
    model, optimizer = model_and_optimizer()
    with gpufeed.profile() as prof:
        for _ in range(epochs):
            train(batches, model, optimizer)
    return prof.results()


def apply(advice: dict, dataset, work: str, batch: int):
    """The loop's input after the advice, as its action spells it."""
    if advice["kind"] == "pack":
        path = os.path.join(work, "train.h5")
        if not os.path.exists(path):
            store = "jpeg" if 'store="jpeg"' in advice["action"] else "raw"
            gpufeed.pack(dataset, path, store=store)
        transform = dataset.transform if "transform=dataset.transform" in advice["action"] \
            else None
        return gpufeed.Loader(path, batch_size=batch, order="random", transform=transform)
    workers = advice["settings"][0]["value"] if advice["settings"] else 0
    return DataLoader(dataset, batch_size=batch, shuffle=True, num_workers=workers)


def same_allocator_state() -> None:
    """Runs this script again with glibc's malloc thresholds fixed. Left dynamic, they depend on
    what the process freed before: a loop whose largest frees are a step's tensors returns its
    heap to the system after every step and faults it in again (this CPU step measured 2.3 ms
    a step), until a large free (gpufeed's pack, a Loader's batches) raises the thresholds and
    the same step takes 1.4 ms. The before and after loops would then run in different
    allocator states, and the advice's prediction, made from the before loop's step, be off by
    that. Fixed thresholds give both loops the steady state."""
    if os.environ.get("MALLOC_TRIM_THRESHOLD_") is None:
        env = dict(os.environ, MALLOC_TRIM_THRESHOLD_=str(256 << 20),
                   MALLOC_MMAP_THRESHOLD_=str(32 << 20))
        os.execve(sys.executable, [sys.executable] + sys.argv, env)


def main() -> None:
    same_allocator_state()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--per-class", type=int, default=1280)
    parser.add_argument("--workers", type=int, default=0)
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="gpufeed-advice-")
    folder = make_folder(os.path.join(work, "photos"), args.per_class)
    dataset = torchvision.datasets.ImageFolder(folder, transform=TRANSFORM)
    model, optimizer = model_and_optimizer()  # torch's first kernels and allocations
    for _ in range(args.epochs):
        train(DataLoader(dataset, batch_size=args.batch, shuffle=True), model, optimizer)
    rows = []
    for r in range(args.rounds):
        before = measure(DataLoader(dataset, batch_size=args.batch, shuffle=True,
                                    num_workers=args.workers), args.epochs)
        advice = before.profile["recommendations"][0]
        after = measure(apply(advice, dataset, work, args.batch), args.epochs)
        row = {"advice": advice["action"], "before_samples_per_s": before.samples_per_s,
               "predicted_samples_per_s": advice["predicted_samples_per_s"],
               "measured_samples_per_s": after.samples_per_s,
               "before_step_cores": next((i.get("step_cores") for i in before.inputs
                                          if i.get("step_cores") is not None), None),
               "before_util": before.device_util,
               "predicted_util": advice["predicted_device_util"],
               "measured_util": after.device_util}
        rows.append(row)
        print(f"round {r}: {advice['kind']}: {row['before_samples_per_s']:.0f} -> measured "
              f"{row['measured_samples_per_s']:.0f} samples/s, predicted "
              f"{row['predicted_samples_per_s']:.0f}; utilization "
              f"{row['before_util']:.0%} -> {row['measured_util']:.0%}, predicted "
              f"{row['predicted_util']:.0%}", flush=True)
    ratio = statistics.median(r["measured_samples_per_s"] / r["predicted_samples_per_s"]
                              for r in rows)
    points = statistics.median(abs(r["measured_util"] - r["predicted_util"]) * 100 for r in rows)
    print(f"measured / predicted samples/s: {ratio:.2f} (target 0.85-1.15); utilization off by "
          f"{points:.1f} points (target <= 10); advice: {rows[0]['advice']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rounds": rows, "samples_ratio": ratio, "util_points": points}, f,
                      indent=2)


if __name__ == "__main__":
    main()
