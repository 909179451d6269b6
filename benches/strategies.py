#!/usr/bin/env python3
"""Board vs echo under every strategy, side by side.

For each strategy, starts `serverlab serve board` and `serverlab serve echo`
in turn (each pinned to one CPU), drives each with the same
`serverlab load board` (5 posters + 5 readers, pinned to another CPU),
lock-step and with --pipeline 16, and prints throughput and the board/echo
ratio. Runs alternate board and echo and repeat, so slow drifts of a shared
machine hit both sides alike; the ratio is the median of the per-pair
ratios. Server CPU use is read from /proc, the client's from its report:
a result whose client was busier than its server was set by the client.

Usage: benches/strategies.py [--duration 4] [--reps 3] [--json out.json] [--bin PATH]
                             [--before OLD_BINARY]
(from the repository root, after `cargo build --release`). The strategies
are the binary's own (`serve --help`); `--strategies a,b` picks some.
`--before OLD_BINARY` also serves every run with an older build,
interleaved run by run under the same client, and prints after/before.
"""

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time

BIN = os.path.join(os.path.dirname(__file__), "..", "target", "release", "serverlab")
TICK = os.sysconf("SC_CLK_TCK")


def strategies(binary):
    """Every strategy the binary serves, in its order: the block that
    `serve --help` lists them in (one per line, name first), so a strategy
    added to the code is benchmarked without editing this script."""
    out = subprocess.run([binary, "serve", "--help"], capture_output=True, text=True,
                         check=True).stdout
    block = out.split("Strategies (--strategy):", 1)[1].split("\n\n", 1)[0]
    return [line.split()[0] for line in block.strip().splitlines()]


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


