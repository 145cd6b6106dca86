#!/usr/bin/python3
"""The PyTorch DataLoader way on a jpeg-layout file: an h5py slice of /jpeg/bytes per sample,
PIL decode, .convert('RGB').resize((W, H), BILINEAR), ToTensor-style float normalization,
num_workers = cores. Prints one JSON line with samples/s."""
import argparse
import io
import json
import os
import time

import h5py
import numpy as np
import torch
from PIL import Image


class JpegFile(torch.utils.data.Dataset):
    def __init__(self, path, size):
        self.path, self.size, self.file = path, size, None
        with h5py.File(path, "r") as f:
            self.offsets = f["/jpeg/offsets"][:]
            self.labels = f["/labels"][:]
            self.mean = f["/meta/mean"][:].astype(np.float32)
            self.std = f["/meta/std"][:].astype(np.float32)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        if self.file is None:
            self.file = h5py.File(self.path, "r")
        raw = self.file["/jpeg/bytes"][self.offsets[i]:self.offsets[i + 1]].tobytes()
        image = Image.open(io.BytesIO(raw)).convert("RGB").resize(self.size, Image.BILINEAR)
        return torch.from_numpy(np.array(image)), int(self.labels[i])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--size", default="128x128")
    p.add_argument("--workers", type=int, default=os.cpu_count())
    p.add_argument("--epochs", type=int, default=2)
    a = p.parse_args()
    h, w = (int(x) for x in a.size.split("x"))
    ds = JpegFile(a.data, (w, h))
    mean = torch.from_numpy(ds.mean).view(1, 3, 1, 1)
    std = torch.from_numpy(ds.std).view(1, 3, 1, 1)
    loader = torch.utils.data.DataLoader(ds, batch_size=64, shuffle=True, num_workers=a.workers)
    samples, start = 0, time.perf_counter()
    for _ in range(a.epochs):
        for x, _y in loader:
            x = x.permute(0, 3, 1, 2).float().sub(mean).div(std)
            samples += x.shape[0]
    print(json.dumps({"samples_per_s": samples / (time.perf_counter() - start),
                      "workers": a.workers}))


if __name__ == "__main__":
    main()
