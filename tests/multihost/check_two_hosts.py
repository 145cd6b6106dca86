"""Checks what the ranks of tests/multihost/two_hosts.sh delivered, from their step logs
(rankR.attemptA.log: one line "epoch step i,j,..." per step, written as the step ran).

  check_two_hosts.py STEPS_DIR SAMPLES CHECKPOINT_EVERY

The job was killed in attempt 0 and restarted once from its last checkpoint (a multiple of
CHECKPOINT_EVERY steps). It passes when every sample of the epoch was delivered, when a sample
was delivered twice only if attempt 0 delivered it after the last checkpoint it saved, and when
attempt 1 delivered every sample left after that checkpoint exactly once. Prints the counts.
"""

from __future__ import annotations

import collections
import os
import re
import sys


def read_logs(folder: str):
    """{attempt: {rank: [(step, [indices])]}}; a line cut short by the kill is dropped."""
    attempts: dict[int, dict[int, list]] = collections.defaultdict(dict)
    for name in os.listdir(folder):
        m = re.fullmatch(r"rank(\d+)\.attempt(\d+)\.log", name)
        if not m:
            continue
        steps = []
        with open(os.path.join(folder, name)) as f:
            for line in f:
                if not line.endswith("\n"):
                    continue
                _, step, indices = line.split()
                steps.append((int(step), [int(i) for i in indices.split(",")]))
        attempts[int(m.group(2))][int(m.group(1))] = steps
    return attempts


def main() -> int:
    folder, samples, every = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    attempts = read_logs(folder)
    if sorted(attempts) != [0, 1]:
        print(f"FAIL: expected a first attempt and one restart, found attempts {sorted(attempts)}")
        return 1
    first, second = attempts[0], attempts[1]
    ranks = sorted(second)
    # The restart resumed after the last checkpoint: the first step attempt 1 logged, minus one.
    resumed_after = min(steps[0][0] for steps in second.values()) - 1
    if resumed_after <= 0 or resumed_after % every:
        print(f"FAIL: attempt 1 did not resume from a checkpoint (first step {resumed_after + 1})")
        return 1
    delivered = collections.Counter()
    replayed = collections.Counter()  # attempt 0's samples after the checkpoint
    for steps in first.values():
        for step, indices in steps:
            delivered.update(indices)
            if step > resumed_after:
                replayed.update(indices)
    after = collections.Counter()
    for steps in second.values():
        for step, indices in steps:
            after.update(indices)
    delivered.update(after)
    missing = set(range(samples)) - set(delivered)
    twice = {i: n for i, n in delivered.items() if n > 1}
    unexplained = {i for i in twice if replayed[i] == 0 or twice[i] > 2}
    repeated_after = {i for i, n in after.items() if n > 1}
    before = sum(len(i) for s in first.values() for st, i in s if st <= resumed_after)
    print(f"{len(ranks)} ranks on 2 hosts, {samples} samples: attempt 0 delivered "
          f"{sum(len(i) for s in first.values() for _, i in s)} "
          f"(killed after step {max(st for s in first.values() for st, _ in s)}), "
          f"the checkpoint after step {resumed_after} kept {before}; attempt 1 delivered "
          f"{sum(after.values())}; {len(missing)} missing, {len(twice)} delivered twice "
          f"(all from the {sum(replayed.values())} samples of attempt 0 after the checkpoint: "
          f"{'yes' if not unexplained else 'NO'})")
    if missing:
        print(f"FAIL: {len(missing)} samples never delivered, e.g. {sorted(missing)[:10]}")
        return 1
    if unexplained:
        print(f"FAIL: {len(unexplained)} duplicates not explained by the restart, "
              f"e.g. {sorted(unexplained)[:10]}")
        return 1
    if repeated_after:
        print(f"FAIL: attempt 1 delivered {len(repeated_after)} samples twice")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
