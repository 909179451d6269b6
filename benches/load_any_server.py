#!/usr/bin/env python3
"""`serverlab load` pointed at other servers, against the tools people use.

Four parts, every server pinned to one CPU and every client to the other,
rounds interleaved (each round runs every tool once, in a shuffled order),
medians of the rounds:

  closed  nginx (one worker, `return 200`), closed loop at 1, 16 and 256
          connections: `serverlab load http` against wrk and oha, each in
          its own best mode (keep-alive, one thread/loop on its CPU).
  open    nginx at a fixed rate: serverlab's open loop (latency from each
          request's intended send, wrk2's method) against oha's
          `-q RATE --latency-correction` (wrk 4, as Debian packages it, has
          no fixed rate: wrk2 is not packaged); p50 and p99.
  unix    TCP against a Unix socket, the same load on both: nginx
          (`load http`), `serve board` (`load board`), `serve resp` and
          redis-server (`load resp`); throughput, closed loop.
  tls     the TLS handshake's cost on nginx: `load http` keep-alive and
          `--no-keepalive`, over http:// and https:// (a certificate made
          for the run), throughput, and the handshake's p50 and p99 from
          `results.tls`.

A tool that is not installed is said so in its row, never guessed.

Usage (from the repository root, after `cargo build --release`, on a quiet
machine; about 8 minutes with the defaults):
    benches/load_any_server.py [--rounds 3] [--duration 5] [--rate 5000]
        [--parts closed,open,unix,tls] [--oha PATH] [--json out.json] [--bin PATH]
    benches/load_any_server.py --quick     # a tiny run: checks the script works
Needs nginx, openssl and taskset; wrk, oha and redis-server where present.
"""

import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (beside this script)
from common import free_port  # noqa: E402

SERVER_CPU, CLIENT_CPU = "0", "1"


