#!/usr/bin/python3
"""Batches as mixed as a true shuffle by default. A class-sorted ImageFolder (100 classes x 40
JPEGs of 64x64, as torchvision lists it) goes through `h5pack convert` with its defaults, in the
jpeg layout and in the raw layout (--size 64x64); gpufeed.Loader reads each with its defaults
(chunk order, batch 256). Target: the median distinct classes per batch >= 0.9x what
order="random" gives on the same file. The same with --keep-order shows what the default fixed.

    H5PACK=build/ci/bin/h5pack PYTHONPATH=build/ci/python /usr/bin/python3 \\
        bench/python/shuffle_quality.py [--classes 100] [--per-class 40] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import warnings

import numpy as np
from PIL import Image

import gpufeed


def make_folder(root: str, classes: int, per_class: int) -> str:
    rng = np.random.default_rng(0)
    for c in range(classes):
        os.makedirs(os.path.join(root, f"class{c:03d}"))
        for i in range(per_class):
            pixels = rng.integers(0, 256, (64, 64, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(os.path.join(root, f"class{c:03d}", f"{i:03d}.jpg"))
    return root


def median_distinct(path: str, **keywords) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", gpufeed.OrderWarning)
        loader = gpufeed.Loader(path, batch_size=256, drop_last=True, output="numpy", **keywords)
    return statistics.median(len(set(labels.tolist())) for _, labels in loader.epoch(0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--classes", type=int, default=100)
    parser.add_argument("--per-class", type=int, default=40)
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    h5pack = os.environ.get("H5PACK", "build/ci/bin/h5pack")
    work = tempfile.mkdtemp(prefix="gpufeed-shuffle-")
    folder = make_folder(os.path.join(work, "photos"), args.classes, args.per_class)
    rows = {}
    for layout, extra in (("jpeg", []), ("raw", ["--size", "64x64"])):
        for kept in (False, True):
            out = os.path.join(work, f"{layout}{'-kept' if kept else ''}.h5")
            subprocess.run([h5pack, "convert", folder, out, *extra,
                            *(["--keep-order"] if kept else [])], check=True,
                           capture_output=True)
            size = {"size": (64, 64)} if layout == "jpeg" else {}
            chunk = median_distinct(out, **size)
            random = median_distinct(out, order="random", **size)
            name = f"{layout}{' --keep-order' if kept else ''}"
            rows[name] = {"chunk": chunk, "random": random, "ratio": chunk / random}
            print(f"{name:20s} chunk order {chunk:5.1f} distinct classes a batch (median), "
                  f"random {random:5.1f}: {chunk / random:.2f}x (target >= 0.9x for the "
                  "defaults)", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
