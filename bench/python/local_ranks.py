"""Ranks on one node share its cores: `torchrun --nproc_per_node=N` with the Loader's defaults
against manual splits of the workers, runs alternated (each round starting at the next
setting), medians compared. Target: the default takes no more loader threads than the cores
between the ranks, and the job's samples/s is at least 0.95x the best manual split's.

    python bench/python/local_ranks.py [--ranks 2] [--rounds 3] [--samples 16384]
        [--shape 64x64x3] [--batch 128] [--epochs 24] [--step-ms 2] [--splits 1,2]
        [--json OUT.json]

Each rank reads its shard of one synthetic file for --epochs epochs (workers left at the
default, or the split given) and runs a trainer-like CPU step a batch: a fixed number of 64x64
matmuls, about --step-ms on an idle core (0: none), so the loader's threads compete with the
trainers' as they would. The ranks meet at a file barrier once their loaders are open; the
job's samples/s is the ranks' samples over the time from the first start to the last end.
Prints one JSON line.
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

# One BLAS thread, as torchrun gives each rank: the step is calibrated and run alike.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import gpufeed  # noqa: E402


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ranks", type=int, default=2, help="--nproc_per_node")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--samples", type=int, default=16384)
    p.add_argument("--shape", default="64x64x3", help="HxWxC")
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--epochs", type=int, default=24, help="epochs each job reads")
    p.add_argument("--step-ms", type=float, default=2.0,
                   help="a trainer's CPU step a batch, on an idle core (0: none)")
    p.add_argument("--splits", default="1,2",
                   help="manual workers per rank to compare the default with")
    p.add_argument("--json", help="also write the result here")
    p.add_argument("--as-rank", nargs=4, metavar=("DATA", "WORKERS", "STEPS", "OUT"),
                   help=argparse.SUPPRESS)
    return p.parse_args()


def matmuls_for(step_ms: float) -> int:
    """Matmuls of 64x64 float32 that take about `step_ms` on this core, alone."""
    if step_ms <= 0:
        return 0
    a = np.ones((64, 64), np.float32)
    begin, count = time.perf_counter(), 0
    while time.perf_counter() - begin < 0.2:
        a @ a
        count += 1
    return max(1, round(count * step_ms / 200))


def barrier(folder: str, rank: int, ranks: int) -> None:
    open(os.path.join(folder, f"ready.{rank}"), "w").close()
    while len([f for f in os.listdir(folder) if f.startswith("ready.")]) < ranks:
        time.sleep(0.001)


def as_rank(data: str, workers: str, steps: int, out: str) -> None:
    """One rank under torchrun: its loader, --epochs epochs timed, a report in `out`."""
    rank, ranks = int(os.environ["RANK"]), int(os.environ["LOCAL_WORLD_SIZE"])
    loader = gpufeed.Loader(data, batch_size=args.batch, output="numpy",
                            **({} if workers == "default" else {"workers": int(workers)}))
    a = np.ones((64, 64), np.float32)
    barrier(out, rank, ranks)
    begin, samples = time.time(), 0
    for _epoch in range(args.epochs):
        for images, _labels in loader:
            for _ in range(steps):
                a @ a
            samples += images.shape[0]
    end = time.time()
    report = {"rank": rank, "begin": begin, "end": end, "samples": samples,
              "workers": loader.workers, "cpu_share": loader.stats().cpu_share}
    with open(os.path.join(out, f"report.{rank}"), "w") as f:
        json.dump(report, f)


def read_json(path: str) -> dict:
    with open(path) as f:
        return json.load(f)


def run_job(data: str, workers: str, steps: int) -> dict:
    """One torchrun job; the job's samples/s and each rank's loader threads."""
    with tempfile.TemporaryDirectory() as out:
        # Debian's torch 1.13 under Python 3.11 cannot parse torchrun's default --redirects 0.
        command = [sys.executable, "-m", "torch.distributed.run", "--standalone",
                   f"--nproc_per_node={args.ranks}", "--redirects", "1", "--tee", "1", __file__,
                   "--batch", str(args.batch), "--epochs", str(args.epochs),
                   "--as-rank", data, workers, str(steps), out]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(done.stdout[-2000:] + done.stderr[-2000:])
        reports = [read_json(os.path.join(out, f"report.{r}")) for r in range(args.ranks)]
    wall = max(r["end"] for r in reports) - min(r["begin"] for r in reports)
    return {"samples_per_s": sum(r["samples"] for r in reports) / wall,
            "workers": [r["workers"] for r in reports],
            "cpu_share": [r["cpu_share"] for r in reports]}


def main() -> None:
    h, w, c = (int(v) for v in args.shape.split("x"))
    cores = len(os.sched_getaffinity(0))
    steps = matmuls_for(args.step_ms)
    configs = ["default"] + [s.strip() for s in args.splits.split(",")]
    runs: dict[str, list[dict]] = {k: [] for k in configs}
    with tempfile.TemporaryDirectory() as scratch:
        data = gpufeed.write_synthetic(os.path.join(scratch, "ranks.h5"), args.samples,
                                       (h, w, c))
        run_job(data, "default", steps)  # warm the page cache and the imports
        for r in range(args.rounds):
            # Each round starts at the next configuration: none always runs first.
            for k in configs[r % len(configs):] + configs[:r % len(configs)]:
                runs[k].append(run_job(data, k, steps))
    rate = {k: statistics.median(r["samples_per_s"] for r in v) for k, v in runs.items()}
    best = max((k for k in configs if k != "default"), key=lambda k: rate[k])
    threads = max(sum(r["workers"]) for r in runs["default"])
    result = {
        "cores": cores, "ranks": args.ranks, "step_ms": args.step_ms, "matmuls": steps,
        "samples_per_s": {k: round(v, 1) for k, v in rate.items()},
        "rounds": {k: [round(r["samples_per_s"], 1) for r in v] for k, v in runs.items()},
        "default_workers": runs["default"][0]["workers"],
        "default_cpu_share": runs["default"][0]["cpu_share"],
        "best_split": int(best),
        "default_vs_best": round(rate["default"] / rate[best], 3),
        "threads_within_cores": threads <= cores,
        "target_met": threads <= cores and rate["default"] >= 0.95 * rate[best],
    }
    print(json.dumps(result))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    args = parse_args()
    if args.as_rank:
        data, workers, steps, out = args.as_rank
        as_rank(data, workers, int(steps), out)
    else:
        main()
