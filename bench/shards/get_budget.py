"""The request budget of a 64-GPU job reading a dataset of shards from object storage, from the
GET log of a real first epoch (nginx's access log, bench/shards/run.sh) scaled up.

    get_budget.py ACCESS_LOG --epoch EPOCH.json [--bucket bench] [--gpus 64]
                  [--images-per-gpu 10000] [--limit 3500] [--out budget.json]

The log's GETs of the shards are split into the openings (a shard's head and tail, ranges from
its first byte or a suffix: its metadata, as the manifest says where it lies; the manifest) and
the reads of the epoch. GETs per image = the epoch's GETs / the images it
delivered (EPOCH.json's "samples"); the job's GETs a second = GPUs x images a second a GPU x
that; a key prefix's share is the busiest prefix's part of the epoch's GETs (the shards' prefix
folders: h5pack spreads them over 16). The openings happen once per rank and are left out of the
steady rate (they are reported beside it). Prints the figures; writes them to --out as JSON.
"""
import argparse
import collections
import json
import re

LINE = re.compile(r'^(?P<method>\S+) (?P<uri>\S+) (?P<status>\d+) "(?P<range>[^"]*)" (?P<bytes>\d+)$')


def opening(byte_range: str) -> bool:
    """A shard's head (from byte 0: the superblock, never an image) or tail (a suffix range)."""
    return byte_range.startswith("bytes=0-") or byte_range.startswith("bytes=-")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log")
    ap.add_argument("--epoch", required=True, help="the epoch's JSON line (its samples)")
    ap.add_argument("--bucket", default="bench")
    ap.add_argument("--gpus", type=int, default=64)
    ap.add_argument("--images-per-gpu", type=float, default=10000)
    ap.add_argument("--limit", type=float, default=3500, help="GETs a second a prefix, at most")
    ap.add_argument("--out")
    args = ap.parse_args()

    epoch = json.loads(open(args.epoch).read().strip().splitlines()[-1])
    reads, openings, prefixes, read_bytes = 0, 0, collections.Counter(), 0
    for line in open(args.log):
        m = LINE.match(line.strip())
        if not m or m["method"] != "GET" or not m["status"].startswith("2"):
            continue
        parts = m["uri"].strip("/").split("/")
        if parts[0] != args.bucket or not parts[-1].endswith(".h5"):
            openings += 1  # the manifest
            continue
        if opening(m["range"]):
            openings += 1
            continue
        reads += 1
        read_bytes += int(m["bytes"])
        prefixes["/".join(parts[1:-1])] += 1
    images = epoch["samples"]
    per_image = reads / images
    job_rate = args.gpus * args.images_per_gpu
    busiest_share = max(prefixes.values()) / reads
    result = {
        "images": images, "gets": reads, "opening_gets": openings,
        "mean_get_bytes": read_bytes / reads, "gets_per_image": per_image,
        "prefixes": len(prefixes), "busiest_prefix_share": busiest_share,
        "job_images_per_s": job_rate, "job_gets_per_s": job_rate * per_image,
        "gets_per_s_per_prefix": job_rate * per_image * busiest_share,
        "limit_per_prefix": args.limit,
        "within_limit": job_rate * per_image * busiest_share <= args.limit,
    }
    print(f"epoch: {images} images, {reads} GETs ({per_image:.4f} an image, "
          f"{read_bytes / reads / 2**20:.2f} MiB each) over {len(prefixes)} prefixes "
          f"(busiest {busiest_share:.1%}); {openings} opening GETs")
    print(f"{args.gpus} GPUs x {args.images_per_gpu:.0f} images/s: "
          f"{result['job_gets_per_s']:.0f} GETs/s, {result['gets_per_s_per_prefix']:.0f} a prefix "
          f"(limit {args.limit:.0f}: {'within' if result['within_limit'] else 'OVER'})")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
