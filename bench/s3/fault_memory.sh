#!/usr/bin/env bash
# Memory under faults: an epoch of a raw file in object storage whose server fails requests
# (a connection reset, a 500 InternalError, a reply cut short, 503 SlowDown: every --every-th
# GET, each kind in its own run) against the same epoch through the same proxy without
# faults. Retried ranges must not pile up: in --rounds alternating rounds, gpufeed.Loader's
# peak resident memory above what the process held before the Loader (Python, torch) is
# compared. Prints, and writes to --out, the figures and the target (bench/s3/README.md,
# "Memory under faults"):
#   the Loader's peak memory with faults <= 1.10x without, for every kind of fault
# and that every faulty epoch delivered the clean epoch's batches (the same checksum).
#
#   BUILD=build/ci bench/s3/fault_memory.sh [--samples 20000] [--every 10] [--rounds 3]
#       [--workers 2] [--batch 256] [--run-timeout 300] [--out bench/s3/fault_memory.json]
#
# Builds nothing: needs $BUILD/bin/h5pack and the package in $BUILD/python (the ci preset), run
# with build/venv/bin/python (Debian's torch). The proxy is the tests' (tests/common/
# s3_server.py proxy) in front of nginx. Installs nginx with apt-get if it is missing. Takes
# about 4 minutes on 2 cores.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
use_build ci h5pack

samples=20000 every=10 rounds=3 workers=2 batch=256 run_timeout=300
out=$here/fault_memory.json
parse_options samples every rounds workers batch run_timeout out -- "$@"
scratch_dir
source "$here/link.sh"
step "packing $samples samples of 64x64x3 (raw layout)"
"$BUILD/bin/h5pack" convert "$samples:64x64x3" "$data_root/$bucket/data.h5" >&2
start_nginx "$data_root"

# tests_proxy NAME ARGS...: the tests' proxy in front of nginx; sets $endpoint.
tests_proxy() {
  local name=$1
  shift
  /usr/bin/python3 "$root/tests/common/s3_server.py" proxy \
    --target "http://127.0.0.1:$nginx_port" "$@" <"$work/stdin" >"$work/$name.url" &
  proxy_pids+=($!)
  wait_for_file "$work/$name.url" "proxy $name"
  endpoint=$(head -1 "$work/$name.url")
  step "proxy $name ($*) at $endpoint"
}
mkfifo "$work/stdin"
exec 3<>"$work/stdin"  # the proxies serve until it closes (at exit)
kinds=(reset 500 short 503)
tests_proxy clean
clean=$endpoint
declare -A faulty
for kind in "${kinds[@]}"; do
  tests_proxy "$kind" --fault "$kind" --every "$every" --match GET
  faulty[$kind]=$endpoint
done

unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE AWS_DEFAULT_PROFILE
export AWS_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true AWS_SHARED_CREDENTIALS_FILE=/dev/null \
  AWS_CONFIG_FILE=/dev/null PYTHONWARNINGS=ignore

epoch() {
  local name=$1 link=$2
  record "$name" env AWS_ENDPOINT_URL_S3="$link" PYTHONPATH="$BUILD/python" "$gpufeed_python" \
    "$here/gpufeed_epoch.py" --workers "$workers" --batch "$batch" --data "s3://$bucket/data.h5"
}
load_before=$(load_average)
for round in $(seq 1 "$rounds"); do
  step "round $round of $rounds"
  epoch clean "$clean"
  for kind in "${kinds[@]}"; do epoch "fault_$kind" "${faulty[$kind]}"; done
  [ $((round % 2)) = 0 ] || epoch clean "$clean"  # each side first as often
done
load_after=$(load_average)
exec 3>&-
stop_proxies
mkdir -p "$(dirname "$out")"
/usr/bin/python3 "$here/fault_memory_report.py" "$work" --out "$out" --kinds "${kinds[@]}" \
  --samples "$samples" --every "$every" --rounds "$rounds" --workers "$workers" \
  --batch "$batch" --load-before "$load_before" --load-after "$load_after"
