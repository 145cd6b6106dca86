#!/usr/bin/env bash
# JPEG decode throughput of two builds on the same file in one run, for a change that must not
# slow JPEG down: bench_jpeg_decode of OLD_BUILD and NEW_BUILD alternate, ROUNDS times (each a
# warm-up pass and one timed pass of plain full-size decoding and of the Loader). Prints both
# builds' medians and the median of the rounds' new / old ratios, their range in brackets.
#
#   bench/jpeg/run_before_after.sh OLD_BUILD NEW_BUILD [COUNT=300] [ROUNDS=7] [AUGMENT=none]
set -euo pipefail
source "$(dirname "$0")/../common.sh"
old=${1:?usage: run_before_after.sh OLD_BUILD NEW_BUILD [COUNT] [ROUNDS] [AUGMENT]}
new=${2:?usage: run_before_after.sh OLD_BUILD NEW_BUILD [COUNT] [ROUNDS] [AUGMENT]}
count=${3:-300}
rounds=${4:-7}
augment=${5:-none}
scratch_dir
pack_photos "$new/bin/h5pack" "$work/photos" "$count" >/dev/null
echo "load average before: $(load_average)"
for ((r = 0; r < rounds; ++r)); do
  for build in "$old" "$new"; do
    "$build/bin/bench_jpeg_decode" --data "$work/photos.h5" --rounds 1 --augment "$augment" \
      >>"$work/$([[ $build == "$old" ]] && echo old || echo new).rounds"
  done
done
echo "load average after:  $(load_average)"
/usr/bin/python3 - "$work" "$count" "$rounds" "$augment" <<'PY'
import json, statistics, sys
work, count, rounds, augment = sys.argv[1:]
old = [json.loads(line) for line in open(f"{work}/old.rounds")]
new = [json.loads(line) for line in open(f"{work}/new.rounds")]
print(f"{count} JPEGs, {old[0]['workers']} threads, {rounds} rounds, Loader 128x128 augment {augment}")
for key, what in (("plain_decode_images_per_s", "plain full-size decode"),
                  ("loader_images_per_s", "Loader")):
    ratio = sorted(b[key] / a[key] for a, b in zip(old, new))
    print(f"{what:24} before {statistics.median(r[key] for r in old):6.0f} images/s   "
          f"after {statistics.median(r[key] for r in new):6.0f} images/s   "
          f"after / before {statistics.median(ratio):.3f} [{ratio[0]:.3f}-{ratio[-1]:.3f}]")
PY
