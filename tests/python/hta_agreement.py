"""pipebench analyze against HolisticTraceAnalysis on the same traces: its per-stream idle-time
breakdown (host wait, kernel wait, other) and its temporal breakdown (idle, compute,
non-compute) must agree within one percentage point.

Traces: the PyTorch profiler traces in ../shared/data/kineto (when present) and generated ones
with HTA's corner cases: nanosecond-resolution (fractional microsecond) timestamps, near zero
and at epoch scale (where HTA's float64 microseconds are a quarter microsecond apart), gaps just
under and over HTA's 30-unit kernel-wait threshold, ProfilerStep annotations (HTA leaves out
the last step), kernels launched before the trace began, NCCL and memory kernels, and the
driver's sync and stream-wait records.

    python tests/python/hta_agreement.py PIPEBENCH   # run with a Python that has HTA
Exit 0 when every comparison agrees, 1 otherwise; it prints each comparison.
"""

from __future__ import annotations

import json
import logging
import os
import random
import shutil
import subprocess
import sys
import tempfile

logging.disable(logging.WARNING)  # HTA logs every file it parses

from hta.trace_analysis import TraceAnalysis  # noqa: E402

TOLERANCE = 1.0  # percentage points
KINETO_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "data", "kineto")
# HTA 0.5.0's idle time per stream (microseconds) on the shared traces, also checked against
# pipebench, so that a change of HTA's answers shows as such. ns_resolution has fractional
# epoch-scale timestamps: exact arithmetic gives 10,706 us, HTA's float64 one 10,113.
HTA_0_5_IDLE_US = {
    "ns_resolution.trace.json.gz": {7: {"host_wait": 1709.0, "kernel_wait": 8404.0,
                                        "other": 0.0}},
}
EPOCH_US = 1_712_195_495_000_000.0  # a PyTorch profiler timestamp of April 2024


def generated_trace(seed: int, fractional: bool, origin: float = 0.0) -> dict:
    """A synthetic PyTorch profiler trace of a few steps on three streams, `origin`
    microseconds after the epoch."""
    rng = random.Random(seed)
    events = []
    correlation = 1000
    t = origin + 1_000_000.0  # microseconds

    def stamp(x: float) -> float:
        return round(x, 3) if fractional else float(int(x))

    steps = rng.randint(2, 4)
    for step in range(steps):
        step_start = t
        events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}",
                       "pid": 1, "tid": 1, "ts": stamp(t), "dur": 0})
        device_t = {7: t + 20, 13: t + 40, 21: t + 60}
        for _ in range(rng.randint(20, 60)):
            stream = rng.choice([7, 7, 7, 13, 21])
            kind = rng.random()
            if kind < 0.08:
                cat, name = "gpu_memcpy", "Memcpy HtoD (Pinned -> Device)"
            elif kind < 0.12:
                cat, name = "gpu_memset", "Memset (Device)"
            elif kind < 0.18:
                cat, name = "kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)"
            else:
                cat, name = "kernel", f"void gemm_kernel<{rng.randint(0, 5)}>()"
            if rng.random() < 0.2:  # the host falls behind: the next gap is a host wait
                t = max(t, device_t[stream]) + rng.uniform(5, 200)
            launch = t + rng.uniform(0.5, 8)
            correlation += 1
            events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                           "pid": 1, "tid": 1, "ts": stamp(launch), "dur": stamp(4.123),
                           "args": {"correlation": correlation}})
            # Gaps around HTA's threshold of 30 trace units, and long ones.
            gap = rng.choice([rng.uniform(0, 29), rng.uniform(31, 60), rng.uniform(100, 900)])
            begin = max(device_t[stream] + gap, launch + 2)
            duration = rng.uniform(3, 400)
            events.append({"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": stream,
                           "ts": stamp(begin), "dur": stamp(duration),
                           "args": {"stream": stream, "device": 0, "correlation": correlation}})
            device_t[stream] = begin + duration
            t = launch + rng.uniform(1, 30)
            if rng.random() < 0.05:
                correlation += 1
                sync_name = rng.choice(["Stream Sync", "Stream Wait Event", "Context Sync"])
                sync_stream = 4294967295 if sync_name == "Context Sync" else stream
                events.append({"ph": "X", "cat": "cuda_sync", "name": sync_name, "pid": 0,
                               "tid": stream, "ts": stamp(device_t[stream]), "dur": stamp(7.5),
                               "args": {"stream": sync_stream, "device": 0,
                                        "correlation": correlation}})
                events.append({"ph": "X", "cat": "cuda_runtime",
                               "name": "cudaStreamSynchronize", "pid": 1, "tid": 1,
                               "ts": stamp(t), "dur": stamp(9), "args": {"correlation": correlation}})
        t = max(max(device_t.values()), t) + rng.uniform(50, 500)
        for e in events:
            if e["name"] == f"ProfilerStep#{step}":
                e["dur"] = stamp(t - step_start)
    # A kernel launched before the trace began: no runtime call in the trace.
    events.append({"ph": "X", "cat": "kernel", "name": "void early_kernel()", "pid": 0,
                   "tid": 7, "ts": stamp(origin + 999_000.0), "dur": stamp(50),
                   "args": {"stream": 7, "device": 0, "correlation": 1}})
    return {"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": 0,
                                                      "world_size": 1},
            "traceEvents": events}


