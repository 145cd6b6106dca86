#!/usr/bin/python3
"""A TCP proxy that adds a fixed latency to every request: a 20 ms link on loopback.

    proxy.py --upstream 127.0.0.1:8080 --latency-ms 20 --port-file port.txt [--get-rate N]

What the delay models. Each client connection gets its own upstream connection (so HTTP
keep-alive works end to end) and two pumps. A connection is in one of two turns: the client's
(sending a request) or the server's (sending a response). The first bytes the client sends in
its turn (the start of a request) are held for --latency-ms before they go upstream; the rest
of that request, and the whole response, pass without delay. The server's first byte back
hands the turn back to the client. So every request/response exchange on a connection pays
the latency once: it is the round-trip time of the link, charged on the way out. A new
connection pays it once more before its first request (--connect-ms, default the latency: the
TCP handshake's round trip). Requests on different connections wait concurrently, as on a
real link; a client that keeps N requests in flight on N connections sees N per RTT.

--get-rate N caps GETs as S3 caps a prefix (~5,500 GETs a second, answering 503 SlowDown
beyond): a token bucket of N a second (bursts of N/10). A GET beyond it is answered by the proxy
itself, after the latency, with S3's SlowDown error, and never reaches the server; the
connection stays open. The counters then include "refused".

What it does not model: bandwidth (bytes move at loopback speed, bounded by this process's
copying), TCP slow start, the bandwidth-delay product, loss, TLS. HTTP pipelining (several
requests sent before the first response) pays the latency once per turn, not per request.
The proxy runs on the same cores as the clients, so copying the bytes costs CPU a real link
would not; the parallel ranged-GET peer measures what this link moves at most.

Prints one JSON line of counters on stdout when stopped (SIGTERM or SIGINT).
"""
import argparse
import asyncio
import json
import os
import signal

BUFFER = 256 << 10
SLOW_DOWN_BODY = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
                  b"<Message>Please reduce your request rate.</Message></Error>")
SLOW_DOWN = (b"HTTP/1.1 503 Slow Down\r\nContent-Type: application/xml\r\nContent-Length: "
             + str(len(SLOW_DOWN_BODY)).encode() + b"\r\n\r\n" + SLOW_DOWN_BODY)


class GetRate:
    """A token bucket of `rate` GETs a second, bursts of a tenth of a second's."""

    def __init__(self, rate):
        self.rate = rate
        self.burst = max(1.0, rate / 10)
        self.tokens = self.burst
        self.at = None

    def admits(self, now):
        if self.at is not None:
            self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


class Link:
    """Counters of the whole proxy; one asyncio task per pump, all on one thread."""

    def __init__(self, upstream, latency_s, connect_s, get_rate=None):
        self.host, port = upstream.rsplit(":", 1)
        self.port = int(port)
        self.latency_s = latency_s
        self.connect_s = connect_s
        self.connections = 0
        self.requests = 0
        self.bytes_up = 0
        self.bytes_down = 0
        self.get_rate = get_rate
        self.refused = 0

    async def serve(self, client_reader, client_writer):
        self.connections += 1
        if self.connect_s > 0:
            await asyncio.sleep(self.connect_s)
        try:
            server_reader, server_writer = await asyncio.open_connection(self.host, self.port)
        except OSError:
            client_writer.close()
            return
        turn = {"client": True}
        up = asyncio.ensure_future(
            self.pump_up(client_reader, server_writer, client_writer, turn))
        try:  # the connection lives as long as the server's side of it
            await self.pump_down(server_reader, client_writer, turn)
        finally:
            up.cancel()
            for writer in (client_writer, server_writer):
                writer.close()

    async def pump_up(self, reader, writer, client_writer, turn):
        pending = b""  # a capped GET's start, until its headers are whole (GETs have no body)
        try:
            while data := await reader.read(BUFFER):
                if not pending and not (turn["client"] and self.get_rate
                                        and data.startswith(b"GET ")):
                    await self.forward(data, writer, turn)
                    continue
                pending += data
                while (end := pending.find(b"\r\n\r\n")) >= 0:
                    request, pending = pending[: end + 4], pending[end + 4:]
                    if self.get_rate.admits(asyncio.get_running_loop().time()):
                        await self.forward(request, writer, turn)
                    else:
                        self.refused += 1
                        await asyncio.sleep(self.latency_s)  # the round trip to be refused
                        client_writer.write(SLOW_DOWN)
                        await client_writer.drain()
                    if pending and not pending.startswith(b"GET "):
                        await self.forward(pending, writer, turn)
                        pending = b""
            writer.write_eof()  # the client is done sending: tell the server, keep its answer
        except OSError:
            writer.close()  # the client is gone: drop the server's side too

    async def forward(self, data, writer, turn):
        if turn["client"]:
            turn["client"] = False
            self.requests += 1
            await asyncio.sleep(self.latency_s)
        self.bytes_up += len(data)
        writer.write(data)
        await writer.drain()

    async def pump_down(self, reader, writer, turn):
        try:
            while data := await reader.read(BUFFER):
                turn["client"] = True
                self.bytes_down += len(data)
                writer.write(data)
                await writer.drain()
        except OSError:
            pass

    def counters(self):
        return {"connections": self.connections, "requests": self.requests,
                "refused": self.refused,
                "bytes_up": self.bytes_up, "bytes_down": self.bytes_down,
                "latency_ms": self.latency_s * 1e3, "connect_ms": self.connect_s * 1e3}


async def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--upstream", required=True, help="HOST:PORT of the server")
    ap.add_argument("--listen", default="127.0.0.1", help="address to listen on (loopback)")
    ap.add_argument("--port", type=int, default=0, help="0: any free port")
    ap.add_argument("--port-file", help="write the port here once listening")
    ap.add_argument("--latency-ms", type=float, default=20.0)
    ap.add_argument("--connect-ms", type=float, default=None, help="default: --latency-ms")
    ap.add_argument("--get-rate", type=float, default=0,
                    help="GETs a second, at most (503 SlowDown beyond); 0: no cap")
    args = ap.parse_args()
    connect_ms = args.latency_ms if args.connect_ms is None else args.connect_ms
    link = Link(args.upstream, args.latency_ms / 1e3, connect_ms / 1e3,
                GetRate(args.get_rate) if args.get_rate > 0 else None)
    server = await asyncio.start_server(link.serve, args.listen, args.port, limit=BUFFER)
    port = server.sockets[0].getsockname()[1]
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as f:
            f.write(f"{port}\n")
        os.replace(args.port_file + ".tmp", args.port_file)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    async with server:
        await stop.wait()
    print(json.dumps(link.counters()), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
