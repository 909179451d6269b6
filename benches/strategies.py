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
       benches/strategies.py --ceiling [--compare STRATEGY] [--reps 5] [--strategies a,b]
       benches/strategies.py --syscalls [--strategies a,b] [--duration 2]
(from the repository root, after `cargo build --release`). The strategies
are the binary's own (`serve --help`); `--strategies a,b` picks some.
`--before OLD_BINARY` also serves every run with an older build,
interleaved run by run under the same client, and prints after/before.

`--ceiling` compares each strategy's board with the readiness-loop ceiling,
benches/epoll_echo.c (built here with cc): every repetition runs the board
under each strategy and the C echo server once, in an order that rotates,
so the servers share the machine's drifts alike; the table gives medians,
and each board's ratio to the C echo (the median of the per-repetition
ratios). `--compare X` also prints X against the best of the other
strategies, repetition by repetition.

`--syscalls` counts the system calls each server makes per request: one
short run each, with `strace -c -f` attached to every server thread for the
load's duration (strace slows the server several times over, so read the
calls per request, not the rates).
"""

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (beside this script)
from common import HERE, cpu_seconds, strategies, wait_listening  # noqa: E402

C_ECHO_SRC = os.path.join(HERE, "epoll_echo.c")
C_ECHO = os.path.join(HERE, "..", "target", "epoll_echo")
# The C epoll echo server's name in tables: not a strategy.
C_ECHO_NAME = "C epoll echo"


def serve_command(protocol, strategy, cpu, extra, binary):
    return common.serve_command(binary, protocol, cpu, "--strategy", strategy, *extra)


def start(protocol, strategy, cpu, extra, binary):
    return wait_listening(serve_command(protocol, strategy, cpu, extra, binary))


def c_echo_command(cpu):
    return common.pinned(cpu, [C_ECHO, "0"])


def build_c_echo():
    """Build benches/epoll_echo.c (again, if the source is newer)."""
    if os.path.exists(C_ECHO) and os.path.getmtime(C_ECHO) >= os.path.getmtime(C_ECHO_SRC):
        return
    cc = shutil.which("cc") or sys.exit("no C compiler (cc) to build benches/epoll_echo.c")
    os.makedirs(os.path.dirname(C_ECHO), exist_ok=True)
    subprocess.run([cc, "-O2", "-o", C_ECHO, C_ECHO_SRC], check=True)


def load_command(addr, pipeline, args):
    return common.pinned(args.client_cpu, [
        args.bin, "load", "board", "--addr", addr, "--posters", "5", "--readers", "5",
        "--duration", f"{args.duration}s", "--pipeline", str(pipeline), "--format", "json"])


def measure(server, addr, pipeline, args):
    """Drive a started server with the board load; stop it; the run's
    throughput, requests and both sides' CPU."""
    try:
        c0, t0 = cpu_seconds(server.pid), time.monotonic()
        out = subprocess.run(load_command(addr, pipeline, args), capture_output=True, text=True)
        c1, t1 = cpu_seconds(server.pid), time.monotonic()
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    if out.returncode != 0:
        sys.exit(f"load failed against {addr}: {out.stderr}")
    r = json.loads(out.stdout)["results"]
    if not r["requests"]:
        sys.exit(f"the load against {addr} counted no requests: is --duration "
                 f"({args.duration:g} s) longer than the load's warm-up?")
    return {"rps": r["throughput_rps"], "requests": r["requests"],
            "server_cpu": (c1 - c0) / (t1 - t0), "client_cpu": r["client_cpu"]["utilization"]}


def one_run(protocol, strategy, pipeline, args, server_bin=None):
    """One load run against a fresh server (of `server_bin`, default the
    binary under test); the client is always the binary under test."""
    server_bin = server_bin or args.bin
    extra = args.server_args + (args.board_args if protocol == "board" else [])
    server, addr = start(protocol, strategy, args.server_cpu, extra, server_bin)
    return measure(server, addr, pipeline, args)


def c_echo_run(pipeline, args):
    server, addr = wait_listening(c_echo_command(args.server_cpu))
    return measure(server, addr, pipeline, args)


