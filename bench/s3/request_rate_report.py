"""Turns request_rate.sh's rounds (one JSON line per epoch, a file per reading) into the
figures, the targets and request_rate.json.

    request_rate_report.py WORK --out request_rate.json --images 8192 --get-rate 200 ...

A ratio is the ratio of two readings' medians over the rounds, with the per-round ratios'
range; "MiB a GET" is the epoch's GET bytes over its GETs (median over the rounds).
"""
import argparse
import json
import os
import statistics

from report import machine, print_machine, print_ratios, ratio, read_runs, summarize

READINGS = {  # file stem: what it is
    "chunk_uncapped": "s3://, chunk order (blocks), uncapped link",
    "chunk_capped": "s3://, chunk order (blocks), GET-rate cap",
    "random_uncapped": "s3://, random order (a GET an image), uncapped link",
    "random_capped": "s3://, random order (a GET an image), GET-rate cap",
    "local_chunk": "local file, chunk order",
    "local_random": "local file, random order",
}
RATIOS = [  # name, ours, peer, target (None: reported only)
    ("chunk_capped_vs_uncapped", "chunk_capped", "chunk_uncapped", 0.9),
    ("random_capped_vs_uncapped", "random_capped", "random_uncapped", None),
    ("capped_chunk_vs_random", "chunk_capped", "random_capped", None),
    ("local_chunk_vs_random", "local_chunk", "local_random", 0.95),
]
MIB_PER_GET_TARGET = 4.0


def network_figures(runs):
    """Per-run GETs, MiB a GET, refusals and the rate the loader paced itself to."""
    out = {"requests": [], "mib_per_get": [], "throttled": [], "rate_limit": [],
           "rate_wait_s": []}
    for run in runs:
        n = (run.get("stats") or {}).get("network")
        if not n or not n.get("requests"):
            continue
        out["requests"].append(n["requests"])
        out["mib_per_get"].append(n["bytes"] / n["requests"] / 2**20)
        out["throttled"].append(n.get("throttled", 0))
        out["rate_limit"].append(n.get("rate_limit", 0))
        out["rate_wait_s"].append(n.get("rate_wait_s", 0))
    return {k: (statistics.median(v) if v else None) for k, v in out.items()}


def fmt(x, digits=0):
    return "-" if x is None else f"{x:,.{digits}f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("work")
    ap.add_argument("--out", required=True)
    for name in ("images", "rounds", "workers", "batch"):
        ap.add_argument(f"--{name}", type=int, required=True)
    for name in ("get-rate", "latency-ms"):
        ap.add_argument(f"--{name}", type=float, required=True)
    for name in ("load-before", "load-after"):
        ap.add_argument(f"--{name}", default="")
    args = ap.parse_args()
    args.nginx_version = ""

    readings = {}
    for stem in READINGS:
        runs = read_runs(args.work, stem)
        readings[stem] = summarize(runs)
        readings[stem]["network"] = network_figures(runs)
    ratios = {name: ratio(name, ours, peer, target, readings)
              for name, ours, peer, target in RATIOS}
    mib = readings["chunk_uncapped"]["network"]["mib_per_get"]
    ratios["chunk_mib_per_get"] = {"value": mib, "target": MIB_PER_GET_TARGET,
                                   "met": mib is not None and mib >= MIB_PER_GET_TARGET}
    result = {"setup": {"images": args.images, "image": "224x224x3 JPEG (quality 90)",
                        "get_rate": args.get_rate, "latency_ms": args.latency_ms,
                        "rounds": args.rounds, "workers": args.workers, "batch": args.batch},
              "readings": readings, "ratios": ratios, "machine": machine(args)}
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")

    print(f"\n{args.images} JPEGs of 224x224 in the jpeg layout, {args.latency_ms:g} ms link, "
          f"cap {args.get_rate:g} GETs/s, batch {args.batch}, {args.workers} workers, "
          f"{args.rounds} rounds")
    print(f"{'reading':52} {'images/s median [min-max]':26} {'GETs':>6} {'MiB/GET':>8} "
          f"{'refused':>8} {'paced to':>9}")
    for stem, label in READINGS.items():
        r = readings[stem]
        n = r["network"]
        cell = (f"{fmt(r['median'])} [{fmt(r['min'])}-{fmt(r['max'])}]" if "median" in r
                else "n/a: " + "; ".join(r.get("problems", ["no runs"]))[:60])
        print(f"{label:52} {cell:26} {fmt(n['requests']):>6} {fmt(n['mib_per_get'], 2):>8} "
              f"{fmt(n['throttled']):>8} {fmt(n['rate_limit']):>9}")
    mib_row = ratios["chunk_mib_per_get"]
    print_ratios({k: v for k, v in ratios.items() if k != "chunk_mib_per_get"}, 30)
    print(f"{'chunk_mib_per_get':30} {fmt(mib_row['value'], 2) + ' MiB':28} "
          f">= {mib_row['target']:g} MiB {'met' if mib_row['met'] else 'MISSED'}")
    print_machine(result["machine"])
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
