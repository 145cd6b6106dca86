#!/usr/bin/env python3
"""S3 endpoints for the object-store client's tests: a real moto server, and a proxy in front of
one that fails requests on purpose.

  s3_server.py moto [--bucket NAME]... [--object BUCKET/KEY:SIZE]... [--auth] [--host ADDR]
      Starts moto's S3 on 127.0.0.1 (or ADDR; a free port) and prints its URL on one line. --auth then
      makes moto check every request's signature and permissions, and prints two more lines:
      "KEY SECRET" of a user allowed s3:*, and "KEY SECRET TOKEN" of a role session (temporary
      credentials). --object puts SIZE bytes (byte i is i % 251) at the key first, as objects
      cannot be uploaded once auth is on (moto checks a signed payload hash, uploads send
      UNSIGNED-PAYLOAD).

  s3_server.py proxy --target URL [--fault 503|500|403|reset|short|stall]
                     [--fail-first N | --every K] [--match TEXT] [--delay-ms MS]
                     [--only-nth N] [--get-rate N]
      Forwards requests to URL and fails those that match: the first N of each distinct
      request (method, path, query and Range: every attempt of one request counts), or every
      K-th; all of them by default. --only-nth N keeps the faults to the N-th distinct matching
      request (1-based; its attempts, and the same request sent again later). --match keeps the faults to requests whose
      "METHOD path?query" contains TEXT. Faults: 503 SlowDown, 500 InternalError and 403
      AccessDenied S3 error replies; reset (the connection reset before a reply); short (the
      reply's headers promise the whole body, half is sent, then the connection closes); stall
      (half the body, then nothing until the test ends). --delay-ms delays every request.
      --get-rate caps GETs as S3 caps a prefix (5,500 a second), scaled down: a token bucket of
      N a second (bursts of N/10) answers 503 SlowDown to the GETs beyond it. Prints its URL on
      one line; GET /proxy-stats on it answers {"gets": served, "refused": answered SlowDown}.

Both serve until standard input closes or SIGTERM.
"""
import argparse
import http.client
import http.server
import json
import logging
import signal
import socket
import struct
import sys
import threading
import time
import urllib.parse

ERRORS = {
    "503": (503, "SlowDown", "Please reduce your request rate."),
    "500": (500, "InternalError", "We encountered an internal error. Please try again."),
    "403": (403, "AccessDenied", "Access Denied"),
}
HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "te", "trailer",
              "transfer-encoding", "upgrade", "expect"}
ALLOW_S3 = json.dumps({"Version": "2012-10-17", "Statement": [
    {"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]})


def serve_until_closed(stop):
    """Blocks until stdin closes or SIGTERM, then runs stop()."""
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    while not done.wait(0.2):
        pass
    stop()


def announce(*lines):
    for line in lines:
        print(line)
    sys.stdout.flush()


def boto(service, url, key="setup", secret="setup", token=None):
    import boto3
    return boto3.client(service, endpoint_url=url, region_name="us-east-1",
                        aws_access_key_id=key, aws_secret_access_key=secret,
                        aws_session_token=token)


def make_identities(url):
    iam = boto("iam", url)
    iam.create_user(UserName="gpufeed")
    iam.put_user_policy(UserName="gpufeed", PolicyName="s3", PolicyDocument=ALLOW_S3)
    user = iam.create_access_key(UserName="gpufeed")["AccessKey"]
    trust = json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}]})
    role = iam.create_role(RoleName="reader", AssumeRolePolicyDocument=trust)["Role"]
    iam.put_role_policy(RoleName="reader", PolicyName="s3", PolicyDocument=ALLOW_S3)
    session = boto("sts", url).assume_role(RoleArn=role["Arn"], RoleSessionName="test")
    creds = session["Credentials"]
    return (f"{user['AccessKeyId']} {user['SecretAccessKey']}",
            f"{creds['AccessKeyId']} {creds['SecretAccessKey']} {creds['SessionToken']}")


