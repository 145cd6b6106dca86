"""The peers of gpufeed's S3 reader, each reading the same samples through the same link.

    peers.py ros3       --endpoint http://127.0.0.1:PORT --key bucket/data.h5 --local data.h5
    peers.py s3fs       --endpoint ... --key bucket/data.h5 --local data.h5
    peers.py streaming  --endpoint ... --key bucket/mds --local data.h5 --cache DIR
    peers.py ranged-get --endpoint ... --key bucket/data.h5 --local data.h5 --in-flight 64

Each prints one JSON line: samples, seconds, samples_per_s and what else it knows.
--local is the same file on disk, read only for what a client would know beforehand (the
sample count, /meta's mean and std, the chunk table for ranged-get).

- ros3, s3fs: a map-style torch Dataset opening the file in each worker (h5py's ROS3 driver on
  the http URL; h5py on an s3fs file object with s3fs's defaults, anon=True), a DataLoader with
  --workers and --batch over a shuffled subset of --max-samples indices (a shuffled epoch cut
  short), each batch normalized by the consumer as tutorials do. A worker reads /labels whole
  when it opens the file (one request; reading a label per sample would cost a second round
  trip per sample). These peers are slow, so they stop at --max-samples or --max-seconds:
  samples = samples the workers read before the deadline (after it, the rest of the subset is
  handed out as empty samples so the DataLoader drains at once), seconds = from creating the
  DataLoader's iterator (worker start and file open included) to the last sample read.
- streaming: MosaicML Streaming's StreamingDataset (remote s3://bucket/mds, endpoint from
  S3_ENDPOINT_URL, a fresh local cache), shuffle=True, in the same DataLoader: its whole first
  epoch, timed from constructing the dataset to the last batch.
- ranged-get: every chunk of /images (offsets and sizes from /index) fetched once by
  --in-flight threads sharing a urllib3 pool of as many keep-alive connections: what the link
  moves when a client keeps that many requests in flight. samples = the samples those chunks
  hold.
"""
import argparse
import json
import multiprocessing
import os
import sys
import time

import h5py
import numpy as np


def local_facts(path):
    with h5py.File(path, "r") as f:
        return {"length": f["/images"].shape[0], "sample_shape": f["/images"].shape[1:],
                "mean": np.asarray(f["/meta/mean"], dtype=np.float32),
                "std": np.asarray(f["/meta/std"], dtype=np.float32),
                "classes": len(f["/meta/class_names"]),
                "chunk_addr": np.asarray(f["/index/chunk_addr"]),
                "chunk_size": np.asarray(f["/index/chunk_size"])}


def normalizer(facts):
    import torch
    mean = torch.from_numpy(facts["mean"]).view(1, -1, 1, 1)
    std = torch.from_numpy(facts["std"]).view(1, -1, 1, 1)
    return lambda x: x.permute(0, 3, 1, 2).float().sub(mean).div(std)


def open_remote(kind, endpoint, key):
    if kind == "ros3":
        return h5py.File(f"{endpoint}/{key}", "r", driver="ros3")
    import s3fs
    fs = s3fs.S3FileSystem(anon=True, endpoint_url=endpoint)
    return h5py.File(fs.open(key, "rb"), "r")


class RemoteH5:
    """A torch map-style Dataset over a remote file, opened lazily in each (forked) worker.
    Counts the samples it really read, and when, in memory shared with the parent."""

    def __init__(self, kind, endpoint, key, shape, deadline):
        self.kind, self.endpoint, self.key, self.shape = kind, endpoint, key, shape
        self.deadline = deadline
        self.read = multiprocessing.Value("q", 0)
        self.last_read = multiprocessing.Value("d", 0.0)
        self.file = None

    def __getitem__(self, i):
        import torch
        if time.monotonic() > self.deadline:
            return torch.zeros(self.shape, dtype=torch.uint8), -1
        if self.file is None:
            self.file = open_remote(self.kind, self.endpoint, self.key)
            self.images = self.file["/images"]
            self.labels = self.file["/labels"][:]
        sample = torch.from_numpy(self.images[i]), int(self.labels[i])
        with self.read.get_lock():
            self.read.value += 1
            self.last_read.value = time.monotonic()
        return sample


