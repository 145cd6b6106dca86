#!/usr/bin/env python3
"""The hardware JPEG engines' own rate: nvJPEG's batched decode, called directly, on one file's
images, as the peer that gpufeed's decode="gpu" is measured against (and the facts of the
machine: which libnvjpeg loads, whether its hardware backend starts, which images it takes).

    bench/gpu/nvjpeg_peak.py --data FILE.h5 [--json OUT]
    bench/gpu/nvjpeg_peak.py --synthetic 512x384x512 [--json OUT]

Every rate is images per second over whole batches, host-timed to a stream synchronize after a
warm-up batch, the median of --rounds rounds. Without a CUDA device or without libnvjpeg it
prints why and exits 0 ("not measured").
"""
import argparse
import ctypes
import glob
import io
import json
import os
import statistics
import subprocess
import sys
import time

BACKENDS = {"default": 0, "hybrid": 1, "gpu_hybrid": 2, "hardware": 3}
OUTPUT_RGBI = 5


class Image(ctypes.Structure):
    _fields_ = [("channel", ctypes.c_void_p * 4), ("pitch", ctypes.c_size_t * 4)]


def candidates():
    """Where a libnvjpeg may be: the environment's choice, PyPI's nvidia-nvjpeg, the wheels of
    torch and torchvision, the CUDA toolkit."""
    found = []
    if os.environ.get("GPUFEED_NVJPEG"):
        found.append(os.environ["GPUFEED_NVJPEG"])
    for path in sys.path:
        found += sorted(glob.glob(os.path.join(path, "nvidia", "*", "lib", "libnvjpeg.so*")))
        found += sorted(glob.glob(os.path.join(path, "nvidia", "nvjpeg", "lib", "libnvjpeg.so*")))
        found += sorted(glob.glob(os.path.join(path, "torchvision.libs", "libnvjpeg*.so*")))
        found += sorted(glob.glob(os.path.join(path, "torch", "lib", "libnvjpeg*.so*")))
    found += sorted(glob.glob("/usr/local/cuda*/lib64/libnvjpeg.so*"))
    found += sorted(glob.glob("/usr/local/cuda*/targets/*/lib/libnvjpeg.so*"))
    seen, unique = set(), []
    for path in found:
        real = os.path.realpath(path)
        if real not in seen and os.path.exists(real):
            seen.add(real)
            unique.append(path)
    return unique


