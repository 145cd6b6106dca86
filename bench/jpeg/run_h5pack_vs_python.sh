#!/usr/bin/env bash
# h5pack convert --from imagefolder --store jpeg against a single-process h5py + Pillow script
# (pack_peer.py) on the same folder of photo-like JPEGs. Both decode every image once (to
# validate it and compute the per-channel mean/std) and write the jpeg layout of schema v1.
# Prints the wall-clock and cpu (user + sys) time of each whole command, Python's imports
# included (medians of ROUNDS, alternating, page cache warm), and the ratios; then checks
# h5pack's output with h5dump -H and h5py.
#
#   bench/jpeg/run_h5pack_vs_python.sh [H5PACK_BINARY] [COUNT=300] [ROUNDS=5]
set -euo pipefail
source "$(dirname "$0")/../common.sh"

python=/usr/bin/python3
h5pack=${1:-}
if [[ -z "$h5pack" ]]; then
  h5pack=$(ls -t "$root"/build/*/bin/h5pack 2>/dev/null | head -n 1 || true)
fi
count=${2:-300}
rounds=${3:-5}
if [[ ! -x /usr/bin/time ]]; then
  echo "run_h5pack_vs_python: needs GNU time (apt-get install time)" >&2
  exit 2
fi
if [[ ! -x "$h5pack" ]]; then
  echo "run_h5pack_vs_python: no h5pack binary; build it or pass its path" >&2
  exit 2
fi
if ! "$python" -c 'import PIL, h5py, numpy' 2>/dev/null; then
  echo "run_h5pack_vs_python: needs python3-pil, python3-h5py and python3-numpy" \
       "(apt-get install python3-pil python3-h5py)" >&2
  exit 2
fi

scratch_dir
"$python" "$here/make_photos.py" "$work/photos" --count "$count"
cat "$work"/photos/*/* > /dev/null  # both read from the page cache

# timed OUT_FILE COMMAND...: appends "wall cpu" seconds of the whole command to OUT_FILE.
timed() {
  local out=$1
  shift
  /usr/bin/time -f '%e %U %S' -o "$work/time" "$@"
  awk '{ printf "%s %.3f\n", $1, $2 + $3 }' "$work/time" >> "$out"
}
for ((r = 0; r < rounds; ++r)); do
  timed "$work/peer.times" "$python" "$here/pack_peer.py" "$work/photos" "$work/peer.h5" \
    > "$work/peer.log"
  timed "$work/ours.times" "$h5pack" convert "$work/photos" "$work/ours.h5" \
    --from imagefolder --store jpeg > "$work/ours.log"
done
# median COLUMN FILE
median() { sort -g -k "$1" "$2" | awk -v c="$1" '{ a[NR] = $c } END { print a[int((NR + 1) / 2)] }'; }
peer=$(median 1 "$work/peer.times")
ours=$(median 1 "$work/ours.times")
peer_cpu=$(median 2 "$work/peer.times")
ours_cpu=$(median 2 "$work/ours.times")

echo "machine: $(nproc) cores, load average $(load_average)"
echo "images:  $count photo-like JPEGs, $(du -sh "$work/photos" | cut -f1)"
cat "$work/ours.log" "$work/peer.log"
printf 'h5pack convert (all cores):   %.3f s wall, %.3f s cpu  (medians of %d)\n' \
  "$ours" "$ours_cpu" "$rounds"
printf 'h5py + Pillow (one process):  %.3f s wall, %.3f s cpu  (medians of %d)\n' \
  "$peer" "$peer_cpu" "$rounds"
awk -v p="$peer" -v o="$ours" -v pc="$peer_cpu" -v oc="$ours_cpu" 'BEGIN {
  printf "ratio: %.2fx wall-clock (target >= 1.8x); %.2fx less cpu time\n", p / o, pc / oc }'
echo "--- h5dump -H (datasets of h5pack's file)"
h5dump -H "$work/ours.h5" | grep -E 'DATASET|DATATYPE|DATASPACE' | sed 's/^ */  /'
echo "--- h5py check"
"$python" - "$work/ours.h5" "$work/peer.h5" "$work/photos" <<'PY'
import io, os, sys
import h5py, numpy as np
from PIL import Image
ours, peer, photos = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r"), sys.argv[3]
assert ours.attrs["gpufeed.layout"] in ("jpeg", b"jpeg") and ours.attrs["gpufeed.schema"] == 1
offsets, data = ours["jpeg/offsets"][:], ours["jpeg/bytes"]
n = len(offsets) - 1
assert offsets[0] == 0 and np.all(np.diff(offsets.astype(np.int64)) > 0) and offsets[-1] == data.shape[0]
for name in ("jpeg/offsets", "jpeg/shapes", "labels"):
    assert np.array_equal(ours[name][:], peer[name][:]), name + " differs from the peer's"
assert np.array_equal(data[:], peer["jpeg/bytes"][:]), "the bytes differ from the peer's"
names = [s.decode() if isinstance(s, bytes) else s for s in ours["meta/class_names"][:]]
first = sorted(os.listdir(os.path.join(photos, names[0])))[0]
with open(os.path.join(photos, names[0], first), "rb") as f:
    assert f.read() == data[offsets[0]:offsets[1]].tobytes(), "sample 0 is not the first file"
image = Image.open(io.BytesIO(data[offsets[n - 1]:offsets[n]].tobytes()))
image.load()
assert tuple(ours["jpeg/shapes"][n - 1]) == (image.height, image.width, len(image.getbands()))
assert np.allclose(ours["meta/mean"][:], peer["meta/mean"][:], atol=1e-3)
assert np.allclose(ours["meta/std"][:], peer["meta/std"][:], atol=1e-3)
print("ok: %d samples; bytes, offsets, shapes, labels equal the peer's; mean %s std %s"
      % (n, np.round(ours["meta/mean"][:], 2).tolist(), np.round(ours["meta/std"][:], 2).tolist()))
PY
