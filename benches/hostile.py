#!/usr/bin/env python3
"""Never-reading clients against every strategy: what they cost the server.

For each strategy, two attacks on a fresh server (issue 16, docs/reliability.md):

- LIST: a board holding 200 topics of 32 KB names (a 6.5 MB LIST); N
  clients send LIST and never read.
- GET: a kv server holding a 1 MiB value; N clients pipeline 64 GETs of it
  and never read.

While each attack holds, a normal load runs beside it (`serverlab load
board`, 5 posters + 5 readers lock-step, or `serverlab load kv`, 4 at
once) and its p99 is reported. The server's resident memory is sampled
every 20 ms from /proc: its start (after the store is filled and one
reply read whole), its peak during the attack, and 5 s after the attackers
are reset (SO_LINGER 0). Each attacker keeps a 64 KiB receive buffer, so it
is the server, not the client's kernel, that must hold what is not read.

Usage: benches/hostile.py [--bin PATH] [--strategies a,b] [--silent 50]
                          [--json out.json] [--quick]
(from the repository root, after `cargo build --release`). The strategies
are the binary's own (`serve --help`). `--quick` runs a tiny version (a few
topics and attackers, short loads) to check the script itself.
"""

import argparse
import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from strategies import BIN, strategies  # noqa: E402  (the binary's own list, from `serve --help`)


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def start(binary, protocol, strategy):
    p = subprocess.Popen([binary, "serve", protocol, "--strategy", strategy,
                          "--addr", "127.0.0.1:0"], stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    m = re.search(r"listening on (\S+):(\d+)", line)
    if not m:
        p.kill()
        sys.exit(f"server did not start: {line!r}")
    # Keep reading its output, so it never blocks on a full pipe.
    threading.Thread(target=p.stdout.read, daemon=True).start()
    return p, (m.group(1), int(m.group(2)))


def connect(addr, rcvbuf=None):
    s = socket.socket()
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.connect(addr)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def recv_until(s, end):
    data = b""
    while end not in data:
        chunk = s.recv(1 << 20)
        if not chunk:
            raise RuntimeError("the server closed")
        data += chunk
    return data


def http(s, request, body_len):
    """Send one request; read its response (a head, then `body_len` bytes)."""
    s.sendall(request)
    data = recv_until(s, b"\r\n\r\n")
    head, rest = data.split(b"\r\n\r\n", 1)
    while len(rest) < body_len:
        rest += s.recv(1 << 20)
    return head


def fill_board(addr, topics, name_len):
    s = connect(addr)
    for i in range(topics):
        name = f"{i:03}".encode().ljust(name_len, b"n")
        s.sendall(b"POST@" + name + b"#m\0")
        recv_until(s, b"\0")
    s.sendall(b"LIST\0")
    recv_until(s, b"\0")
    return s


def fill_kv(addr, size):
    s = connect(addr)
    value = b"v" * size
    http(s, b"PUT /big HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % size + value, 0)
    http(s, b"GET /big HTTP/1.1\r\nHost: x\r\n\r\n", size)
    return s


def p99_ms(report):
    """The worst p99 over the load's operations, in ms."""
    ops = report["results"]["operations"]
    return max(op["latency_us"]["p99"] for op in ops if op["count"]) / 1000


def attack(args, strategy, protocol):
    binary = args.bin
    server, addr = start(binary, protocol, strategy)
    target = f"{addr[0]}:{addr[1]}"
    try:
        if protocol == "board":
            keep = fill_board(addr, args.topics, 32 * 1024)
            request = b"LIST\0"
            load = [binary, "load", "board", "--addr", target, "--duration",
                    f"{args.load_s}s"]
        else:
            keep = fill_kv(addr, 1 << 20)
            request = b"GET /big HTTP/1.1\r\nHost: x\r\n\r\n" * 64
            load = [binary, "load", "kv", "--addr", target, "--concurrency", "4",
                    "--sessions", str(args.kv_sessions)]
        start_kib = rss_kib(server.pid)
        silent = []
        for _ in range(args.silent):
            s = connect(addr, rcvbuf=64 * 1024)
            s.sendall(request)
            silent.append(s)
        with tempfile.NamedTemporaryFile(suffix=".json") as out:
            normal = subprocess.Popen(load + ["--json", out.name], stdout=subprocess.DEVNULL)
            peak = start_kib
            while normal.poll() is None:
                peak = max(peak, rss_kib(server.pid))
                time.sleep(0.02)
            if normal.returncode != 0:
                sys.exit(f"the normal load failed against {protocol}/{strategy}")
            report = json.load(open(out.name))
        for s in silent:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()
        time.sleep(5)
        after = rss_kib(server.pid)
        keep.close()
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    return {
        "strategy": strategy, "attack": "LIST" if protocol == "board" else "GET",
        "start_mib": start_kib / 1024, "peak_over_start_mib": (peak - start_kib) / 1024,
        "after_reset_over_start_mib": (after - start_kib) / 1024,
        "normal_p99_ms": p99_ms(report), "normal_requests": report["results"]["requests"],
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=BIN)
    ap.add_argument("--strategies")
    ap.add_argument("--silent", type=int, default=50, help="never-reading clients")
    ap.add_argument("--json")
    ap.add_argument("--quick", action="store_true", help="a tiny run, to check the script")
    args = ap.parse_args()
    args.topics, args.load_s, args.kv_sessions = 200, 3, 20000
    if args.quick:
        args.topics, args.load_s, args.kv_sessions, args.silent = 5, 1, 200, min(args.silent, 3)
    names = args.strategies.split(",") if args.strategies else strategies(args.bin)
    rows = []
    print(f"| strategy | attack ({args.silent} never read) | start MiB | peak over start MiB "
          "| 5 s after reset, over start MiB | normal p99 ms |")
    print("|---|---|---:|---:|---:|---:|")
    for strategy in names:
        for protocol in ("board", "kv"):
            r = attack(args, strategy, protocol)
            rows.append(r)
            print(f"| {r['strategy']} | {r['attack']} | {r['start_mib']:.1f} "
                  f"| {r['peak_over_start_mib']:.1f} | {r['after_reset_over_start_mib']:.1f} "
                  f"| {r['normal_p99_ms']:.2f} |", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
