"""One epoch of gpufeed.Loader on an s3:// URL or a local file, timed. Prints one JSON line.

    gpufeed_epoch.py --data s3://bench/data.h5 [--cache-dir DIR] [--workers 2] [--batch 256]
                     [--order chunk|random|sequential] [--size HxW] [--dtype uint8|...]
    gpufeed_epoch.py --data data.h5

The Loader is made with batch_size, workers, device="cpu" and every other keyword at its
default (order, read-ahead, chunk cache), plus cache_dir, order, size (a jpeg-layout file's
decode size) and dtype when given. The time runs from constructing the Loader (for s3:// that is the
first requests: HEAD, the file's metadata) to the last batch of epoch 0, and each batch is
touched as bench/python's python_loader.py touches it (one float per 4 KiB page, and the
labels). The peak resident memory is taken over the same span (peak_rss_bytes), beside the
resident memory before it (base_rss_bytes: Python, torch). A second Loader with
the same --cache-dir reads what the first one kept there ("cached epoch").

Failures do not raise: the line then has "error" (the exception's type and message), so the
benchmark reports the peers when gpufeed's side cannot run.
"""
import argparse
import json
import time

STATS_KEYS = ("cache", "bottleneck", "wall_s", "network")


def status_bytes(field):
    """A /proc/self/status field in bytes (VmRSS, VmHWM), or None off Linux."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def reset_peak_rss():
    """Starts VmHWM (the peak resident set) again from the current one (Linux 4.0+)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def run(args):
    import torch  # noqa: F401  (imported by the Loader for its output; not part of the time)
    import gpufeed
    keywords = {"batch_size": args.batch, "workers": args.workers, "device": "cpu"}
    if args.cache_dir:
        keywords["cache_dir"] = args.cache_dir
    if args.order:
        keywords["order"] = args.order
    if args.dtype:
        keywords["dtype"] = args.dtype
    if args.size:
        keywords["size"] = tuple(int(v) for v in args.size.split("x"))
    if args.read_requests:
        keywords["read_requests"] = args.read_requests
    reset_peak_rss()  # the peak from here on: the Loader's, on top of Python and torch
    base_rss = status_bytes("VmRSS")
    start = time.monotonic()
    loader = gpufeed.Loader(args.data, **keywords)
    constructed = time.monotonic() - start
    samples, checksum, first_batch = 0, 0.0, None
    for images, labels in loader.epoch(0):
        checksum += float(images.view(-1)[::1024].sum()) + float(labels.sum())
        samples += images.shape[0]
        first_batch = first_batch or time.monotonic() - start
    seconds = time.monotonic() - start
    stats = loader.stats()
    kept = {k: v for k, v in stats.to_dict().items() if k in STATS_KEYS}
    options = loader.options()
    return {"samples": samples, "seconds": seconds, "samples_per_s": samples / seconds,
            "construct_s": constructed, "first_batch_s": first_batch,
            "order": options.get("order"), "workers": loader.workers, "batch": args.batch,
            "checksum": checksum, "stats": kept, "gpufeed": gpufeed.__version__,
            "base_rss_bytes": base_rss, "peak_rss_bytes": status_bytes("VmHWM")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True, help="s3://bucket/key or a local file")
    ap.add_argument("--cache-dir", default=None)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--order", choices=("chunk", "random", "sequential"), default=None)
    ap.add_argument("--dtype", default=None, help="the batches' dtype (default float32)")
    ap.add_argument("--size", default=None, help="HxW: a jpeg-layout file's decode size")
    ap.add_argument("--read-requests", type=int, default=0,
                    help="GETs in flight (default: the Loader's auto)")
    args = ap.parse_args()
    try:
        result = run(args)
    except Exception as e:  # reported, not raised: the peers' figures still count
        result = {"error": f"{type(e).__name__}: {e}"}
    result.update(data=args.data, cache_dir=args.cache_dir)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
