#!/usr/bin/python3
"""Seed corpora for the fuzz targets, from the test generators: every kind of image the codec
tests make (tests/formats/make_codec_images.py: JPEG, PNG, WebP of every kind, and the formats
gpufeed refuses), .npy files of every dtype the reader serves (and some it refuses), and small
PyTorch profiler traces (a training step with kernels, copies, syncs, flows and a DataLoader
wait; and the start of the Kineto sample traces when they are present).

    /usr/bin/python3 bench/fuzz/make_seeds.py OUT_DIR
"""
import gzip
import io
import json
import os
import shutil
import subprocess
import sys

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


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    image_seeds(out)
    npy_seeds(out)
    kineto_seeds(out)


if __name__ == "__main__":
    main()
