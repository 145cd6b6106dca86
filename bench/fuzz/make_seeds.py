#!/usr/bin/python3
"""Seed corpora for the fuzz targets, from the test generators: every kind of image the codec
tests make (tests/formats/make_codec_images.py: JPEG, PNG, WebP of every kind, and the formats
gpufeed refuses), .npy files of every dtype the reader serves (and some it refuses), small
PyTorch profiler traces (a training step with kernels, copies, syncs, flows and a DataLoader
wait; and the start of the Kineto sample traces when they are present), small HDF5 files of
both schema v1 layouts as h5pack writes them and users' own files as h5py makes them, MNIST
IDX files and CIFAR-10 batches, and h5pack and pipebench command lines.

    /usr/bin/python3 bench/fuzz/make_seeds.py OUT_DIR
"""
import gzip
import io
import json
import os
import shutil
import struct
import subprocess
import sys
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def image_seeds(out):
    raw = os.path.join(out, "image.all")
    subprocess.run([sys.executable, "-W", "ignore",
                    os.path.join(ROOT, "tests/formats/make_codec_images.py"), raw], check=True)
    os.makedirs(os.path.join(out, "image_decode"), exist_ok=True)
    for name in sorted(os.listdir(raw)):
        if name.endswith((".rgb", ".json")):
            continue
        os.replace(os.path.join(raw, name), os.path.join(out, "image_decode", name))
    shutil.rmtree(raw)


def npy_seeds(out):
    folder = os.path.join(out, "npy_header")
    os.makedirs(folder, exist_ok=True)
    arrays = {
        "u8_nhwc": np.arange(2 * 4 * 4 * 3, dtype=np.uint8).reshape(2, 4, 4, 3),
        "i64_labels": np.arange(5, dtype=np.int64),
        "f32": np.ones((3, 2), np.float32),
        "bool": np.array([True, False]),
        "big_endian": np.arange(4, dtype=">i4"),
        "fortran": np.asfortranarray(np.ones((2, 3), np.uint8)),
        "scalar": np.array(7, np.uint16),
        "empty": np.zeros((0, 8, 8, 3), np.uint8),
    }
    for name, array in arrays.items():
        buffer = io.BytesIO()
        np.save(buffer, array)
        with open(os.path.join(folder, name + ".npy"), "wb") as f:
            f.write(buffer.getvalue())


def kineto_seeds(out):
    folder = os.path.join(out, "kineto_trace")
    os.makedirs(folder, exist_ok=True)
    events = [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1,
         "ts": 0, "dur": 900},
        {"ph": "X", "cat": "user_annotation", "name": "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
         "pid": 1, "tid": 1, "ts": 10, "dur": 200},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
         "ts": 250, "dur": 5, "args": {"correlation": 7}},
        {"ph": "X", "cat": "kernel", "name": "volta_sgemm_128x64_nn", "pid": 0, "tid": 7,
         "ts": 260, "dur": 300, "args": {"correlation": 7, "stream": 7, "device": 0}},
        {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0,
         "tid": 7, "ts": 600, "dur": 40, "args": {"correlation": 8, "stream": 7, "bytes": 4096}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": 1, "tid": 1,
         "ts": 650, "dur": 100, "args": {"correlation": 9}},
        {"ph": "X", "cat": "cuda_sync", "name": "Stream Sync", "pid": 0, "tid": 7, "ts": 650,
         "dur": 100, "args": {"correlation": 9, "stream": 7}},
        {"ph": "s", "id": 7, "pid": 1, "tid": 1, "ts": 250, "cat": "ac2g", "name": "ac2g"},
        {"ph": "f", "id": 7, "pid": 0, "tid": 7, "ts": 260, "cat": "ac2g", "name": "ac2g",
         "bp": "e"},
        {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float", "pid": 0,
         "tid": 20, "ts": 700, "dur": 150, "args": {"correlation": 10, "stream": 20}},
        {"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "GPU 0"}},
    ]
    trace = {"schemaVersion": 1, "distributedInfo": {"rank": 0, "world_size": 2},
             "deviceProperties": [{"id": 0, "name": "NVIDIA H100"}], "traceEvents": events}
    with open(os.path.join(folder, "step.json"), "w") as f:
        json.dump(trace, f)
    shared = os.path.join(ROOT, "..", "shared", "data", "kineto")
    if os.path.isdir(shared):
        for name in sorted(os.listdir(shared)):
            if name.endswith(".json.gz"):
                with gzip.open(os.path.join(shared, name), "rb") as f:
                    head = f.read(16384)  # a cut-off trace: the salvaging path
                with open(os.path.join(folder, name[:-3] + ".head"), "wb") as f:
                    f.write(head)


