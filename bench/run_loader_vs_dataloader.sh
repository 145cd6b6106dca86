#!/usr/bin/env bash
# The foundation target: gpufeed's Loader against the PyTorch DataLoader way on the same file,
# on this machine's CPUs, plus the Loader's float output rate against memcpy bandwidth.
#
#   BUILD=build/release bench/run_loader_vs_dataloader.sh
#
# Builds nothing: expects $BUILD/bin/{h5pack,bench_loader} (cmake --preset release &&
# cmake --build --preset release). In a temporary directory it packs a synthetic
# 20000:64x64x3 dataset with 64 samples per chunk (uncompressed, and gzip:4 for the gzip rows),
# then runs:
#   bench_loader --memcpy                          memcpy bandwidth, 1 thread and all threads
#   bench_loader --order random|chunk --workers 2  Loader, first epoch reported as warm-up
#   bench/dataloader_peer.py --workers 2           torch DataLoader, shuffle=True
# and prints samples/s, the ratio to the DataLoader (target >= 10x for both orders) and the
# ratio of float output bytes/s to memcpy bytes/s. Everything is measured in this run; nothing
# is compared with numbers from another machine. A few minutes on 2 cores.
#
# The 20000-sample dataset (246 MB decoded) fits the Loader's default 512 MiB chunk cache, so
# its steady epochs are served from memory; the "64 MiB cache" row shows random order when
# the cache cannot hold the dataset (about every second sample then costs a whole chunk read).
#
# Knobs (environment): SAMPLES (20000), WORKERS (2), BATCH (256), EPOCHS (20, incl. the
# warm-up epoch), SMALL_CACHE_EPOCHS (4), PEER_EPOCHS (5), PEER_SECONDS (40) and
# PEER_GZIP_SECONDS (20): time budgets of the DataLoader runs, PYTHON (/usr/bin/python3),
# KEEP_JSON=DIR (copy the raw JSON lines there).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

use_build release h5pack bench_loader
PYTHON=${PYTHON:-/usr/bin/python3}
SAMPLES=${SAMPLES:-20000}
WORKERS=${WORKERS:-2}
BATCH=${BATCH:-256}
EPOCHS=${EPOCHS:-20}
SMALL_CACHE_EPOCHS=${SMALL_CACHE_EPOCHS:-4}
PEER_EPOCHS=${PEER_EPOCHS:-5}
PEER_SECONDS=${PEER_SECONDS:-40}
PEER_GZIP_SECONDS=${PEER_GZIP_SECONDS:-20}

h5pack=$BUILD/bin/h5pack
bench_loader=$BUILD/bin/bench_loader
if ! "$PYTHON" -c 'import torch, h5py' 2>/dev/null; then
  echo "error: $PYTHON cannot import torch and h5py; install python3-torch python3-h5py (Debian) or set PYTHON" >&2
  exit 1
fi

scratch_dir

load_before=$(load_average)
step "packing ${SAMPLES}:64x64x3, 64 samples/chunk (none and gzip:4) in $work"
"$h5pack" convert "${SAMPLES}:64x64x3" "$work/raw.h5" --chunk 64 >/dev/null
"$h5pack" convert "${SAMPLES}:64x64x3" "$work/gzip.h5" --chunk 64 --compression gzip:4 >/dev/null

common=(--workers "$WORKERS" --batch "$BATCH" --epochs "$EPOCHS")
step "memcpy bandwidth"
"$bench_loader" --memcpy >"$work/memcpy.json"
step "Loader, raw, random order"
"$bench_loader" --data "$work/raw.h5" --order random "${common[@]}" >"$work/raw_random.json"
step "Loader, raw, chunk order"
"$bench_loader" --data "$work/raw.h5" --order chunk "${common[@]}" >"$work/raw_chunk.json"
step "Loader, raw, random order, 64 MiB cache (smaller than the dataset)"
"$bench_loader" --data "$work/raw.h5" --order random --cache-mb 64 --workers "$WORKERS" \
  --batch "$BATCH" --epochs "$SMALL_CACHE_EPOCHS" >"$work/raw_random_cache64.json"
