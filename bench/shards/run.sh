#!/usr/bin/env bash
# 8 shards of one dataset against the same samples in one file, in one run on this machine (see
# bench/shards/README.md): the Loader's first epoch of each, from the local disk and from
# s3:// through bench/s3's link (nginx + a proxy adding --latency-ms to every request), in
# --rounds alternating rounds after one warm-up run of each; and the classes a batch holds in
# chunk order over the shards against a random permutation's. Also the GET log of a first
# epoch of jpeg-layout shards over the link (nginx's access log), which get_budget.py scales to
# a 64-GPU job.
#
#   BUILD=build/ci bench/shards/run.sh [--latency-ms 20] [--samples 40000] [--rounds 4]
#       [--shards 8] [--classes 1000] [--photos 1200] [--workers 2] [--batch 256]
#       [--run-timeout 300] [--out bench/shards/results.json]
#
# Builds nothing: needs $BUILD/bin/h5pack and the package in $BUILD/python (the ci preset).
# Installs nginx with apt-get if it is missing. About 3 minutes on 2 cores.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
use_build ci h5pack

latency_ms=20 samples=40000 rounds=4 shards=8 classes=1000 photos=1200 workers=2 batch=256
run_timeout=300 out=$here/results.json
parse_options latency_ms samples rounds shards classes photos workers batch run_timeout out -- "$@"

mine=$here
here=$root/bench/s3  # link.sh's proxy.py
scratch_dir
nginx_access_log=$work/access.log
source "$here/link.sh"

step "packing $samples:64x64x3 ($classes classes, chunks of 64) as one file and as $shards shards"
bucket_dir=$data_root/$bucket
"$BUILD/bin/h5pack" convert "$samples:64x64x3" "$bucket_dir/one.h5" --chunk 64 \
  --classes "$classes" >/dev/null
"$BUILD/bin/h5pack" convert "$samples:64x64x3" "$bucket_dir/shards" --chunk 64 \
  --classes "$classes" --shard-size $((samples * 12288 / shards)) >/dev/null
step "packing $photos photos (jpeg layout) as $shards shards, for the GET log"
/usr/bin/python3 "$root/bench/jpeg/make_photos.py" "$work/photos" --count "$photos" >/dev/null
photo_bytes=$(du -sb "$work/photos" | cut -f1)
"$BUILD/bin/h5pack" convert "$work/photos" "$bucket_dir/photos" --store jpeg \
  --shard-size $((photo_bytes / shards + 1)) >/dev/null

start_nginx "$data_root"
start_proxy proxy "$latency_ms"
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE AWS_DEFAULT_PROFILE
export AWS_ENDPOINT_URL_S3=$endpoint AWS_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true \
  AWS_SHARED_CREDENTIALS_FILE=/dev/null AWS_CONFIG_FILE=/dev/null PYTHONWARNINGS=ignore

epoch() {  # epoch NAME DATA: one first epoch, its JSON line appended to NAME.jsonl
  record "$1" env PYTHONPATH="$BUILD/python" "$gpufeed_python" "$here/gpufeed_epoch.py" \
    --workers "$workers" --batch "$batch" --data "$2"
}
side() {  # side one|shards: the local and the s3:// first epoch of one side
  local data=one.h5
  [ "$1" = shards ] && data=shards/
  epoch "$1_local$2" "$bucket_dir/$data"
  epoch "$1_s3$2" "s3://$bucket/$data"
}

step "warming up each side once (not counted)"
side one _warm
side shards _warm
load_before=$(load_average)
for round in $(seq 1 "$rounds"); do
  step "round $round"
  if [ $((round % 2)) = 1 ]; then side one ""; side shards ""
  else side shards ""; side one ""; fi
done
load_after=$(load_average)

step "classes per batch: chunk order over the shards against a random permutation"
PYTHONPATH="$BUILD/python" "$gpufeed_python" "$mine/label_mix.py" "$bucket_dir/shards/" \
  "$bucket_dir/one.h5" --batch "$batch" >"$work/label_mix.json"

step "the GET log of a first epoch of the photos' $shards jpeg-layout shards over the link"
: >"$nginx_access_log"
PYTHONPATH="$BUILD/python" "$gpufeed_python" "$here/gpufeed_epoch.py" --workers "$workers" \
  --batch 64 --size 64x64 --data "s3://$bucket/photos/" >"$work/photos_epoch.json"
sleep 0.5  # nginx writes its log as each request ends
cp "$nginx_access_log" "$work/photos_gets.log"

stop_proxies
mkdir -p "$(dirname "$out")"
"$gpufeed_python" "$mine/report.py" "$work" --out "$out" --latency-ms "$latency_ms" \
  --samples "$samples" --shards "$shards" --rounds "$rounds" --classes "$classes" \
  --load-before "$load_before" --load-after "$load_after" --photos "$photos"
cp "$work/photos_gets.log" "$(dirname "$out")/photos_gets.log"
"$gpufeed_python" "$mine/get_budget.py" "$work/photos_gets.log" \
  --epoch "$work/photos_epoch.json" --bucket "$bucket" --out "${out%.json}_budget.json"
