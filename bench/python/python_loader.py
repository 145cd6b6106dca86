"""gpufeed.Loader from Python, timed as the C++ loader benchmark times the C++ Loader: steady
epochs after a warm-up epoch, each batch touched (one float per 4 KiB page of the images, and
the labels) as a consumer that hands it on would. Prints one JSON line.

    python bench/python/python_loader.py --data raw.h5 --order random --workers 2 --batch 256
    python bench/python/python_loader.py --data photos.h5 --size 128 --augment crop-flip
"""
import argparse
import json
import time

import torch

import gpufeed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--order", default="random")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--epochs", type=int, default=6, help="including the warm-up epoch")
    ap.add_argument("--size", type=int, default=None, help="jpeg layout: decode size")
    ap.add_argument("--augment", default="none")
    args = ap.parse_args()

    loader = gpufeed.Loader(args.data, batch_size=args.batch, workers=args.workers,
                            order=args.order, size=args.size, augment=args.augment)
    checksum = 0.0
    per_epoch = []
    for epoch in range(args.epochs):
        samples = 0
        start = time.perf_counter()
        for images, labels in loader.epoch(epoch):
            checksum += float(images.view(-1)[::1024].sum()) + float(labels.sum())
            samples += images.shape[0]
        per_epoch.append((samples, time.perf_counter() - start))
    steady = per_epoch[1:] or per_epoch
    rate = sum(n for n, _ in steady) / sum(s for _, s in steady)
    print(json.dumps({"samples_per_s": rate,
                      "warmup_samples_per_s": per_epoch[0][0] / per_epoch[0][1],
                      "workers": loader.workers, "batch": args.batch, "order": args.order,
                      "size": args.size, "augment": args.augment, "torch": torch.__version__,
                      "checksum": checksum}))


if __name__ == "__main__":
    main()
