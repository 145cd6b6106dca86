#!/usr/bin/env bash
# The Python loader from the wheel against the source build, on bench/python/python_loader.py:
# a venv with the wheel (it sees Debian's torch) and the build tree's package (build/venv,
# PYTHONPATH=build/ci/python), runs alternated, medians compared (target: the wheel >= 0.95x),
# and `import gpufeed` from the wheel (target: <= 0.3 s). Prints one JSON line.
#   bench/python/wheel_vs_source.sh [WHEEL] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
wheel=${1:-$(ls dist/gpufeed-*manylinux*.whl | head -1)}
rounds=${2:-5}
work=$PWD/build/bench-wheel
rm -rf "$work"
mkdir -p "$work"
/usr/bin/python3 -m venv --system-site-packages "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check --no-deps "$wheel"
"$work/venv/bin/python" -c \
  "import gpufeed; gpufeed.write_synthetic('$work/data.h5', 16384, (64, 64, 3))"
run() {  # $1: wheel|source -> samples/s
  local args=(bench/python/python_loader.py --data "$work/data.h5" --workers 2 --epochs 4)
  if [ "$1" = wheel ]; then
    "$work/venv/bin/python" "${args[@]}"
  else
    PYTHONPATH=build/ci/python build/venv/bin/python "${args[@]}"
  fi | python3 -c 'import json, sys; print(json.load(sys.stdin)["samples_per_s"])'
}
wheel_rates=() source_rates=()
for ((r = 0; r < rounds; r++)); do
  if ((r % 2 == 0)); then
    wheel_rates+=("$(run wheel)"); source_rates+=("$(run source)")
  else
    source_rates+=("$(run source)"); wheel_rates+=("$(run wheel)")
  fi
done
import_s=$(for _ in 1 2 3 4 5; do
  "$work/venv/bin/python" -c 'import time; t = time.perf_counter(); import gpufeed; print(time.perf_counter() - t)'
done | sort -n | head -1)
python3 - "$import_s" "${wheel_rates[*]}" "${source_rates[*]}" <<'PY'
import json, statistics, sys
import_s, wheel, source = float(sys.argv[1]), sys.argv[2].split(), sys.argv[3].split()
w, s = statistics.median(map(float, wheel)), statistics.median(map(float, source))
print(json.dumps({"benchmark": "wheel_vs_source", "wheel_samples_per_s": w,
                  "source_samples_per_s": s, "wheel_over_source": w / s, "target": ">= 0.95",
                  "import_s": import_s, "import_target": "<= 0.3"}))
PY
