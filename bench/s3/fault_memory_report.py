"""Turns fault_memory.sh's rounds (one JSON line per epoch, a file per proxy) into the figures,
the target and fault_memory.json.

    fault_memory_report.py WORK --out fault_memory.json --kinds reset 500 short 503 ...

The Loader's memory of an epoch is its peak resident memory above the resident memory before
the Loader was made (Python and torch); a ratio is the faulty epochs' median over the clean
ones', with the per-round ratios' range (round r against the median of the clean epochs).
"""
import argparse
import json
import statistics

from report import machine, print_machine, read_runs

TARGET = 1.10  # the Loader's peak memory with faults, at most, against without


def loader_bytes(run):
    peak, base = run.get("peak_rss_bytes"), run.get("base_rss_bytes")
    return None if peak is None or base is None else peak - base


def reading(runs):
    memory = [m for m in (loader_bytes(r) for r in runs) if m is not None]
    errors = sorted({r["error"] for r in runs if "error" in r})
    out = {"runs": runs, "loader_bytes": memory, "errors": errors,
           "checksums": sorted({r["checksum"] for r in runs if "checksum" in r}),
           "samples_per_s": statistics.median([r["samples_per_s"] for r in runs
                                               if "samples_per_s" in r] or [0]),
           "retries": statistics.median([(r.get("stats") or {}).get("network", {})
                                         .get("retries", 0) for r in runs] or [0])}
    if memory:
        out["median_bytes"] = statistics.median(memory)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("work")
    ap.add_argument("--out", required=True)
    ap.add_argument("--kinds", nargs="+", required=True)
    for name in ("samples", "every", "rounds", "workers", "batch"):
        ap.add_argument(f"--{name}", type=int, required=True)
    for name in ("load-before", "load-after"):
        ap.add_argument(f"--{name}", default="")
    args = ap.parse_args()
    args.nginx_version = ""

    clean = reading(read_runs(args.work, "clean"))
    rows = {}
    for kind in args.kinds:
        r = reading(read_runs(args.work, f"fault_{kind}"))
        row = {"reading": r, "target": TARGET}
        if "median_bytes" in r and "median_bytes" in clean:
            base = clean["median_bytes"]
            row.update(ratio=r["median_bytes"] / base,
                       per_round=[m / base for m in r["loader_bytes"]],
                       same_batches=bool(r["checksums"]) and r["checksums"] == clean["checksums"])
            row["met"] = row["ratio"] <= TARGET and row["same_batches"] and not r["errors"]
        rows[kind] = row
    result = {"setup": {"samples": args.samples, "sample": "64x64x3 uint8, raw layout",
                        "fault_every": args.every, "rounds": args.rounds,
                        "workers": args.workers, "batch": args.batch},
              "clean": clean, "faults": rows, "machine": machine(args)}
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")

    mib = 2**20
    print(f"\n{args.samples} x 64x64x3 from s3:// through the tests' proxy, every {args.every}th "
          f"GET faulted, batch {args.batch}, {args.workers} workers, {args.rounds} rounds")
    print(f"{'epoch':12} {'Loader MiB median':>18} {'retries':>8} {'samples/s':>10} "
          f"{'vs clean [per-round]':24} target")
    print(f"{'no faults':12} {clean.get('median_bytes', 0) / mib:18.1f} {clean['retries']:8.0f} "
          f"{clean['samples_per_s']:10,.0f}")
    for kind, row in rows.items():
        r = row["reading"]
        if "ratio" not in row:
            print(f"{kind:12} n/a: {'; '.join(r['errors'] or ['no runs'])[:90]}")
            continue
        cell = (f"{row['ratio']:.2f}x [{min(row['per_round']):.2f}-"
                f"{max(row['per_round']):.2f}]")
        verdict = "met" if row["met"] else "MISSED"
        if not row["same_batches"] or r["errors"]:
            verdict += " (batches differ or an epoch failed)"
        print(f"{kind:12} {r['median_bytes'] / mib:18.1f} {r['retries']:8.0f} "
              f"{r['samples_per_s']:10,.0f} {cell:24} <= {TARGET:g}x {verdict}")
    print_machine(result["machine"])
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
