#!/usr/bin/env python3
"""Profiling on vs off: pipebench samples/s with the recorder on and with --no-profile.

    BUILD=build/release bench/profiler/profile_overhead.py [--reps 9] [--model none]
        [--data 8192:64x64x3] [-- extra pipebench options]

Both settings run on one dataset file, interleaved (on/off, then off/on, ...) so drift in the
machine's load hits both alike. Prints each setting's median samples/s, the on/off ratio of the
medians and the median of the per-pair ratios (the target: within 2%), the CPU time per run,
and, when bench_profiler is built, the recorder's cost per range in ns. Exit status 0 unless a
run fails.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile


def run_pipebench(pipebench, data, extra, profile, out_json):
    args = [pipebench, "--data", data, "--json", out_json] + extra
    if not profile:
        args.append("--no-profile")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"pipebench failed ({done.returncode}): {done.stderr.strip()}")
    with open(out_json) as f:
        report = json.load(f)
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return report["samples_per_s"], cpu_s, report["recorder"]["events"]


def range_cost(exe):
    """bench_profiler's CPU ns per range (recorder only, NVTX + recorder, disabled), if built."""
    if not os.path.exists(exe):
        return None
    done = subprocess.run([exe, "--benchmark_format=json", "--benchmark_min_time=0.2",
                           "--benchmark_filter=threads:1$|Disabled"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        return None
    rows = json.loads(done.stdout)["benchmarks"]
    return {r["name"]: r["cpu_time"] for r in rows if r.get("time_unit") == "ns"}


def interleaved(pipebench, data, extra, reps, out_json):
    """pipebench with profiling on and with --no-profile, `reps` runs each, alternating which
    goes first, after one run that warms the page cache. Returns the samples/s and the CPU
    seconds of each setting ({True: on, False: off}), each pair's on/off ratio and the most
    ranges a profiled run recorded."""
    run_pipebench(pipebench, data, extra, True, out_json)  # warm the page cache
    rates = {True: [], False: []}
    cpu = {True: [], False: []}
    pairs = []
    events = 0
    for i in range(reps):
        pair = {}
        for profile in ((True, False) if i % 2 == 0 else (False, True)):
            rate, cpu_s, n = run_pipebench(pipebench, data, extra, profile, out_json)
            rates[profile].append(rate)
            cpu[profile].append(cpu_s)
            pair[profile] = rate
            if profile:
                events = max(events, n)
        pairs.append(pair[True] / pair[False])
    return rates, cpu, pairs, events


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=9, help="repetitions of each setting")
    parser.add_argument("--data", default="8192:64x64x3", help="synthetic N:HxWxC to generate")
    parser.add_argument("--chunk", default="64", help="samples per chunk of the generated file")
    parser.add_argument("--model", default="none", help="pipebench --model")
    parser.add_argument("--bench-profiler", help="bench_profiler to run (default: in $BUILD/bin)")
    parser.add_argument("extra", nargs="*", help="more pipebench options (after --)")
    opts = parser.parse_args()
    build = os.environ.get("BUILD", "build/release")
    pipebench = os.path.join(build, "bin", "pipebench")
    h5pack = os.path.join(build, "bin", "h5pack")
    for exe in (pipebench, h5pack):
        if not os.path.exists(exe):
            sys.exit(f"{exe} is missing: build pipebench and h5pack first (BUILD={build})")
    extra = ["--model", opts.model] + opts.extra
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="gpufeed-overhead-") as tmp:
        data = os.path.join(tmp, "data.h5")
        subprocess.run([h5pack, "convert", opts.data, data, "--chunk", opts.chunk], check=True,
                       stdout=subprocess.DEVNULL)
        rates, cpu, pairs, events = interleaved(pipebench, data, extra, opts.reps,
                                                os.path.join(tmp, "run.json"))
    med = statistics.median
    on, off = med(rates[True]), med(rates[False])
    print(f"pipebench --data {opts.data} {' '.join(extra)}: {opts.reps} interleaved runs each")
    for name, profile in (("on ", True), ("off", False)):
        print(f"  profiling {name}: {med(rates[profile]):10.0f} samples/s (median; min "
              f"{min(rates[profile]):.0f}, max {max(rates[profile]):.0f}), "
              f"{med(cpu[profile]):.3f} CPU s per run")
    print(f"  {events} ranges recorded per run with profiling on")
    ratio = on / off
    paired = med(pairs)
    cpu_ratio = med(cpu[True]) / med(cpu[False])
    verdict = "within" if abs(paired - 1) <= 0.02 else "OUTSIDE"
    print(f"  samples/s on/off: {ratio:.4f} ({100 * (ratio - 1):+.2f}%) from the medians, "
          f"{paired:.4f} ({100 * (paired - 1):+.2f}%) median of paired runs: {verdict} the 2% "
          f"target")
    print(f"  CPU time on/off: {cpu_ratio:.4f} ({100 * (cpu_ratio - 1):+.2f}%, includes the "
          f"analysis after the run)")
    costs = range_cost(opts.bench_profiler or os.path.join(build, "bin", "bench_profiler"))
    if costs:
        for name, ns in costs.items():
            print(f"  {name}: {ns:.1f} ns CPU per range")
    else:
        print("  bench_profiler not built (GPUFEED_BUILD_BENCH=ON): no ns/range figure")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
