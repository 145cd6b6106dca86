#!/usr/bin/env bash
# The memory targets, reading a dataset larger than 4 GB:
#  1. the Loader's peak resident memory stays under  slot_bytes + chunk cache budget + 200 MB
#     (slot_bytes: the batch slot pool the Loader reports; 200 MB: code, libraries, HDF5, the
#     chunks workers hold and the order);
#  2. peak RSS does not depend on the dataset's size: the same settings on a 0.6 GB file and on
#     the 4.4 GB file give a ratio <= 1.05 (chunk buffers are recycled, not reallocated).
#
#   BUILD=build/release bench/run_memory.sh
#
# Builds nothing: expects $BUILD/bin/{h5pack,bench_loader}. Packs synthetic 64x64x3 files
# (SMALL_SAMPLES then SAMPLES, 64 samples per chunk, uncompressed) one at a time into a
# temporary directory in the first of $BIG_DIR, $TMPDIR, /var/tmp, /tmp, $BUILD with room for
# the big one (it says where, and stops if none has room), runs one epoch of each with
# --cache-mb 256 in chunk order and in random order, prints peak RSS against the bound and the
# big/small ratio, and removes the files.
#
# Knobs (environment): SAMPLES (360000), SMALL_SAMPLES (48000), CACHE_MB (256), WORKERS (2),
# BATCH (256), RANDOM_MAX_BATCHES (0 = the whole epoch; in random order most samples miss a
# 256 MiB cache and cost a whole chunk read, so the big epoch takes about a minute on 2 cores),
# BIG_DIR (where to put the files).
# About 3-4 minutes on 2 cores, most of it packing the big file and its random-order epoch.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

use_build release h5pack bench_loader
PYTHON=${PYTHON:-/usr/bin/python3}
SAMPLES=${SAMPLES:-360000}
SMALL_SAMPLES=${SMALL_SAMPLES:-48000}
CACHE_MB=${CACHE_MB:-256}
WORKERS=${WORKERS:-2}
BATCH=${BATCH:-256}
RANDOM_MAX_BATCHES=${RANDOM_MAX_BATCHES:-0}
SLACK_BYTES=200000000  # 200 MB

h5pack=$BUILD/bin/h5pack
bench_loader=$BUILD/bin/bench_loader

raw_bytes=$((SAMPLES * 64 * 64 * 3))
need_kb=$((raw_bytes / 1024 + 512 * 1024))  # the file plus 512 MiB of headroom
dir=""
for candidate in ${BIG_DIR:-} ${TMPDIR:-} /var/tmp /tmp "$BUILD"; do
  if [ ! -d "$candidate" ] || [ ! -w "$candidate" ]; then continue; fi
  avail_kb=$(df -Pk "$candidate" | awk 'NR == 2 {print $4}')
  echo "-- $candidate: $((avail_kb / 1024)) MiB free, need $((need_kb / 1024)) MiB" >&2
  if [ "$avail_kb" -ge "$need_kb" ]; then
    dir=$candidate
    break
  fi
done
if [ -z "$dir" ]; then
  echo "error: no directory has $((need_kb / 1024)) MiB free for the ${SAMPLES}-sample file; set BIG_DIR to one that has, or lower SAMPLES (the target needs a file > 4 GB)" >&2
  exit 1
fi

scratch_dir "$dir"
common=(--workers "$WORKERS" --batch "$BATCH" --epochs 1 --cache-mb "$CACHE_MB")
for size in small big; do
  samples=$([ $size = small ] && echo "$SMALL_SAMPLES" || echo "$SAMPLES")
  file=$work/$size.h5
  echo "-- packing ${samples}:64x64x3 ($((samples * 12288 / 1000000)) MB) into $file" >&2
  t0=$(date +%s)
  "$h5pack" convert "${samples}:64x64x3" "$file" --chunk 64 >/dev/null
  echo "-- packed in $(($(date +%s) - t0)) s, $(du -h "$file" | cut -f1) on disk" >&2
  stat -c %s "$file" >"$work/$size.bytes"
  echo "-- $size: one epoch, chunk order, ${CACHE_MB} MiB cache" >&2
  "$bench_loader" --data "$file" "${common[@]}" --order chunk >"$work/$size-chunk.json"
  echo "-- $size: random order$([ "$RANDOM_MAX_BATCHES" -gt 0 ] && echo ", first $RANDOM_MAX_BATCHES batches")" >&2
  "$bench_loader" --data "$file" "${common[@]}" --order random \
    --max-batches "$RANDOM_MAX_BATCHES" >"$work/$size-random.json"
  rm -f "$file"
done

"$PYTHON" - "$work" "$SLACK_BYTES" <<'PY'
import json, os, sys
d, slack = sys.argv[1], int(sys.argv[2])
MB = 1e6
RATIO_TARGET = 1.05

def load(name):
    with open(os.path.join(d, name + ".json")) as f:
        return json.loads(f.read().strip().splitlines()[-1])

def size_of(name):
    with open(os.path.join(d, name + ".bytes")) as f:
        return int(f.read())

print()
print(f"files: small {size_of('small') / 1e9:.2f} GB, big {size_of('big') / 1e9:.2f} GB; "
      f"bound = slot_bytes + cache budget + {slack / MB:.0f} MB")
hdr = (f"{'file':6} {'order':7} {'samples':>8} {'samples/s':>10} {'peak RSS MB':>12} "
       f"{'slots MB':>9} {'cache MB':>9} {'cache peak MB':>14} {'bound MB':>9} {'RSS/bound':>10}  within")
print(hdr)
print("-" * len(hdr))
ok = True
peaks = {}
for size in ("small", "big"):
    for order in ("chunk", "random"):
        r = load(f"{size}-{order}")
        bound = r["slot_bytes"] + r["cache_budget_bytes"] + slack
        ratio = r["peak_rss_bytes"] / bound
        within = r["peak_rss_bytes"] <= bound
        ok &= within
        peaks[(size, order)] = r["peak_rss_bytes"]
        samples = sum(e["samples"] for e in r["epoch"])
        print(f"{size:6} {order:7} {samples:8d} {r['samples_per_s']:10.0f} "
              f"{r['peak_rss_bytes'] / MB:12.1f} {r['slot_bytes'] / MB:9.1f} "
              f"{r['cache_budget_bytes'] / MB:9.1f} {r['cache_peak_bytes'] / MB:14.1f} "
              f"{bound / MB:9.1f} {ratio:10.2f}  {'yes' if within else 'NO'}")
print()
for order in ("chunk", "random"):
    growth = peaks[("big", order)] / peaks[("small", order)]
    good = growth <= RATIO_TARGET
    ok &= good
    print(f"peak RSS big/small, {order} order: {growth:.3f} (target <= {RATIO_TARGET}) "
          f"{'met' if good else 'MISSED'}")
print()
print("peak RSS: getrusage ru_maxrss of the bench_loader process (the file's page cache is not in it)")
print("memory targets met" if ok else "memory target missed")
sys.exit(0 if ok else 1)
PY
