"""The profile never makes a loop's failure worse, and explains it: an item that kills its
worker, raises or hangs gives the caller the same exception inside gpufeed.profile as outside
it, with the process alive, the profile's notes added and its outputs written; a hung worker is
named (its sample and its frame) without a signal sent to it; a worker the OOM killer ends is
explained with its memory and the cgroup's counter; the pack remedy's measurement after a clean
loop dies or times out in a child process, never the trainer. Each loop runs as a process of its
own (failing_loops.py), with real DataLoader workers and real signals."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

import gpufeed

pytest.importorskip("torch")
HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "failing_loops.py")


def run_loop(scenario: str, mode: str, out, timeout: float = 120, prefix: tuple = ()) -> dict:
    """Runs failing_loops.py: its exception's type and notes, whether it went on, its stderr."""
    out.mkdir(exist_ok=True)
    done = subprocess.run([*prefix, sys.executable, SCRIPT, scenario, mode, str(out)],
                          capture_output=True, text=True, timeout=timeout)
    lines = done.stdout.splitlines()
    exception = next((line.split(" ", 1)[1] for line in lines if line.startswith("EXCEPTION ")),
                     None)
    return {"exception": exception, "notes": [line[5:] for line in lines if line.startswith("NOTE ")],
            "alive": "ALIVE" in lines, "returncode": done.returncode, "stderr": done.stderr}


@pytest.mark.parametrize("scenario", ["kill", "raise", "hang"])
def test_a_failing_item_fails_the_loop_the_same_way_inside_the_profile(scenario, tmp_path):
    plain = run_loop(scenario, "plain", tmp_path / "plain")
    profiled = run_loop(scenario, "profiled", tmp_path / "profiled")
    assert plain["exception"] is not None and plain["alive"], plain
    assert profiled["exception"] == plain["exception"], (plain, profiled)
    assert profiled["alive"] and profiled["returncode"] == 0, profiled
    notes = "\n".join(profiled["notes"])
    if sys.version_info >= (3, 11):
        assert "the profile's outputs were written" in notes, profiled
    results = json.loads((tmp_path / "profiled" / "run.json").read_text())
    assert (tmp_path / "profiled" / "run.html").exists()
    assert "packed_sample" not in json.dumps(results["inputs"])  # no item run after the failure
    if scenario == "kill":
        # Which worker, its signal, the samples it held (the 20th among them).
        (death,) = results["worker_deaths"]
        assert death["signal"] == "SIGKILL", death
        assert any(20 in samples for samples in death["samples"]), death
        if sys.version_info >= (3, 11):
            assert f"(pid {death['pid']})" in notes and "was killed by SIGKILL" in notes, notes
            assert "what to do:" in notes and "num_workers=1" in notes, notes
    if scenario == "hang":
        # Named while the loop waited: the sample and the frame it is stuck in, no signal sent.
        stall = results["stalls"][-1]  # the hang's (a busy machine's slow start may have one)
        place = next(p for p in stall["workers"] if p["sample"] == 20)
        assert "in fail" in place["stack"] and "failing_loops.py" in place["stack"], place
        assert stall["waited_s"] < 2 * stall["threshold_s"], stall
        assert "holds samples 20-23" in profiled["stderr"], profiled["stderr"]


