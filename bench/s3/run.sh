#!/usr/bin/env bash
# gpufeed reading s3://bucket/key over a slow link, against what else reads the same samples
# there, all in one run on this machine (see bench/s3/README.md):
#   nginx serves ROOT/BUCKET/KEY (path-style S3 URLs, byte ranges, keep-alive, sendfile) on a
#   free loopback port; proxy.py in front of it adds --latency-ms to every request; then, in
#   --rounds alternating rounds: gpufeed.Loader on s3:// (first epoch; a first epoch filling
#   cache_dir; an epoch from cache_dir; and the local file), h5py ROS3 + DataLoader, h5py + s3fs + DataLoader, MosaicML Streaming
#   (first epoch, MDS shards of the same samples), and parallel ranged GETs of every chunk.
#
#   BUILD=build/ci bench/s3/run.sh [--latency-ms 20] [--samples 100000] [--rounds 3]
#       [--workers 2] [--batch 256] [--in-flight 64] [--slow-samples 2048] [--slow-seconds 30]
#       [--run-timeout 300] [--out bench/s3/results.json]
#
# Builds nothing: needs $BUILD/bin/h5pack and the package in $BUILD/python (the ci preset).
# Installs nginx with apt-get if it is missing (as root), and makes build/s3-bench-venv
# (Debian's Python with its torch and h5py, plus bench/s3/requirements.txt) on first use.
# Takes about 4 minutes on 2 cores (the two slow peers take 54 s a round).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
use_build ci h5pack

latency_ms=20 samples=100000 rounds=3 workers=2 batch=256 in_flight=64
slow_samples=2048 slow_seconds=30 run_timeout=300 out=$here/results.json
parse_options latency_ms samples rounds workers batch in_flight slow_samples slow_seconds run_timeout out -- "$@"

# --- the peers' venv -------------------------------------------------------------------
venv=$root/build/s3-bench-venv
python=$venv/bin/python
if ! cmp -s "$here/requirements.txt" "$venv/requirements.txt" 2>/dev/null; then
  step "installing bench/s3/requirements.txt into $venv"
  [ -x "$python" ] || /usr/bin/python3 -m venv --system-site-packages "$venv"
  # Keep Debian's torch, numpy and h5py (what the peers and ROS3 need): pip must not replace them.
  /usr/bin/python3 -c 'import torch, numpy, h5py
for m in (torch, numpy, h5py): print(f"{m.__name__}=={m.__version__}")' >"$venv/constraints.txt"
  "$python" -m pip install --quiet --disable-pip-version-check -c "$venv/constraints.txt" \
    -r "$here/requirements.txt"
  cp "$here/requirements.txt" "$venv/requirements.txt"
fi

# --- data: the h5 file and its MDS shards, under the bucket nginx serves --------------------
scratch_dir
source "$here/link.sh"
step "packing $samples:64x64x3 (chunks of 64) and its MDS shards in $work"
"$BUILD/bin/h5pack" convert "$samples:64x64x3" "$data_root/$bucket/data.h5" --chunk 64 >&2
"$python" "$here/make_mds.py" "$data_root/$bucket/data.h5" "$data_root/$bucket/mds" 2>/dev/null >&2

# --- nginx + the delaying proxy, stopped on exit --------------------------------------------
start_nginx "$data_root"
start_proxy proxy "$latency_ms"

# Every S3 client goes through the proxy, unsigned, with nothing read from ~/.aws and no
# instance-metadata probe.
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE AWS_DEFAULT_PROFILE
export AWS_ENDPOINT_URL_S3=$endpoint AWS_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true \
  AWS_SHARED_CREDENTIALS_FILE=/dev/null AWS_CONFIG_FILE=/dev/null
export PYTHONWARNINGS=ignore TRANSFORMERS_VERBOSITY=error

# --- the rounds --------------------------------------------------------------------------
local_file=$data_root/$bucket/data.h5
peer() {  # peer NAME ARGS...
  local name=$1
  shift
  record "${name//-/_}" "$python" "$here/peers.py" "$name" --endpoint "$endpoint" \
    --local "$local_file" --workers "$workers" --batch "$batch" "$@"
}
gpufeed() {  # gpufeed NAME ARGS...
  local name=$1
  shift
  record "gpufeed_$name" env PYTHONPATH="$BUILD/python" "$gpufeed_python" \
    "$here/gpufeed_epoch.py" --workers "$workers" --batch "$batch" "$@"
}
gpufeed_side() {
  step "round $1: gpufeed s3:// (first epoch; filling cache_dir; from cache_dir), local file"
  rm -rf "$work/gpufeed-cache"
  gpufeed s3 --data "s3://$bucket/data.h5"
  gpufeed filling --data "s3://$bucket/data.h5" --cache-dir "$work/gpufeed-cache"
  gpufeed cached --data "s3://$bucket/data.h5" --cache-dir "$work/gpufeed-cache"
  gpufeed local --data "$local_file"
  rm -rf "$work/gpufeed-cache"
}
peers_side() {
  step "round $1: parallel ranged GETs, MosaicML Streaming, h5py ROS3, h5py + s3fs"
  peer ranged-get --key "$bucket/data.h5" --in-flight "$in_flight"
  rm -rf "$work/streaming-cache"
  peer streaming --key "$bucket/mds" --cache "$work/streaming-cache" --seed "$1"
  rm -rf "$work/streaming-cache"
  peer ros3 --key "$bucket/data.h5" --max-samples "$slow_samples" --max-seconds "$slow_seconds" \
    --seed "$1"
  peer s3fs --key "$bucket/data.h5" --max-samples "$slow_samples" --max-seconds "$slow_seconds" \
    --seed "$1"
}

load_before=$(load_average)
for round in $(seq 1 "$rounds"); do
  if [ $((round % 2)) = 1 ]; then gpufeed_side "$round"; peers_side "$round"
  else peers_side "$round"; gpufeed_side "$round"; fi
done
load_after=$(load_average)

stop_proxies
mkdir -p "$(dirname "$out")"
"$python" "$here/report.py" "$work" --out "$out" --latency-ms "$latency_ms" \
  --samples "$samples" --sample-shape 64x64x3 --rounds "$rounds" --workers "$workers" \
  --batch "$batch" --in-flight "$in_flight" --slow-samples "$slow_samples" \
  --slow-seconds "$slow_seconds" --load-before "$load_before" --load-after "$load_after" \
  --nginx-version "$("$nginx" -v 2>&1 | sed 's/.*nginx\///')" --proxy "$(cat "$work/proxy.json")"
