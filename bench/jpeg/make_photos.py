#!/usr/bin/python3
"""Writes a folder of photo-like images in the ImageFolder layout (one subfolder per class).

Each image is a smooth two-colour gradient with soft shapes (ellipses, polygons, rectangles),
a blur, fine sensor-like noise and a little texture, of a random size between 400x300 and
1200x900 (either orientation; --size WxH: every image that size, as a camera's photos are),
saved by Pillow: JPEG at quality 90 (the default), PNG at
Pillow's default compression, or lossy WebP at quality 90. Every 20th image is grayscale; with
PNG and WebP every 10th other one has an alpha channel. Deterministic for a given --seed.

    /usr/bin/python3 bench/jpeg/make_photos.py OUT_DIR [--count 300] [--classes 10] [--seed 0]
        [--format jpeg|png|webp] [--size 1500x2000]
"""
import argparse
import os

import numpy as np
from PIL import Image, ImageDraw, ImageFilter


def gradient(rng, width, height):
    top = rng.uniform(20, 235, 3)
    bottom = rng.uniform(20, 235, 3)
    angle = rng.uniform(0, np.pi)
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    t = (np.cos(angle) * x / width + np.sin(angle) * y / height)
    t = (t - t.min()) / max(float(t.max() - t.min()), 1e-6)
    return top[None, None, :] * (1 - t[..., None]) + bottom[None, None, :] * t[..., None]


def draw_shapes(rng, image):
    draw = ImageDraw.Draw(image)
    width, height = image.size
    for _ in range(int(rng.integers(6, 18))):
        colour = tuple(int(c) for c in rng.integers(0, 256, 3))
        x0, y0 = rng.uniform(-0.2, 1.0) * width, rng.uniform(-0.2, 1.0) * height
        w, h = rng.uniform(0.05, 0.5) * width, rng.uniform(0.05, 0.5) * height
        kind = rng.integers(0, 3)
        if kind == 0:
            draw.ellipse([x0, y0, x0 + w, y0 + h], fill=colour)
        elif kind == 1:
            draw.rectangle([x0, y0, x0 + w, y0 + h], fill=colour)
        else:
            points = [(x0 + rng.uniform(0, w), y0 + rng.uniform(0, h)) for _ in range(5)]
            draw.polygon(points, fill=colour)


def photo(rng, width, height):
    base = Image.fromarray(gradient(rng, width, height).astype(np.uint8), "RGB")
    draw_shapes(rng, base)
    base = base.filter(ImageFilter.GaussianBlur(radius=float(rng.uniform(1.0, 4.0))))
    pixels = np.asarray(base, dtype=np.float32)
    texture = rng.normal(0.0, 1.0, (height // 8 + 1, width // 8 + 1, 1)).astype(np.float32)
    texture = np.kron(texture, np.ones((8, 8, 1), np.float32))[:height, :width]
    noise = rng.normal(0.0, 4.0, pixels.shape).astype(np.float32)
    pixels = np.clip(pixels + 6.0 * texture + noise, 0, 255).astype(np.uint8)
    return Image.fromarray(pixels, "RGB")


EXTENSION = {"jpeg": "jpg", "png": "png", "webp": "webp"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--count", type=int, default=300)
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--format", choices=("jpeg", "png", "webp"), default="jpeg")
    parser.add_argument("--size", default="", help="WxH of every image (default: random)")
    args = parser.parse_args()
    size = tuple(int(v) for v in args.size.lower().split("x")) if args.size else None
    rng = np.random.default_rng(args.seed)
    total = 0
    for i in range(args.count):
        label = i % args.classes
        folder = os.path.join(args.out, "class%02d" % label)
        os.makedirs(folder, exist_ok=True)
        width, height = int(rng.integers(400, 1201)), int(rng.integers(300, 901))
        if rng.random() < 0.5:
            width, height = height, width
        if size:
            width, height = size
        image = photo(rng, width, height)
        if i % 20 == 19:
            image = image.convert("L")
        elif i % 10 == 4 and args.format != "jpeg":
            alpha = np.asarray(image.convert("L").filter(ImageFilter.GaussianBlur(8)))
            image.putalpha(Image.fromarray(np.clip(alpha.astype(np.int32) + 64, 0, 255)
                                           .astype(np.uint8), "L"))
        path = os.path.join(folder, "img%05d.%s" % (i, EXTENSION[args.format]))
        if args.format == "png":
            image.save(path)
        else:
            image.save(path, quality=90)
        total += os.path.getsize(path)
    print("wrote %d %s files (%.1f MB) in %d classes to %s"
          % (args.count, args.format.upper(), total / 1e6, args.classes, args.out))


if __name__ == "__main__":
    main()
