#!/usr/bin/python3
"""The transform path's targets, measured in one run, each side alternating over ROUNDS rounds
(median ratio, range in brackets):

  1. gpufeed.Loader(transform=RandomResizedCrop(224) + RandomHorizontalFlip + ToTensor +
     Normalize) >= 0.95x gpufeed.Loader(augment="crop-flip", size=224, the same mean/std) on the
     same jpeg-layout file: planning a transform costs nothing against the short spelling;
  2. the same transform with ColorJitter(0.4, 0.4, 0.4) after ToTensor >= 2x a torch DataLoader
     over the ImageFolder with the same Compose and the same number of workers (CPU device).

    PYTHONPATH=build/ci/python /usr/bin/python3 bench/python/transform_vs_peers.py \
        [--photos 400] [--workers 2] [--rounds 3] [--batch 64] [--seconds 6]

Makes photo-like JPEGs (bench/jpeg/make_photos.py) and packs them with gpufeed.pack; prints a
table and writes --json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import torchvision
import torchvision.transforms as T
from torch.utils.data import DataLoader

import gpufeed

MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]


def fused_transform() -> T.Compose:
    return T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ToTensor(),
                      T.Normalize(MEAN, STD)])


def jitter_transform() -> T.Compose:
    return T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ToTensor(),
                      T.ColorJitter(0.4, 0.4, 0.4), T.Normalize(MEAN, STD)])


def rate(batches, seconds: float) -> float:
    """Images per second over about `seconds`, after a first batch (start-up aside)."""
    count, begin = 0, None
    while True:
        for images, _ in batches():
            if begin is None:
                begin = time.perf_counter()
                continue
            count += len(images)
            if time.perf_counter() - begin > seconds:
                return count / (time.perf_counter() - begin)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--photos", type=int, default=400)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    work = tempfile.mkdtemp(prefix="gpufeed-transform-bench-")
    folder = os.path.join(work, "photos")
    subprocess.run([sys.executable, os.path.join(here, "..", "jpeg", "make_photos.py"), folder,
                    "--count", str(args.photos)], check=True)
    dataset = torchvision.datasets.ImageFolder(folder, transform=jitter_transform())
    path = gpufeed.pack(dataset, os.path.join(work, "photos.h5"), store="jpeg", progress=False)
    common = dict(batch_size=args.batch, workers=args.workers, order="random")
    mean255, std255 = [m * 255 for m in MEAN], [s * 255 for s in STD]
    short = gpufeed.Loader(path, augment="crop-flip", size=224, mean=mean255, stddev=std255,
                           **common)
    planned = gpufeed.Loader(path, transform=fused_transform(), **common)
    jitter = gpufeed.Loader(path, transform=jitter_transform(), **common)
    peer = DataLoader(dataset, batch_size=args.batch, shuffle=True, num_workers=args.workers,
                      persistent_workers=True)
    torch.set_num_threads(args.workers)
    rows = {"short": [], "planned": [], "jitter": [], "dataloader": []}
    for r in range(args.rounds):
        for name, loader in (("short", short), ("planned", planned), ("jitter", jitter),
                             ("dataloader", peer)):
            rows[name].append(rate(lambda loader=loader: iter(loader), args.seconds))
            print(f"round {r}: {name:10s} {rows[name][-1]:8.1f} images/s", flush=True)
    ratio_a = [p / s for p, s in zip(rows["planned"], rows["short"])]
    ratio_b = [j / d for j, d in zip(rows["jitter"], rows["dataloader"])]
    result = {
        "photos": args.photos, "workers": args.workers, "batch": args.batch,
        "images_per_s": {k: statistics.median(v) for k, v in rows.items()},
        "transform_vs_augment": {"median": statistics.median(ratio_a), "range": [min(ratio_a),
                                                                                 max(ratio_a)],
                                 "target": 0.95},
        "jitter_vs_dataloader": {"median": statistics.median(ratio_b), "range": [min(ratio_b),
                                                                                 max(ratio_b)],
                                 "target": 2.0},
        "plan": jitter.transform_plan,
    }
    print(f"transform= vs augment=crop-flip: {result['transform_vs_augment']['median']:.2f}x "
          f"[{min(ratio_a):.2f}-{max(ratio_a):.2f}] (target >= 0.95x)")
    print(f"transform= with ColorJitter vs DataLoader, {args.workers} workers: "
          f"{result['jitter_vs_dataloader']['median']:.2f}x [{min(ratio_b):.2f}-{max(ratio_b):.2f}]"
          " (target >= 2x)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
