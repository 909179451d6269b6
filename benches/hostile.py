#!/usr/bin/env python3
"""Hostile clients against every strategy: what a normal client sees, and
what the server holds (docs/reliability.md, "Measuring").

Attacks (each against a fresh server, pinned to --server-cpu; the attack
and the normal client run on --client-cpu):

  slowloris      N connections each trickling a board request one byte a
                 second, never finishing it. Meanwhile `load board`
                 (lock-step, persistent connections) and a fresh-connection
                 probe (connect, COUNT, close, one after another).
  idle           N idle board connections held open (the server runs with
                 --max-connections N+100). Meanwhile the same normal client
                 and probe.
  never-reading  N kv clients each pipelining GETs of a 1 MiB value and
                 never reading. Peak resident memory while they hold on,
                 and 5 s after they reset their connections; meanwhile
                 `load kv` and the probe.
  list           a board holding 200 topics of 32 KB names (a 6.5 MB
                 LIST); N clients send LIST and never read. Peak and
                 after-reset memory, the normal board client and the probe.

Resident memory is sampled every 20 ms while the attack holds (the peak is
the largest sample). The never-reading attackers keep a 64 KiB receive
buffer, so it is the server, not the client's kernel, that must hold what
they do not read.

Prints, per attack and strategy, the normal client's p99 (and the
probe's), the server's CPU use during the attack, and its resident memory.
Repeats --reps times, alternating the strategies' order, and reports
medians.

Usage: benches/hostile.py [slowloris|idle|never-reading|list ...] [--clients N] [--duration 5]
                          [--reps 3] [--strategies a,b] [--bin PATH] [--json out.json]
(from the repository root, after `cargo build --release`). A tiny check
that it runs: benches/hostile.py --clients 20 --duration 1 --reps 1 --strategies async
"""

import argparse
import json
import os
import re
import resource
import socket
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (beside this script)
from common import MIB, Server, cpu_seconds, rss_mib  # noqa: E402


def raise_fd_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def load(binary, cpu, protocol, addr, duration):
    """A normal client's run: its JSON results."""
    args = {"board": ["--posters", "2", "--readers", "2", "--duration", f"{duration}s"],
            # kv runs a count of sessions (its window is until they are done).
            "kv": ["--sessions", str(int(100 * duration)), "--concurrency", "4",
                   "--requests-per-session", "50", "--keys", "100", "--value-size", "128",
                   "--preload"]}[protocol]
    cmd = common.pinned(cpu, [binary, "load", protocol, "--addr", addr, *args,
                              "--format", "json"])
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=duration + 60)
    except subprocess.TimeoutExpired:
        return None
    if out.returncode != 0 and not out.stdout:
        print(f"  load failed: {out.stderr.strip()[:200]}", file=sys.stderr)
        return None
    return json.loads(out.stdout)["results"]


def p99_us(results):
    """The worst p99 over the run's operations, in microseconds."""
    if not results:
        return float("nan")
    return max(op["latency_us"]["p99"] for op in results["operations"])


def probe(host, port, seconds, request, stop):
    """Fresh connections one after another for `seconds`: each connects,
    sends `request`, reads one reply, closes. Returns latencies in µs."""
    lat = []
    end = time.monotonic() + seconds
    while time.monotonic() < end and not stop.is_set():
        t0 = time.monotonic()
        try:
            with socket.create_connection((host, port), timeout=5) as s:
                s.sendall(request)
                s.recv(65536)
            lat.append((time.monotonic() - t0) * 1e6)
        except OSError:
            lat.append(5e6)
    return lat


def p99(xs):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(0.99 * len(xs)))]


def connect_many(srv, n):
    """Up to `n` connections (those the server takes within 5 s each)."""
    conns = []
    for _ in range(n):
        try:
            conns.append(socket.create_connection((srv.host, srv.port), timeout=5))
        except OSError:
            pass
    return conns


def slowloris(srv, n, stop):
    """`n` connections trickling one byte a second of a board request that
    never ends (no NUL)."""
    conns = connect_many(srv, n)
    while not stop.wait(1.0):
        for c in conns:
            try:
                c.send(b"P")
            except OSError:
                pass
    for c in conns:
        c.close()


def hold_idle(srv, n, stop):
    conns = connect_many(srv, n)
    stop.wait()
    for c in conns:
        c.close()


def kv_request(method, path, body=b""):
    head = f"{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n"
    return head.encode() + body


def never_reading(srv, n, wire):
    """`n` clients each sending `wire` (pipelined requests) and never
    reading. Returns the sockets (close them with reset())."""
    burst = []
    for _ in range(n):
        try:
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
            s.settimeout(5)
            s.connect((srv.host, srv.port))
            s.settimeout(0.5)
            try:
                s.sendall(wire)
            except OSError:
                pass
            burst.append(s)
        except OSError:
            pass
    return burst


def reset(socks):
    """Close with a reset (SO_LINGER 0), as a client that gives up does."""
    for s in socks:
        try:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        except OSError:
            pass
        s.close()


def put_big(srv):
    with socket.create_connection((srv.host, srv.port), timeout=5) as s:
        s.sendall(kv_request("PUT", "/big", b"v" * MIB))
        s.recv(4096)


def fill_board(srv, topics=200, name_len=32 * 1024):
    """`topics` topics with long names, so one LIST is topics x name_len."""
    with socket.create_connection((srv.host, srv.port), timeout=30) as s:
        for i in range(topics):
            s.sendall(b"POST@" + f"{i:03}".encode().ljust(name_len, b"n") + b"#m\0")
            while not s.recv(4096).endswith(b"\0"):
                pass


