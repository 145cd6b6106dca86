#!/usr/bin/env bash
# Runs every libFuzzer target of the fuzz preset for SECONDS each, on seeds made by the test
# generators (make_seeds.py) plus the corpus earlier runs kept (BUILD/corpus/TARGET), and prints
# a table: executions, executions per second, coverage (edges), corpus size, crashes. A crash, a
# sanitizer report, a leak or a hang leaves its input in BUILD/crashes/ and fails the run.
#
#   cmake --preset fuzz && cmake --build --preset fuzz
#   bench/fuzz/run_fuzzers.sh [SECONDS=60] [TARGETS="image_decode npy_header kineto_trace"]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-$root/build/fuzz}
seconds=${1:-60}
targets=${2:-image_decode npy_header kineto_trace}
seeds=$(mktemp -d)
trap 'rm -rf "$seeds"' EXIT
/usr/bin/python3 "$here/make_seeds.py" "$seeds" >/dev/null 2>&1 || {
  echo "run_fuzzers.sh: cannot make the seeds (needs /usr/bin/python3 with Pillow and NumPy)" >&2
  exit 1
}
mkdir -p "$BUILD/crashes"
status=0
printf '%-14s %12s %10s %8s %8s %8s  %s\n' target executions exec/s edges corpus crashes result
for target in $targets; do
  corpus="$BUILD/corpus/$target"
  mkdir -p "$corpus"
  log="$BUILD/fuzz_$target.log"
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
    "$BUILD/bin/fuzz_$target" "$corpus" "$seeds/$target" -max_total_time="$seconds" \
    -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$BUILD/crashes/$target-" >"$log" 2>&1
  rc=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
  speed=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$')
  edges=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*')
  files=$(find "$corpus" -type f | wc -l)
  crashes=$(find "$BUILD/crashes" -name "$target-*" -type f | wc -l)
  result=ok
  if [[ $rc -ne 0 || $crashes -ne 0 ]]; then
    result="FAILED (exit $rc; see $log)"
    status=1
  fi
  printf '%-14s %12s %10s %8s %8s %8s  %s\n' "$target" "${runs:-?}" "${speed:-?}" "${edges:-?}" \
    "$files" "$crashes" "$result"
done
exit $status
