#!/usr/bin/env python3
"""Writes one image of every kind that decides whether the GPU's JPEG engines take it, for the
tests of formats::hardware_decodable (on the CPU) and of the engines themselves (on a GPU):
baseline JPEGs of each chroma subsampling the engines decode, with EXIF, an ICC profile and
restart markers; and what they refuse: progressive, arithmetic-coded, 4:1:1 and 4:1:0, RGB and
CMYK JPEGs, a baseline JPEG in three scans, a truncated one, PNG and WebP. Pillow writes what it
can, libjpeg-turbo's cjpeg the rest; three kinds no encoder here writes (lossless, 12-bit,
extended sequential) are a baseline file with its frame marker or precision patched, which is
all a header check reads.

    make_engine_jpegs.py OUT_DIR

OUT_DIR gets the files and manifest.json: [{"file", "kind", "verdict", "patched"}], the verdict
being formats::to_string(HardwareJpeg)'s name of what the file is by construction. Without
cjpeg (libjpeg-turbo-progs) the kinds only it writes are left out.
"""
import io
import json
import os
import shutil
import subprocess
import sys

from PIL import Image

WIDTH, HEIGHT = 96, 64


def photo(width=WIDTH, height=HEIGHT):
    """Gradients and noise: every 8x8 block has detail, so each scan carries data."""
    r = Image.radial_gradient("L").resize((width, height))
    g = Image.linear_gradient("L").resize((width, height)).rotate(90)
    b = Image.effect_noise((width, height), 48)
    return Image.merge("RGB", (r, g, b))


def pillow_jpeg(image, **options):
    out = io.BytesIO()
    image.save(out, format="JPEG", quality=90, **options)
    return out.getvalue()


def cjpeg(*args, scans=None, out_dir="."):
    if shutil.which("cjpeg") is None:
        return None
    ppm = os.path.join(out_dir, "source.ppm")
    photo().save(ppm)
    command = ["cjpeg", "-quality", "90", *args]
    if scans is not None:
        script = os.path.join(out_dir, "scans.txt")
        with open(script, "w") as f:
            f.write(scans)
        command += ["-scans", script]
    return subprocess.run(command + [ppm], check=True, capture_output=True).stdout


def patched(data, at_marker, offset, value):
    """`data` with the byte `offset` past the first FF `at_marker` set to `value`."""
    data = bytearray(data)
    i = data.index(bytes([0xFF, at_marker]))
    data[i + offset] = value
    return bytes(data)


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    baseline = pillow_jpeg(photo(), subsampling=2)
    exif = Image.Exif()
    exif[0x0112] = 6  # Orientation: rotate 90 degrees to show
    icc = b"\x00" * 128  # an ICC profile Pillow stores as an APP2 segment; its content is not read
    kinds = [
        ("baseline_444", pillow_jpeg(photo(), subsampling=0), "decodable", False),
        ("baseline_422", pillow_jpeg(photo(), subsampling=1), "decodable", False),
        ("baseline_420", baseline, "decodable", False),
        ("baseline_440", cjpeg("-sample", "1x2", out_dir=out_dir), "decodable", False),
        ("baseline_odd_size", pillow_jpeg(photo(101, 67), subsampling=2), "decodable", False),
        ("grayscale", pillow_jpeg(photo().convert("L")), "decodable", False),
        ("exif_rotated", pillow_jpeg(photo(), exif=exif.tobytes()), "decodable", False),
        ("icc_profile", pillow_jpeg(photo(), icc_profile=icc), "decodable", False),
        ("restart_markers", cjpeg("-restart", "1", out_dir=out_dir), "decodable", False),
        ("progressive", pillow_jpeg(photo(), progressive=True), "progressive", False),
        ("arithmetic", cjpeg("-arithmetic", out_dir=out_dir), "arithmetic coding", False),
        ("subsampling_411", cjpeg("-sample", "4x1", out_dir=out_dir),
         "4:1:1 or other chroma subsampling", False),
        ("subsampling_410", cjpeg("-sample", "4x2", out_dir=out_dir),
         "4:1:1 or other chroma subsampling", False),
        ("rgb", cjpeg("-rgb", out_dir=out_dir), "RGB colorspace", False),
        ("cmyk", pillow_jpeg(photo().convert("CMYK")), "CMYK or YCCK", False),
        ("three_scans", cjpeg(scans="0;\n1;\n2;\n", out_dir=out_dir), "several scans", False),
        ("truncated", baseline[: len(baseline) * 3 // 5], "truncated", False),
        ("lossless_marker", patched(baseline, 0xC0, 1, 0xC3), "lossless", True),
        ("precision_12", patched(baseline, 0xC0, 4, 12), "not 8-bit", True),
        ("extended_marker", patched(baseline, 0xC0, 1, 0xC1), "extended sequential", True),
    ]
    png, webp = io.BytesIO(), io.BytesIO()
    photo().save(png, format="PNG")
    photo().save(webp, format="WEBP")
    kinds += [("png", png.getvalue(), "not a JPEG", False),
              ("webp", webp.getvalue(), "not a JPEG", False)]
    manifest = []
    for kind, data, verdict, is_patched in kinds:
        if data is None:
            continue
        name = kind + (".jpg" if verdict != "not a JPEG" else "." + kind)
        with open(os.path.join(out_dir, name), "wb") as f:
            f.write(data)
        manifest.append({"file": name, "kind": kind, "verdict": verdict, "patched": is_patched})
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