step "Loader, gzip:4, random order"
"$bench_loader" --data "$work/gzip.h5" --order random "${common[@]}" >"$work/gzip_random.json"
step "Loader, gzip:4, chunk order"
"$bench_loader" --data "$work/gzip.h5" --order chunk "${common[@]}" >"$work/gzip_chunk.json"
step "PyTorch DataLoader, raw (${PEER_EPOCHS} epochs, at most ${PEER_SECONDS}s)"
"$PYTHON" "$here/dataloader_peer.py" --data "$work/raw.h5" --workers "$WORKERS" --batch "$BATCH" \
  --epochs "$PEER_EPOCHS" --max-seconds "$PEER_SECONDS" >"$work/peer_raw.json"
step "PyTorch DataLoader, gzip:4 (${PEER_EPOCHS} epochs, at most ${PEER_GZIP_SECONDS}s)"
"$PYTHON" "$here/dataloader_peer.py" --data "$work/gzip.h5" --workers "$WORKERS" --batch "$BATCH" \
  --epochs "$PEER_EPOCHS" --max-seconds "$PEER_GZIP_SECONDS" >"$work/peer_gzip.json"
load_after=$(load_average)

if [ -n "${KEEP_JSON:-}" ]; then
  mkdir -p "$KEEP_JSON"
  cp "$work"/*.json "$KEEP_JSON"/
fi

"$PYTHON" - "$work" "$load_before" "$load_after" <<'PY'
import json, os, sys
d, load_before, load_after = sys.argv[1:4]
def load(name):
    with open(os.path.join(d, name + ".json")) as f:
        return json.loads(f.read().strip().splitlines()[-1])
mem = load("memcpy")
peer = {"raw": load("peer_raw"), "gzip": load("peer_gzip")}
bw = mem["memcpy_bytes_per_s"]
rows = [
    ("raw, random order", "raw_random", "raw", True),
    ("raw, chunk order", "raw_chunk", "raw", True),
    ("raw, random, 64 MiB cache", "raw_random_cache64", "raw", False),
    ("gzip:4, random order", "gzip_random", "gzip", False),
    ("gzip:4, chunk order", "gzip_chunk", "gzip", False),
]
print()
print(f"memcpy: {mem['memcpy_bytes_per_s_1thread']/1e9:.2f} GB/s (1 thread), "
      f"{mem['memcpy_bytes_per_s_all_threads']/1e9:.2f} GB/s ({mem['threads']} threads); "
      f"peer: torch {peer['raw']['torch']}, {peer['raw']['workers']} workers, "
      f"{peer['raw']['torch_threads']} intra-op thread(s)")
print(f"{os.cpu_count()} CPUs; load average {load_before} before, {load_after} after "
      "(other work on the machine skews every figure)")
print()
hdr = (f"{'dataset / order':27} {'gpufeed/s':>10} {'DataLoader/s':>12} {'ratio':>7} "
       f"{'target':>9} {'warm-up/s':>10} {'ratio':>7} {'out GB/s':>8} {'out/memcpy':>10}")
print(hdr)
print("-" * len(hdr))
failed = []
for label, name, peer_key, targeted in rows:
    r = load(name)
    p = peer[peer_key]["samples_per_s"]
    ratio = r["samples_per_s"] / p if p > 0 else float("inf")
    target = ">= 10x" if targeted else "-"
    if targeted and ratio < 10:
        target += " NO"
        failed.append(label)
    warm = r["warmup_samples_per_s"]
    print(f"{label:27} {r['samples_per_s']:10.0f} {p:12.0f} {ratio:6.1f}x {target:>9} "
          f"{warm:10.0f} {warm / p:6.1f}x {r['output_bytes_per_s'] / 1e9:8.2f} "
          f"{r['output_bytes_per_s'] / bw:10.2f}")
print()
print("gpufeed/s: steady epochs (after the warm-up epoch); DataLoader/s: from its first batch on,")
print("same file, workers and batch size; warm-up/s: gpufeed's first epoch (cold chunk cache).")
print("out GB/s: float32 NCHW bytes delivered per second; out/memcpy: that over memcpy bandwidth.")
print("target met" if not failed else "target missed: " + ", ".join(failed))
PY
