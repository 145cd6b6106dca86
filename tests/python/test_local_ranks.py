"""The ranks of a node share its cores: two processes started as torchrun starts them (RANK,
WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE), and under torchrun itself, each take at most half of
the cores with the default workers and with workers="auto"; a rank pinned to cores of its own
keeps them."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import TORCHRUN

import gpufeed

CORES = sorted(os.sched_getaffinity(0))
SHARE = max(1, len(CORES) // 2)

# One rank: a loader over its shard, one epoch read; what it took, as one JSON line.
RANK = r"""
import json, os, sys
import gpufeed
path, workers, pin, out = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
if pin:
    os.sched_setaffinity(0, [int(c) for c in pin.split(",")])
workers = workers if workers == "auto" else int(workers)
os.environ["GPUFEED_INJECT_STALL"] = "read:2@1"  # a consumer that waits on the workers
loader = gpufeed.Loader(path, batch_size=25, workers=workers, output="numpy")
most = loader.workers
for images, labels in loader:
    most = max(most, loader.workers)
stats = loader.stats()
tuned = [c.to for c in stats.tuning if c.knob == "workers"]
report = {"rank": int(os.environ.get("RANK", "0")), "workers": loader.workers,
          "most": max([most] + tuned), "cpu_share": stats.cpu_share}
if out:
    with open(f"{out}.{report['rank']}", "w") as f:
        json.dump(report, f)
print(json.dumps(report))
"""


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> str:
    return gpufeed.write_synthetic(str(tmp_path_factory.mktemp("ranks") / "ranks.h5"), 400,
                                   (16, 16, 3), chunk=25)


def rank_env(rank: int, local_world_size: int | None) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE")}
    if local_world_size is not None:
        env.update(RANK=str(rank), WORLD_SIZE=str(local_world_size), LOCAL_RANK=str(rank),
                   LOCAL_WORLD_SIZE=str(local_world_size))
    return env


def run_ranks(data: str, workers: str, ranks: int | None, pins=None) -> list[dict]:
    """`ranks` processes at once (None: one, with no torchrun variables); their reports."""
    count = ranks or 1
    procs = [subprocess.Popen([sys.executable, "-c", RANK, data, workers,
                               pins[r] if pins else "", ""],
                              env=rank_env(r, ranks), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
             for r in range(count)]
    reports = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err[-3000:]
        reports.append(json.loads(out.strip().splitlines()[-1]))
    return reports


@pytest.mark.parametrize("workers", ["0", "auto"])
def test_two_local_ranks_take_half_the_cores_each(data, workers):
    for report in run_ranks(data, workers, 2):
        assert report["cpu_share"] == SHARE, report
        assert report["most"] <= SHARE, report
        if workers == "0":
            assert report["workers"] == SHARE, report


def test_a_process_outside_torchrun_takes_all_its_cores(data):
    [report] = run_ranks(data, "0", None)
    assert report["cpu_share"] == len(CORES)
    assert report["workers"] == len(CORES)


def test_a_count_given_is_taken_as_it_is(data):
    for report in run_ranks(data, str(len(CORES) + 1), 2):
        assert report["workers"] == len(CORES) + 1
        assert report["cpu_share"] == SHARE


def test_a_rank_pinned_to_cores_of_its_own_keeps_them(data):
    # Each rank pinned to its half of the cores: that half is its share, not divided again.
    halves = [CORES[:SHARE], CORES[SHARE:2 * SHARE] or CORES[:SHARE]]
    pins = [",".join(map(str, half)) for half in halves]
    for report in run_ranks(data, "0", 2, pins):
        assert report["cpu_share"] == SHARE, report
        assert report["workers"] == SHARE, report


def test_under_torchrun_each_rank_takes_its_share(data, tmp_path):
    pytest.importorskip("torch")
    script = tmp_path / "rank.py"
    script.write_text(RANK)
    out = tmp_path / "report"
    command = [sys.executable, *TORCHRUN, str(script), data, "0", "", str(out)]
    done = subprocess.run(command, cwd=tmp_path, env=rank_env(0, None), capture_output=True,
                          text=True, timeout=240)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    reports = [json.loads((tmp_path / f"report.{r}").read_text()) for r in range(2)]
    assert sum(r["workers"] for r in reports) <= max(2, len(CORES))
    for report in reports:
        assert report["cpu_share"] == SHARE, report
        assert report["workers"] == SHARE, report
