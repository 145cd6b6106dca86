#!/usr/bin/env bash
# workers=auto / prefetch=auto against the best fixed setting, measured in the same run.
#
#   BUILD=build/release bench/tune/run_autotune.sh
#
# For each case, one `pipebench sweep` over --workers "1,CORES/2,CORES,auto" and --prefetch
# "1,4,auto" (the auto/auto row is one row of the grid), then prints the auto/auto row's
# samples/s over the best row whose workers and prefetch are both fixed. Target: >= 0.95 in
# every case. The cases:
#   raw+model    the raw benchmark file (64x64x3, chunks of 64) feeding the `cnn` model
#   jpeg+model   a jpeg-layout file of photo-like pictures, crop-flip to 64x64, into `cnn`
#   raw+stall    the raw file with a read stall injected (read:20@2) and the `cnn` model
#   raw          the raw file with no training stage: the loader alone
# Builds nothing: expects $BUILD/bin/{h5pack,pipebench}. Knobs (environment): SAMPLES (12800),
# PHOTOS (2000), EPOCHS (3), WORKERS and PREFETCH (the swept lists), OUT (a directory to keep
# the sweeps' JSON in). About 6 minutes on 2 cores.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"

use_build release h5pack pipebench
scratch_dir
cores=$(nproc)
SAMPLES=${SAMPLES:-12800}
PHOTOS=${PHOTOS:-2000}
EPOCHS=${EPOCHS:-3}
WORKERS=${WORKERS:-$(printf '%s\n' 1 $((cores / 2)) "$cores" | sort -nu | paste -sd,),auto}
PREFETCH=${PREFETCH:-1,4,auto}
OUT=${OUT:-$work}
mkdir -p "$OUT"

step "packing $SAMPLES raw samples and $PHOTOS photos (load $(load_average))"
"$BUILD/bin/h5pack" convert "$SAMPLES:64x64x3" "$work/raw.h5" --chunk 64 >/dev/null
pack_photos "$BUILD/bin/h5pack" "$work/photos" "$PHOTOS" >/dev/null

sweep() {  # NAME PIPEBENCH-ARGS...
  local name=$1
  shift
  step "$name: sweep --workers $WORKERS --prefetch $PREFETCH (load $(load_average))"
  "$BUILD/bin/pipebench" sweep "$@" --workers "$WORKERS" --prefetch "$PREFETCH" \
    --epochs "$EPOCHS" --batch 64 --json "$OUT/$name.json" --csv "$OUT/$name.csv" >&2
}

sweep raw+model --data "$work/raw.h5" --model cnn
sweep jpeg+model --data "$work/photos.h5" --size 64x64 --augment crop-flip --model cnn
sweep raw+stall --data "$work/raw.h5" --model cnn --inject-stall read:20@2
sweep raw --data "$work/raw.h5"

/usr/bin/python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
print(f"{'case':<11} {'auto/auto':>10} {'best fixed':>11} {'(workers, prefetch)':>20} {'ratio':>6}")
worst = None
for name in ("raw+model", "jpeg+model", "raw+stall", "raw"):
    rows = [r for r in json.load(open(f"{out}/{name}.json"))["settings"] if r["error"] is None]
    auto = [r for r in rows if r["workers"] == "auto" and r["prefetch"] == "auto"]
    fixed = [r for r in rows if r["workers"] != "auto" and r["prefetch"] != "auto"]
    best = max(fixed, key=lambda r: r["samples_per_s"])
    ratio = auto[0]["samples_per_s"] / best["samples_per_s"]
    worst = ratio if worst is None else min(worst, ratio)
    print(f"{name:<11} {auto[0]['samples_per_s']:>10.0f} {best['samples_per_s']:>11.0f} "
          f"{'(%s, %s)' % (best['workers'], best['prefetch']):>20} {ratio:>6.2f}")
print(f"worst ratio {worst:.2f} (target >= 0.95): {'met' if worst >= 0.95 else 'NOT met'}")
PY
