#!/usr/bin/env python3
"""serverlab's RESP server against redis-server 7, measured by both tools.

For each round, in a shuffled order, starts each server pinned to one CPU
(`serverlab serve resp --strategy S --cpus 0` for each strategy asked for,
and `taskset -c 0 redis-server`), writes the benchmark's keys (100k
64-byte values: GETs hit), and drives it from the other CPU with
redis-benchmark and with `serverlab load resp`, GET and SET, lock-step
(-P 1) and pipelined (-P 16), 50 connections each. Rounds interleave every
server and tool, so a drifting machine hits all alike; each figure is the
median of its rounds.

Prints, per tool, operation and pipeline: every server's throughput, the
best serverlab strategy's over Redis's (target: at least 1.2x), and the
harness's own cost, `load resp` / redis-benchmark on the same server.
Then memory: each store's RSS after SET of 1M keys with 64-byte values
(INFO's used_memory_rss, which serverlab reads from /proc as Redis does)
against redis-server's used_memory_rss (target: at most 1.2x).

Usage (from the repository root, after `cargo build --release`, on a quiet
machine; about 10 minutes with the defaults):
    benches/redis_compare.py [--rounds 5] [--requests 200000]
        [--strategies a,b] [--rss-keys 1000000] [--json out.json] [--bin PATH]
    benches/redis_compare.py --quick     # a tiny run: checks the script works
The strategies are the binary's own (`serve --help`) unless --strategies
picks some. Needs redis-server, redis-benchmark and taskset.
"""

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (beside this script)
from common import free_port  # noqa: E402

SERVER_CPU, CLIENT_CPU = "0", "1"
VALUE = 64
KEYS = 100_000
CONNECTIONS = 50


