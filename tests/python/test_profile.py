"""gpufeed.profile diagnoses the user's own loop: the input stage that holds it back, a loop that
is not input-bound, host syncs in the step, outputs that pipebench analyze reads. (On a CUDA
device, test_cuda.py checks that CUPTI finds an .item() by itself.)"""

from __future__ import annotations

import json
import os
import subprocess
import time

import pytest

import gpufeed


def run_loop(loader, prof, epochs: int, step_s: float, sync: bool = False) -> int:
    steps = 0
    for epoch in range(epochs):
        for images, labels in loader.epoch(epoch):
            with prof.step():
                time.sleep(step_s)  # stands in for the model's compute
                if sync:
                    with prof.sync():
                        float(images[0, 0, 0, 0])
            steps += 1
    return steps


def test_a_slow_read_stage_is_named_with_advice(synthetic_file, monkeypatch):
    # One worker and 30 ms of reading per batch against 2 ms steps: highly input-bound on read.
    monkeypatch.setenv("GPUFEED_INJECT_STALL", "read:30@1")
    loader = gpufeed.Loader(synthetic_file, batch_size=50, workers=1)
    with gpufeed.profile() as prof:
        run_loop(loader, prof, epochs=2, step_s=0.002)
    results = prof.results()
    assert results.verdict == "highly input-bound", prof.summary()
    assert results.bottleneck_stage == "read"
    assert results.idle_by_cause.input_wait > 0.5
    assert results.device_util < 0.5
    recommendations = results.profile["recommendations"]
    assert recommendations, prof.summary()
    # Settings come as data, spelled as the Loader's keywords.
    for rec in recommendations:
        for setting in rec["settings"]:
            assert setting["knob"] in ("workers", "prefetch", "echo", "cache_bytes", "order")
            assert not rec["action"].startswith("--"), rec
    summary = prof.summary()
    for part in ("device utilization", "idle by cause", "verdict", "bottleneck stage", "practices"):
        assert part in summary, summary


def test_a_loop_the_loader_keeps_up_with(synthetic_file):
    loader = gpufeed.Loader(synthetic_file, batch_size=100, workers=2)
    with gpufeed.profile() as prof:
        run_loop(loader, prof, epochs=3, step_s=0.02)
    results = prof.results()
    assert results.verdict == "not input-bound", prof.summary()
    assert results.device_util > 0.8
    assert results.bottleneck_stage is None  # nothing holds the loop back
    assert "bottleneck stage" not in prof.summary()
    assert results.steps == 30 and results.epochs == 3
    assert results.echo.fresh_batches == 30


def test_syncs_marked_inside_steps_are_counted_by_the_practice_check(synthetic_file):
    loader = gpufeed.Loader(synthetic_file, batch_size=100, workers=2)
    with gpufeed.profile() as prof:
        run_loop(loader, prof, epochs=1, step_s=0.005, sync=True)
    check = {c.name: c for c in prof.results().practices}["host_sync"]
    assert check.finding.startswith("10 host syncs inside the steps"), check
    # On the CPU a sync costs little (info); on a CUDA device each one drains the queue (warn).
    assert check.status == ("warn" if prof.results().device == "cuda" else "info")


def test_advice_speaks_python_never_a_flag(synthetic_file):
    # A loop without prof.step(): the time from one batch to the next request is a step, as
    # for a DataLoader; the practice checks name keywords and torch calls; nothing a Python
    # user reads names a command-line flag.
    import torch

    loader = gpufeed.Loader(synthetic_file, batch_size=100, workers=2, seed=3)
    with gpufeed.profile() as prof:
        batches = sum(1 for _ in loader.epoch(0))
    summary = prof.summary()
    assert "--" not in summary, summary
    assert prof.results().steps == batches, summary  # a step after each batch
    determinism = {c.name: c for c in prof.results().practices}["determinism"]
    assert "seed=3" in determinism.finding, determinism
    with gpufeed.profile() as prof:
        pass  # no batch, no step: the summary says how to get steps
    assert "prof.step()" in prof.summary(), prof.summary()
    with gpufeed.profile() as prof:
        run_loop(loader, prof, epochs=1, step_s=0.001)
    determinism = {c.name: c for c in prof.results().practices}["determinism"]
    if not torch.are_deterministic_algorithms_enabled():
        assert "torch.use_deterministic_algorithms(True)" in determinism.advice, determinism
    assert "--" not in prof.summary(), prof.summary()


def test_only_the_batches_inside_the_profile_count(synthetic_file):
    loader = gpufeed.Loader(synthetic_file, batch_size=100, workers=2)
    for _ in loader.epoch(0):
        pass
    with gpufeed.profile() as prof:
        run_loop(loader, prof, epochs=1, step_s=0.001)
    assert prof.results().echo.fresh_batches == 10
    assert loader.stats().fresh_batches == 20


def test_outputs_and_pipebench_analyze(synthetic_file, tmp_path, monkeypatch):
    monkeypatch.setenv("GPUFEED_INJECT_STALL", "read:20@1")
    loader = gpufeed.Loader(synthetic_file, batch_size=50, workers=1)
    paths = {k: str(tmp_path / name) for k, name in
             [("report", "run.html"), ("trace", "run.json"), ("json", "run.profile.json")]}
    with gpufeed.profile(**paths) as prof:
        run_loop(loader, prof, epochs=1, step_s=0.002)
    with open(paths["json"]) as f:
        written = json.load(f)
    for key in ("samples_per_s", "device_util", "idle_by_cause", "bottleneck_stage", "stages",
                "echo", "device", "practices"):
        assert key in written, key
    assert written["bottleneck_stage"] == "read"
    with open(paths["trace"]) as f:
        trace = json.load(f)
    names = {e.get("name") for e in trace["traceEvents"]}
    assert {"step", "wait", "read"} <= names
    assert open(paths["report"]).read().lstrip().lower().startswith("<!doctype html")
    pipebench = os.environ.get("GPUFEED_PIPEBENCH")
    if pipebench:
        out = subprocess.run([pipebench, "analyze", paths["trace"]], capture_output=True,
                             text=True, check=True).stdout
        assert "input-bound" in out and "read" in out, out


def test_outputs_are_written_when_the_loop_is_interrupted(synthetic_file, tmp_path):
    loader = gpufeed.Loader(synthetic_file, batch_size=50, workers=2)
    trace = str(tmp_path / "run.json")
    with pytest.raises(KeyboardInterrupt):
        with gpufeed.profile(trace=trace) as prof:
            for i, (images, labels) in enumerate(loader.epoch(0)):
                with prof.step():
                    time.sleep(0.001)
                if i == 10:
                    raise KeyboardInterrupt
    assert os.path.getsize(trace) > 0
    assert prof.results().steps == 11


def test_misuse_is_a_usage_error(synthetic_file, tmp_path):
    prof = gpufeed.profile()
    with pytest.raises(gpufeed.UsageError, match="not finished"):
        prof.summary()
    with pytest.raises(gpufeed.UsageError, match="outside"):
        prof.step()
    with gpufeed.profile():
        with pytest.raises(gpufeed.UsageError, match="already running"):
            with gpufeed.profile():
                pass
    with pytest.raises(gpufeed.Error, match="no/such"):
        with gpufeed.profile(report=str(tmp_path / "no/such/run.html")):
            pass


def test_a_loop_without_a_gpufeed_loader(synthetic_file):
    with gpufeed.profile() as prof:
        for _ in range(20):
            with prof.step():
                time.sleep(0.001)
    assert "no gpufeed.Loader ran inside the profile" in prof.summary()
