#!/usr/bin/env python3
"""What RESP's --max-query lets clients make a server hold.

For each strategy, starts `serve resp` (default limits) and opens N
clients that each send all but the last byte of one legitimate request as
large as the default query buffer allows: an MSET of 1 MiB values (the
default --max-bulk) totalling just under --max-query. None of them can
complete, so the server must hold every byte. Prints the server's
resident memory at start, with all N holding their partial requests
(peak), and 5 s after they disconnect; then checks one client sending
past --max-query is closed.

Usage (from the repository root, after `cargo build --release`):
    benches/query_memory.py [--clients 50] [--strategies a,b] [--bin PATH]
"""

import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (beside this script)

MIB = 1 << 20
MAX_QUERY = 16 * MIB
BULK = MIB


def partial_request():
    """An MSET of 1 MiB values just under MAX_QUERY, missing its last byte."""
    pairs = (MAX_QUERY - 64 * 1024) // (BULK + 64)
    parts = [f"*{1 + 2 * pairs}\r\n$4\r\nMSET\r\n".encode()]
    value = b"v" * BULK
    for i in range(pairs):
        key = f"k{i}".encode()
        parts.append(b"$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(key), key, BULK, value))
    whole = b"".join(parts)
    assert len(whole) < MAX_QUERY
    return whole[:-1]


def hold(addr, n, payload):
    host, port = addr.rsplit(":", 1)
    socks = []
    for _ in range(n):
        s = socket.create_connection((host, int(port)), timeout=30)
        s.sendall(payload)
        socks.append(s)
    return socks


def over_limit_closed(addr):
    """A client sending past --max-query is answered with an error and closed."""
    host, port = addr.rsplit(":", 1)
    s = socket.create_connection((host, int(port)), timeout=10)
    chunk = b"$%d\r\n" % BULK + b"x" * BULK + b"\r\n"
    head = b"*100\r\n$4\r\nMSET\r\n"
    try:
        s.sendall(head)
        for _ in range(MAX_QUERY // len(chunk) + 2):
            s.sendall(chunk)
    except OSError:
        pass
    try:
        got = s.recv(200)
    except OSError:
        got = b""
    s.close()
    return got


def main():
    ap = common.parser(__doc__)
    common.add_binary(ap)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--strategies", default="")
    args = ap.parse_args()
    common.require_binary(args.bin)
    payload = partial_request()
    print(f"{args.clients} clients, each holding {len(payload) / MIB:.1f} MiB of one request")
    print("| strategy | start | peak | 5 s after | past --max-query |")
    print("|---|---:|---:|---:|---|")
    for strategy in common.chosen_strategies(args.bin, args.strategies):
        server = common.Server(args.bin, "resp", strategy, "0-1")
        pid = server.p.pid
        start = common.rss_mib(pid)
        socks = hold(server.addr, args.clients, payload)
        time.sleep(1)
        peak = common.rss_mib(pid)
        for s in socks:
            s.close()
        time.sleep(5)
        after = common.rss_mib(pid)
        got = over_limit_closed(server.addr)
        server.stop()
        said = got.decode(errors="replace").strip() or "closed without a reply"
        print(f"| {strategy} | {start:.0f} MiB | {peak:.0f} MiB | {after:.0f} MiB | {said} |")


if __name__ == "__main__":
    main()