class Nginx:
    """nginx, one worker pinned to SERVER_CPU, answering `ok` to every
    request on a TCP port, a Unix socket, and TLS on another port."""

    def __init__(self, tmp):
        self.dir = tmp
        self.port, self.tls_port = free_port(), free_port()
        self.sock = os.path.join(tmp, "nginx.sock")
        cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                        key, "-out", cert, "-days", "1", "-subj", "/CN=localhost", "-addext",
                        "subjectAltName=DNS:localhost"], check=True, capture_output=True)
        self.cert = cert
        conf = os.path.join(tmp, "nginx.conf")
        with open(conf, "w") as f:
            f.write(f"""daemon off; master_process off; worker_processes 1;
pid {tmp}/nginx.pid; error_log {tmp}/error.log;
events {{ worker_connections 4096; }}
http {{
  access_log off; keepalive_requests 100000000; keepalive_timeout 300s;
  server {{
    listen 127.0.0.1:{self.port} backlog=4096; listen unix:{self.sock};
    listen 127.0.0.1:{self.tls_port} ssl;
    ssl_certificate {cert}; ssl_certificate_key {key};
    location / {{ return 200 "ok\\n"; }}
  }}
}}
""")
        self.p = subprocess.Popen(common.pinned(SERVER_CPU, ["nginx", "-p", tmp, "-c", conf,
                                                             "-e", f"{tmp}/error.log"]),
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        common.wait_port(self.p, self.port, "nginx")
        common.wait_port(self.p, self.tls_port, "nginx (TLS)")

    def url(self, tls=False):
        return f"https://localhost:{self.tls_port}/" if tls else f"http://127.0.0.1:{self.port}/"

    def stop(self):
        self.p.terminate()
        self.p.wait()


def serverlab_http(binary, url, duration, *flags):
    """`load http` on CLIENT_CPU; its results."""
    cmd = [binary, "load", "http", "--url", url, "--duration", f"{duration}s", "--warmup", "0s",
           "--cpus", CLIENT_CPU, "--format", "json", *flags]
    return common.load_results(cmd, "load http")


def wrk(url, connections, duration):
    """wrk on CLIENT_CPU, one thread: (req/s, p50 ms, p99 ms)."""
    out = subprocess.run(common.pinned(CLIENT_CPU, [
        "wrk", "-t1", f"-c{connections}", f"-d{duration}s", "--latency", url]),
        capture_output=True, text=True, check=True).stdout
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    return rate, wrk_ms(out, "50%"), wrk_ms(out, "99%")


def wrk_ms(out, pct):
    m = re.search(rf"^\s+{re.escape(pct)}\s+([\d.]+)(us|ms|s)\b", out, re.M)
    value, unit = float(m.group(1)), m.group(2)
    return value * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def oha(path, url, connections, duration, *flags):
    """oha on CLIENT_CPU: (req/s, p50 ms, p99 ms)."""
    out = subprocess.run(common.pinned(CLIENT_CPU, [
        path, "-c", str(connections), "-z", f"{duration}s", "--no-tui", "--output-format",
        "json", *flags, url]), capture_output=True, text=True, check=True).stdout
    v = json.loads(out)
    pct = v["latencyPercentiles"]
    return v["summary"]["requestsPerSec"], pct["p50"] * 1000, pct["p99"] * 1000


def median_of(rows):
    """Each column's median over the rounds."""
    return tuple(statistics.median(c) for c in zip(*rows))


def closed(args, nginx, tools):
    print("\n## closed loop on nginx (req/s, p50/p99 ms; medians of"
          f" {args.rounds} rounds of {args.duration} s)\n")
    print("| connections | serverlab load http | wrk | oha | serverlab / wrk | serverlab / oha |")
    print("|---|---|---|---|---|---|")
    found = {}
    for c in args.connections:
        runs = {name: [] for name in tools}
        for _ in range(args.rounds):
            for name in random.sample(sorted(tools), len(tools)):
                runs[name].append(tools[name](nginx.url(), c, args.duration))
        med = {n: median_of(r) for n, r in runs.items()}
        found[c] = med
        cell = lambda n: (f"{med[n][0]:.0f} ({med[n][1]:.3f}/{med[n][2]:.3f})"  # noqa: E731
                          if n in med else "not installed")
        ratio = lambda n: f"{med['serverlab'][0] / med[n][0]:.2f}×" if n in med else "—"  # noqa: E731
        print(f"| {c} | {cell('serverlab')} | {cell('wrk')} | {cell('oha')} | {ratio('wrk')} "
              f"| {ratio('oha')} |")
    return found


def open_loop(args, nginx, oha_path):
    print(f"\n## open loop on nginx at {args.rate:.0f} req/s, 16 connections (ms; medians of"
          f" {args.rounds} rounds)\n")
    print("| tool | p50 | p99 | achieved req/s |")
    print("|---|---|---|---|")

    def ours():
        r = serverlab_http(args.bin, nginx.url(), args.duration, "--connections", "16",
                           "--rate", str(args.rate))
        lat = r["operations"][0]["latency_us"]
        return lat["p50"] / 1000, lat["p99"] / 1000, r["throughput_rps"]

    def theirs():
        rate, p50, p99 = oha(oha_path, nginx.url(), 16, args.duration, "-q", str(args.rate),
                             "--latency-correction")
        return p50, p99, rate

    tools = {"serverlab load http --rate": ours}
    if oha_path:
        tools["oha -q --latency-correction"] = theirs
    runs = {n: [] for n in tools}
    for _ in range(args.rounds):
        for n in random.sample(sorted(tools), len(tools)):
            runs[n].append(tools[n]())
    found = {}
    for n, r in runs.items():
        p50, p99, rate = median_of(r)
        found[n] = (p50, p99, rate)
        print(f"| {n} | {p50:.3f} | {p99:.3f} | {rate:.0f} |")
    if not oha_path:
        print("| oha | not installed | | |")
    print("| wrk | no fixed rate in wrk 4 (wrk2 is not packaged) | | |")
    return found


def unix_vs_tcp(args, nginx, tmp):
    """Each server on TCP and on a Unix socket, the same closed-loop load."""
    print(f"\n## TCP against a Unix socket (req/s, closed loop; medians of {args.rounds} rounds)\n")
    print("| server | load | TCP | Unix socket | Unix / TCP |")
    print("|---|---|---|---|---|")
    found = {}
    for name, start, load in unix_cases(args, nginx, tmp):
        addrs, stop = start()
        try:
            runs = {"tcp": [], "unix": []}
            for _ in range(args.rounds):
                for kind in random.sample(["tcp", "unix"], 2):
                    runs[kind].append(load(addrs[kind]))
        finally:
            stop()
        tcp, unix = statistics.median(runs["tcp"]), statistics.median(runs["unix"])
        found[name] = (tcp, unix)
        print(f"| {name} | {load.__doc__} | {tcp:.0f} | {unix:.0f} | {unix / tcp:.2f}× |")
    return found


def unix_cases(args, nginx, tmp):
    """(server, start → ({tcp, unix} addresses, stop), load(addr) → req/s)."""
    d = args.duration
    binary = args.bin

    def http(addr):
        """load http, 16 connections"""
        return serverlab_http(binary, "http://localhost/", d, "--addr", addr,
                              "--connections", "16")["throughput_rps"]

    def resp(addr):
        """load resp, 16 connections, get=80,set=20"""
        return common.load_results([binary, "load", "resp", "--addr", addr, "--connections",
                                    "16", "--duration", f"{d}s", "--warmup", "0s", "--cpus",
                                    CLIENT_CPU, "--format", "json"])["throughput_rps"]

    def board(addr):
        """load board, 8 posters + 8 readers"""
        return common.load_results([binary, "load", "board", "--addr", addr, "--posters", "8",
                                    "--readers", "8", "--duration", f"{d}s", "--warmup", "0s",
                                    "--cpus", CLIENT_CPU, "--format", "json"])["throughput_rps"]

    def nginx_addrs():
        return {"tcp": f"127.0.0.1:{nginx.port}", "unix": f"unix:{nginx.sock}"}, lambda: None

    def ours(protocol):
        def start():
            both = []
            for kind in ("tcp", "unix"):
                at = (f"127.0.0.1:{free_port()}" if kind == "tcp"
                      else f"unix:{tmp}/{protocol}.sock")
                p = subprocess.Popen([binary, "serve", protocol, "--strategy", "async", "--cpus",
                                      SERVER_CPU, "--addr", at], stdout=subprocess.DEVNULL)
                both.append((kind, at, p))
            time.sleep(1)
            return ({k: a for k, a, _ in both},
                    lambda: [common.stop(p) for _, _, p in both])
        return start

    def redis():
        port, sock = free_port(), f"{tmp}/redis.sock"
        p = subprocess.Popen(common.pinned(SERVER_CPU, [
            "redis-server", "--port", str(port), "--bind", "127.0.0.1", "--unixsocket", sock,
            "--save", "", "--appendonly", "no"]), stdout=subprocess.DEVNULL)
        common.wait_port(p, port, "redis-server")
        return {"tcp": f"127.0.0.1:{port}", "unix": f"unix:{sock}"}, lambda: (p.terminate(),
                                                                             p.wait())

    cases = [("nginx", nginx_addrs, http), ("serve board --strategy async", ours("board"), board),
             ("serve resp --strategy async", ours("resp"), resp)]
    if shutil.which("redis-server"):
        cases.append(("redis-server", redis, resp))
    return cases


def tls(args, nginx):
    print(f"\n## the TLS handshake's cost on nginx, 16 connections (medians of {args.rounds}"
          " rounds)\n")
    print("| connections | scheme | req/s | latency p50 ms | handshake p50 ms | handshake p99 ms |")
    print("|---|---|---|---|---|---|")
    cases = [(ka, scheme) for ka in ("keep-alive", "--no-keepalive") for scheme in ("http",
                                                                                    "https")]
    runs = {c: [] for c in cases}
    for _ in range(args.rounds):
        for ka, scheme in random.sample(cases, len(cases)):
            flags = ["--connections", "16", "--cacert", nginx.cert] if scheme == "https" else [
                "--connections", "16"]
            if ka != "keep-alive":
                flags.append("--no-keepalive")
            r = serverlab_http(args.bin, nginx.url(scheme == "https"), args.duration, *flags)
            hs = (r.get("tls") or {}).get("handshake_us") or {"p50": 0, "p99": 0}
            runs[(ka, scheme)].append((r["throughput_rps"],
                                       r["operations"][0]["latency_us"]["p50"] / 1000,
                                       hs["p50"] / 1000, hs["p99"] / 1000))
    found = {}
    for (ka, scheme), r in runs.items():
        rate, p50, h50, h99 = median_of(r)
        found[f"{ka} {scheme}"] = (rate, p50, h50, h99)
        hs = f"{h50:.3f} | {h99:.3f}" if scheme == "https" else "— | —"
        print(f"| {ka} | {scheme} | {rate:.0f} | {p50:.3f} | {hs} |")
    return found


def main():
    ap = common.parser(__doc__)
    common.add_binary(ap)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=float, default=5)
    ap.add_argument("--rate", type=float, default=5000)
    ap.add_argument("--parts", default="closed,open,unix,tls")
    ap.add_argument("--oha", default=shutil.which("oha"), help="the oha binary, if any")
    ap.add_argument("--quick", action="store_true", help="one round of 1 s: the script works")
    ap.add_argument("--json")
    args = ap.parse_args()
    args.connections = [1, 16, 256]
    if args.quick:
        args.rounds, args.duration, args.rate, args.connections = 1, 1, 500, [1]
    common.require_binary(args.bin)

    def ours(url, connections, duration):
        r = serverlab_http(args.bin, url, duration, "--connections", str(connections))
        lat = r["operations"][0]["latency_us"]
        return r["throughput_rps"], lat["p50"] / 1000, lat["p99"] / 1000

    tools = {"serverlab": ours}
    if shutil.which("wrk"):
        tools["wrk"] = wrk
    if args.oha:
        tools["oha"] = lambda url, c, d: oha(args.oha, url, c, d)
    found = {}
    with tempfile.TemporaryDirectory() as tmp:
        nginx = Nginx(tmp)
        try:
            parts = args.parts.split(",")
            if "closed" in parts:
                found["closed"] = closed(args, nginx, tools)
            if "open" in parts:
                found["open"] = open_loop(args, nginx, args.oha)
            if "unix" in parts:
                found["unix"] = unix_vs_tcp(args, nginx, tmp)
            if "tls" in parts:
                found["tls"] = tls(args, nginx)
        finally:
            nginx.stop()
    common.write_json(args.json, {k: {str(a): b for a, b in v.items()} for k, v in
                                  found.items()})


if __name__ == "__main__":
    main()
