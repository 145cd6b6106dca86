#!/usr/bin/env bash
# Runs every libFuzzer target of the fuzz preset for SECONDS each, on seeds made by the test
# generators (make_seeds.py) plus the corpus earlier runs kept (BUILD/corpus/TARGET), and prints
# a table: executions, executions per second, coverage (edges), corpus size, crashes. A crash, a
# sanitizer report, a leak or a hang leaves its input in BUILD/crashes/ and fails the run.
#
# HDF5 is not instrumented, and damaged files reach defects of its own (README.md, "Found in
# HDF5"). A report whose code is HDF5's in every stack it shows (the faulting code and, for a bad
# access, the code that allocated the memory; for an out-of-memory, the largest allocation) is
# HDF5's: its input goes to BUILD/crashes/hdf5/, it is counted in the "hdf5" column, and the
# target fuzzes on for the rest of its time. It does not fail the run.
#
#   cmake --preset fuzz && cmake --build --preset fuzz
#   bench/fuzz/run_fuzzers.sh [SECONDS=60] [TARGETS="image_decode npy_header kineto_trace
#                                                    hdf5_reader idx_cifar cli"]
set -uo pipefail
source "$(dirname "$0")/../common.sh"
use_build fuzz
seconds=${1:-60}
targets=${2:-image_decode npy_header kineto_trace hdf5_reader idx_cifar cli}
scratch_dir
seeds=$work
/usr/bin/python3 "$here/make_seeds.py" "$seeds" >/dev/null 2>&1 || {
  echo "run_fuzzers.sh: cannot make the seeds (needs /usr/bin/python3 with Pillow, NumPy, h5py)" >&2
  exit 1
}
mkdir -p "$BUILD/crashes/hdf5"

# Prints "hdf5" when the sanitizer or libFuzzer report in the log on stdin is HDF5's own: in each
# stack the first frame of code that is not the runtime's (libFuzzer, sanitizers, libc, the C++
# library) is in libhdf5. For an out-of-memory only the first stack (the largest allocation)
# counts.
report_owner() {
  awk '
    /ERROR: (AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|libFuzzer)|runtime error:/ {
      report = 1; if ($0 ~ /out-of-memory/) oom = 1
    }
    !report { next }
    /^    #0 / { decided = 0; stacks++ }
    /^    #[0-9]+ / && !decided && !(oom && stacks > 1) {
      if ($0 ~ /libhdf5/) { decided = 1; hdf5++ }
      else if ($0 ~ /gpufeed::|LLVMFuzzerTestOneInput|\/tests\/fuzz\/fuzz_[a-z0-9_]+\.cpp/) {
        decided = 1; ours++
      }
    }
    END { print (hdf5 > 0 && ours == 0) ? "hdf5" : "gpufeed" }'
}

max_len() {
  case $1 in
    cli) echo 4096 ;;  # command lines: a few hundred bytes
    *) echo 65536 ;;
  esac
}

status=0
printf '%-14s %12s %10s %8s %8s %8s %6s  %s\n' target executions exec/s edges corpus crashes hdf5 \
  result
for target in $targets; do
  corpus="$BUILD/corpus/$target"
  mkdir -p "$corpus"
  log="$BUILD/fuzz_$target.log"
  : >"$log"
  runs=0 hdf5=0 rc=0
  start=$SECONDS
  while left=$((start + seconds - SECONDS)); ((left > 0)); do
    part=$(mktemp)
    ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
      "$BUILD/bin/fuzz_$target" "$corpus" "$seeds/$target" -max_total_time="$left" \
      -timeout=10 -rss_limit_mb=2048 -max_len="$(max_len "$target")" -print_final_stats=1 \
      -artifact_prefix="$BUILD/crashes/$target-" >"$part" 2>&1
    rc=$?
    cat "$part" >>"$log"
    n=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$part" | grep -o '[0-9]*$' | tail -1)
    runs=$((runs + ${n:-0}))
    unit=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$part" | tail -1)
    if [[ $rc -ne 0 && -n $unit && -f $unit && $(report_owner <"$part") == hdf5 ]]; then
      mv "$unit" "$BUILD/crashes/hdf5/"
      hdf5=$((hdf5 + 1))
      rc=0
      rm -f "$part"
      continue
    fi
    rm -f "$part"
    break
  done
  elapsed=$((SECONDS - start))
  speed=$((runs / (elapsed > 0 ? elapsed : 1)))
  edges=$(grep -o 'cov: [0-9]*' "$log" | grep -o '[0-9]*' | sort -n | tail -1)
  files=$(find "$corpus" -type f | wc -l)
  crashes=$(find "$BUILD/crashes" -maxdepth 1 -name "$target-*" -type f | wc -l)
  result=ok
  if [[ $rc -ne 0 || $crashes -ne 0 ]]; then
    result="FAILED (exit $rc; see $log)"
    status=1
  fi
  printf '%-14s %12s %10s %8s %8s %8s %6s  %s\n' "$target" "$runs" "$speed" "${edges:-?}" \
    "$files" "$crashes" "$hdf5" "$result"
done
exit $status