def hdf5_pixels(shape, seed):
    """Distinct, somewhat compressible bytes, none zero."""
    n = int(np.prod(shape))
    i = np.arange(n, dtype=np.uint64)
    return ((i * np.uint64(2654435761 + seed) // np.uint64(7)) % np.uint64(251) + 1).astype(
        np.uint8).reshape(shape)


def schema_attributes(f, layout):
    """The root attributes h5pack writes last: a fixed-length string and an int32."""
    f.attrs.create("gpufeed.layout", np.bytes_(layout + "\0"), dtype="S%d" % (len(layout) + 1))
    f.attrs.create("gpufeed.schema", 1, dtype="<i4")


def meta(f, channels, classes):
    import h5py

    f.create_dataset("meta/mean", data=np.full(channels, 127.5, np.float32))
    f.create_dataset("meta/std", data=np.full(channels, 64.0, np.float32))
    f.create_dataset("meta/class_names", data=classes, dtype=h5py.string_dtype())


def raw_layout_file(path, samples, shape, chunk, compression=None, libver="earliest"):
    """A raw-layout schema v1 file as h5pack convert writes it: chunked /images, /labels,
    /meta, and the /index chunk table the lock-free reader uses."""
    import h5py

    with h5py.File(path, "w", libver=libver) as f:
        images = f.create_dataset("images", data=hdf5_pixels((samples,) + shape, samples),
                                  chunks=(chunk,) + shape, compression=compression)
        f.create_dataset("labels", data=np.arange(samples, dtype="<i8") % 3)
        meta(f, shape[-1], ["cat", "dog", "emu"])
        chunks = (samples + chunk - 1) // chunk
        infos = [images.id.get_chunk_info_by_coord((k * chunk, 0, 0, 0)) for k in range(chunks)]
        f.create_dataset("index/chunk_addr", data=np.array([i.byte_offset for i in infos], "<u8"))
        f.create_dataset("index/chunk_size", data=np.array([i.size for i in infos], "<u8"))
        schema_attributes(f, "raw")


def jpeg_layout_file(path, encoded, shapes, chunked=False):
    """A jpeg-layout schema v1 file: the encoded images back to back in /jpeg/bytes, their
    offsets, shapes and CRC-32s, labels and /meta."""
    import h5py

    offsets = np.cumsum([0] + [len(e) for e in encoded]).astype("<u8")
    with h5py.File(path, "w") as f:
        data = np.frombuffer(b"".join(encoded), np.uint8)
        f.create_dataset("jpeg/bytes", data=data, chunks=(256,) if chunked else None)
        f.create_dataset("jpeg/offsets", data=offsets)
        f.create_dataset("jpeg/shapes", data=np.array(shapes, "<u2"))
        f.create_dataset("jpeg/crc32", data=np.array([zlib.crc32(e) for e in encoded], "<u4"))
        f.create_dataset("labels", data=np.arange(len(encoded), dtype="<i8") % 2)
        meta(f, 3, ["day", "night"])
        schema_attributes(f, "jpeg")


def hdf5_seeds(out):
    import h5py
    from PIL import Image

    folder = os.path.join(out, "hdf5_reader")
    os.makedirs(folder, exist_ok=True)

    def at(name):
        return os.path.join(folder, name)

    raw_layout_file(at("raw_index.h5"), 12, (8, 8, 3), 4)
    raw_layout_file(at("raw_deflate.h5"), 10, (6, 5, 3), 4, compression="gzip")
    raw_layout_file(at("raw_latest.h5"), 9, (4, 4, 1), 3, libver="latest")
    encoded, shapes = [], []
    for k, (h, w, mode, kind) in enumerate([(8, 8, "RGB", "JPEG"), (6, 10, "L", "JPEG"),
                                            (5, 7, "RGB", "PNG")]):
        image = Image.fromarray(hdf5_pixels((h, w, 3), k)).convert(mode)
        buffer = io.BytesIO()
        image.save(buffer, kind, **({"quality": 60} if kind == "JPEG" else {}))
        encoded.append(buffer.getvalue())
        shapes.append((h, w, 1 if mode == "L" else 3))
    jpeg_layout_file(at("jpeg.h5"), encoded, shapes)
    jpeg_layout_file(at("jpeg_chunked.h5"), encoded[:2], shapes[:2], chunked=True)
    # Users' own files, made the plain h5py way: no schema attribute, no index.
    with h5py.File(at("user_plain.h5"), "w") as f:
        f.create_dataset("images", data=hdf5_pixels((6, 5, 4, 3), 1))
    with h5py.File(at("user_nchw_split_chunks.h5"), "w") as f:
        f.create_dataset("images", data=hdf5_pixels((10, 3, 6, 5), 2), chunks=(4, 3, 4, 5),
                         compression="gzip", shuffle=True, fillvalue=9)
        f.create_dataset("labels", data=np.arange(10, dtype="<i4").reshape(10, 1))
    with h5py.File(at("user_compact.h5"), "w") as f:
        space = h5py.h5s.create_simple((4, 2, 2, 3))
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_layout(h5py.h5d.COMPACT)
        dset = h5py.h5d.create(f.id, b"images", h5py.h5t.STD_U8LE, space, dcpl=dcpl)
        dset.write(h5py.h5s.ALL, h5py.h5s.ALL, hdf5_pixels((4, 2, 2, 3), 3))
        f.create_dataset("labels", data=np.zeros(4, "<i8"))


def idx(magic, dims, payload):
    return struct.pack(">I", magic) + b"".join(struct.pack(">I", d) for d in dims) + payload


def two_files(kind, first, second):
    """fuzz_idx_cifar's input: the kind byte, where the first file ends, then both files."""
    return bytes([kind]) + struct.pack("<I", len(first)) + first + second


def array_seeds(out):
    folder = os.path.join(out, "idx_cifar")
    os.makedirs(folder, exist_ok=True)
    images = hdf5_pixels((5, 6, 7), 4).tobytes()
    labels = bytes([0, 3, 9, 3, 1])
    mnist = (idx(0x803, (5, 6, 7), images), idx(0x801, (5,), labels))
    cifar = b"".join(bytes([k % 10]) + hdf5_pixels((3, 32, 32), k).tobytes() for k in range(3))
    meta = "".join(f"class {k}\n" for k in range(10)).encode()
    npy_images, npy_labels = io.BytesIO(), io.BytesIO()
    np.save(npy_images, hdf5_pixels((4, 5, 6, 3), 5))
    np.save(npy_labels, np.array([2, 0, 1, 7], np.int64))
    npy_gray = io.BytesIO()
    np.save(npy_gray, hdf5_pixels((3, 4, 4), 6))
    seeds = {
        "mnist_folder": two_files(0, *mnist),
        "mnist_file": two_files(1, *mnist),
        "cifar_with_meta": two_files(2, cifar, meta),
        "cifar": two_files(2, cifar, b""),
        "npy_labels": two_files(3, npy_images.getvalue(), npy_labels.getvalue()),
        "npy_gray": two_files(3, npy_gray.getvalue(), b""),
    }
    for name, data in seeds.items():
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)


