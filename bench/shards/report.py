"""bench/shards/run.sh's figures: medians over the rounds of each side's first epoch, the ratio
of the medians (shards / one file) with the range of the per-round ratios, and the classes a
batch holds. Prints a table; writes --out (JSON)."""
import argparse
import json
import os
import statistics


def rates(work: str, name: str) -> list:
    with open(os.path.join(work, name + ".jsonl")) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    errors = [line["error"] for line in lines if "error" in line]
    if errors:
        raise SystemExit(f"{name}: {errors[0]}")
    return [line["samples_per_s"] for line in lines]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("work")
    ap.add_argument("--out", required=True)
    for name in ("latency-ms", "samples", "shards", "rounds", "classes", "photos"):
        ap.add_argument("--" + name, type=int)
    ap.add_argument("--load-before")
    ap.add_argument("--load-after")
    args = ap.parse_args()
    result = {"settings": {k: v for k, v in vars(args).items() if k not in ("work", "out")}}
    print(f"{'where':<8} {'one file':>12} {'shards':>12} {'ratio':>7}  per-round ratios")
    for where in ("local", "s3"):
        one, shards = rates(args.work, f"one_{where}"), rates(args.work, f"shards_{where}")
        rounds = [s / o for s, o in zip(shards, one)]
        ratio = statistics.median(shards) / statistics.median(one)
        result[where] = {"one_file_samples_per_s": statistics.median(one),
                         "shards_samples_per_s": statistics.median(shards), "ratio": ratio,
                         "round_ratios": rounds, "one_file_runs": one, "shards_runs": shards}
        print(f"{where:<8} {statistics.median(one):>12.0f} {statistics.median(shards):>12.0f} "
              f"{ratio:>7.3f}  {min(rounds):.3f}-{max(rounds):.3f}")
    with open(os.path.join(args.work, "label_mix.json")) as f:
        mix = json.load(f)
    result["label_mix"] = mix
    for path, m in mix.items():
        print(f"classes per batch, {os.path.basename(path.rstrip('/'))}: {m['median_labels']:.0f} "
              f"against {m['random_median_labels']:.0f} random ({m['ratio']:.3f}x)")
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