def declare(lib):
    """The argument types that ctypes cannot guess (size_t lengths, pointers)."""
    p, size = ctypes.c_void_p, ctypes.c_size_t
    lib.nvjpegJpegStreamParseHeader.argtypes = [p, ctypes.c_char_p, size, p]
    lib.nvjpegDecodeParamsSetROI.argtypes = [p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    lib.nvjpegDecodeParamsSetOutputFormat.argtypes = [p, ctypes.c_int]
    lib.nvjpegDecodeBatchedSupported.argtypes = [p, p, ctypes.POINTER(ctypes.c_int)]


def version(lib):
    values = []
    for prop in range(3):
        v = ctypes.c_int()
        lib.nvjpegGetProperty(prop, ctypes.byref(v))
        values.append(v.value)
    return ".".join(map(str, values))


def synthetic_jpegs(count, height, width, **save):
    """Photo-like JPEGs: smooth random fields plus fine noise (about 100 KB at 384x512, q90)."""
    import numpy as np
    from PIL import Image as PILImage
    rng = np.random.default_rng(0)
    images = []
    for i in range(count):
        coarse = rng.integers(0, 256, (height // 16 + 1, width // 16 + 1, 3), dtype=np.uint8)
        img = PILImage.fromarray(coarse).resize((width, height), PILImage.BICUBIC)
        arr = np.asarray(img).astype(np.int16) + rng.integers(-12, 13, (height, width, 3))
        img = PILImage.fromarray(arr.clip(0, 255).astype(np.uint8))
        buf = io.BytesIO()
        img.save(buf, format="JPEG", quality=save.get("quality", 90),
                 subsampling=save.get("subsampling", 2), progressive=save.get("progressive", False))
        images.append(buf.getvalue())
    return images


def file_jpegs(path, count):
    """The first `count` encoded images of a gpufeed jpeg-layout file."""
    import h5py
    with h5py.File(path, "r") as f:
        offsets = f["/jpeg/offsets"][: count + 1]
        data = f["/jpeg/bytes"][offsets[0]:offsets[-1]]
    return [bytes(data[offsets[i] - offsets[0]:offsets[i + 1] - offsets[0]])
            for i in range(len(offsets) - 1)]


def decode_all(lib, handle, state, jpegs, batch, dest, stream, params=None):
    """Decodes the whole batches of `jpegs` into `dest`; None, or the failing call's text."""
    for first in range(0, len(jpegs) - batch + 1, batch):
        chunk = jpegs[first:first + batch]
        data = (ctypes.c_char_p * batch)(*chunk)
        lengths = (ctypes.c_size_t * batch)(*[len(j) for j in chunk])
        if params is None:
            status = lib.nvjpegDecodeBatched(handle, state, data, lengths, dest, stream)
        else:
            status = lib.nvjpegDecodeBatchedEx(handle, state, data, lengths, dest, params, stream)
        if status != 0:
            return f"nvjpegDecodeBatched{'Ex' if params is not None else ''} status {status}"
    return None


class Decoder:
    def __init__(self, lib, backend, batch):
        import torch
        self.lib, self.batch = lib, batch
        self.handle, self.state = ctypes.c_void_p(), ctypes.c_void_p()
        self.status = lib.nvjpegCreateEx(BACKENDS[backend], None, None, 0, ctypes.byref(self.handle))
        if self.status != 0:
            return
        self.status = lib.nvjpegJpegStateCreate(self.handle, ctypes.byref(self.state))
        if self.status == 0:
            self.status = lib.nvjpegDecodeBatchedInitialize(self.handle, self.state, batch, 1, OUTPUT_RGBI)
        self.stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)

    def supported(self, jpeg):
        lib, stream = self.lib, ctypes.c_void_p()
        lib.nvjpegJpegStreamCreate(self.handle, ctypes.byref(stream))
        status = lib.nvjpegJpegStreamParseHeader(self.handle, jpeg, len(jpeg), stream)
        flag = ctypes.c_int(-1)
        if status == 0:
            status = lib.nvjpegDecodeBatchedSupported(self.handle, stream, ctypes.byref(flag))
        lib.nvjpegJpegStreamDestroy(stream)
        return {"parse_status": status, "is_supported": flag.value}

    def run(self, jpegs, sizes):
        """Decodes len(jpegs) images (a multiple of the batch) into interleaved RGB; returns the
        outputs and the seconds, host-timed to a synchronize."""
        import torch
        lib, n = self.lib, self.batch
        outs = []
        for h, w in sizes[:n]:
            outs.append(torch.empty((h, w, 3), dtype=torch.uint8, device="cuda"))
        dest = (Image * n)()
        for i, t in enumerate(outs):
            dest[i].channel[0] = t.data_ptr()
            dest[i].pitch[0] = t.shape[1] * 3
        torch.cuda.synchronize()
        start = time.perf_counter()
        error = decode_all(lib, self.handle, self.state, jpegs, n, dest, self.stream)
        if error:
            return None, error
        torch.cuda.synchronize()
        return outs, time.perf_counter() - start

    def close(self):
        if self.state:
            self.lib.nvjpegJpegStateDestroy(self.state)
        if self.handle:
            self.lib.nvjpegDestroy(self.handle)


def roi_run(lib, jpegs, batch, roi):
    """nvjpegDecodeBatchedEx with one ROI per image (the hardware backend's crop): status and rate."""
    import torch
    handle, state = ctypes.c_void_p(), ctypes.c_void_p()
    status = lib.nvjpegCreateEx(BACKENDS["hardware"], None, None, 0, ctypes.byref(handle))
    if status:
        return {"status": f"create {status}"}
    lib.nvjpegJpegStateCreate(handle, ctypes.byref(state))
    status = lib.nvjpegDecodeBatchedInitialize(handle, state, batch, 1, OUTPUT_RGBI)
    params = (ctypes.c_void_p * batch)()
    for i in range(batch):
        p = ctypes.c_void_p()
        lib.nvjpegDecodeParamsCreate(handle, ctypes.byref(p))
        lib.nvjpegDecodeParamsSetOutputFormat(p, OUTPUT_RGBI)
        lib.nvjpegDecodeParamsSetROI(p, *roi)
        params[i] = p
    outs = [torch.empty((roi[3], roi[2], 3), dtype=torch.uint8, device="cuda") for _ in range(batch)]
    dest = (Image * batch)()
    for i, t in enumerate(outs):
        dest[i].channel[0] = t.data_ptr()
        dest[i].pitch[0] = roi[2] * 3
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    times = []
    for rnd in range(4):
        torch.cuda.synchronize()
        start = time.perf_counter()
        error = decode_all(lib, handle, state, jpegs, batch, dest, stream, params)
        if error:
            return {"status": error}
        torch.cuda.synchronize()
        if rnd:
            times.append(time.perf_counter() - start)
    done = (len(jpegs) // batch) * batch
    return {"status": 0, "images_per_s": done / statistics.median(times), "roi": list(roi),
            "first": outs[0].float().mean().item()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", help="a gpufeed jpeg file (its /data rows are the JPEGs)")
    parser.add_argument("--synthetic", default="1024x384x512", help="COUNTxHxW synthetic JPEGs")
    parser.add_argument("--json")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--batches", default="64,256")
    args = parser.parse_args()
    result = {"libraries": candidates()}
    try:
        result["nvidia_smi_jpg"] = subprocess.run(
            "nvidia-smi -q | grep -i -E 'jpg|jpeg|decoder|encoder' | sort | uniq -c",
            shell=True, capture_output=True, text=True, timeout=20).stdout
    except Exception as error:  # noqa: BLE001 - a fact of the machine, reported
        result["nvidia_smi_jpg"] = str(error)

    def finish(reason=None):
        if reason:
            result["not_measured"] = reason
            print(f"nvjpeg_peak: not measured: {reason}")
        if args.json:
            with open(args.json, "w") as f:
                json.dump(result, f, indent=2)
        print(json.dumps({k: v for k, v in result.items() if k != "decode"}, indent=1)[:6000])
        for row in result.get("decode", []):
            print(row)

    try:
        import torch
    except ImportError:
        return finish("no torch")
    if not torch.cuda.is_available():
        return finish("no CUDA device")
    result["device"] = torch.cuda.get_device_name()
    result["torch"] = torch.__version__
    lib = None
    for path in result["libraries"]:
        try:
            lib = ctypes.CDLL(path)
            declare(lib)
            result["loaded"] = path
            result["nvjpeg_version"] = version(lib)
            break
        except OSError as error:
            result.setdefault("load_errors", []).append(f"{path}: {error}")
    if lib is None:
        return finish("no libnvjpeg found")
    if args.data:
        jpegs = file_jpegs(args.data, 2048)
    else:
        n, h, w = (int(x) for x in args.synthetic.split("x"))
        jpegs = synthetic_jpegs(n, h, w)
    from PIL import Image as PILImage
    sizes = [PILImage.open(io.BytesIO(j)).size[::-1] for j in jpegs]
    uniform = len(set(sizes)) == 1
    result["images"] = {"count": len(jpegs), "mean_bytes": sum(map(len, jpegs)) / len(jpegs),
                        "size": list(sizes[0]), "uniform": uniform}

    # Which kinds of image each backend takes.
    kinds = {
        "baseline_420": synthetic_jpegs(1, 96, 128)[0],
        "baseline_444": synthetic_jpegs(1, 96, 128, subsampling=0)[0],
        "baseline_422": synthetic_jpegs(1, 96, 128, subsampling=1)[0],
        "progressive": synthetic_jpegs(1, 96, 128, progressive=True)[0],
    }
    buf = io.BytesIO()
    PILImage.new("L", (128, 96), 77).save(buf, format="JPEG")
    kinds["gray"] = buf.getvalue()
    buf = io.BytesIO()
    PILImage.new("CMYK", (128, 96), (10, 20, 30, 40)).save(buf, format="JPEG")
    kinds["cmyk"] = buf.getvalue()

    decode_rows = []
    for backend in ("hardware", "gpu_hybrid"):
        for batch in (int(b) for b in args.batches.split(",")):
            dec = Decoder(lib, backend, batch)
            row = {"backend": backend, "batch": batch, "create_status": dec.status}
            if dec.status == 0 and batch == 64:
                row["supported"] = {k: dec.supported(v) for k, v in kinds.items()}
            if dec.status == 0 and uniform:
                times, outs = [], None
                for rnd in range(args.rounds + 1):
                    outs, seconds = dec.run(jpegs, sizes)
                    if outs is None:
                        row["error"] = seconds
                        break
                    if rnd:
                        times.append(seconds)
                if times:
                    done = (len(jpegs) // batch) * batch
                    row["images_per_s"] = done / statistics.median(times)
                    # Agreement with Pillow (libjpeg-turbo) on the last batch's first image.
                    import numpy as np
                    first = (len(jpegs) // batch - 1) * batch
                    ref = np.asarray(PILImage.open(io.BytesIO(jpegs[first])).convert("RGB"), dtype=np.int16)
                    got = outs[0].cpu().numpy().astype(np.int16)
                    row["vs_pillow_mean_abs"] = float(np.abs(got - ref).mean())
                    row["vs_pillow_max_abs"] = int(np.abs(got - ref).max())
            dec.close()
            decode_rows.append(row)
    result["decode"] = decode_rows
    # What re-initializing a state for another batch size costs (a batch whose engine part
    # changes size by one image, as one progressive file in it makes it).
    dec = Decoder(lib, "hardware", 256)
    if dec.status == 0:
        times = []
        for n in (255, 256) * 8:
            start = time.perf_counter()
            lib.nvjpegDecodeBatchedInitialize(dec.handle, dec.state, n, 1, OUTPUT_RGBI)
            times.append(time.perf_counter() - start)
        result["batched_initialize_ms"] = 1e3 * statistics.median(times)
    dec.close()
    if uniform:
        h, w = sizes[0]
        result["roi_hardware"] = roi_run(lib, jpegs, 64, (w // 4, h // 4, w // 2, h // 2))

    # torchvision's GPU decode of the same bytes, batched as its API takes them.
    try:
        import torchvision
        from torchvision.io import decode_jpeg
        tensors = [torch.frombuffer(bytearray(j), dtype=torch.uint8) for j in jpegs]
        decode_jpeg(tensors[:64], device="cuda")
        torch.cuda.synchronize()
        times = []
        for _ in range(args.rounds):
            start = time.perf_counter()
            for first in range(0, len(tensors) - 255, 256):
                decode_jpeg(tensors[first:first + 256], device="cuda")
            torch.cuda.synchronize()
            times.append(time.perf_counter() - start)
        result["torchvision_gpu_images_per_s"] = (len(tensors) // 256) * 256 / statistics.median(times)
        result["torchvision"] = torchvision.__version__
    except Exception as error:  # noqa: BLE001 - reported, not fatal
        result["torchvision_gpu_error"] = repr(error)[:300]
    # One CPU core's libjpeg-turbo (Pillow) on the same bytes.
    start = time.perf_counter()
    count = 0
    while time.perf_counter() - start < 1.0:
        PILImage.open(io.BytesIO(jpegs[count % len(jpegs)])).convert("RGB").load()
        count += 1
    result["pillow_one_core_images_per_s"] = count / (time.perf_counter() - start)
    finish()


if __name__ == "__main__":
    main()
