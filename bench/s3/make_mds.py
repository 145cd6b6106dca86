"""Writes the samples of a gpufeed raw-layout file as MosaicML Streaming MDS shards.

    make_mds.py data.h5 OUT_DIR [--size-limit BYTES]

Same images (uint8 HxWxC, no compression) and labels, in file order; column `image` is an
`ndarray:uint8:H,W,C` (the raw bytes, no per-sample header), `label` an `int64`. The shard
size is MDSWriter's default unless --size-limit says otherwise. Prints one JSON line.
"""
import argparse
import json
import os

import h5py
from streaming import MDSWriter

BLOCK = 4096  # samples read from the file at a time


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data")
    ap.add_argument("out")
    ap.add_argument("--size-limit", type=int, default=None, help="bytes per shard")
    args = ap.parse_args()

    with h5py.File(args.data, "r") as f:
        images, labels = f["/images"], f["/labels"]
        h, w, c = images.shape[1:]
        columns = {"image": f"ndarray:uint8:{h},{w},{c}", "label": "int64"}
        extra = {} if args.size_limit is None else {"size_limit": args.size_limit}
        with MDSWriter(out=args.out, columns=columns, compression=None, **extra) as writer:
            for start in range(0, images.shape[0], BLOCK):
                block = images[start:start + BLOCK]
                block_labels = labels[start:start + BLOCK]
                for image, label in zip(block, block_labels):
                    writer.write({"image": image, "label": label})
    shards = sorted(n for n in os.listdir(args.out) if n.endswith(".mds"))
    size = sum(os.path.getsize(os.path.join(args.out, n)) for n in shards)
    print(json.dumps({"mds_dir": args.out, "shards": len(shards), "bytes": size}))


if __name__ == "__main__":
    main()
