#!/usr/bin/python3
"""The images of an ImageFolder as WebDataset tar shards: each image as KEY.jpg (its own bytes,
its own suffix) and its class index as KEY.cls, keys in the folder's order, dealt into --shards
uncompressed tars of consecutive samples.

    make_tars.py IMAGE_FOLDER OUT_DIR [--shards 4]
"""
import argparse
import io
import os
import tarfile


def add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder")
    ap.add_argument("out")
    ap.add_argument("--shards", type=int, default=4)
    args = ap.parse_args()
    classes = sorted(d for d in os.listdir(args.folder) if os.path.isdir(os.path.join(args.folder, d)))
    samples = [(os.path.join(args.folder, c, f), label) for label, c in enumerate(classes)
               for f in sorted(os.listdir(os.path.join(args.folder, c)))]
    os.makedirs(args.out, exist_ok=True)
    per = -(-len(samples) // args.shards)
    for shard in range(args.shards):
        with tarfile.open(os.path.join(args.out, f"shard-{shard:05d}.tar"), "w") as tar:
            for key in range(shard * per, min(len(samples), (shard + 1) * per)):
                path, label = samples[key]
                add(tar, f"{key:08d}{os.path.splitext(path)[1].lower()}", open(path, "rb").read())
                add(tar, f"{key:08d}.cls", str(label).encode())


if __name__ == "__main__":
    main()
