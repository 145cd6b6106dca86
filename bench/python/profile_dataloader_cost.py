"""What gpufeed.profile costs a torch DataLoader loop: samples/s of the same loop with and
without a profile around it, runs alternated, medians compared (target: the profiled loop keeps
at least 98% of the plain loop's samples/s).

    python bench/python/profile_dataloader_cost.py [--rounds 7] [--batches 400] [--workers 0]
        [--model none|small]

The loop is about the cheapest a DataLoader makes (64 in-memory 3x32x32 uint8 samples a batch,
no model), so the per-batch cost of the profile (timing each next() and each fetch, recording
the wait and the implicit step) is as large a share of it as it gets. ``--model small`` adds a
forward and backward of a five-module CNN each step, so that the profile's watch on every
module forward (eval without no_grad, autocast, convolutions) is paid too. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import torch
from torch.utils.data import DataLoader, Dataset

import gpufeed


class Tiny(Dataset):
    def __init__(self, samples: int) -> None:
        self.samples = samples

    def __len__(self) -> int:
        return self.samples

    def __getitem__(self, index: int):
        return torch.full((3, 32, 32), index % 256, dtype=torch.uint8), index % 10


def small_model() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU(),
                               torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
                               torch.nn.Linear(8, 10))


def loop(loader: DataLoader, model) -> float:
    """Samples per second of one pass over `loader`: the loop alone, or a model's step."""
    samples = 0
    begin = time.perf_counter()
    for images, labels in loader:
        if model is not None:
            torch.nn.functional.cross_entropy(model(images.float()), labels).backward()
        samples += images.shape[0]
    return samples / (time.perf_counter() - begin)


def run(loader: DataLoader, model, profiled: bool) -> float:
    """The loop's samples/s, inside a profile or not (its start and its diagnosis at the end
    are a fixed cost per run, outside the rate)."""
    if not profiled:
        return loop(loader, model)
    with gpufeed.profile(measure_pack=False):
        return loop(loader, model)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for flag, default in (("--rounds", 9), ("--batches", 300), ("--batch-size", 64),
                          ("--workers", 0)):
        parser.add_argument(flag, type=int, default=default)
    parser.add_argument("--model", choices=("none", "small"), default="none")
    args = parser.parse_args()
    model = small_model() if args.model == "small" else None
    loader = DataLoader(
        Tiny(args.batches * args.batch_size),
        batch_size=args.batch_size,
        num_workers=args.workers,
        persistent_workers=args.workers > 0,
    )
    run(loader, model, False)  # warm-up: imports, worker start
    plain, profiled = [], []
    for r in range(args.rounds):
        # Alternate which side goes first, so drift on a busy machine hits both alike.
        for side in ((False, True) if r % 2 == 0 else (True, False)):
            (profiled if side else plain).append(run(loader, model, side))
    ratio = statistics.median(profiled) / statistics.median(plain)
    print(json.dumps({
        "benchmark": "profile_dataloader_cost",
        "workers": args.workers,
        "model": args.model,
        "batches": args.batches,
        "batch_size": args.batch_size,
        "plain_samples_per_s": statistics.median(plain),
        "profiled_samples_per_s": statistics.median(profiled),
        "profiled_over_plain": ratio,
        "target": ">= 0.98",
    }))


if __name__ == "__main__":
    main()
