"""Training loops whose input fails as real ones do, run as their own process by
test_profile_failures.py, inside gpufeed.profile or not:

    python failing_loops.py SCENARIO profiled|plain OUT_DIR

Scenarios: "kill" (an item kills its worker with SIGKILL), "raise" (an item raises), "hang" (an
item blocks in a read of a FIFO nobody writes; the DataLoader's timeout ends the wait),
"interrupt" (the same hang, no timeout: the test sends SIGINT), "grow" (an item takes memory
until the kernel's OOM killer ends its worker: run inside a memory cgroup), "measure-kill",
"measure-hang" and "measure-grow" (a clean loop over the first samples; an item further on
kills, hangs or takes the memory of the process that reads it: the profile's measurement of the
pack remedy, limited to 5 s and 512 MiB here). Prints "EXCEPTION <type>", each note of it as
"NOTE <text>", then "ALIVE" (the process goes on)."""

from __future__ import annotations

import os
import signal
import sys
import time
import traceback

import torch
from torch.utils.data import DataLoader, Dataset

BAD = 20  # the item that fails


class FailingDataset(Dataset):
    def __init__(self, how: str, fifo: str, cost_s: float = 0.0) -> None:
        self.how = how
        self.fifo = fifo
        self.cost_s = cost_s

    def __len__(self) -> int:
        return 64

    def __getitem__(self, index: int):
        if index == BAD:
            self.fail()
        time.sleep(self.cost_s)
        return torch.full((3, 8, 8), index % 256, dtype=torch.uint8), index

    def fail(self) -> None:
        if self.how == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        elif self.how == "raise":
            raise ValueError(f"item {BAD} is damaged")
        elif self.how == "hang":
            with open(self.fifo, "rb") as f:  # a blocked read: nobody opens it for writing
                f.read()
        elif self.how == "grow":
            with open("/proc/self/oom_score_adj", "w") as f:
                f.write("1000")  # this worker, not the loop, is the OOM killer's choice
            held = []
            while True:
                held.append(bytearray(64 << 20))  # touched: resident


def loop(loader: DataLoader, profiled: bool, out: str, **keywords) -> None:
    if not profiled:
        for _ in loader:
            time.sleep(0.002)
        return
    import gpufeed

    with gpufeed.profile(json=os.path.join(out, "run.json"),
                         report=os.path.join(out, "run.html"), **keywords):
        for _ in loader:
            time.sleep(0.002)


def main() -> None:
    scenario, mode, out = sys.argv[1], sys.argv[2], sys.argv[3]
    # Batches shared through named files, not file descriptors: with descriptors, a batch a
    # killed worker had queued can fail in its unpickling (ConnectionResetError) before torch
    # sees the worker dead, profiled or not, as the two processes' timing falls.
    torch.multiprocessing.set_sharing_strategy("file_system")
    profiled = mode == "profiled"
    fifo = os.path.join(out, "never-written")
    os.mkfifo(fifo)
    keywords: dict = {}
    if scenario.startswith("measure-"):
        import gpufeed._profile.remedy as remedy

        remedy.DEFAULT_LIMITS = remedy.Limits(seconds=5.0, memory_bytes=512 << 20)
        dataset = FailingDataset(scenario.split("-")[1], fifo, cost_s=0.003)
        loader = DataLoader(dataset, batch_size=4, sampler=range(16))  # clean: BAD is not read
    else:
        how = "hang" if scenario == "interrupt" else scenario
        timeout = 6 if scenario == "hang" else 0
        loader = DataLoader(FailingDataset(how, fifo), batch_size=4, num_workers=2,
                            timeout=timeout)
        keywords = {"stall": 2.0}
    try:
        loop(loader, profiled, out, **keywords)
    except BaseException as error:  # noqa: BLE001 - what reached the caller is what is checked
        print(f"EXCEPTION {type(error).__name__}", flush=True)
        for note in getattr(error, "__notes__", []):
            print(f"NOTE {note}", flush=True)
        traceback.print_exception(error, file=sys.stderr)
    print("ALIVE", flush=True)


if __name__ == "__main__":
    main()
