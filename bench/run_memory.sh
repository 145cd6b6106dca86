#!/usr/bin/env bash
# The memory target: reading a dataset larger than 4 GB, the Loader's peak resident memory
# stays under  slot_bytes + chunk cache budget + 200 MB  (slot_bytes: the batch slot pool the
# Loader reports; 200 MB: code, libraries, HDF5, the chunks workers hold and the order).
#
#   BUILD=build/release bench/run_memory.sh
#
# Builds nothing: expects $BUILD/bin/{h5pack,bench_loader}. Packs a synthetic
# 360000:64x64x3 file (4.4 GB, 64 samples per chunk, uncompressed) into a temporary directory
# in the first of $BIG_DIR, $TMPDIR, /var/tmp, /tmp, $BUILD with room for it (it says where,
# and stops if none has room), runs one epoch with --cache-mb 256 in chunk order and in random
# order, prints peak RSS against the bound with the ratio, and removes the file.
#
# Knobs (environment): SAMPLES (360000), CACHE_MB (256), WORKERS (2), BATCH (256),
# RANDOM_MAX_BATCHES (0 = the whole epoch; in random order most samples miss a 256 MiB
# cache and cost a whole chunk read, so that epoch takes about a minute on 2 cores),
# BIG_DIR (where to put the file).
# About 2-3 minutes on 2 cores, most of it packing the file and the random-order epoch.
set -euo pipefail

BUILD=${BUILD:-build/release}
PYTHON=${PYTHON:-/usr/bin/python3}
SAMPLES=${SAMPLES:-360000}
CACHE_MB=${CACHE_MB:-256}
WORKERS=${WORKERS:-2}
BATCH=${BATCH:-256}
RANDOM_MAX_BATCHES=${RANDOM_MAX_BATCHES:-0}
SLACK_BYTES=200000000  # 200 MB

h5pack=$BUILD/bin/h5pack
bench_loader=$BUILD/bin/bench_loader
for exe in "$h5pack" "$bench_loader"; do
  if [ ! -x "$exe" ]; then
    echo "error: $exe not found; build first (cmake --preset release && cmake --build --preset release) or set BUILD=<build dir>" >&2
    exit 1
  fi
done

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

tmp=$(mktemp -d "$dir/gpufeed-memory.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
file=$tmp/big.h5
echo "-- packing ${SAMPLES}:64x64x3 ($((raw_bytes / 1000000)) MB) into $file" >&2
t0=$(date +%s)
"$h5pack" convert "${SAMPLES}:64x64x3" "$file" --chunk 64 >/dev/null
echo "-- packed in $(($(date +%s) - t0)) s, $(du -h "$file" | cut -f1) on disk" >&2

common=(--data "$file" --workers "$WORKERS" --batch "$BATCH" --epochs 1 --cache-mb "$CACHE_MB")
echo "-- one epoch, chunk order, ${CACHE_MB} MiB cache" >&2
"$bench_loader" "${common[@]}" --order chunk >"$tmp/chunk.json"
echo "-- random order, ${CACHE_MB} MiB cache$([ "$RANDOM_MAX_BATCHES" -gt 0 ] && echo ", first $RANDOM_MAX_BATCHES batches")" >&2
"$bench_loader" "${common[@]}" --order random --max-batches "$RANDOM_MAX_BATCHES" \
  >"$tmp/random.json"
file_bytes=$(stat -c %s "$file")

"$PYTHON" - "$tmp" "$SLACK_BYTES" "$file_bytes" <<'PY'
import json, os, sys
d, slack, file_bytes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
MB = 1e6
print()
print(f"file: {file_bytes / 1e9:.2f} GB; bound = slot_bytes + cache budget + {slack / MB:.0f} MB")
hdr = (f"{'order':8} {'samples':>9} {'samples/s':>10} {'peak RSS MB':>12} {'slots MB':>9} "
       f"{'cache MB':>9} {'cache peak MB':>14} {'bound MB':>9} {'RSS/bound':>10}  within")
print(hdr)
print("-" * len(hdr))
ok = True
for order in ("chunk", "random"):
    with open(os.path.join(d, order + ".json")) as f:
        r = json.loads(f.read().strip().splitlines()[-1])
    bound = r["slot_bytes"] + r["cache_budget_bytes"] + slack
    ratio = r["peak_rss_bytes"] / bound
    within = r["peak_rss_bytes"] <= bound
    ok &= within
    samples = sum(e["samples"] for e in r["epoch"])
    print(f"{order:8} {samples:9d} {r['samples_per_s']:10.0f} {r['peak_rss_bytes'] / MB:12.1f} "
          f"{r['slot_bytes'] / MB:9.1f} {r['cache_budget_bytes'] / MB:9.1f} "
          f"{r['cache_peak_bytes'] / MB:14.1f} {bound / MB:9.1f} {ratio:10.2f}  "
          f"{'yes' if within else 'NO'}")
print()
print("peak RSS: getrusage ru_maxrss of the bench_loader process (the file's page cache is not in it)")
print("memory target met" if ok else "memory target missed")
PY