def dense_epoch_trace(seed: int) -> dict:
    """One stream of short kernels, nearly back to back, launched well ahead by the host, at
    nanosecond resolution and epoch-scale microseconds: like a training step of a small model.
    Most gaps are kernel waits of a microsecond or two, so rounding a quarter microsecond more
    or less per gap shows."""
    rng = random.Random(seed)
    events = []
    t = EPOCH_US + rng.uniform(0, 1000)
    device_t = t + 50
    for step in range(3):
        events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}",
                       "pid": 1, "tid": 1, "ts": round(t, 3), "dur": 0.0, "_start": t})
        for _ in range(400):
            correlation = len(events) + 1000
            launch = t + rng.uniform(0.5, 3)
            events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                           "pid": 1, "tid": 1, "ts": round(launch, 3), "dur": 4.123,
                           "args": {"correlation": correlation}})
            begin = max(device_t + rng.uniform(0, 3), launch + 5)
            duration = rng.uniform(1, 40)
            events.append({"ph": "X", "cat": "kernel", "name": "void conv_kernel()", "pid": 0,
                           "tid": 7, "ts": round(begin, 3), "dur": round(duration, 3),
                           "args": {"stream": 7, "device": 0, "correlation": correlation}})
            device_t = begin + duration
            t = launch + rng.uniform(2, 12)  # a host wait now and then
        t = max(t, device_t) + 100
    for e in events:
        if "_start" in e:
            e["dur"] = round(t - e.pop("_start"), 3)
    return {"schemaVersion": 1, "displayTimeUnit": "ns", "traceEvents": events}


def hta_results(path: str) -> tuple[dict, dict]:
    """HTA's temporal breakdown (percent) and idle breakdown {stream: {category: percent}}."""
    directory = tempfile.mkdtemp()
    try:
        shutil.copy(path, directory)
        analysis = TraceAnalysis(trace_dir=directory)
        temporal = analysis.get_temporal_breakdown(visualize=False).iloc[0]
        idle = analysis.get_idle_time_breakdown(visualize=False)[0]
    finally:
        shutil.rmtree(directory)
    temporal_pct = {"idle": float(temporal["idle_time_pctg"]),
                    "compute": float(temporal["compute_time_pctg"]),
                    "non_compute": float(temporal["non_compute_time_pctg"])}
    streams: dict = {}
    for _, row in idle.iterrows():
        total = float(idle[idle.stream == row.stream].idle_time.sum())
        share = 100.0 * float(row.idle_time) / total if total > 0 else 0.0
        streams.setdefault(int(row.stream), {})[row.idle_category] = share
        streams[int(row.stream)]["total_us"] = total  # the trace's unit
    return temporal_pct, streams