def run_moto(args):
    from moto.server import ThreadedMotoServer
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per request
    server = ThreadedMotoServer(ip_address=args.host, port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    url = f"http://{host}:{port}"
    s3 = boto("s3", url)
    for bucket in args.bucket:
        s3.create_bucket(Bucket=bucket)
    for spec in args.object:
        path, _, size = spec.rpartition(":")
        bucket, _, key = path.partition("/")
        body = bytes(i % 251 for i in range(int(size)))
        s3.put_object(Bucket=bucket, Key=key, Body=body)
    lines = [url]
    if args.auth:
        lines += make_identities(url)
        conn = http.client.HTTPConnection(host, port)
        conn.request("POST", "/moto-api/reset-auth", body=b"0")
        conn.getresponse().read()
    announce(*lines)
    serve_until_closed(server.stop)


class GetRate:
    """S3's request-rate limit, scaled down: a token bucket of `rate` GETs a second."""

    def __init__(self, rate):
        self.rate = rate
        self.burst = max(1.0, rate / 10)
        self.tokens = self.burst
        self.at = time.monotonic()
        self.lock = threading.Lock()
        self.gets = 0
        self.refused = 0

    def admits(self):
        with self.lock:
            now = time.monotonic()
            self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
            self.at = now
            if self.tokens >= 1:
                self.tokens -= 1
                self.gets += 1
                return True
            self.refused += 1
            return False


class FaultPlan:
    """Which requests fail: thread-safe counts per distinct request."""

    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.seen = {}
        self.order = {}  # distinct request -> its place among them (1-based)
        self.matching = 0

    def fails(self, method, path, range_header):
        target = f"{method} {path}"
        if self.args.fault is None:
            return False
        if self.args.match and self.args.match not in target:
            return False
        with self.lock:
            self.matching += 1
            if self.args.every:
                return self.matching % self.args.every == 0
            key = (target, range_header)
            if key not in self.order:
                self.order[key] = len(self.order) + 1
            if self.args.only_nth and self.order[key] != self.args.only_nth:
                return False
            self.seen[key] = self.seen.get(key, 0) + 1
            return self.args.fail_first is None or self.seen[key] <= self.args.fail_first


def make_proxy_handler(args, plan, stopping, get_rate):
    upstream = urllib.parse.urlsplit(args.target)

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_):
            pass

        def handle_any(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            if args.delay_ms:
                stopping.wait(args.delay_ms / 1000)
            if self.command == "GET" and self.path == "/proxy-stats":
                counts = {"gets": get_rate.gets, "refused": get_rate.refused} if get_rate else {}
                data = json.dumps(counts).encode()
                return self.reply(200, "OK", [("Content-Type", "application/json"),
                                              ("Content-Length", str(len(data)))], data)
            if self.command == "GET" and get_rate and not get_rate.admits():
                return self.send_error_reply(*ERRORS["503"])
            if not plan.fails(self.command, self.path, self.headers.get("Range")):
                return self.reply(*self.forward(body))
            if args.fault in ERRORS:
                return self.send_error_reply(*ERRORS[args.fault])
            if args.fault == "reset":
                return self.reset()
            status, reason, headers, data = self.forward(body)
            if not data:  # nothing to cut short (HEAD, an empty object)
                return self.reply(status, reason, headers, data)
            self.reply(status, reason, headers, data[: len(data) // 2], close=True)
            if args.fault == "stall":
                stopping.wait(60)

        do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = handle_any

        def forward(self, body):
            conn = http.client.HTTPConnection(upstream.hostname, upstream.port, timeout=60)
            conn.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
            for name, value in self.headers.items():
                if name.lower() not in HOP_BY_HOP:
                    conn.putheader(name, value)
            conn.endheaders(body or None)
            response = conn.getresponse()
            data = response.read()
            headers = [(n, v) for n, v in response.getheaders() if n.lower() not in HOP_BY_HOP]
            conn.close()
            return response.status, response.reason, headers, data

        def reply(self, status, reason, headers, data, close=False):
            self.send_response(status, reason)
            for name, value in headers:
                self.send_header(name, value)
            if close:
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
            self.wfile.flush()

        def send_error_reply(self, status, code, message):
            xml = (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code>'
                   f"<Message>{message}</Message><RequestId>fault</RequestId></Error>").encode()
            headers = [("Content-Type", "application/xml"), ("Content-Length", str(len(xml)))]
            self.reply(status, code, headers, xml)

        def reset(self):
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       struct.pack("ii", 1, 0))
            self.close_connection = True
            self.connection.close()

        def finish(self):
            try:
                super().finish()
            except (OSError, ValueError):
                pass

    return Handler


class ProxyServer(http.server.ThreadingHTTPServer):
    request_queue_size = 512  # a client may open hundreds of connections at once, as S3 allows


def run_proxy(args):
    stopping = threading.Event()
    plan = FaultPlan(args)
    get_rate = GetRate(args.get_rate) if args.get_rate else None
    server = ProxyServer(("127.0.0.1", 0), make_proxy_handler(args, plan, stopping, get_rate))
    server.daemon_threads = True
    server.handle_error = lambda *_: None  # a client that went away mid-reply is no news
    threading.Thread(target=server.serve_forever, daemon=True).start()
    announce(f"http://127.0.0.1:{server.server_address[1]}")

    def stop():
        stopping.set()
        server.shutdown()

    serve_until_closed(stop)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    modes = parser.add_subparsers(dest="mode", required=True)
    moto = modes.add_parser("moto")
    moto.add_argument("--bucket", action="append", default=[])
    moto.add_argument("--object", action="append", default=[])
    moto.add_argument("--auth", action="store_true")
    moto.add_argument("--host", default="127.0.0.1", help="the address to serve on")
    proxy = modes.add_parser("proxy")
    proxy.add_argument("--target", required=True)
    proxy.add_argument("--fault", choices=["503", "500", "403", "reset", "short", "stall"])
    proxy.add_argument("--fail-first", type=int)
    proxy.add_argument("--every", type=int)
    proxy.add_argument("--only-nth", type=int)
    proxy.add_argument("--match", default="")
    proxy.add_argument("--delay-ms", type=int, default=0)
    proxy.add_argument("--get-rate", type=float, default=0, help="GETs a second, at most")
    args = parser.parse_args()
    if args.mode == "moto":
        run_moto(args)
    else:
        run_proxy(args)


if __name__ == "__main__":
    main()
