#!/usr/bin/env bash
# A jpeg-layout file (one encoded image after another) in object storage, where the request
# rate is the limit: S3 answers 503 SlowDown beyond ~5,500 GETs a second on a prefix, scaled
# down here to --get-rate (200) a second. nginx serves the file through two proxy.py links of
# --latency-ms (20) each, one uncapped and one capped; in --rounds alternating rounds,
# gpufeed.Loader reads one epoch in chunk order (blocks of consecutive images, ~4 MiB a GET)
# and in random order (a GET an image) through each link, and the local file in both orders.
# Prints, and writes to --out, the figures and the targets (bench/s3/README.md, "The request
# rate"):
#   chunk order: >= 4 MiB a GET on average
#   chunk order through the capped link >= 0.9x through the uncapped one
#   local file: chunk order's images/s >= 0.95x random order's
#
#   BUILD=build/ci bench/s3/request_rate.sh [--images 8192] [--get-rate 200] [--latency-ms 20]
#       [--rounds 3] [--workers 2] [--batch 256] [--run-timeout 300]
#       [--out bench/s3/request_rate.json]
#
# Builds nothing: needs $BUILD/bin/h5pack and the package in $BUILD/python (the ci preset), run
# with build/venv/bin/python (Debian's torch). Installs nginx with apt-get if it is missing.
# Takes about 5 minutes on 2 cores.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
use_build ci h5pack

images=8192 get_rate=200 latency_ms=20 rounds=3 workers=2 batch=256 run_timeout=300
out=$here/request_rate.json
parse_options images get_rate latency_ms rounds workers batch run_timeout out -- "$@"
scratch_dir
source "$here/link.sh"
step "packing $images:224x224x3 images as JPEG (quality 90) in the jpeg layout"
"$BUILD/bin/h5pack" convert "$images:224x224x3" "$data_root/$bucket/photos.h5" --store jpeg >&2
local_file=$data_root/$bucket/photos.h5

start_nginx "$data_root"
start_proxy uncapped "$latency_ms"
uncapped=$endpoint
start_proxy capped "$latency_ms" "$get_rate"
capped=$endpoint

unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE AWS_DEFAULT_PROFILE
export AWS_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true AWS_SHARED_CREDENTIALS_FILE=/dev/null \
  AWS_CONFIG_FILE=/dev/null PYTHONWARNINGS=ignore

# epoch NAME ENDPOINT ARGS...: one gpufeed epoch through ENDPOINT, recorded as NAME.
epoch() {
  local name=$1 link=$2
  shift 2
  record "$name" env AWS_ENDPOINT_URL_S3="$link" PYTHONPATH="$BUILD/python" "$gpufeed_python" \
    "$here/gpufeed_epoch.py" --workers "$workers" --batch "$batch" --size 224x224 "$@"
}
remote=s3://$bucket/photos.h5
chunk_side() {
  epoch chunk_uncapped "$uncapped" --data "$remote" --order chunk
  epoch chunk_capped "$capped" --data "$remote" --order chunk
  epoch local_chunk "" --data "$local_file" --order chunk
}
random_side() {
  epoch random_uncapped "$uncapped" --data "$remote" --order random
  epoch random_capped "$capped" --data "$remote" --order random
  epoch local_random "" --data "$local_file" --order random
}
load_before=$(load_average)
for round in $(seq 1 "$rounds"); do
  step "round $round of $rounds"
  if [ $((round % 2)) = 1 ]; then chunk_side; random_side; else random_side; chunk_side; fi
done
load_after=$(load_average)
stop_proxies
mkdir -p "$(dirname "$out")"
/usr/bin/python3 "$here/request_rate_report.py" "$work" --out "$out" --images "$images" \
  --get-rate "$get_rate" --latency-ms "$latency_ms" --rounds "$rounds" --workers "$workers" \
  --batch "$batch" --load-before "$load_before" --load-after "$load_after"
