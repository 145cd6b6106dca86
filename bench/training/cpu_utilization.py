#!/usr/bin/env python3
"""pipebench's diagnosis against a CPU training stage: utilization when the model is the
bottleneck, and the verdict and stage when input is.

    BUILD=build/release bench/training/cpu_utilization.py [--steps 24] [--samples 20000]

Packs a 64x64x3 raw file (h5pack, 64 samples per chunk), then runs pipebench with
`--model mlp` on it in four settings:

- model-bound: the loader as configured; target device_util (the training stage's busy
  share) >= 0.95, printed as a ratio to that target;
- read stall: `--inject-stall read:MS@1`, a stall longer than a step per batch on every worker;
  target: verdict input-bound, bottleneck stage "read";
- normalize stall: the same in "normalize"; target: input-bound, bottleneck "normalize";
- one worker: `--workers 1` with a shorter read stall; target: input-bound, "read", and the
  practice check on workers says to raise --workers.

The stall is sized from the model-bound run's step time, so the input side is slower than the
model by construction. Exit status 1 when a target is missed, 0 otherwise.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def run(args):
    done = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit(f"{args[0]} failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


def pipebench(exe, data, steps, extra, out_json):
    run([exe, "--data", data, "--model", "mlp", "--steps", str(steps), "--progress", "off",
         "--json", out_json] + extra)
    with open(out_json) as f:
        return json.load(f)


def workers_advice(report):
    for check in report.get("practices", []):
        if check["name"] == "workers":
            return check.get("advice") or ""
    return ""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=24, help="batches per run")
    parser.add_argument("--samples", type=int, default=20000, help="samples in the file")
    opts = parser.parse_args()
    build = os.environ.get("BUILD", "build/release")
    h5pack = os.path.join(build, "bin", "h5pack")
    exe = os.path.join(build, "bin", "pipebench")
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "raw64.h5")
        run([h5pack, "convert", f"{opts.samples}:64x64x3", data, "--chunk", "64"])
        out = os.path.join(tmp, "out.json")
        base = pipebench(exe, data, opts.steps, [], out)
        step_ms = base["training"]["step_ms"]
        stall = int(step_ms * 3)  # two workers: 1.5 steps per batch; input is the slower side
        rows = [("model-bound", [], base)]
        settings = [("read stall", ["--inject-stall", f"read:{stall}@1"]),
                    ("normalize stall", ["--inject-stall", f"normalize:{stall}@1"]),
                    ("one worker", ["--workers", "1", "--inject-stall",
                                    f"read:{int(step_ms * 1.5)}@1"])]
        for name, extra in settings:
            rows.append((name, extra, pipebench(exe, data, opts.steps, extra, out)))

    print(f"mlp on 64x64x3, batch 256, {opts.steps} steps per run; "
          f"model-bound step {step_ms:.0f} ms, LibTorch threads {base['training']['threads']}, "
          f"loader workers {base['settings']['workers']}")
    print(f"{'setting':<16} {'device_util':>11} {'input_wait':>10}  {'verdict':<24} "
          f"{'bottleneck':<10} target")
    missed = 0
    expected = {"model-bound": None, "read stall": "read", "normalize stall": "normalize",
                "one worker": "read"}
    for name, extra, r in rows:
        util = r["device_util"]
        wait = r["idle_by_cause"]["input_wait"]
        verdict = r.get("verdict") or ""
        stage = r["bottleneck_stage"] or "-"
        if expected[name] is None:
            ok = util is not None and util >= 0.95
            target = f"util >= 0.95: {util / 0.95:.3f}x the target" if util else "util missing"
        else:
            ok = verdict.endswith("input-bound") and not verdict.startswith("not") \
                and stage == expected[name]
            target = f"input-bound in {expected[name]}"
            if name == "one worker":
                advice = workers_advice(r)
                ok = ok and "--workers" in advice
                target += f"; workers check: {advice or 'no advice'}"
        missed += not ok
        print(f"{name:<16} {util if util is not None else float('nan'):>11.3f} {wait:>10.3f}  "
              f"{verdict:<24} {stage:<10} {'met' if ok else 'MISSED'}: {target}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
