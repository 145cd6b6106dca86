#!/usr/bin/env bash
# workers=auto / prefetch=auto against the best fixed setting, measured in the same run.
#
#   BUILD=build/release bench/tune/run_autotune.sh
#
# For each case, one `pipebench sweep` over --workers "1,CORES/2,CORES,auto" and --prefetch
# "1,4,auto" (the auto/auto row is one row of the grid) finds the best row whose workers and
# prefetch are both fixed. On a shared machine one run of each row is noisy, and the best of
# several noisy rows is biased upwards, so that row and auto/auto are then run REPEAT more
# times each, alternating (auto first, then fixed first), and the ratio of their median
# samples/s is the result. Target: >= 0.95 in every case. The cases:
#   raw+model    the raw benchmark file (64x64x3, chunks of 64) feeding the `cnn` model
#   jpeg+model   a jpeg-layout file of photo-like pictures, crop-flip to 64x64, into `cnn`
#   raw+stall    the raw file with a read stall injected (read:20@2) and the `cnn` model
#   raw          the raw file with no training stage: the loader alone
# Builds nothing: expects $BUILD/bin/{h5pack,pipebench}. Knobs (environment): SAMPLES (12800),
# PHOTOS (2000), EPOCHS (3), REPEAT (3), WORKERS and PREFETCH (the swept lists), OUT (a
# directory to keep the runs' JSON in). About 15 minutes on 2 cores.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"

use_build release h5pack pipebench
scratch_dir
cores=$(nproc)
SAMPLES=${SAMPLES:-12800}
PHOTOS=${PHOTOS:-2000}
EPOCHS=${EPOCHS:-3}
REPEAT=${REPEAT:-3}
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
  local best
  best=$(/usr/bin/python3 - "$OUT/$name.json" <<'PY'
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["settings"] if r["error"] is None]
fixed = [r for r in rows if r["workers"] != "auto" and r["prefetch"] != "auto"]
best = max(fixed, key=lambda r: r["samples_per_s"])
print(best["workers"], best["prefetch"])
PY
)
  local workers=${best% *} prefetch=${best#* }
  step "$name: auto/auto against workers $workers, prefetch $prefetch, $REPEAT times each"
  for r in $(seq 1 "$REPEAT"); do
    local order="auto fixed"
    ((r % 2 == 0)) && order="fixed auto"
    for which in $order; do
      local w=auto p=auto
      [[ $which == fixed ]] && w=$workers p=$prefetch
      "$BUILD/bin/pipebench" run "$@" --workers "$w" --prefetch "$p" --epochs "$EPOCHS" \
        --batch 64 --progress off --json "$OUT/$name.$which.$r.json" >/dev/null
    done
  done
}

sweep raw+model --data "$work/raw.h5" --model cnn
sweep jpeg+model --data "$work/photos.h5" --size 64x64 --augment crop-flip --model cnn
sweep raw+stall --data "$work/raw.h5" --model cnn --inject-stall read:20@2
sweep raw --data "$work/raw.h5"

/usr/bin/python3 - "$OUT" "$REPEAT" <<'PY'
import json, statistics, sys
out, repeat = sys.argv[1], int(sys.argv[2])
print(f"{'case':<11} {'auto/auto':>10} {'best fixed':>11} {'(workers, prefetch)':>20} {'ratio':>6}"
      f" {'sweep ratio':>12}  auto's changes")
worst = None
for name in ("raw+model", "jpeg+model", "raw+stall", "raw"):
    rows = [r for r in json.load(open(f"{out}/{name}.json"))["settings"] if r["error"] is None]
    sweep_auto = [r for r in rows if r["workers"] == "auto" and r["prefetch"] == "auto"][0]
    fixed = [r for r in rows if r["workers"] != "auto" and r["prefetch"] != "auto"]
    best = max(fixed, key=lambda r: r["samples_per_s"])
    runs = {w: [json.load(open(f"{out}/{name}.{w}.{r}.json")) for r in range(1, repeat + 1)]
            for w in ("auto", "fixed")}
    rate = {w: statistics.median(j["samples_per_s"] for j in runs[w]) for w in runs}
    ratio = rate["auto"] / rate["fixed"]
    worst = ratio if worst is None else min(worst, ratio)
    last = runs["auto"][-1]["settings"]
    changes = len(last["tuning"])
    print(f"{name:<11} {rate['auto']:>10.0f} {rate['fixed']:>11.0f} "
          f"{'(%s, %s)' % (best['workers'], best['prefetch']):>20} {ratio:>6.2f} "
          f"{sweep_auto['samples_per_s'] / best['samples_per_s']:>12.2f}  "
          f"{changes} -> workers {last['workers']}, prefetch {last['prefetch']}")
print(f"worst ratio {worst:.2f} (target >= 0.95): {'met' if worst >= 0.95 else 'NOT met'}")
PY
