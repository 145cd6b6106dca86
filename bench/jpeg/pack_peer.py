#!/usr/bin/python3
"""What users write today to pack an image folder into HDF5: one process, h5py and Pillow.

Lists the folder the way torchvision's ImageFolder does (classes sorted by name, files sorted),
opens and fully decodes each JPEG once with Pillow to validate it and to accumulate per-channel
sums of its RGB pixels (ImageStat, in C), and writes the jpeg layout of gpufeed's schema v1:
/jpeg/bytes (flat uint8), /jpeg/offsets (uint64, N+1), /jpeg/shapes (uint16 [N,3]), /labels
(int64), /meta/mean and /meta/std (float32) and /meta/class_names.

    /usr/bin/python3 bench/jpeg/pack_peer.py IMAGE_FOLDER OUT.h5
"""
import io
import os
import sys
import time

import h5py
import numpy as np
from PIL import Image, ImageStat

EXTENSIONS = (".jpg", ".jpeg")


def list_images(root):
    classes = sorted(e.name for e in os.scandir(root) if e.is_dir())
    files = []
    for label, name in enumerate(classes):
        for folder, _, names in sorted(os.walk(os.path.join(root, name), followlinks=True)):
            for file_name in sorted(names):
                if file_name.lower().endswith(EXTENSIONS):
                    files.append((os.path.join(folder, file_name), label))
    return classes, files


def main():
    root, out = sys.argv[1], sys.argv[2]
    start = time.perf_counter()
    classes, files = list_images(root)
    chunks, offsets, shapes, labels = [], [0], [], []
    total = np.zeros(3)
    total_sq = np.zeros(3)
    pixels = 0
    for path, label in files:
        with open(path, "rb") as f:
            data = f.read()
        image = Image.open(io.BytesIO(data))
        image.load()  # the full decode: a damaged file raises here
        channels = len(image.getbands())
        rgb = image if image.mode == "RGB" else image.convert("RGB")
        stat = ImageStat.Stat(rgb)
        total += stat.sum
        total_sq += stat.sum2
        pixels += rgb.width * rgb.height
        chunks.append(data)
        offsets.append(offsets[-1] + len(data))
        shapes.append((image.height, image.width, channels))
        labels.append(label)
    mean = total / pixels
    std = np.sqrt(np.maximum(total_sq / pixels - mean * mean, 0.0))
    with h5py.File(out + ".tmp", "w") as h5:
        h5.create_dataset("jpeg/bytes", data=np.frombuffer(b"".join(chunks), dtype=np.uint8))
        h5.create_dataset("jpeg/offsets", data=np.asarray(offsets, dtype=np.uint64))
        h5.create_dataset("jpeg/shapes", data=np.asarray(shapes, dtype=np.uint16))
        h5.create_dataset("labels", data=np.asarray(labels, dtype=np.int64))
        h5.create_dataset("meta/mean", data=mean.astype(np.float32))
        h5.create_dataset("meta/std", data=std.astype(np.float32))
        h5.create_dataset("meta/class_names", data=np.array(classes, dtype=h5py.string_dtype()))
        h5.attrs["gpufeed.layout"] = "jpeg"
        h5.attrs["gpufeed.schema"] = 1
    os.replace(out + ".tmp", out)
    seconds = time.perf_counter() - start
    print("pack_peer: %d images in %.3f s (%.0f images/s), mean %s"
          % (len(files), seconds, len(files) / seconds, np.round(mean, 2).tolist()))


if __name__ == "__main__":
    main()