def ceiling(args):
    """Board under each strategy against the C echo ceiling, interleaved."""
    build_c_echo()
    servers = args.strategies.split(",") + [C_ECHO_NAME]
    raw = []
    for pipeline in [int(p) for p in args.pipelines.split(",")]:
        runs = {name: [] for name in servers}
        for rep in range(args.reps):
            shift = rep % len(servers)
            for name in servers[shift:] + servers[:shift]:
                r = (c_echo_run(pipeline, args) if name == C_ECHO_NAME
                     else one_run("board", name, pipeline, args))
                runs[name].append(r)
                raw.append({"server": name, "pipeline": pipeline, "rep": rep, **r})
                print(f"  {name:<22} pipeline {pipeline:>2} rep {rep}: {r['rps']:>10.0f}/s",
                      file=sys.stderr)
        print_ceiling(pipeline, runs, args)
    common.write_json(args.json, raw)


def print_ceiling(pipeline, runs, args):
    med = lambda name, k: statistics.median(r[k] for r in runs[name])
    ceiling_runs = runs[C_ECHO_NAME]
    print(f"\nboard (5 posters + 5 readers, pipeline {pipeline}) against the C epoll echo ceiling; "
          f"{args.duration:g} s runs, {args.reps} interleaved repetitions; server on CPU "
          f"{args.server_cpu}, client on CPU {args.client_cpu}\n")
    print("| server | req/s (min–max) | ÷ C echo (min–max) | server CPU | client CPU |")
    print("|---|---:|---|---:|---:|")
    for name in runs:
        rps = [r["rps"] for r in runs[name]]
        ratios = [a["rps"] / c["rps"] for a, c in zip(runs[name], ceiling_runs)]
        print(f"| {name} | {statistics.median(rps):,.0f} ({min(rps):,.0f}–{max(rps):,.0f}) "
              f"| {statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f}) "
              f"| {med(name, 'server_cpu'):.0%} | {med(name, 'client_cpu'):.0%} |")
    others = [n for n in runs if n not in (C_ECHO_NAME, args.compare)]
    if args.compare in runs and others:
        best = max(others, key=lambda n: med(n, "rps"))
        ratios = [a["rps"] / b["rps"] for a, b in zip(runs[args.compare], runs[best])]
        print(f"\n{args.compare} ÷ the best other strategy ({best}), per repetition: "
              f"median {statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f})")


def strace_run(command, pipeline, args):
    """One short run of a server started by `command` with strace counting
    its system calls: (calls by syscall, requests served)."""
    server, addr = wait_listening(command)
    tasks = ",".join(os.listdir(f"/proc/{server.pid}/task"))
    with open(os.devnull, "w") as quiet:
        with tempfile.NamedTemporaryFile("r", suffix=".strace") as summary:
            tracer = subprocess.Popen(["strace", "-c", "-f", "-o", summary.name, "-p", tasks],
                                      stderr=quiet)
            time.sleep(0.5)  # attached
            r = measure(server, addr, pipeline, args)
            tracer.send_signal(signal.SIGINT)
            tracer.wait(timeout=30)
            calls = parse_strace(summary.read())
    return calls, r["requests"]


def parse_strace(text):
    """`strace -c`'s table: calls by syscall name."""
    calls = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 5 and fields[0].replace(".", "").isdigit() and fields[-1] != "total":
            calls[fields[-1]] = int(fields[3])
    return calls


