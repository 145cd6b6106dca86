#!/usr/bin/env bash
# Full-size decoding of JPEG, PNG and WebP photos to RGB: gpufeed's decoders (tjDecompress2,
# libspng, libwebp behind formats::ImageDecoder; bench_jpeg_decode --plain-only) against Pillow
# decoding the same bytes on the same number of workers (pillow_decode_peer.py; processes, as
# Pillow holds the GIL), target >= 1.0x for PNG and WebP. For each format the two alternate,
# one timed pass each per round after their own warm-up pass, so a change in the machine's load
# hits both; the ratio is the median of the rounds' ratios, their range in brackets.
#
#   BUILD=build/release bench/jpeg/run_formats_vs_pillow.sh [COUNT=200] [ROUNDS=7] [FORMATS="jpeg png webp"]
set -euo pipefail
source "$(dirname "$0")/../common.sh"
use_build release
count=${1:-200}
rounds=${2:-7}
formats=${3:-jpeg png webp}
workers=$(nproc)
scratch_dir
echo "load average before: $(load_average)"
for format in $formats; do
  pack_photos "$BUILD/bin/h5pack" "$work/$format" "$count" "$format"
  : >"$work/$format.rounds"
  for ((r = 0; r < rounds; ++r)); do
    ours=$("$BUILD/bin/bench_jpeg_decode" --data "$work/$format.h5" --workers "$workers" \
      --rounds 1 --plain-only 1)
    peer=$(/usr/bin/python3 "$here/pillow_decode_peer.py" --data "$work/$format.h5" \
      --workers "$workers" --rounds 1)
    echo "$ours $peer" >>"$work/$format.rounds"
  done
  rm -rf "${work:?}/$format"
done
echo "load average after:  $(load_average)"
/usr/bin/python3 - "$work" "$workers" "$rounds" $formats <<'PY'
import json, statistics, sys
work, workers, rounds, formats = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
print(f"{workers} workers, {rounds} rounds, full-size decode to RGB, images/s (Mpix/s)")
print(f"{'format':6} {'gpufeed':>18} {'Pillow':>18}  gpufeed / Pillow")
for fmt in formats:
    ours, peer = [], []
    decoder = json.JSONDecoder()
    for line in open(f"{work}/{fmt}.rounds"):
        a, end = decoder.raw_decode(line)
        b, _ = decoder.raw_decode(line[end:].lstrip())
        ours.append(a)
        peer.append(b)
    ratio = sorted(a["plain_decode_images_per_s"] / b["images_per_s"] for a, b in zip(ours, peer))
    med = lambda rows, key: statistics.median(r[key] for r in rows)
    target = "" if fmt == "jpeg" else "  (target >= 1.0x)"
    print(f"{fmt:6} {med(ours, 'plain_decode_images_per_s'):8.0f} ({med(ours, 'plain_decode_megapixels_per_s'):5.0f})"
          f"     {med(peer, 'images_per_s'):8.0f} ({med(peer, 'megapixels_per_s'):5.0f})"
          f"     {statistics.median(ratio):.2f}x [{ratio[0]:.2f}-{ratio[-1]:.2f}]{target}")
print(f"Pillow {peer[0]['pillow']}")
PY
