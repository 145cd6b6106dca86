# Sourced by the bench/s3 scripts, after ../common.sh and scratch_dir: nginx serving a folder on
# loopback as S3 serves a bucket (path-style URLs http://127.0.0.1:PORT/BUCKET/KEY, byte ranges,
# keep-alive, sendfile), and proxy.py links in front of it (a latency per request, optionally a
# GET-rate cap). Everything started here stops when the script exits.
#
#   start_nginx ROOT                      serves ROOT; sets $nginx (the binary) and $nginx_port;
#                                         with $nginx_access_log set (a file), logs each request
#                                         there: method, URI, status, Range, body bytes
#   start_proxy NAME LATENCY_MS [RATE]    a proxy.py link to nginx: sets $endpoint to its URL;
#                                         its counters go to $work/NAME.json when it stops
#   stop_proxies                          stops every proxy (their counters written)
#   wait_for_file FILE WHAT               waits until a starting server wrote FILE
#   record NAME COMMAND...                one measurement, its JSON line appended to
#                                         $work/NAME.jsonl (needs $run_timeout)
#
# It also sets $bucket (bench), $data_root (served by start_nginx: $data_root/$bucket/KEY is
# s3://bench/KEY; made here) and $gpufeed_python (build/venv's, which sees Debian's torch, else
# /usr/bin/python3).

bucket=bench
data_root=$work/root
mkdir -p "$data_root/$bucket"
gpufeed_python=$root/build/venv/bin/python
[ -x "$gpufeed_python" ] || gpufeed_python=/usr/bin/python3

proxy_pids=()
nginx_pid=
stop_proxies() {
  local pid
  for pid in "${proxy_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${proxy_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  proxy_pids=()
}
link_cleanup() {
  stop_proxies
  if [ -n "$nginx_pid" ]; then kill "$nginx_pid" 2>/dev/null || true; fi
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap link_cleanup EXIT

free_port() {
  /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start_nginx() {
  local data_root=$1
  if ! command -v nginx >/dev/null && [ ! -x /usr/sbin/nginx ]; then
    [ "$(id -u)" = 0 ] || { echo "error: nginx is not installed (apt-get install nginx)" >&2; exit 1; }
    step "installing nginx (Debian package)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null
  fi
  nginx=$(command -v nginx || echo /usr/sbin/nginx)
  nginx_port=$(free_port)
  mkdir -p "$work/nginx"
  cat >"$work/nginx/nginx.conf" <<CONF
daemon off;
user root;
worker_processes 1;
pid $work/nginx/nginx.pid;
error_log stderr warn;
events { worker_connections 1024; }
http {
  log_format requests '\$request_method \$uri \$status "\$http_range" \$body_bytes_sent';
  access_log ${nginx_access_log:-off}${nginx_access_log:+ requests};
  log_not_found off;
  default_type application/octet-stream;
  sendfile on;
  tcp_nopush on;
  tcp_nodelay on;
  keepalive_timeout 300s;
  keepalive_requests 1000000;
  client_body_temp_path $work/nginx/tmp;
  proxy_temp_path $work/nginx/tmp;
  fastcgi_temp_path $work/nginx/tmp;
  uwsgi_temp_path $work/nginx/tmp;
  scgi_temp_path $work/nginx/tmp;
  server {
    listen 127.0.0.1:$nginx_port;
    root $data_root;
    location / { }
  }
}
CONF
  "$nginx" -p "$work/nginx" -c "$work/nginx/nginx.conf" -e stderr &
  nginx_pid=$!
}

# wait_for_file FILE WHAT: until FILE has something in it (10 s at most, else WHAT did not
# start: the script stops).
wait_for_file() {
  for _ in $(seq 100); do
    [ -s "$1" ] && return 0
    sleep 0.1
  done
  echo "error: $2 did not start" >&2
  exit 1
}

start_proxy() {
  local name=$1 latency=$2 rate=${3:-0} port_file=$work/$1.port
  /usr/bin/python3 "$here/proxy.py" --upstream "127.0.0.1:$nginx_port" --latency-ms "$latency" \
    --get-rate "$rate" --port-file "$port_file" >"$work/$name.json" &
  proxy_pids+=($!)
  wait_for_file "$port_file" "proxy $name"
  endpoint=http://127.0.0.1:$(cat "$port_file")
  for _ in $(seq 100); do
    curl -s -o /dev/null "$endpoint/.probe" && break  # any answer: nginx and the proxy are up
    sleep 0.1
  done
  curl -s -o /dev/null "$endpoint/.probe" || { echo "error: nginx or proxy $name did not come up" >&2; exit 1; }
  step "proxy $name ($latency ms a request${3:+, $rate GETs/s at most}) at $endpoint"
}

# record NAME COMMAND...: runs one measurement (at most --run-timeout seconds) and appends its
# JSON line to NAME.jsonl; a run that fails, crashes or hangs appends {"error": ...} instead.
record() {
  local name=$1 rc=0
  shift
  timeout "$run_timeout" "$@" >"$work/run.out" 2>"$work/run.err" || rc=$?
  if [ "$rc" = 0 ] && [ -s "$work/run.out" ]; then
    cat "$work/run.out" >>"$work/$name.jsonl"
  else
    [ "$rc" = 124 ] && echo "timed out after $run_timeout s" >>"$work/run.err"
    /usr/bin/python3 -c 'import json, sys; print(json.dumps({"error": sys.argv[1]}))' \
      "exit $rc: $(tail -1 "$work/run.err")" >>"$work/$name.jsonl"
  fi
}
