#!/usr/bin/env bash
# The Python package's targets, all measured in one run on this machine:
#   raw layout (20000:64x64x3, chunks of 64, batch 256, 2 workers, float32 NCHW):
#     gpufeed.Loader from Python >= 0.90x the C++ Loader (bench_loader), the two alternating
#     over ROUNDS rounds (median ratio, range in brackets), random and chunk order;
#     gpufeed.Loader from Python >= 10x the PyTorch DataLoader + h5py way (bench/dataloader_peer.py);
#   jpeg layout (photo-like JPEGs decoded to 128x128 float32 CHW, batch 64, 2 threads):
#     gpufeed.Loader >= 1.5x NVIDIA DALI's CPU-only pipeline (device_id=None) on the same images,
#     without and with random-resized-crop (+ flip), alternating over ROUNDS rounds.
#
#   BUILD=build/ci bench/python/run_python_vs_peers.sh
#
# Builds nothing: expects $BUILD/bin/{h5pack,bench_loader} and the package in $BUILD/python
# (cmake --preset ci && cmake --build --preset ci). Makes build/bench-venv (Debian's Python with
# its torch, h5py and Pillow, plus nvidia-dali-cuda130 from PyPI) on first use; DALI=0 skips the
# DALI rows. Knobs: ROUNDS (3), EPOCHS (6, incl. warm-up), PHOTOS (600), PEER_SECONDS (40).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
use_build ci h5pack bench_loader
ROUNDS=${ROUNDS:-3}
EPOCHS=${EPOCHS:-6}
PHOTOS=${PHOTOS:-600}
PEER_SECONDS=${PEER_SECONDS:-40}
DALI=${DALI:-1}
DALI_VERSION=2.4.0

[ -d "$BUILD/python/gpufeed" ] || { echo "error: no package in $BUILD/python; build the ci preset" >&2; exit 1; }
venv=$root/build/bench-venv
if [ ! -x "$venv/bin/python" ]; then
  /usr/bin/python3 -m venv --system-site-packages "$venv"
fi
if [ "$DALI" = 1 ] && ! "$venv/bin/python" -c "import nvidia.dali" 2>/dev/null; then
  echo "-- installing nvidia-dali-cuda130==$DALI_VERSION into $venv" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    "nvidia-dali-cuda130==$DALI_VERSION"
fi
python="$venv/bin/python"
export PYTHONPATH=$BUILD/python

scratch_dir
load_before=$(load_average)
step "packing 20000:64x64x3 (chunks of 64) and $PHOTOS photo-like JPEGs in $work"
"$BUILD/bin/h5pack" convert 20000:64x64x3 "$work/raw.h5" --chunk 64 >/dev/null
pack_photos "$BUILD/bin/h5pack" "$work/photos" "$PHOTOS" >/dev/null

for round in $(seq 1 "$ROUNDS"); do
  for order in random chunk; do
    step "round $round: raw, $order order: C++ Loader, then gpufeed.Loader from Python"
    "$BUILD/bin/bench_loader" --data "$work/raw.h5" --order "$order" --workers 2 --batch 256 \
      --epochs "$EPOCHS" >>"$work/cpp_$order.jsonl"
    "$python" "$here/python_loader.py" --data "$work/raw.h5" --order "$order" --workers 2 \
      --batch 256 --epochs "$EPOCHS" >>"$work/py_$order.jsonl"
  done
  if [ "$DALI" = 1 ]; then
    for augment in none crop-flip; do
      crop=(); [ "$augment" = crop-flip ] && crop=(--crop)
      step "round $round: jpeg 128x128, augment $augment: gpufeed.Loader, then DALI (CPU)"
      "$python" "$here/python_loader.py" --data "$work/photos.h5" --order random --workers 2 \
        --batch 64 --epochs 4 --size 128 --augment "$augment" >>"$work/py_jpeg_$augment.jsonl"
      "$python" "$here/dali_peer.py" --root "$work/photos" --size 128 --threads 2 --batch 64 \
        --epochs 4 "${crop[@]}" >>"$work/dali_$augment.jsonl"
    done
  fi
done
step "PyTorch DataLoader + h5py, raw (at most ${PEER_SECONDS}s)"
/usr/bin/python3 "$root/bench/dataloader_peer.py" --data "$work/raw.h5" --workers 2 --batch 256 \
  --epochs 5 --max-seconds "$PEER_SECONDS" >"$work/peer.json"
load_after=$(load_average)

"$python" - "$work" "$load_before" "$load_after" "$DALI" <<'PY'
import json, os, statistics, sys
work, load_before, load_after, dali = sys.argv[1:5]

def rates(name):
    with open(os.path.join(work, name)) as f:
        return [json.loads(line)["samples_per_s"] for line in f if line.strip()]

def ratio_row(label, ours, peer, target):
    ratios = [a / b for a, b in zip(ours, peer)]
    median = statistics.median(ratios)
    verdict = "met" if median >= target else "NOT met"
    print(f"{label:34} {statistics.median(ours):9.0f} {statistics.median(peer):9.0f} "
          f"{median:6.2f}x [{min(ratios):.2f}-{max(ratios):.2f}]  >= {target}x {verdict}")
    return median >= target

print(f"\n{os.cpu_count()} CPUs; load average {load_before} before, {load_after} after")
print(f"{'':34} {'ours/s':>9} {'peer/s':>9} {'ratio':>7}")
ok = True
for order in ("random", "chunk"):
    ok &= ratio_row(f"raw {order}: Python vs C++ Loader", rates(f"py_{order}.jsonl"),
                    rates(f"cpp_{order}.jsonl"), 0.90)
with open(os.path.join(work, "peer.json")) as f:
    peer = json.loads(f.read().strip().splitlines()[-1])["samples_per_s"]
for order in ("random", "chunk"):
    ours = rates(f"py_{order}.jsonl")
    ok &= ratio_row(f"raw {order}: Python vs DataLoader", ours, [peer] * len(ours), 10)
if dali == "1":
    for augment in ("none", "crop-flip"):
        ok &= ratio_row(f"jpeg 128, {augment}: vs DALI CPU", rates(f"py_jpeg_{augment}.jsonl"),
                        rates(f"dali_{augment}.jsonl"), 1.5)
print("all targets met" if ok else "a target was missed")
PY