class Server:
    """A server pinned to SERVER_CPU: serverlab (strategy, store) or redis."""

    def __init__(self, binary, strategy=None, store="sharded"):
        self.name = f"serverlab {strategy}" if strategy else "redis-server"
        self.port = free_port()
        if strategy:
            cmd = [binary, "serve", "resp", "--strategy", strategy, "--store", store,
                   "--cpus", SERVER_CPU, "--addr", f"127.0.0.1:{self.port}"]
        else:
            cmd = common.pinned(SERVER_CPU, ["redis-server", "--port", str(self.port), "--bind",
                                             "127.0.0.1", "--save", "", "--appendonly", "no"])
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        common.wait_port(self.proc, self.port, self.name)

    def addr(self):
        return f"127.0.0.1:{self.port}"

    def info(self, field):
        out = subprocess.run(["redis-cli", "-p", str(self.port), "INFO", "memory"],
                             capture_output=True, text=True, check=True).stdout
        m = re.search(rf"^{field}:(\d+)", out, re.M)
        return int(m.group(1)) if m else None

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def client(cmd):
    """Run a client pinned to CLIENT_CPU; its stdout."""
    out = subprocess.run(common.pinned(CLIENT_CPU, cmd), capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{cmd[0]} failed: {out.stdout}{out.stderr}")
    return out.stdout


def preload(binary, server, keys):
    """Every key:N with a 64-byte value (the names redis-benchmark -r uses)."""
    client([binary, "load", "resp", "--addr", server.addr(), "--mix", "get=1", "--requests", "1",
            "--connections", "1", "--keys", str(keys), "--value-size", str(VALUE), "--preload",
            "--format", "json"])


def redis_benchmark(server, op, pipeline, requests):
    out = client(["redis-benchmark", "-h", "127.0.0.1", "-p", str(server.port), "-t", op,
                  "-n", str(requests), "-c", str(CONNECTIONS), "-P", str(pipeline),
                  "-d", str(VALUE), "-r", str(KEYS), "-q"])
    m = re.search(rf"{op.upper()}: ([\d.]+) requests per second", out)
    if not m:
        sys.exit(f"redis-benchmark said: {out}")
    return float(m.group(1))


def load_resp(binary, server, op, pipeline, requests):
    out = client([binary, "load", "resp", "--addr", server.addr(), "--mix", f"{op}=1",
                  "--requests", str(requests), "--connections", str(CONNECTIONS),
                  "--pipeline", str(pipeline), "--keys", str(KEYS), "--value-size", str(VALUE),
                  "--format", "json"])
    return json.loads(out)["results"]["throughput_rps"]


def throughput(args, names):
    """rounds × servers (shuffled) × tool × op × pipeline: every figure."""
    figures = {}  # (tool, op, pipeline, server) -> [req/s]
    for r in range(args.rounds):
        order = list(names)
        random.shuffle(order)
        for name in order:
            server = Server(args.bin, None if name == "redis-server" else name)
            try:
                preload(args.bin, server, KEYS)
                for op in ("set", "get"):
                    for pipeline in (1, 16):
                        for tool in ("redis-benchmark", "load resp"):
                            run = redis_benchmark if tool == "redis-benchmark" else \
                                lambda s, o, p, n: load_resp(args.bin, s, o, p, n)
                            rps = run(server, op, pipeline, args.requests)
                            figures.setdefault((tool, op, pipeline, name), []).append(rps)
            finally:
                server.stop()
        print(f"round {r + 1} of {args.rounds} done", file=sys.stderr)
    return {k: statistics.median(v) for k, v in figures.items()}


def memory(args):
    """RSS after SET of --rss-keys keys: each serverlab store, and Redis."""
    out = {}
    stores = ["mutex", "rwlock", "sharded", "lockfree"]
    for name in ["redis-server"] + [f"store {s}" for s in stores]:
        store = name.split()[-1]
        server = Server(args.bin, None if name == "redis-server" else args.rss_strategy, store)
        try:
            preload(args.bin, server, args.rss_keys)
            time.sleep(0.5)
            out[name] = server.info("used_memory_rss")
        finally:
            server.stop()
    return out


def report(med, names, mem, args):
    lines = ["| tool | op | pipeline | " + " | ".join(names) + " | best serverlab / redis |",
             "|---|---|---|" + "---|" * len(names) + "---|"]
    for tool in ("redis-benchmark", "load resp"):
        for op in ("get", "set"):
            for p in (1, 16):
                row = [med[(tool, op, p, n)] for n in names]
                ours = [(v, n) for v, n in zip(row, names) if n != "redis-server"]
                best, who = max(ours)
                redis = med[(tool, op, p, "redis-server")]
                lines.append(f"| {tool} | {op.upper()} | {p} | "
                             + " | ".join(f"{v:,.0f}" for v in row)
                             + f" | {best / redis:.2f}x ({who}) |")
    lines += ["", "load resp / redis-benchmark on the same server (the harness's own cost):", "",
              "| op | pipeline | " + " | ".join(names) + " |",
              "|---|---|" + "---|" * len(names)]
    for op in ("get", "set"):
        for p in (1, 16):
            lines.append(f"| {op.upper()} | {p} | " + " | ".join(
                f"{med[('load resp', op, p, n)] / med[('redis-benchmark', op, p, n)]:.2f}"
                for n in names) + " |")
    redis = mem["redis-server"]
    lines += ["", f"RSS after SET of {args.rss_keys:,} keys with {VALUE}-byte values "
              f"(serverlab {args.rss_strategy}):", "", "| server | used_memory_rss MiB | / redis |",
              "|---|---|---|"]
    for name, rss in mem.items():
        lines.append(f"| {name} | {rss / 2**20:,.1f} | {rss / redis:.2f}x |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    common.add_binary(ap)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--requests", type=int, default=200_000)
    ap.add_argument("--strategies", help="comma-separated (default: every strategy)")
    ap.add_argument("--rss-keys", type=int, default=1_000_000)
    ap.add_argument("--rss-strategy", default="async")
    ap.add_argument("--json", help="also write every median here")
    ap.add_argument("--quick", action="store_true", help="a tiny run, to check the script")
    args = ap.parse_args()
    common.require_binary(args.bin)
    global KEYS
    if args.quick:
        args.rounds, args.requests, args.rss_keys, KEYS = 1, 2000, 5000, 1000
    names = common.chosen_strategies(args.bin, args.strategies)
    if args.quick and not args.strategies:
        names = names[:1]
    names = names + ["redis-server"]
    med = throughput(args, names)
    mem = memory(args)
    print(report(med, names, mem, args))
    common.write_json(args.json, {
        "throughput": {" / ".join(map(str, k)): v for k, v in med.items()},
        "rss_bytes": mem, "rounds": args.rounds, "requests": args.requests}, indent=2)


if __name__ == "__main__":
    main()
