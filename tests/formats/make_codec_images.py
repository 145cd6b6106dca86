#!/usr/bin/env python3
"""Writes one image of every kind gpufeed decodes, and Pillow's reading of each, for the codec
tests: PNG of every color type and bit depth (palette with and without transparency,
interlaced), WebP (lossy, lossless, with alpha, animated), JPEG (baseline, progressive,
grayscale, CMYK, with EXIF and an ICC profile), plus files of formats gpufeed refuses.

    make_codec_images.py OUT_DIR

OUT_DIR gets the images and manifest.json: for each image its file, size and the file of its
expected 8-bit RGB pixels (Image.open(...).convert("RGB").tobytes()). PNGs are written by hand
(zlib + CRC-32) so that every color type, bit depth and Adam7 interlacing exists; Pillow writes
the rest. One deliberate difference from Pillow: 16-bit grayscale is expected scaled to 8 bits
(the high byte), where Pillow's convert("RGB") clips it.
"""
import io
import json
import os
import struct
import sys
import zlib

import numpy as np
from PIL import Image

ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2),
         (0, 1, 1, 2)]  # x0, y0, dx, dy


def chunk(kind: bytes, data: bytes) -> bytes:
    return (struct.pack(">I", len(data)) + kind + data +
            struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


def pack_row(values: np.ndarray, depth: int) -> bytes:
    """One scanline of samples (already flattened per pixel) at `depth` bits."""
    if depth == 16:
        return values.astype(">u2").tobytes()
    if depth == 8:
        return values.astype(np.uint8).tobytes()
    per_byte = 8 // depth
    padded = np.zeros(-(-len(values) // per_byte) * per_byte, dtype=np.uint8)
    padded[: len(values)] = values
    out = np.zeros(len(padded) // per_byte, dtype=np.uint8)
    for k in range(per_byte):
        out |= (padded[k::per_byte] << (8 - depth * (k + 1))).astype(np.uint8)
    return out.tobytes()


def png(samples: np.ndarray, depth: int, color_type: int, *, palette=None, trns=None,
        interlace=False) -> bytes:
    """A PNG of `samples` (height x width x channels integers) written by hand."""
    height, width = samples.shape[:2]
    flat = samples.reshape(height, width, -1)

    def scanlines(image):
        return b"".join(b"\x00" + pack_row(row.reshape(-1), depth) for row in image)

    if interlace:
        data = b""
        for x0, y0, dx, dy in ADAM7:
            sub = flat[y0::dy, x0::dx]
            if sub.shape[0] and sub.shape[1]:
                data += scanlines(sub)
    else:
        data = scanlines(flat)
    out = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, depth,
                                                            color_type, 0, 0, int(interlace)))
    if palette is not None:
        out += chunk(b"PLTE", bytes(palette))
    if trns is not None:
        out += chunk(b"tRNS", bytes(trns))
    return out + chunk(b"IDAT", zlib.compress(data, 6)) + chunk(b"IEND", b"")


def pattern(height: int, width: int, channels: int, maximum: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width]
    planes = [(x * (c + 3) * 37 + y * (c + 5) * 53 + rng.integers(0, 7, (height, width)) * (c + 1))
              for c in range(channels)]
    return (np.stack(planes, axis=-1) % (maximum + 1)).astype(np.uint32)


def pillow_rgb(data: bytes) -> bytes:
    with Image.open(io.BytesIO(data)) as image:
        return image.convert("RGB").tobytes()


def main() -> None:
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    manifest = []

    def add(name, data, width, height, expected=None, fmt=None):
        with open(os.path.join(out_dir, name), "wb") as f:
            f.write(data)
        if expected is None:
            expected = pillow_rgb(data)
        reference = name + ".rgb"
        with open(os.path.join(out_dir, reference), "wb") as f:
            f.write(expected)
        manifest.append({"file": name, "reference": reference, "width": width, "height": height,
                         "format": fmt or name.rsplit(".", 1)[1]})

    h, w = 13, 17  # odd sizes: partial bytes in packed rows, partial Adam7 passes
    for depth in (1, 2, 4, 8):
        add(f"gray{depth}.png", png(pattern(h, w, 1, 2 ** depth - 1, depth), depth, 0), w, h)
        index = pattern(h, w, 1, 2 ** depth - 1, 10 + depth)
        palette = [(i * 53) % 256 for i in range(3 * 2 ** depth)]
        add(f"palette{depth}.png", png(index, depth, 3, palette=palette), w, h)
    palette = [(i * 29) % 256 for i in range(3 * 256)]
    add("palette8_trns.png", png(pattern(h, w, 1, 255, 21), 8, 3, palette=palette,
                                 trns=[(i * 7) % 256 for i in range(64)]), w, h)
    add("gray8_trns.png", png(pattern(h, w, 1, 255, 22), 8, 0, trns=[0, 40]), w, h)
    add("gray_alpha8.png", png(pattern(h, w, 2, 255, 23), 8, 4), w, h)
    add("gray_alpha16.png", png(pattern(h, w, 2, 65535, 24), 16, 4), w, h)
    add("rgb8.png", png(pattern(h, w, 3, 255, 25), 8, 2), w, h)
    add("rgb16.png", png(pattern(h, w, 3, 65535, 26), 16, 2), w, h)
    add("rgba8.png", png(pattern(h, w, 4, 255, 27), 8, 6), w, h)
    add("rgba16.png", png(pattern(h, w, 4, 65535, 28), 16, 6), w, h)
    gray16 = pattern(h, w, 1, 65535, 29)
    scaled = np.repeat((gray16 >> 8).astype(np.uint8), 3, axis=-1).tobytes()
    add("gray16.png", png(gray16, 16, 0), w, h, expected=scaled)
    add("rgb8_adam7.png", png(pattern(h, w, 3, 255, 25), 8, 2, interlace=True), w, h)
    add("palette2_adam7.png", png(pattern(h, w, 1, 3, 12), 2, 3, palette=list(range(12)),
                                  interlace=True), w, h)
    add("gray16_adam7.png", png(gray16, 16, 0, interlace=True), w, h, expected=scaled)

    rgb = Image.fromarray(pattern(40, 56, 3, 255, 30).astype(np.uint8), "RGB")
    rgba = Image.fromarray(pattern(40, 56, 4, 255, 31).astype(np.uint8), "RGBA")
    for name, image, options in [("lossy.webp", rgb, {"quality": 80}),
                                 ("lossy_alpha.webp", rgba, {"quality": 80}),
                                 ("lossless.webp", rgb, {"lossless": True}),
                                 ("lossless_alpha.webp", rgba, {"lossless": True})]:
        buffer = io.BytesIO()
        image.save(buffer, "WEBP", **options)
        add(name, buffer.getvalue(), 56, 40)
    buffer = io.BytesIO()
    second = Image.fromarray(pattern(40, 56, 3, 255, 32).astype(np.uint8), "RGB")
    rgb.save(buffer, "WEBP", save_all=True, append_images=[second], lossless=True, duration=50)
    add("animated.webp", buffer.getvalue(), 56, 40)

    photo = Image.fromarray(pattern(48, 64, 3, 255, 40).astype(np.uint8), "RGB")
    exif = Image.Exif()
    exif[0x0112] = 6  # orientation "rotate 90": ignored, as Image.convert does
    for name, image, options in [("baseline.jpg", photo, {"quality": 90}),
                                 ("progressive.jpg", photo, {"quality": 90, "progressive": True}),
                                 ("gray.jpg", photo.convert("L"), {"quality": 90}),
                                 ("cmyk.jpg", photo.convert("CMYK"), {"quality": 90}),
                                 ("exif_icc.jpg", photo, {"quality": 90, "exif": exif.tobytes(),
                                                          "icc_profile": b"\0" * 600})]:
        buffer = io.BytesIO()
        image.save(buffer, "JPEG", **options)
        add(name, buffer.getvalue(), 64, 48, fmt="jpeg")

    # Formats gpufeed names but does not decode.
    refused = []
    for name, fmt in [("image.gif", "GIF"), ("image.bmp", "BMP"), ("image.tiff", "TIFF")]:
        buffer = io.BytesIO()
        photo.save(buffer, fmt)
        with open(os.path.join(out_dir, name), "wb") as f:
            f.write(buffer.getvalue())
        refused.append({"file": name, "format": fmt})
    with open(os.path.join(out_dir, "image.heic"), "wb") as f:
        f.write(struct.pack(">I", 24) + b"ftypheic" + b"\0\0\0\0" + b"mif1heic" + b"\0" * 64)
    refused.append({"file": "image.heic", "format": "HEIF"})

    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump({"decoded": manifest, "refused": refused}, f, indent=1)


if __name__ == "__main__":
    main()