def run_h5py(args, facts):
    import torch
    from torch.utils.data import DataLoader
    order = torch.randperm(facts["length"], generator=torch.Generator().manual_seed(args.seed))
    subset = order[:args.max_samples].tolist()
    start = time.monotonic()
    dataset = RemoteH5(args.peer, args.endpoint, args.key, facts["sample_shape"],
                       start + args.max_seconds)
    loader = DataLoader(dataset, batch_size=args.batch, sampler=subset,
                        num_workers=args.workers)
    normalize = normalizer(facts)
    checksum = 0.0
    for images, labels in loader:
        checksum += float(normalize(images).reshape(-1)[::1024].sum()) + float(labels.sum())
    samples = dataset.read.value
    seconds = dataset.last_read.value - start
    return {"samples": samples, "seconds": seconds, "requested_samples": len(subset),
            "deadline_hit": samples < len(subset), "max_seconds": args.max_seconds,
            "checksum": checksum}


def run_streaming(args, facts):
    from torch.utils.data import DataLoader
    from streaming import StreamingDataset
    from streaming.base.util import clean_stale_shared_memory
    clean_stale_shared_memory()
    os.environ["S3_ENDPOINT_URL"] = args.endpoint
    # Streaming's S3 client signs every request and has no anonymous mode that works without
    # credentials (NoCredentialsError): it gets placeholder keys, which nginx ignores.
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "placeholder")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "placeholder")
    normalize = normalizer(facts)
    start = time.monotonic()
    dataset = StreamingDataset(remote=f"s3://{args.key}", local=args.cache, shuffle=True,
                               batch_size=args.batch, shuffle_seed=args.seed)
    if args.start_method == "fork":
        # The dataset's S3 client fetched index.json over a keep-alive connection; forked
        # workers would inherit that one socket and talk over each other on it (seen here:
        # 60 s read-timeout stalls, and shard files with another response's bytes). Drop the
        # parent's client so each worker makes its own.
        for stream in dataset.streams:
            stream._downloader.clean_up()
    loader = DataLoader(dataset, batch_size=args.batch, num_workers=args.workers,
                        multiprocessing_context=args.start_method)
    samples, checksum, first_batch, bad_labels = 0, 0.0, None, 0
    for batch in loader:
        images, labels = batch["image"], batch["label"]
        checksum += float(normalize(images).reshape(-1)[::1024].sum()) + float(labels.sum())
        bad_labels += int(((labels < 0) | (labels >= facts["classes"])).sum())
        samples += images.shape[0]
        first_batch = first_batch or time.monotonic() - start
    return {"samples": samples, "seconds": time.monotonic() - start,
            "first_batch_s": first_batch, "checksum": checksum,
            "bad_labels": bad_labels}  # > 0: shard bytes arrived damaged


def run_ranged_get(args, facts):
    from concurrent.futures import ThreadPoolExecutor
    import urllib3
    url = f"{args.endpoint}/{args.key}"
    ranges = list(zip(facts["chunk_addr"].tolist(), facts["chunk_size"].tolist()))
    pool = urllib3.PoolManager(maxsize=args.in_flight, block=True, retries=False)

    def get(offset_size):
        offset, size = offset_size
        reply = pool.request("GET", url, headers={"Range": f"bytes={offset}-{offset + size - 1}"})
        if reply.status != 206 or len(reply.data) != size:
            raise RuntimeError(f"GET {url} bytes {offset}+{size}: status {reply.status}, "
                               f"{len(reply.data)} bytes")
        return size

    start = time.monotonic()
    with ThreadPoolExecutor(args.in_flight) as threads:
        moved = sum(threads.map(get, ranges))
    seconds = time.monotonic() - start
    return {"samples": facts["length"], "seconds": seconds, "bytes": moved,
            "bytes_per_s": moved / seconds, "requests": len(ranges),
            "in_flight": args.in_flight}


PEERS = {"ros3": run_h5py, "s3fs": run_h5py, "streaming": run_streaming,
         "ranged-get": run_ranged_get}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("peer", choices=sorted(PEERS))
    ap.add_argument("--endpoint", required=True, help="http://host:port (path-style URLs)")
    ap.add_argument("--key", required=True, help="bucket/key (streaming: bucket/mds folder)")
    ap.add_argument("--local", required=True, help="the same file on disk")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--max-samples", type=int, default=2048, help="ros3, s3fs")
    ap.add_argument("--max-seconds", type=float, default=30.0, help="ros3, s3fs")
    ap.add_argument("--in-flight", type=int, default=64, help="ranged-get")
    ap.add_argument("--cache", help="streaming: local cache folder (must not exist)")
    ap.add_argument("--start-method", default="fork", choices=["fork", "spawn"],
                    help="streaming: how the DataLoader starts its workers")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    facts = local_facts(args.local)
    result = PEERS[args.peer](args, facts)
    result.update(peer=args.peer, samples_per_s=result["samples"] / result["seconds"],
                  workers=args.workers, batch=args.batch)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    sys.exit(main())
