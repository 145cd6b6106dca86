#!/usr/bin/python3
"""The peer gpufeed's Loader is measured against: the usual PyTorch DataLoader way.

A map-style torch Dataset opens the HDF5 file lazily in each worker (on its first
__getitem__) and returns (torch.from_numpy(images[i]), label); a DataLoader with
shuffle=True, num_workers=N, persistent_workers=False batches them with the default collate;
the consumer normalizes each batch as tutorials do:
    x.permute(0, 3, 1, 2).float().sub(mean).div(std)
with mean/std from the file's /meta/mean and /meta/std (0-255 scale).

Prints one JSON line. samples_per_s counts from the first delivered batch (so the first
worker start-up is reported apart as first_batch_s) to the end, across epochs, including each
later epoch's worker restart (that is what persistent_workers=False costs).
The run stops after --epochs epochs or at the first batch past --max-seconds.

Run with Debian's interpreter: /usr/bin/python3 (python3-torch, python3-h5py).
"""
import argparse
import json
import time

import h5py
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class H5Images(Dataset):
    def __init__(self, path, images="/images", labels="/labels"):
        self.path = path
        self.images_name = images
        self.labels_name = labels
        with h5py.File(path, "r") as f:
            self.length = f[images].shape[0]
        self.file = None  # opened per worker, on first use

    def __len__(self):
        return self.length

    def __getitem__(self, i):
        if self.file is None:
            self.file = h5py.File(self.path, "r")
            self.images = self.file[self.images_name]
            self.labels = self.file[self.labels_name]
        return torch.from_numpy(self.images[i]), int(self.labels[i])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--max-seconds", type=float, default=40.0)
    args = ap.parse_args()

    with h5py.File(args.data, "r") as f:
        mean = torch.from_numpy(np.asarray(f["/meta/mean"], dtype=np.float32)).view(1, -1, 1, 1)
        std = torch.from_numpy(np.asarray(f["/meta/std"], dtype=np.float32)).view(1, -1, 1, 1)
        shape = f["/images"].shape
        compression = f["/images"].compression or "none"

    dataset = H5Images(args.data)
    loader = DataLoader(dataset, batch_size=args.batch, num_workers=args.workers, shuffle=True,
                        persistent_workers=False)

    start = time.perf_counter()
    first_batch_at = None
    samples_after_first = 0
    total_samples = 0
    batches = 0
    checksum = 0.0
    epochs = []
    stopped_early = False
    for epoch in range(args.epochs):
        t0 = time.perf_counter()
        n = 0
        for x, y in loader:
            x = x.permute(0, 3, 1, 2).float().sub(mean).div(std)
            checksum += float(x[0, 0, 0, 0]) + float(y[0])
            now = time.perf_counter()
            if first_batch_at is None:
                first_batch_at = now
            else:
                samples_after_first += x.shape[0]
            n += x.shape[0]
            batches += 1
            if now - start > args.max_seconds:
                stopped_early = True
                break
        epochs.append({"samples": n, "seconds": time.perf_counter() - t0})
        total_samples += n
        if stopped_early:
            break
    end = time.perf_counter()

    steady_seconds = end - first_batch_at if first_batch_at is not None else 0.0
    out_bytes_per_sample = 4 * int(np.prod(shape[1:]))
    rate = samples_after_first / steady_seconds if steady_seconds > 0 else 0.0
    print(json.dumps({
        "mode": "torch_dataloader",
        "data": args.data,
        "compression": compression,
        "workers": args.workers,
        "batch": args.batch,
        "torch": torch.__version__,
        "h5py": h5py.__version__,
        "torch_threads": torch.get_num_threads(),
        "epochs_run": len(epochs),
        "stopped_at_time_budget": stopped_early,
        "samples": total_samples,
        "batches": batches,
        "seconds": end - start,
        "first_batch_s": (first_batch_at - start) if first_batch_at is not None else None,
        "samples_per_s": rate,
        "overall_samples_per_s": total_samples / (end - start),
        "output_bytes_per_s": rate * out_bytes_per_sample,
        "epoch": epochs,
        "checksum": checksum,
    }))


if __name__ == "__main__":
    main()
