#!/usr/bin/python3
"""Pillow decoding every sample of a jpeg-layout file at full size to RGB, the peer of
bench_jpeg_decode --plain-only: the bytes are read into memory first, then WORKERS forked
processes each decode every WORKERS-th sample (Image.open on the bytes, load(), and
convert("RGB") when the image is not RGB already: the cheapest way Pillow gives RGB pixels).
A warm-up pass, then ROUNDS timed passes; prints one JSON line with the median images/s.

    /usr/bin/python3 bench/jpeg/pillow_decode_peer.py --data photos.h5 [--workers N] [--rounds 1]
"""
import argparse
import io
import json
import multiprocessing
import os
import statistics
import time

import h5py
import PIL
from PIL import Image

SAMPLES = []


def read_samples(path):
    with h5py.File(path, "r") as f:
        offsets = f["/jpeg/offsets"][:]
        data = f["/jpeg/bytes"][:]
    return [data[offsets[i]:offsets[i + 1]].tobytes() for i in range(len(offsets) - 1)]


def decode_share(share):
    worker, workers = share
    pixels = 0
    for raw in SAMPLES[worker::workers]:
        image = Image.open(io.BytesIO(raw))
        image.load()
        if image.mode != "RGB":
            image = image.convert("RGB")
        pixels += image.width * image.height
    return pixels


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", required=True)
    p.add_argument("--workers", type=int, default=os.cpu_count())
    p.add_argument("--rounds", type=int, default=1)
    a = p.parse_args()
    SAMPLES.extend(read_samples(a.data))  # before the fork: every worker shares them
    shares = [(w, a.workers) for w in range(a.workers)]
    rates, pixels, seconds = [], 0, 0.0
    with multiprocessing.get_context("fork").Pool(a.workers) as pool:
        pool.map(decode_share, shares)  # warm-up
        for _ in range(max(1, a.rounds)):
            start = time.perf_counter()
            pixels += sum(pool.map(decode_share, shares))
            elapsed = time.perf_counter() - start
            seconds += elapsed
            rates.append(len(SAMPLES) / elapsed)
    print(json.dumps({"workers": a.workers, "pillow": PIL.__version__,
                      "images_per_s": statistics.median(rates),
                      "megapixels_per_s": pixels * 1e-6 / seconds}))


if __name__ == "__main__":
    main()
