"""What the profile's live figures cost a loop of 1 ms steps: samples/s of the same profiled
DataLoader loop with ``every=`` (a line each period on stderr and the figures to a callback:
"live"; and to a TensorBoard SummaryWriter too: "tensorboard") and without it ("quiet"), runs
alternated, each side warmed first, medians of an even number of rounds (target: live over quiet
>= 0.99). The windows and epochs the trend is computed from are kept on every side (always on);
the plain loop without a profile is printed beside them for scale.

    python bench/python/live_cost.py [--rounds 12] [--batches 2000] [--every 0.25]

Prints one JSON line; the live lines go to stderr.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time

from profile_dataloader_cost import Tiny  # bench/python, beside this script
from torch.utils.data import DataLoader

import gpufeed


def spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def loop(loader: DataLoader) -> float:
    samples = 0
    begin = time.perf_counter()
    for images, _ in loader:
        spin(0.001)  # a 1 ms step
        samples += images.shape[0]
    return samples / (time.perf_counter() - begin)


def run(loader: DataLoader, side: str, every: float, writer) -> float:
    if side == "plain":
        return loop(loader)
    live = {"every": every, "callback": lambda figures: None} if side != "quiet" else {}
    if side == "tensorboard":
        live["tensorboard"] = writer
    with gpufeed.profile(measure_pack=False, **live):
        return loop(loader)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--batches", type=int, default=2000)
    parser.add_argument("--every", type=float, default=0.25)
    args = parser.parse_args()
    rounds = -(-args.rounds // 4) * 4  # a multiple of the four sides: each first as often
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(log_dir=tempfile.mkdtemp(prefix="gpufeed-live-cost-"))
    loader = DataLoader(Tiny(args.batches * 8), batch_size=8)
    rates: dict = {"plain": [], "quiet": [], "live": [], "tensorboard": []}
    for side in rates:  # warm each side: imports, first patches, the writer's thread
        run(loader, side, args.every, writer)
    sides = list(rates)
    for r in range(rounds):
        # Each side in each place of the order as often as the others (rounds: a multiple of
        # the sides), so that what drifts on a busy machine hits them alike.
        for side in sides[r % len(sides):] + sides[:r % len(sides)]:
            rates[side].append(run(loader, side, args.every, writer))
    writer.close()
    medians = {side: statistics.median(values) for side, values in rates.items()}
    print(json.dumps({
        "benchmark": "live_cost",
        "step_ms": 1.0,
        "every_s": args.every,
        "rounds": rounds,
        "samples_per_s": medians,
        "live_over_quiet": medians["live"] / medians["quiet"],
        "tensorboard_over_quiet": medians["tensorboard"] / medians["quiet"],
        "quiet_over_plain": medians["quiet"] / medians["plain"],
        "target": "live_over_quiet >= 0.99",
    }))


if __name__ == "__main__":
    main()