def syscalls(args):
    """System calls per request, for each strategy's board and the C echo."""
    if not shutil.which("strace"):
        sys.exit("needs strace (apt-get install strace)")
    build_c_echo()
    for pipeline in [int(p) for p in args.pipelines.split(",")]:
        print(f"\nsystem calls per request, board load, pipeline {pipeline} "
              f"({args.duration:g} s under strace -c -f; the top five by count)\n")
        print("| server | calls/request | top calls/request |")
        print("|---|---:|---|")
        servers = [(s, serve_command("board", s, args.server_cpu, args.server_args + args.board_args, args.bin))
                   for s in args.strategies.split(",")]
        servers.append((C_ECHO_NAME, c_echo_command(args.server_cpu)))
        for name, command in servers:
            calls, requests = strace_run(command, pipeline, args)
            top = sorted(calls.items(), key=lambda kv: -kv[1])[:5]
            per = ", ".join(f"{k} {v / requests:.3f}" for k, v in top)
            print(f"| {name} | {sum(calls.values()) / requests:.3f} | {per} |")


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--duration", type=float, default=4.0, help="seconds per run")
    ap.add_argument("--reps", type=int, default=3, help="board/echo pairs per point")
    common.add_placement(ap)
    ap.add_argument("--strategies", help="comma-separated (default: every strategy the binary serves)")
    common.add_binary(ap)
    ap.add_argument("--pipelines", default="1,16")
    ap.add_argument("--server-args", default="", help="extra flags for both servers")
    ap.add_argument("--board-args", default="",
                    help="extra flags for the board server alone (--store rwlock: the same store "
                         "in a build whose default store differs)")
    ap.add_argument("--json", help="also write every run here")
    ap.add_argument("--ceiling", action="store_true",
                    help="compare each strategy's board with the C epoll echo server "
                         "(benches/epoll_echo.c), interleaved")
    ap.add_argument("--compare", metavar="STRATEGY",
                    help="with --ceiling: also this strategy against the best of the others")
    ap.add_argument("--syscalls", action="store_true",
                    help="count system calls per request under strace (one short run each)")
    ap.add_argument("--before", metavar="BIN",
                    help="also serve with this (older) binary, interleaved run by run with --bin's "
                         "servers under the same client, and print after/before throughput")
    args = ap.parse_args()
    args.server_args = args.server_args.split()
    args.board_args = args.board_args.split()
    common.require_binary(args.bin)
    args.strategies_given = bool(args.strategies)
    if not args.strategies:
        args.strategies = ",".join(strategies(args.bin))
    if args.before and not os.path.exists(args.before):
        sys.exit(f"no binary at {args.before}")
    return args


def main():
    args = parse_args()
    if args.ceiling:
        return ceiling(args)
    if args.syscalls:
        return syscalls(args)
    if args.before and not args.strategies_given:
        before = set(strategies(args.before))
        args.strategies = ",".join(s for s in args.strategies.split(",") if s in before)
    rows, compared, raw = [], [], []
    for pipeline in [int(p) for p in args.pipelines.split(",")]:
        for strategy in args.strategies.split(","):
            pairs, befores = board_and_echo(strategy, pipeline, args, raw)
            if args.before:
                compared.append((strategy, pipeline, pairs, befores))
            rows.append(row(strategy, pipeline, pairs))
            r = rows[-1]
            print(f"  {strategy:<22} pipeline {pipeline:>2}: board {r[2]:>9.0f}/s  echo {r[3]:>9.0f}/s"
                  f"  ratio {r[4]:.3f}", file=sys.stderr)
    print_rows(rows, args)
    if compared:
        print_compared(compared, args)
    common.write_json(args.json, raw)


def board_and_echo(strategy, pipeline, args, raw):
    """`--reps` board/echo pairs under one strategy (and with --before the
    same pairs served by the older binary), in alternating order; each run
    also appended to `raw`. (pairs, pairs before)."""
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
    return pairs, befores


def row(strategy, pipeline, pairs):
    """A table row: medians of the pairs, and the board/echo ratio's median,
    min and max."""
    med = lambda proto, k: statistics.median(p[proto][k] for p in pairs)
    ratios = [p["board"]["rps"] / p["echo"]["rps"] for p in pairs]
    return (strategy, pipeline, med("board", "rps"), med("echo", "rps"),
            statistics.median(ratios), min(ratios), max(ratios),
            med("board", "server_cpu"), med("echo", "server_cpu"),
            med("board", "client_cpu"))


def print_rows(rows, args):
    print(f"\nboard vs echo, 5 posters + 5 readers, {args.duration:g} s runs, {args.reps} pairs per point;"
          f" server on CPU {args.server_cpu}, client on CPU {args.client_cpu}\n")
    print("| strategy | pipeline | board req/s | echo req/s | board/echo (min–max) "
          "| server CPU board / echo | client CPU |")
    print("|---|---:|---:|---:|---|---|---:|")
    for s, p, b, e, ratio, lo, hi, sb, se, cc in rows:
        print(f"| {s} | {p} | {b:,.0f} | {e:,.0f} | {ratio:.2f} ({lo:.2f}–{hi:.2f}) "
              f"| {sb:.0%} / {se:.0%} | {cc:.0%} |")


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
