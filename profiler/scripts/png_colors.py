#!/usr/bin/env python3
"""Counts the distinct colours of a PNG and its share of non-white pixels (stdlib only).

Exits 1 when the image looks blank: fewer than --min-colors colours or less than --min-nonwhite
of the pixels differ from white. Handles 8-bit greyscale, RGB, RGBA and palette PNGs.
"""
import argparse
import struct
import sys
import zlib

CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


def read_chunks(data):
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG file")
    pos = 8
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        yield kind, data[pos + 8:pos + 8 + length]
        pos += 12 + length


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def unfilter(raw, width, height, bpp):
    stride = width * bpp
    rows, prev, pos = [], bytearray(stride), 0
    for _ in range(height):
        ftype, line = raw[pos], bytearray(raw[pos + 1:pos + 1 + stride])
        pos += 1 + stride
        if ftype == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 0xFF
        elif ftype == 2:
            line = bytearray((x + y) & 0xFF for x, y in zip(line, prev))
        elif ftype == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif ftype == 4:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                up_left = prev[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + paeth(left, prev[i], up_left)) & 0xFF
        rows.append(line)
        prev = line
    return rows


def analyse(path):
    with open(path, "rb") as f:
        data = f.read()
    idat, palette = bytearray(), None
    for kind, body in read_chunks(data):
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"PLTE":
            palette = body
        elif kind == b"IDAT":
            idat += body
    if depth != 8 or interlace != 0 or ctype not in CHANNELS:
        raise ValueError(f"unsupported PNG (depth {depth}, colour type {ctype}, interlace {interlace})")
    bpp = CHANNELS[ctype]
    rows = unfilter(zlib.decompress(bytes(idat)), width, height, bpp)
    colours, nonwhite = set(), 0
    for row in rows:
        for i in range(0, len(row), bpp):
            px = bytes(row[i:i + bpp])
            if ctype == 3:
                px = palette[3 * px[0]:3 * px[0] + 3]
            rgb = px[:3] if ctype in (2, 6) else (px if ctype == 3 else px[:1] * 3)
            colours.add(rgb)
            nonwhite += rgb != b"\xff\xff\xff"
    return width, height, len(colours), nonwhite / float(width * height)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("png")
    parser.add_argument("--min-colors", type=int, default=8)
    parser.add_argument("--min-nonwhite", type=float, default=0.05)
    args = parser.parse_args()
    width, height, colours, nonwhite = analyse(args.png)
    print(f"{args.png}: {width}x{height}, {colours} distinct colours, "
          f"{nonwhite:.1%} non-white pixels")
    if colours < args.min_colors or nonwhite < args.min_nonwhite:
        print("screenshot looks blank")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
