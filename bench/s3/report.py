"""Turns the rounds' JSON lines (one file per reader) into the ratios, a table and results.json.

    report.py WORK --out results.json --latency-ms 20 --samples 20000 ... (run.sh passes all)

Each ratio is the ratio of the two readers' medians over the rounds; the range in brackets is
the per-round ratios' (round r of one reader against round r of the other).
"""
import argparse
import json
import os
import platform
import statistics
from importlib import metadata

READERS = {  # file stem: what it is
    "gpufeed_s3": "gpufeed s3://, first epoch",
    "gpufeed_filling": "gpufeed s3://, first epoch filling cache_dir",
    "gpufeed_cached": "gpufeed s3://, epoch from cache_dir",
    "gpufeed_local": "gpufeed, local file",
    "ros3": "h5py ROS3 + DataLoader",
    "s3fs": "h5py + s3fs + DataLoader",
    "streaming": "MosaicML Streaming, first epoch",
    "ranged_get": "parallel ranged GETs",
}
RATIOS = [  # name, ours, peer, target (None: reported only)
    ("gpufeed_vs_ros3_dataloader", "gpufeed_s3", "ros3", 100.0),
    ("gpufeed_vs_s3fs", "gpufeed_s3", "s3fs", None),
    ("gpufeed_vs_streaming_first_epoch", "gpufeed_s3", "streaming", 2.0),
    ("gpufeed_vs_parallel_ranged_get", "gpufeed_s3", "ranged_get", 0.8),
    ("cached_epoch_vs_local", "gpufeed_cached", "gpufeed_local", 0.9),
    ("filling_cache_vs_first_epoch", "gpufeed_filling", "gpufeed_s3", 0.9),
]
PACKAGES = ("torch", "numpy", "h5py", "s3fs", "fsspec", "aiobotocore", "boto3",
            "mosaicml-streaming", "urllib3")


def read_runs(work, stem):
    path = os.path.join(work, stem + ".jsonl")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def summarize(runs):
    rates = [r["samples_per_s"] for r in runs if "samples_per_s" in r]
    problems = sorted({r.get("error") or r.get("skipped") for r in runs
                       if "error" in r or "skipped" in r})
    summary = {"runs": runs, "samples_per_s": rates}
    if rates:
        summary.update(median=statistics.median(rates), min=min(rates), max=max(rates))
    if problems:
        summary["problems"] = problems
    return summary


def ratio(name, ours, peer, target, readers):
    a, b = readers[ours], readers[peer]
    row = {"ours": ours, "peer": peer, "target": target}
    if "median" not in a or "median" not in b:
        missing = a if "median" not in a else b
        row["missing"] = "; ".join(missing.get("problems", ["no runs"]))
        return row
    per_round = [x / y for x, y in zip(a["samples_per_s"], b["samples_per_s"]) if y > 0]
    row.update(ratio=a["median"] / b["median"], per_round=per_round,
               ours_samples_per_s=a["median"], peer_samples_per_s=b["median"])
    if target is not None:
        row["met"] = row["ratio"] >= target
    return row


def machine(args):
    cpu = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        mem_kib = int(f.readline().split()[1])
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:  # Debian's h5py has another distribution name
            try:
                versions[name] = __import__(name).__version__
            except ImportError:
                versions[name] = None
    return {"cpus": os.cpu_count(), "cpu": cpu, "memory_gib": round(mem_kib / 2**20, 1),
            "kernel": platform.release(), "python": platform.python_version(),
            "nginx": args.nginx_version, "load_before": args.load_before,
            "load_after": args.load_after, "packages": versions}


def fmt(x):
    return "-" if x is None else (f"{x:,.0f}" if x >= 100 else f"{x:.1f}")


def print_ratios(ratios, width):
    """One line a ratio (see ratio()): the medians' ratio, the per-round range, the target."""
    print(f"\n{'ratio':{width}} {'median [per-round range]':28} target")
    for name, row in ratios.items():
        target = "-" if row["target"] is None else f">= {row['target']:g}x"
        if "ratio" not in row:
            print(f"{name:{width}} {'n/a':28} {target}  ({row['missing'][:90]})")
            continue
        rounds = row["per_round"]
        cell = f"{row['ratio']:.2f}x [{min(rounds):.2f}-{max(rounds):.2f}]"
        verdict = "" if row["target"] is None else ("met" if row["met"] else "MISSED")
        print(f"{name:{width}} {cell:28} {target} {verdict}")


def print_machine(m):
    """The machine's line under a table: its CPUs and the load before and after the run."""
    print(f"\n{m['cpus']} CPUs ({m['cpu']}), load {m['load_before']} -> {m['load_after']}")


def print_table(result):
    s = result["setup"]
    print(f"\nS3 through a {s['latency_ms']:g} ms link (nginx behind a delaying proxy): "
          f"{s['samples']} x {s['sample_shape']} uint8, batch {s['batch']}, "
          f"{s['workers']} workers, {s['rounds']} rounds")
    print(f"{'reader':40} {'samples/s median [min-max]':32} note")
    notes = {"ros3": f"<= {s['slow_samples']} samples or {s['slow_seconds']:g} s a run",
             "s3fs": f"<= {s['slow_samples']} samples or {s['slow_seconds']:g} s a run",
             "ranged_get": f"{s['in_flight']} in flight"}
    for stem, label in READERS.items():
        r = result["readers"][stem]
        if "median" in r:
            cell = f"{fmt(r['median'])} [{fmt(r['min'])}-{fmt(r['max'])}]"
        else:
            cell = "n/a"
        note = "; ".join(r.get("problems", [])) or notes.get(stem, "")
        print(f"{label:40} {cell:32} {note[:110]}")
    print_ratios(result["ratios"], 34)
    print_machine(result["machine"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("work")
    ap.add_argument("--out", required=True)
    for name in ("latency-ms", "slow-seconds"):
        ap.add_argument(f"--{name}", type=float, required=True)
    for name in ("samples", "rounds", "workers", "batch", "in-flight", "slow-samples"):
        ap.add_argument(f"--{name}", type=int, required=True)
    for name in ("sample-shape", "nginx-version", "load-before", "load-after", "proxy"):
        ap.add_argument(f"--{name}", default="")
    args = ap.parse_args()

    readers = {stem: summarize(read_runs(args.work, stem)) for stem in READERS}
    result = {
        "setup": {"latency_ms": args.latency_ms, "samples": args.samples,
                  "sample_shape": args.sample_shape, "rounds": args.rounds,
                  "workers": args.workers, "batch": args.batch, "in_flight": args.in_flight,
                  "slow_samples": args.slow_samples, "slow_seconds": args.slow_seconds,
                  "proxy": json.loads(args.proxy) if args.proxy else None},
        "readers": readers,
        "ratios": {name: ratio(name, ours, peer, target, readers)
                   for name, ours, peer, target in RATIOS},
        "machine": machine(args),
    }
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    print_table(result)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
