"""NVIDIA DALI's CPU-only pipeline on the same JPEGs, the peer of gpufeed's jpeg layout:
readers.file -> decoders.image (or decoders.image_random_crop: RandomResizedCrop) -> resize
-> crop_mirror_normalize (a coin-flip mirror with the crop) to float32 CHW, device_id=None,
num_threads as gpufeed's workers. Steady epochs after a warm-up epoch. Prints one JSON line.

    python bench/python/dali_peer.py --root photos/ --size 128 --threads 2 --batch 64 [--crop]
"""
import argparse
import json
import math
import os
import time

import nvidia.dali
from nvidia.dali import fn, pipeline_def, types

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


def count_files(root):
    return sum(len(files) for _, _, files in os.walk(root))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", required=True)
    ap.add_argument("--size", type=int, default=128)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--epochs", type=int, default=4, help="including the warm-up epoch")
    ap.add_argument("--crop", action="store_true", help="random-resized-crop and flip")
    args = ap.parse_args()

    @pipeline_def(batch_size=args.batch, num_threads=args.threads, device_id=None, seed=0)
    def pipeline():
        jpegs, labels = fn.readers.file(file_root=args.root, random_shuffle=True, name="files")
        if args.crop:
            images = fn.decoders.image_random_crop(
                jpegs, device="cpu", output_type=types.RGB, random_area=[0.08, 1.0],
                random_aspect_ratio=[0.75, 4.0 / 3.0])
            mirror = fn.random.coin_flip()
        else:
            images = fn.decoders.image(jpegs, device="cpu", output_type=types.RGB)
            mirror = 0
        images = fn.resize(images, resize_x=args.size, resize_y=args.size)
        images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW",
                                          mean=MEAN, std=STD, mirror=mirror)
        return images, labels

    pipe = pipeline()
    pipe.build()
    batches = math.ceil(count_files(args.root) / args.batch)
    checksum = 0.0
    per_epoch = []
    for _ in range(args.epochs):
        start = time.perf_counter()
        samples = 0
        for _ in range(batches):
            images, labels = pipe.run()
            array = images.as_array()
            checksum += float(array.reshape(-1)[::1024].sum()) + float(labels.as_array().sum())
            samples += array.shape[0]
        per_epoch.append((samples, time.perf_counter() - start))
    steady = per_epoch[1:] or per_epoch
    print(json.dumps({"samples_per_s": sum(n for n, _ in steady) / sum(s for _, s in steady),
                      "threads": args.threads, "batch": args.batch, "crop": args.crop,
                      "dali": nvidia.dali.__version__, "checksum": checksum}))


if __name__ == "__main__":
    main()
