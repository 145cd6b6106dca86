#!/usr/bin/env bash
# Packing in parallel and from tar shards, in one run on this machine (see
# bench/shards/README.md): h5pack convert of a folder of photo-like JPEGs into shards by one
# process against two (--part 0/2 and 1/2 at once), each with one worker thread, on 2 cores;
# and the same images as WebDataset tar shards (--from webdataset, libarchive) against the
# folder, every core each. --rounds alternating rounds after one warm-up run of each side. The
# machine's own peer: two CPU-bound processes (a Python loop) against one, in the same rounds:
# the most two processes can gain here while others share the cores. --store jpeg copies the
# images' bytes (the pack is I/O-bound: reading, writing, fsync); --store raw decodes and
# resizes each (to --size), as CPU-bound as packing gets.
#
#   BUILD=build/ci bench/shards/pack.sh [--photos 600] [--tars 4] [--rounds 4]
#       [--store jpeg|raw] [--size 256x256] [--out bench/shards/pack.json]
#
# Builds nothing: needs $BUILD/bin/h5pack. About 3 minutes on 2 cores.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
use_build ci h5pack

photos=600 tars=4 rounds=4 store=jpeg size=256x256 out=$here/pack.json
parse_options photos tars rounds store size out -- "$@"
store_flags=(--store "$store")
[ "$store" = raw ] && store_flags+=(--size "$size")
scratch_dir
h5pack=$BUILD/bin/h5pack

step "making $photos photos and the same images as $tars WebDataset tar shards"
/usr/bin/python3 "$root/bench/jpeg/make_photos.py" "$work/photos" --count "$photos" >/dev/null
/usr/bin/python3 "$here/make_tars.py" "$work/photos" "$work/tars" --shards "$tars"
photo_bytes=$(du -sb "$work/photos" | cut -f1)
shard_size=$((photo_bytes / 4 + 1))
[ "$store" = raw ] && shard_size=$((photos * ${size%x*} * ${size#*x} * 3 / 4 + 1))

seconds() {  # seconds NAME COMMAND...: the command's wall time appended to NAME.txt
  local name=$1 t0 t1
  shift
  t0=$(date +%s.%N)
  "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc >>"$work/$name.txt"
}
one_process() {
  rm -rf "$work/out1"
  seconds "one_process$1" "$h5pack" convert "$work/photos" "$work/out1" --shard-size "$shard_size" \
    --workers 1 "${store_flags[@]}"
}
two_processes() {
  rm -rf "$work/out2"
  seconds "two_processes$1" bash -c "'$h5pack' convert '$work/photos' '$work/out2' \
    --shard-size $shard_size --workers 1 ${store_flags[*]} --part 0/2 & '$h5pack' convert \
    '$work/photos' '$work/out2' --shard-size $shard_size --workers 1 ${store_flags[*]} \
    --part 1/2; wait"
  [ -s "$work/out2/manifest.json" ] || { echo "error: the parts wrote no manifest" >&2; exit 1; }
}
folder() {
  rm -f "$work/folder.h5"
  seconds "folder$1" "$h5pack" convert "$work/photos" "$work/folder.h5" --store jpeg
}
tar_shards() {
  rm -f "$work/tars.h5"
  seconds "tars$1" "$h5pack" convert "$work/tars" "$work/tars.h5" --from webdataset
}

busy='s = 0
for i in range(8000000): s += i'
machine() {  # two CPU-bound processes against one: what the cores give two processes now
  seconds "machine_one$1" /usr/bin/python3 -c "$busy"
  seconds "machine_two$1" bash -c "/usr/bin/python3 -c '$busy' & /usr/bin/python3 -c '$busy'; wait"
}

step "warming up each side once (not counted)"
one_process _warm; two_processes _warm; folder _warm; tar_shards _warm
load_before=$(load_average)
for round in $(seq 1 "$rounds"); do
  step "round $round"
  if [ $((round % 2)) = 1 ]; then one_process ""; two_processes ""; folder ""; tar_shards ""
  else two_processes ""; one_process ""; tar_shards ""; folder ""; fi
  machine ""
done
load_after=$(load_average)

/usr/bin/python3 - "$work" "$out" "$photos" "$photo_bytes" "$load_before" "$load_after" \
  "$store" <<'PY'
import json, os, statistics, sys
work, out, photos, photo_bytes, before, after, store = sys.argv[1:]
def runs(name):
    return [float(line) for line in open(os.path.join(work, name + ".txt"))]
one, two, folder, tars = (runs(n) for n in ("one_process", "two_processes", "folder", "tars"))
m_one, m_two = runs("machine_one"), runs("machine_two")
speedup = statistics.median(one) / statistics.median(two)
# Two busy processes do twice one's work: their speedup is 2 x one's time / two's.
machine = 2 * statistics.median(m_one) / statistics.median(m_two)
tar_ratio = statistics.median(folder) / statistics.median(tars)
result = {"photos": int(photos), "photo_bytes": int(photo_bytes), "load_before": before,
          "load_after": after, "store": store,
          "machine": {"one_s": m_one, "two_s": m_two, "two_process_speedup": machine},
          "parts": {"one_process_s": one, "two_processes_s": two, "speedup": speedup,
                    "round_speedups": [o / t for o, t in zip(one, two)]},
          "tar_vs_folder": {"folder_s": folder, "tars_s": tars, "ratio": tar_ratio,
                            "round_ratios": [f / t for f, t in zip(folder, tars)]}}
print(f"{photos} photos ({int(photo_bytes) / 1e6:.0f} MB, --store {store}): 2 processes (--part) vs "
      f"1, one worker each: {speedup:.2f}x ({statistics.median(one):.1f} s vs "
      f"{statistics.median(two):.1f} s); two busy loops vs one here: {machine:.2f}x")
print(f"tar shards vs the folder: {tar_ratio:.3f}x ({statistics.median(tars):.1f} s vs "
      f"{statistics.median(folder):.1f} s)")
os.makedirs(os.path.dirname(out), exist_ok=True)
json.dump(result, open(out, "w"), indent=1)
PY
