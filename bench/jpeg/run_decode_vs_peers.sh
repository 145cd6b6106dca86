#!/usr/bin/env bash
# The jpeg-layout decode targets: the Loader decoding photo-like images into normalized 128x128
# float batches against (a) plain full-size decoding of the same files on the same threads
# (tjDecompress2 for JPEG: target >= 90%, above 100% where DCT scaling applies; libspng and
# libwebp for FORMAT png and webp, informative) and (b) the PyTorch DataLoader way with PIL
# (target >= 2.5x for JPEG); all in one run. The Loader and plain decoding alternate over ROUNDS
# rounds; the ratio is the median of the rounds' ratios (their range in brackets). AUGMENT
# (none, flip, crop-flip, center) is the Loader's --augment; the peers stay the same.
#
#   BUILD=build/release bench/jpeg/run_decode_vs_peers.sh [COUNT=300] [ROUNDS=5] [AUGMENT=none]
#       [FORMAT=jpeg|png|webp]
set -euo pipefail
source "$(dirname "$0")/../common.sh"
use_build release
count=${1:-300}
rounds=${2:-5}
augment=${3:-none}
format=${4:-jpeg}
scratch_dir
pack_photos "$BUILD/bin/h5pack" "$work/photos" "$count" "$format" >/dev/null
echo "load average before: $(load_average)"
ours=$("$BUILD/bin/bench_jpeg_decode" --data "$work/photos.h5" --size 128x128 --rounds "$rounds" \
  --augment "$augment")
peer=$(/usr/bin/python3 "$here/dataloader_jpeg_peer.py" --data "$work/photos.h5" --size 128x128)
echo "load average after:  $(load_average)"
/usr/bin/python3 - "$ours" "$peer" "$format" <<'PY'
import json, sys
ours, peer, fmt = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]
plain = {"jpeg": "tjDecompress2", "png": "libspng", "webp": "libwebp"}[fmt]
jpeg = fmt == "jpeg"
print(f"{fmt.upper()}; threads: {ours['workers']}; output {ours['size']} float32 NCHW; augment {ours['augment']}; "
      f"{ours['rounds']} rounds")
print(f"plain {plain + ', full size:':24} {ours['plain_decode_images_per_s']:.0f} images/s "
      f"({ours['plain_decode_megapixels_per_s']:.0f} Mpix/s)")
print(f"gpufeed Loader:                 {ours['loader_images_per_s']:.0f} images/s "
      f"= {100 * ours['loader_over_plain']:.0f}% of plain decode "
      f"[{100 * ours['loader_over_plain_min']:.0f}-{100 * ours['loader_over_plain_max']:.0f}%] "
      + ("(target >= 90%, > 100% with DCT scaling)" if jpeg else ""))
print(f"PyTorch DataLoader + PIL:       {peer['samples_per_s']:.0f} images/s "
      f"-> gpufeed is {ours['loader_images_per_s'] / peer['samples_per_s']:.2f}x"
      + (" (target >= 2.5x)" if jpeg else ""))
PY