def cli_seeds(out):
    """Command lines, one argument a line, the program first: every command and the values with
    parsers of their own (sizes, N:HxWxC, --compression, --echo, --inject-stall, the geometry's
    --resize, --crop, --crop-scale, --crop-ratio, --crop-padding, sweep lists)."""
    folder = os.path.join(out, "cli")
    os.makedirs(folder, exist_ok=True)
    lines = {
        "h5pack_synthetic": ["h5pack", "convert", "360000:64x64x3", "out.h5", "--chunk", "64",
                             "--compression", "gzip:4", "--seed", "3", "--classes", "10"],
        "h5pack_folder": ["h5pack", "convert", "photos/", "out.h5", "--from", "imagefolder",
                          "--store", "raw", "--size", "224x224", "--filter", "area",
                          "--skip-bad", "--workers", "2"],
        "h5pack_jpeg": ["h5pack", "convert", "photos/", "out.h5", "--store", "jpeg", "--quality",
                        "90", "--max-side", "512"],
        "h5pack_npy": ["h5pack", "convert", "x.npy", "out.h5", "--labels", "y.npy",
                       "--compression", "none"],
        "h5pack_mnist": ["h5pack", "convert", "mnist/", "out.h5", "--from", "mnist", "--split",
                         "test"],
        "h5pack_info": ["h5pack", "info", "data.h5", "--json", "--images", "/x", "--labels", "",
                        "--layout", "nchw", "--no-index"],
        "h5pack_verify": ["h5pack", "verify", "data.h5", "--layout", "nhwc"],
        "pipebench_default": ["pipebench"],
        "pipebench_run": ["pipebench", "--data", "train.h5", "--workers", "2", "--order", "chunk",
                          "--batch", "64", "--prefetch", "4", "--cache-mb", "512", "--seed", "7",
                          "--json", "out.json"],
        "pipebench_synthetic": ["pipebench", "run", "--synthetic", "2048:32x32x3", "--device",
                                "cpu", "--echo", "auto:4", "--steps", "20", "--progress", "plain",
                                "--progress-every", "2.5"],
        "pipebench_stall": ["pipebench", "--data", "train.h5", "--model", "cnn", "--inject-stall",
                            "read:200@1", "--report", "r.html", "--trace", "t.json"],
        "pipebench_jpeg": ["pipebench", "--data", "photos.h5", "--size", "128x128", "--augment",
                           "crop-flip", "--on-error", "skip", "--dtype", "bf16", "--echo", "2",
                           "--epochs", "2"],
        "pipebench_geometry": ["pipebench", "--data", "photos.h5", "--size", "224x224",
                               "--resize", "256", "--resize-max", "400", "--resize-filter",
                               "bicubic", "--crop", "random-resized", "--crop-scale", "0.08,1",
                               "--crop-ratio", "0.75,1.333", "--hflip", "0.5", "--vflip",
                               "0.1", "--dtype", "uint8"],
        "pipebench_padded_crop": ["pipebench", "--data", "train.h5", "--resize", "40x40",
                                  "--crop", "random", "--crop-padding", "4,2,4,2",
                                  "--pad-if-needed"],
        "pipebench_training": ["pipebench", "--data", "train.h5", "--model", "resnet18",
                               "--optimizer", "adamw", "--lr", "0.001", "--amp", "bfloat16",
                               "--channels-last", "--cudnn-benchmark", "--deterministic",
                               "--sync-every", "10", "--eval"],
        "pipebench_user_file": ["pipebench", "--data", "celeba.h5", "--images", "/images",
                                "--layout", "nchw", "--labels", "", "--no-index",
                                "--no-profile"],
        "pipebench_sweep": ["pipebench", "sweep", "--data", "train.h5", "--workers", "1,2,4",
                            "--echo", "1,auto:3", "--prefetch", "2,4", "--order", "random,chunk",
                            "--cache-mb", "64,512", "--csv", "s.csv"],
        "pipebench_analyze": ["pipebench", "analyze", "r0.json", "r1.json.gz", "--json",
                              "a.json"],
    }
    for name, args in lines.items():
        with open(os.path.join(folder, name), "w") as f:
            f.write("\n".join(args))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    image_seeds(out)
    npy_seeds(out)
    kineto_seeds(out)
    hdf5_seeds(out)
    array_seeds(out)
    cli_seeds(out)


if __name__ == "__main__":
    main()
