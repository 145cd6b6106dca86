#!/usr/bin/env bash
# A data-parallel job across two hosts on one machine, reading s3://, that survives a killed rank.
#
# Two network namespaces are the hosts ("host-a", "host-b"), each with its own hostname (a UTS
# namespace) and /etc/hosts (/etc/netns/NAME/hosts), joined through veth pairs to a bridge in
# the root namespace, where a real S3 server (moto) serves the dataset to both. On each host
# torchrun --nnodes=2 --nproc_per_node=2 --rdzv_backend=c10d --max_restarts=1 runs
# examples/python/train_ddp.py with a checkpoint every K steps; one rank of host-b SIGKILLs itself
# mid-epoch in the first attempt. torchrun restarts the group, every rank resumes from the
# checkpoint (model, optimizer, loader.state_dict()), and check_two_hosts.py asserts that the
# epoch delivered every sample, and more than once only the samples of the steps after the last
# checkpoint, which it counts and prints.
#
#   tests/multihost/two_hosts.sh PYTHON PYTHONPATH   (root; exits 77 = skipped without ip netns)
set -euo pipefail
python=${1:?usage: two_hosts.sh PYTHON PYTHONPATH}
export PYTHONPATH=${2:?usage: two_hosts.sh PYTHON PYTHONPATH}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null || ! command -v unshare >/dev/null; then
  echo "skipped: needs root, iproute2 (ip netns) and unshare"
  exit 77
fi
"$python" -c "import moto, torch.distributed" 2>/dev/null || {
  echo "skipped: $python lacks moto or torch.distributed"
  exit 77
}

tag=gf$$                       # unique names: parallel runs never collide
bridge=${tag}br
subnet=10.$(( $$ % 200 + 20 )).$(( ($$ / 200) % 250 + 1 ))
work=$(mktemp -d)
server_pid=""
cleanup() {
  set +e
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  for host in a b; do
    ip netns pids "${tag}-$host" 2>/dev/null | xargs -r kill -9
    ip netns del "${tag}-$host" 2>/dev/null
    rm -rf "/etc/netns/${tag}-$host"
  done
  ip link del "$bridge" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

# The network: a bridge at .1, host-a at .2, host-b at .3.
ip link add "$bridge" type bridge
ip addr add "$subnet.1/24" dev "$bridge"
ip link set "$bridge" up
hosts_file="$work/hosts"
printf '127.0.0.1 localhost\n%s.2 host-a\n%s.3 host-b\n' "$subnet" "$subnet" > "$hosts_file"
n=2
for host in a b; do
  ns="${tag}-$host"
  ip netns add "$ns"
  ip link add "${tag}$host" type veth peer name "${tag}${host}p"
  ip link set "${tag}${host}p" netns "$ns"
  ip link set "${tag}$host" master "$bridge" up
  ip -n "$ns" link set "${tag}${host}p" name eth0
  ip -n "$ns" addr add "$subnet.$n/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
  mkdir -p "/etc/netns/$ns"
  cp "$hosts_file" "/etc/netns/$ns/hosts"
  n=$((n + 1))
done

# The object store, on the bridge: reachable from both hosts.
coproc SERVER { "$python" "$repo/tests/common/s3_server.py" moto --bucket train --host "$subnet.1"; }
server_pid=$SERVER_PID
read -r endpoint <&"${SERVER[0]}"
case "$endpoint" in http://*) ;; *) echo "the S3 server did not start: $endpoint"; exit 1 ;; esac
export AWS_ENDPOINT_URL_S3=$endpoint AWS_ACCESS_KEY_ID=two-hosts AWS_SECRET_ACCESS_KEY=two-hosts \
  AWS_REGION=us-east-1
"$python" - "$work/train.h5" <<'EOF'
import sys
import gpufeed
gpufeed.write_synthetic(sys.argv[1], 3000, (16, 16, 3), chunk=50, seed=1)
gpufeed._native.upload_file(sys.argv[1], "s3://train/train.h5")
EOF

# The job: 2 hosts x 2 ranks, batch 25: 30 steps per epoch; a checkpoint every 8 steps; global
# rank 3 (host-b) dies at step 13 of the first attempt.
steps="$work/steps"
run_host() {  # NAME NODE_RANK ATTEMPT
  ip netns exec "${tag}-$1" unshare --uts sh -c "hostname host-$1 && exec \"\$@\"" sh \
    env GLOO_SOCKET_IFNAME=eth0 "$python" -m torch.distributed.run --nnodes=2 \
    --nproc_per_node=2 --node_rank="$2" --redirects 1 --tee 1 --rdzv_backend=c10d --rdzv_endpoint=host-a:29400 \
    --rdzv_id="$tag-$3" --max_restarts=1 --monitor_interval=1 \
    "$repo/examples/python/train_ddp.py" --data s3://train/train.h5 --epochs 1 --batch 25 \
    --workers 1 --device cpu --order chunk --checkpoint "$work/ckpt.pt" --checkpoint-every 8 \
    --log-steps "$steps" --kill-rank 3 --kill-step 13 > "$work/host-$1.log" 2>&1
}
run_job() {  # ATTEMPT: both hosts from a clean start; the exit status of the first that failed
  rm -rf "$work/ckpt.pt" "$steps"
  run_host a 0 "$1" &
  local host_a=$!
  run_host b 1 "$1" &
  local host_b=$!
  local status=0
  wait "$host_a" || status=$?
  wait "$host_b" || status=$?
  for host in a b; do
    echo "---- host-$host (attempt $1)"
    grep -v "^\s*$" "$work/host-$host.log" | tail -n 25
  done
  return "$status"
}
status=0
run_job 1 || status=$?
# torchrun's own agents can lose their rendezvous store on a loaded machine (an agent still
# polling it when the connection fails raises RendezvousConnectionError and takes its node
# down). That is torch elastic's fault, not the job's: it is run once more, and said so.
if [ "$status" -ne 0 ] && grep -q "RendezvousConnectionError" "$work"/host-*.log; then
  echo "torchrun lost its rendezvous store (RendezvousConnectionError): the job once more"
  status=0
  run_job 2 || status=$?
fi
[ "$status" -eq 0 ] || { echo "the job failed (exit $status)"; exit 1; }
"$python" "$here/check_two_hosts.py" "$steps" 3000 8
