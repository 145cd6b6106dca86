#!/usr/bin/env python3
"""Pillow's output for the formats tests to compare against.

  pillow_reference.py resize SRC.raw W H C OUT.raw OUT_W OUT_H FILTER [LEFT TOP RIGHT BOTTOM]
  pillow_reference.py decode IMAGE.jpg OUT.raw [OUT_W OUT_H FILTER]

Raw files are interleaved uint8 pixels (HWC). decode is Image.open(...).convert("RGB"),
optionally followed by resize, as a PyTorch dataset would do it.
"""
import sys

from PIL import Image

FILTERS = {"bilinear": Image.BILINEAR, "area": Image.BOX}
MODES = {1: "L", 3: "RGB", 4: "CMYK"}  # not RGBA: Pillow premultiplies alpha


def resize(args):
    src, width, height, channels, out, out_width, out_height, name, *box = args
    with open(src, "rb") as f:
        data = f.read()
    image = Image.frombytes(MODES[int(channels)], (int(width), int(height)), data)
    box = tuple(float(v) for v in box) if box else None
    size = (int(out_width), int(out_height))
    result = image.resize(size, FILTERS[name], box=box)
    with open(out, "wb") as f:
        f.write(result.tobytes())


def decode(args):
    path, out, *size = args
    with Image.open(path) as opened:
        image = opened.convert("RGB")
    if size:
        out_width, out_height, name = size
        image = image.resize((int(out_width), int(out_height)), FILTERS[name])
    with open(out, "wb") as f:
        f.write(image.tobytes())


if __name__ == "__main__":
    {"resize": resize, "decode": decode}[sys.argv[1]](sys.argv[2:])
