"""The DDP example under torchrun (two processes, gloo): shards disjoint and complete in every
order, training to the end; with a stall injected into one rank's read stage, pipebench analyze
of the two per-rank traces names that rank and "read" and what the other rank lost."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import TORCHRUN

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "python",
                       "train_ddp.py")


def torchrun(tmp_path, *args) -> str:
    command = [sys.executable, *TORCHRUN, EXAMPLE, *args]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


@pytest.mark.parametrize("order", ["sequential", "random", "chunk"])
def test_shards_are_disjoint_and_complete(tmp_path, order):
    out = torchrun(tmp_path, "--epochs", "2", "--samples", "1000", "--batch", "25",
                   "--order", order, "--record", str(tmp_path / "seen"))
    assert "2 ranks trained 2 epochs of 20 batches each" in out, out
    ranks = [json.loads((tmp_path / "seen" / f"rank{r}.json").read_text()) for r in range(2)]
    assert [r["batches"] for r in ranks] == [20, 20]
    for epoch in ("0", "1"):
        shares = [r["indices"][epoch] for r in ranks]
        assert len(shares[0]) == len(shares[1]) == 500
        assert not set(shares[0]) & set(shares[1]), "shards overlap"
        assert sorted(shares[0] + shares[1]) == list(range(1000))
    assert ranks[0]["indices"]["0"] != ranks[0]["indices"]["1"] or order == "sequential"


def test_the_straggler_is_named_with_its_stage(tmp_path):
    pipebench = os.environ.get("GPUFEED_PIPEBENCH")
    if not pipebench:
        pytest.skip("GPUFEED_PIPEBENCH is not set (pipebench was not built)")
    # One worker, 300 ms per batch read against a CPU step of tens of ms: rank 0 waits for
    # rank 1 at most steps, however slowly a busy (or sanitized) machine runs the model. One
    # batch of prefetch and 16 steps a rank: the lead rank 1's loader gains while the first,
    # slow steps run (DDP's set-up) is used up within the 5 warm-up steps the analysis skips.
    torchrun(tmp_path, "--epochs", "1", "--samples", "2048", "--batch", "64", "--workers", "1",
             "--prefetch", "1", "--trace", str(tmp_path / "trace.json"), "--stall-rank", "1",
             "--stall", "read:300@1")
    traces = [str(tmp_path / f"trace.rank{r}.json") for r in range(2)]
    for r, path in enumerate(traces):
        with open(path) as f:
            assert json.load(f)["distributedInfo"] == {"rank": r, "world_size": 2}
    report = tmp_path / "job.json"
    out = subprocess.run([pipebench, "analyze", *traces, "--json", str(report)],
                         capture_output=True, text=True, check=True).stdout
    straggler = json.loads(report.read_text())["straggler"]
    assert straggler is not None, out
    assert straggler["rank"] == 1 and straggler["cause"] == "input", out
    assert straggler["stage"] == "read", out
    assert straggler["basis"] == "collectives"  # prof.watch() timed DDP's all-reduces
    assert straggler["lost_s"] > 0.1, out  # rank 0 waited in the all-reduce for rank 1
    assert "straggler   rank 1" in out


def test_a_gpu_per_local_rank_or_the_cpu(monkeypatch):
    # Two ranks on a one-GPU node would both take that device, which NCCL refuses.
    import importlib.util

    import torch
    spec = importlib.util.spec_from_file_location("train_ddp", EXAMPLE)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    monkeypatch.setenv("LOCAL_WORLD_SIZE", str(torch.cuda.device_count() + 1))
    assert example.use_cuda("auto") is False
    assert example.use_cuda("cpu") is False
    with pytest.raises(SystemExit, match="need as many GPUs"):
        example.use_cuda("cuda")
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "1")
    assert example.use_cuda("auto") is torch.cuda.is_available()
