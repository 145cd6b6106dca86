"""A plain PyTorch loop over a DataLoader whose Dataset is slow, diagnosed by gpufeed.profile with
no change to the loop; the advice applied; the utilization before and after.

    python examples/python/diagnose_dataloader.py [--sample-ms 2] [--step-ms 20] [--batch 8]

The Dataset stands in for decoding and augmenting (it sleeps `--sample-ms` per sample); the
step for a model's forward and backward (a small MLP, padded to `--step-ms`).
"""

from __future__ import annotations

import argparse
import time

import torch
from torch.utils.data import DataLoader, TensorDataset

import gpufeed


class SlowImages(TensorDataset):
    """Images in memory whose every access costs `sample_s`, as decoding and augmenting would."""

    def __init__(self, samples: int, sample_s: float) -> None:
        super().__init__(torch.rand(samples, 3, 32, 32), torch.randint(0, 10, (samples,)))
        self.sample_s = sample_s

    def __getitem__(self, index: int):
        time.sleep(self.sample_s)
        return super().__getitem__(index)


def train(loader: DataLoader, step_s: float) -> gpufeed.ProfileResults:
    """One epoch of a plain training loop inside gpufeed.profile; the profile's results."""
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 32 * 32, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with gpufeed.profile() as prof:
        for images, labels in loader:  # nothing marked: each batch to the next is a step
            begin = time.perf_counter()
            loss = torch.nn.functional.cross_entropy(model(images), labels)
            opt.zero_grad()
            loss.backward()
            opt.step()
            time.sleep(max(0.0, step_s - (time.perf_counter() - begin)))
    print(prof.summary())
    return prof.results()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=320)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--sample-ms", type=float, default=2.0)
    parser.add_argument("--step-ms", type=float, default=20.0)
    args = parser.parse_args()
    dataset = SlowImages(args.samples, args.sample_ms / 1000)

    print("== before: DataLoader(num_workers=0)")
    before = train(DataLoader(dataset, batch_size=args.batch), args.step_ms / 1000)
    advice = [r for r in before.profile["recommendations"] if r["kind"] == "num_workers"]
    if not advice:
        print(f"no num_workers advice: the loop is {before.verdict}")
        return
    workers = advice[0]["settings"][0]["value"]
    predicted = advice[0]["predicted_device_util"]

    print(f"== after: DataLoader(num_workers={workers}), as advised")
    after = train(DataLoader(dataset, batch_size=args.batch, num_workers=workers),
                  args.step_ms / 1000)
    print(f"utilization {before.device_util:.0%} -> {after.device_util:.0%} "
          f"(predicted {predicted:.0%}) with num_workers={workers}")


if __name__ == "__main__":
    main()