def pipebench_results(pipebench: str, path: str) -> tuple[dict, dict]:
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run([pipebench, "analyze", path, "--json", out.name], check=True,
                       capture_output=True)
        report = json.load(open(out.name))
    t = report["temporal_breakdown"]
    temporal = {"idle": 100 * t["idle_share"], "compute": 100 * t["compute_share"],
                "non_compute": 100 * t["non_compute_share"]}
    streams = {}
    for s in report["idle_breakdown"]:
        total = s["idle_ns"]
        streams[s["stream"]] = {
            category: (100.0 * s[key] / total if total > 0 else 0.0)
            for category, key in (("host_wait", "host_wait_ns"), ("kernel_wait", "kernel_wait_ns"),
                                  ("other", "other_ns"))}
        streams[s["stream"]]["total_us"] = total / 1000.0
    return temporal, streams


def compare_reference(name: str, ours: tuple) -> bool:
    """pipebench's idle time against HTA 0.5.0's figures, where the trace has them."""
    ok = True
    for stream, categories in HTA_0_5_IDLE_US.get(name, {}).items():
        mine = ours[1].get(stream, {"total_us": 0.0})
        total = sum(categories.values())
        for category, value in categories.items():
            got = mine.get(category, 0.0) * mine["total_us"] / 100.0
            agree = abs(got - value) <= 0.01 * max(total, 1.0)
            ok &= agree
            print(f"{name}: stream {stream:>10} {category:12} HTA 0.5.0 {value:9.0f} us  "
                  f"pipebench {got:11.3f} us  {'ok' if agree else 'DIFFERS'}")
    return ok


def compare(name: str, ours: tuple, theirs: tuple) -> bool:
    ok = True
    for key, value in theirs[0].items():
        diff = abs(ours[0][key] - value)
        ok &= diff <= TOLERANCE
        print(f"{name}: temporal {key:12} HTA {value:7.2f}%  pipebench {ours[0][key]:7.2f}%"
              f"  {'ok' if diff <= TOLERANCE else 'DIFFERS'}")
    for stream, categories in theirs[1].items():
        mine = ours[1].get(stream)
        if mine is None:
            print(f"{name}: stream {stream} missing from pipebench's breakdown")
            ok = False
            continue
        for category, value in categories.items():
            if category == "total_us":
                # The idle time itself, not only its split: within 1% of HTA's (fractional
                # timestamps included, which HTA rounds inwards).
                agree = abs(mine[category] - value) <= 0.01 * max(value, 1.0)
                ok &= agree
                print(f"{name}: stream {stream:>10} idle total   HTA {value:11.3f} us  pipebench "
                      f"{mine[category]:11.3f} us  {'ok' if agree else 'DIFFERS'}")
                continue
            diff = abs(mine[category] - value)
            ok &= diff <= TOLERANCE
            print(f"{name}: stream {stream:>10} {category:12} HTA {value:7.2f}%  pipebench "
                  f"{mine[category]:7.2f}%  {'ok' if diff <= TOLERANCE else 'DIFFERS'}")
    return ok


def main() -> int:
    pipebench = sys.argv[1]
    traces = []
    if os.path.isdir(KINETO_DIR):
        traces += [os.path.join(KINETO_DIR, f) for f in sorted(os.listdir(KINETO_DIR))
                   if f.endswith(".json.gz")]
    else:
        print(f"note: {KINETO_DIR} not found; only generated traces are compared")
    work = tempfile.mkdtemp()
    try:
        for seed in range(8):
            path = os.path.join(work, f"generated_{seed}.json")
            with open(path, "w") as f:
                json.dump(generated_trace(seed, fractional=seed % 2 == 1,
                                          origin=EPOCH_US if seed >= 6 else 0.0), f)
            traces.append(path)
        path = os.path.join(work, "generated_dense_epoch.json")
        with open(path, "w") as f:
            json.dump(dense_epoch_trace(0), f)
        traces.append(path)
        ok = True
        for path in traces:
            ours = pipebench_results(pipebench, path)
            ok &= compare(os.path.basename(path), ours, hta_results(path))
            ok &= compare_reference(os.path.basename(path), ours)
    finally:
        shutil.rmtree(work)
    print("agrees with HolisticTraceAnalysis" if ok else "DIFFERS from HolisticTraceAnalysis")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