def start(protocol, strategy, cpu, extra, binary):
    p = subprocess.Popen([binary, "serve", protocol, "--strategy", strategy, "--cpus", cpu,
                          "--addr", "127.0.0.1:0", *extra],
                         stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    m = re.search(r"listening on (\S+)", line)
    if not m:
        p.kill()
        sys.exit(f"server did not start: {line!r}")
    return p, m.group(1)


def one_run(protocol, strategy, pipeline, args, server_bin=None):
    """One load run against a fresh server (of `server_bin`, default the
    binary under test); the client is always the binary under test."""
    server_bin = server_bin or args.bin
    server, addr = start(protocol, strategy, args.server_cpu, args.server_args, server_bin)
    try:
        c0, t0 = cpu_seconds(server.pid), time.monotonic()
        out = subprocess.run(
            ["taskset", "-c", args.client_cpu, args.bin, "load", "board", "--addr", addr,
             "--posters", "5", "--readers", "5", "--duration", f"{args.duration}s",
             "--pipeline", str(pipeline), "--format", "json"],
            capture_output=True, text=True)
        c1, t1 = cpu_seconds(server.pid), time.monotonic()
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    if out.returncode != 0:
        sys.exit(f"load failed against {protocol}/{strategy}: {out.stderr}")
    r = json.loads(out.stdout)["results"]
    return {"rps": r["throughput_rps"], "server_cpu": (c1 - c0) / (t1 - t0),
            "client_cpu": r["client_cpu"]["utilization"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--duration", type=float, default=4.0, help="seconds per run")
    ap.add_argument("--reps", type=int, default=3, help="board/echo pairs per point")
    ap.add_argument("--server-cpu", default="0")
    ap.add_argument("--client-cpu", default="1")
    ap.add_argument("--strategies", help="comma-separated (default: every strategy the binary serves)")
    ap.add_argument("--bin", default=BIN, help="the serverlab binary (default: target/release/serverlab)")
    ap.add_argument("--pipelines", default="1,16")
    ap.add_argument("--server-args", default="", help="extra flags for both servers")
    ap.add_argument("--json", help="also write every run here")
    ap.add_argument("--before", metavar="BIN",
                    help="also serve with this (older) binary, interleaved run by run with --bin's "
                         "servers under the same client, and print after/before throughput")
    args = ap.parse_args()
    args.server_args = args.server_args.split()
    if not os.path.exists(args.bin):
        sys.exit("build first: cargo build --release")
    args.strategies_given = bool(args.strategies)
    if not args.strategies:
        args.strategies = ",".join(strategies(args.bin))
    if args.before and not os.path.exists(args.before):
        sys.exit(f"no binary at {args.before}")

    if args.before and not args.strategies_given:
        before = set(strategies(args.before))
        args.strategies = ",".join(s for s in args.strategies.split(",") if s in before)

    rows, compared, raw = [], [], []
    for pipeline in [int(p) for p in args.pipelines.split(",")]:
        for strategy in args.strategies.split(","):
            pairs, befores = [], []
            for rep in range(args.reps):
                order = ["board", "echo"] if rep % 2 == 0 else ["echo", "board"]
                pair, old = {}, {}
                for proto in order:
                    runs = [(pair, None), (old, args.before)] if args.before else [(pair, None)]
                    for into, binary in (runs if rep % 2 == 0 else runs[::-1]):
                        into[proto] = one_run(proto, strategy, pipeline, args, binary)
                pairs.append(pair)
                raw.append({"strategy": strategy, "pipeline": pipeline, "rep": rep, **pair})
                if args.before:
                    befores.append(old)
                    raw.append({"strategy": strategy, "pipeline": pipeline, "rep": rep,
                                "binary": "before", **old})
            if args.before:
                compared.append((strategy, pipeline, pairs, befores))
            med = lambda proto, k: statistics.median(p[proto][k] for p in pairs)
            ratios = [p["board"]["rps"] / p["echo"]["rps"] for p in pairs]
            rows.append((strategy, pipeline, med("board", "rps"), med("echo", "rps"),
                         statistics.median(ratios), min(ratios), max(ratios),
                         med("board", "server_cpu"), med("echo", "server_cpu"),
                         med("board", "client_cpu")))
            r = rows[-1]
            print(f"  {strategy:<22} pipeline {pipeline:>2}: board {r[2]:>9.0f}/s  echo {r[3]:>9.0f}/s"
                  f"  ratio {r[4]:.3f}", file=sys.stderr)

    print(f"\nboard vs echo, 5 posters + 5 readers, {args.duration:g} s runs, {args.reps} pairs per point;"
          f" server on CPU {args.server_cpu}, client on CPU {args.client_cpu}\n")
    print("| strategy | pipeline | board req/s | echo req/s | board/echo (min–max) "
          "| server CPU board / echo | client CPU |")
    print("|---|---:|---:|---:|---|---|---:|")
    for s, p, b, e, ratio, lo, hi, sb, se, cc in rows:
        print(f"| {s} | {p} | {b:,.0f} | {e:,.0f} | {ratio:.2f} ({lo:.2f}–{hi:.2f}) "
              f"| {sb:.0%} / {se:.0%} | {cc:.0%} |")
    if compared:
        print_compared(compared, args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(raw, f, indent=1)


def print_compared(compared, args):
    """After vs before, per strategy and pipeline depth: median req/s of each
    and the median (min–max) of the per-repetition after/before ratios."""
    print(f"\nafter ({args.bin}) vs before ({args.before}), the same client; "
          f"{args.duration:g} s runs, {args.reps} interleaved repetitions\n")
    print("| strategy | pipeline | board before | board after | after/before (min–max) "
          "| echo before | echo after | after/before (min–max) |")
    print("|---|---:|---:|---:|---|---:|---:|---|")
    for strategy, pipeline, after, before in compared:
        cells = []
        for proto in ["board", "echo"]:
            a = [r[proto]["rps"] for r in after]
            b = [r[proto]["rps"] for r in before]
            ratios = [x / y for x, y in zip(a, b)]
            cells.append(f"{statistics.median(b):,.0f} | {statistics.median(a):,.0f} | "
                         f"{statistics.median(ratios):.3f} ({min(ratios):.3f}–{max(ratios):.3f})")
        print(f"| {strategy} | {pipeline} | {cells[0]} | {cells[1]} |")


if __name__ == "__main__":
    main()