def test_ctrl_c_after_a_stall_ends_the_loop_with_the_report_written(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    process = subprocess.Popen([sys.executable, SCRIPT, "interrupt", "profiled", str(out)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = ""
    try:
        # The report of the hang (a busy machine's slow first batch may get one of its own).
        while "holds samples 20-23" not in seen:
            line = process.stderr.readline()
            assert line, f"the loop ended without a stall report: {seen}"
            seen += line
        time.sleep(0.5)
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert "EXCEPTION KeyboardInterrupt" in stdout and "ALIVE" in stdout, (stdout, stderr)
    said = "gpufeed.profile: no batch for"
    assert stderr.count(said) == 0  # said once: nothing more after the hang's report
    results = json.loads((out / "run.json").read_text())
    stall = results["stalls"][-1]
    assert len(results["stalls"]) == seen.count(said), (results["stalls"], seen)
    assert any(p["sample"] == 20 for p in stall["workers"]), stall
    assert stall["waited_s"] < 2 * stall["threshold_s"], stall  # named within 2x the threshold


@pytest.mark.parametrize("scenario,why", [
    ("measure-kill", "the process measuring it was killed by SIGKILL"),
    ("measure-hang", "the process measuring it ran out of its 5 s"),
    ("measure-grow", "the process measuring it took"),
])
def test_the_remedy_measured_after_a_clean_loop_cannot_take_the_trainer_down(scenario, why,
                                                                              tmp_path):
    done = run_loop(scenario, "profiled", tmp_path / "out")
    assert done["exception"] is None and done["alive"] and done["returncode"] == 0, done
    results = json.loads((tmp_path / "out" / "run.json").read_text())
    (facts,) = results["inputs"]
    sample = facts["packed_sample"]
    assert sample["samples_per_s"] == 0 and sample["note"].startswith("not measured: " + why), \
        sample
    if scenario == "measure-grow":
        assert sample["note"].endswith("of memory of its own, over its limit of 512 MiB"), sample


def _memory_cgroup(limit: int):
    """A fresh memory cgroup limited to `limit` bytes (v1's memory controller, or v2), or None
    where this machine does not let this process make one."""
    for root, limit_file in (("/sys/fs/cgroup/memory", "memory.limit_in_bytes"),
                             ("/sys/fs/cgroup", "memory.max")):
        if not os.path.exists(os.path.join(root, limit_file if "memory/" in root + "/" else
                                           "cgroup.subtree_control")):
            continue
        path = os.path.join(root, f"gpufeed-test-{os.getpid()}")
        try:
            os.mkdir(path)
            with open(os.path.join(path, limit_file), "w") as f:
                f.write(str(limit))
        except OSError:
            if os.path.isdir(path):
                os.rmdir(path)
            continue
        return path
    return None


def test_a_worker_the_oom_killer_ends_is_explained_with_its_memory(tmp_path):
    cgroup = _memory_cgroup(1536 << 20)
    if cgroup is None:
        pytest.skip("no memory cgroup can be made here (not root, or no writable cgroupfs)")

    def enter() -> None:
        with open(os.path.join(cgroup, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
        # The loop's processes are never the OOM killer's choice (the growing item makes its
        # worker the first): the kernel frees a victim's memory a moment after it kills it, and
        # a second OOM in that moment would otherwise take the trainer itself, which is the
        # kernel's choice of victim, not what this test is about.
        try:
            with open("/proc/self/oom_score_adj", "w") as f:
                f.write("-1000")
        except OSError:
            pass

    try:
        out = tmp_path / "out"
        out.mkdir()
        done = subprocess.run([sys.executable, SCRIPT, "grow", "profiled", str(out)],
                              capture_output=True, text=True, timeout=180, preexec_fn=enter)
    finally:
        for _ in range(50):  # its last processes may still be leaving it
            try:
                os.rmdir(cgroup)
                break
            except OSError:
                time.sleep(0.1)
    stdout = done.stdout
    assert "EXCEPTION RuntimeError" in stdout and "ALIVE" in stdout, (stdout, done.stderr)
    results = json.loads((out / "run.json").read_text())
    (death,) = results["worker_deaths"]
    assert death["signal"] == "SIGKILL" and death["peak_memory_bytes"] > 256 << 20, death
    text = "\n".join(death["notes"])
    assert "its cgroup's limit 1536 MiB" in text, text
    assert "the cgroup's OOM killer killed 1 process(es) during the run" in text, text
    assert "the cgroup's OOM killer ended it" in text and "num_workers=1" in text, text


def test_a_stalled_gpufeed_loader_names_its_stage_batch_and_sample(synthetic_file, capsys,
                                                                   monkeypatch):
    # Batch 0's read takes 2.5 s (an injected stall): the profile says where the Loader is.
    monkeypatch.setenv("GPUFEED_INJECT_STALL", "read:2500@100")
    loader = gpufeed.Loader(synthetic_file, batch_size=100, workers=1, order="sequential")
    with gpufeed.profile(stall=1.0, measure_pack=False) as prof:
        batches = sum(1 for _ in loader)
    assert batches == 10
    (stall,) = prof.results().stalls
    assert stall["source"] == "a gpufeed.Loader's next batch", stall
    (read,) = [w for w in stall["loader_work"] if w["stage"] == "read"]
    assert read["batch"] == 0 and read["epoch"] == 0 and read["path"] == synthetic_file, stall
    # The read began about when the loop started to wait (the Loader starts its graph as the loop
    # iterates, and the worker picks the batch up a moment before or after the loop's first
    # next(), later on a loaded machine), and it is still under way: its age, on the wait's
    # clock, is not past the wait's by more than the moment between iter() and next().
    assert 0 < read["for_s"] <= stall["waited_s"] + 0.25 and stall["waited_s"] < 2.5, stall
    said = capsys.readouterr().err
    assert "read of batch 0 (epoch 0) of " in said and said.count("no batch for") == 1, said