class PeakRss:
    """The largest resident memory of `pid`, sampled every 20 ms."""

    def __init__(self, pid):
        self.pid, self.peak, self.stop = pid, rss_mib(pid), threading.Event()
        self.t = threading.Thread(target=self.sample, daemon=True)
        self.t.start()

    def sample(self):
        while not self.stop.wait(0.02):
            self.peak = max(self.peak, rss_mib(self.pid))

    def end(self):
        self.stop.set()
        self.t.join()
        return max(self.peak, rss_mib(self.pid))


def run_attack(attack, strategy, args):
    """One run of `attack` against a fresh server: a dict of figures."""
    n = args.clients
    proto = "kv" if attack == "never-reading" else "board"
    if attack == "list" and args.topics is None:
        args.topics = 200
    extra = ["--max-connections", str(n + 100)] if attack == "idle" else []
    srv = Server(args.bin, proto, strategy, args.server_cpu, extra)
    fig = {"attack": attack, "strategy": strategy, "clients": n}
    stop = threading.Event()
    try:
        if proto == "kv":
            put_big(srv)
        elif attack == "list":
            fill_board(srv, args.topics)
        time.sleep(0.3)
        fig["rss_start_mib"] = rss_mib(srv.p.pid)
        peak = PeakRss(srv.p.pid)
        burst = []
        if attack == "slowloris":
            t = threading.Thread(target=slowloris, args=(srv, n, stop))
        elif attack == "idle":
            t = threading.Thread(target=hold_idle, args=(srv, n, stop))
        elif attack == "list":
            t = None
            burst = never_reading(srv, n, b"LIST\0")
        else:
            t = None
            burst = never_reading(srv, n, kv_request("GET", "/big") * 64)
        if t:
            t.start()
        time.sleep(1.0)
        c0, w0 = cpu_seconds(srv.p.pid), time.monotonic()
        request = b"GET /k HTTP/1.1\r\nHost: x\r\n\r\n" if proto == "kv" else b"COUNT@t\0"
        fresh = []
        pt = threading.Thread(target=lambda: fresh.extend(
            probe(srv.host, srv.port, args.duration, request, stop)))
        pt.start()
        results = load(args.bin, args.client_cpu, proto, srv.addr, args.duration)
        pt.join()
        fig["server_cpu"] = (cpu_seconds(srv.p.pid) - c0) / (time.monotonic() - w0)
        fig["rss_peak_mib"] = peak.end()
        fig["normal_p99_us"] = p99_us(results)
        fig["fresh_p99_us"] = p99(fresh)
        if burst:
            reset(burst)
            time.sleep(5.0)
            fig["rss_after_mib"] = rss_mib(srv.p.pid)
    finally:
        stop.set()
        if t:
            t.join()
        out = srv.stop()
    m = re.search(r"connections: (.*)", out or "")
    fig["server_connections"] = m.group(1) if m else ""
    return fig


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("attacks", nargs="*", default=["slowloris", "idle", "never-reading", "list"])
    ap.add_argument("--clients", type=int, default=0,
                    help="attacking connections (default: slowloris 2000, idle 10000, "
                         "never-reading 50, list 50)")
    ap.add_argument("--topics", type=int, help="list: topics of 32 KB (default 200)")
    ap.add_argument("--duration", type=float, default=5.0, help="seconds the normal client runs")
    ap.add_argument("--reps", type=int, default=3)
    common.add_placement(ap)
    ap.add_argument("--strategies", help="comma-separated (default: every strategy the binary serves)")
    common.add_binary(ap)
    ap.add_argument("--json", help="also write every run here")
    args = ap.parse_args()
    common.require_binary(args.bin)
    raise_fd_limit()
    chosen = common.chosen_strategies(args.bin, args.strategies)
    defaults = {"slowloris": 2000, "idle": 10000, "never-reading": 50, "list": 50}
    given = args.clients
    raw = []
    for attack in args.attacks:
        if attack not in defaults:
            sys.exit(f"unknown attack {attack!r}: slowloris, idle, never-reading or list")
        args.clients = given or defaults[attack]
        runs = {s: [] for s in chosen}
        for rep in range(args.reps):
            for strategy in (chosen if rep % 2 == 0 else chosen[::-1]):
                fig = run_attack(attack, strategy, args)
                runs[strategy].append(fig)
                raw.append(fig)
                print(f"  {attack} {strategy}: {fig}", file=sys.stderr)
        print_table(attack, runs, args)
    common.write_json(args.json, raw)


def print_table(attack, runs, args):
    med = lambda figs, k: statistics.median(f[k] for f in figs) if figs and k in figs[0] else float("nan")
    print(f"\n{attack}: {args.clients} attacking connections; normal client {args.duration:g} s;"
          f" medians of {args.reps}\n")
    print("| strategy | normal p99 (ms) | fresh-connection p99 (ms) | server CPU "
          "| RSS start / peak / 5 s after (MiB) |")
    print("|---|---:|---:|---:|---|")
    for strategy, figs in runs.items():
        print(f"| {strategy} | {med(figs, 'normal_p99_us') / 1000:.2f} "
              f"| {med(figs, 'fresh_p99_us') / 1000:.2f} | {med(figs, 'server_cpu'):.0%} "
              f"| {med(figs, 'rss_start_mib'):.0f} / {med(figs, 'rss_peak_mib'):.0f} / "
              f"{med(figs, 'rss_after_mib'):.0f} |")


if __name__ == "__main__":
    main()
