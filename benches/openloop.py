#!/usr/bin/env python3
"""The open loop's measured figures for docs/measuring.md, in one sitting.

stall        Coordinated omission, seen both ways: a board server is stopped
             (SIGSTOP) for 1 s in the middle of a 4 s run, once under an open
             loop at a constant rate and once closed loop. Prints the latency
             from the intended send time, the service time (from the actual
             send) and the closed loop's latency: p50, p99, p99.9, max.
client-cost  How much load the open-loop client itself can offer: the closed
             loop's throughput against `serve echo`, then open-loop steps at a
             rising share of it until the client's own schedule lags (over 1%
             of requests sent more than 1 ms after their connection had room)
             or the rate is not kept up. Prints both and their ratio.
known-capacity  A capacity search against a server of known capacity: a
             bucket server with 2 workers each sleeping 2 ms per request (at
             most 1000 requests/s), searched by 8 keep-alive connections at
             p99 <= 20 ms. Prints the capacity found, its share of 1000/s,
             and the steps. (The test suite asserts how the search behaves,
             which holds on a busy machine; the figure it lands on, 600 to
             1000/s on a quiet one, is measured here.)

Server and load are pinned apart (--server-cpu, --client-cpu). Run from the
repository root after `cargo build --release`, on a quiet machine:

    benches/openloop.py stall
    benches/openloop.py client-cost [--duration 5] [--steps 0.5,0.7,0.8,0.9,1.0,1.1]
    benches/openloop.py known-capacity [--duration 2]

`--duration 0.5` checks the script itself in a few seconds (the figures are
then meaningless). The capacity table and the hockey stick come from
experiments/capacity.toml and experiments/openloop.toml (`serverlab sweep`).
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (beside this script)
from common import stop  # noqa: E402


def start(args, protocol, extra=()):
    return common.wait_listening(common.serve_command(args.bin, protocol, args.server_cpu, *extra))


def load(args, addr, *flags):
    return common.pinned(args.client_cpu, [args.bin, "load", "board", "--addr", addr, *flags,
                                           "--format", "json"])


def finish(proc):
    out, err = proc.communicate()
    if proc.returncode != 0:
        sys.exit(f"load failed: {err}")
    return json.loads(out)


def stalled_run(args, extra):
    """One 4 s board run (after a 1 s warm-up) with the server stopped for
    a second in its middle."""
    server, addr = start(args, "board")
    try:
        window = 4 * args.duration
        proc = subprocess.Popen(
            load(args, addr, "--posters", "2", "--readers", "2", "--duration", f"{window}s",
                 "--warmup", "1s", *extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True)
        time.sleep(1 + window / 2 - args.duration / 2)
        server.send_signal(signal.SIGSTOP)
        time.sleep(args.duration)
        server.send_signal(signal.SIGCONT)
        return finish(proc)
    finally:
        stop(server)


def figures(op, view):
    p = op.get(view)
    if not p:
        return "– | – | – | –"
    return " | ".join(f"{p[k] / 1000:.2f} ms" for k in ("p50", "p99", "p99_9", "max"))


def stall(args):
    rate = str(args.rate)
    open_ = stalled_run(args, ["--rate", rate])
    closed = stalled_run(args, [])
    print(f"A board server stopped for {args.duration} s in the middle of a "
          f"{4 * args.duration} s run (2 posters + 2 readers):\n")
    print("| run | op | requests | p50 | p99 | p99.9 | max |")
    print("|---|---|---|---|---|---|---|")
    for name, v, view in [(f"open loop, {rate} req/s: latency from the intended send time",
                           open_, "latency_us"),
                          ("open loop: service time, from the actual send", open_, "service_us"),
                          ("closed loop: latency", closed, "latency_us")]:
        for op in (o for o in v["results"]["operations"] if o["count"] > 0):
            print(f"| {name} | {op['name']} | {op['count']} | {figures(op, view)} |")
    s = open_["results"]["schedule"]
    print(f"\nopen loop: {s['late_requests']} requests sent over 1 ms late (largest lag "
          f"{s['max_lag_us'] / 1000:.1f} ms), {s['client_late_requests']} of them the "
          f"client's own; per second (replies, p99, max):")
    for i, sec in enumerate(open_["results"]["per_second_latency_us"]):
        p99, mx = sec["p99"], sec["max"]
        shown = "–" if p99 is None else f"{p99 / 1000:.1f} ms, {mx / 1000:.1f} ms"
        print(f"  second {i}: {sec['requests']} replies, {shown}")
    print(f"closed loop: {closed['results']['throughput_rps']:.0f} req/s")


def client_cost(args):
    server, addr = start(args, "echo")
    try:
        conns = ["--posters", str(args.connections // 2), "--readers",
                 str(args.connections - args.connections // 2)]
        closed = finish(subprocess.Popen(
            load(args, addr, *conns, "--duration", f"{args.duration}s"),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        ceiling = closed["results"]["throughput_rps"]
        print(f"closed loop against serve echo, {args.connections} connections: "
              f"{ceiling:.0f} req/s\n")
        print("| offered | share of closed | sent/s | achieved/s | client late >1 ms | "
              "largest own lag | kept up |")
        print("|---|---|---|---|---|---|---|")
        best = None
        for share in [float(x) for x in args.steps.split(",")]:
            rate = round(ceiling * share)
            v = finish(subprocess.Popen(
                load(args, addr, *conns, "--rate", str(rate), "--duration",
                     f"{args.duration}s"),
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
            s = v["results"]["schedule"]
            own = s["client_late_requests"] / max(s["sent_requests"], 1)
            ok = s["kept_up"] and own <= 0.01
            print(f"| {rate} | {share:.2f} | {s['sent_rps']:.0f} | "
                  f"{v['results']['throughput_rps']:.0f} | {own:.2%} | "
                  f"{s['client_max_lag_us'] / 1000:.2f} ms | {'yes' if ok else 'no'} |")
            if ok:
                best = rate
            else:
                break
        if best is None:
            print("\nthe open-loop client lagged at every rate tried")
        else:
            print(f"\nthe open-loop client keeps its schedule up to {best} req/s: "
                  f"{best / ceiling:.2f} of the closed loop's throughput")
    finally:
        stop(server)


def known_capacity(args):
    server, addr = start(args, "bucket", ["--strategy", "pool-locked", "--threads", "2",
                                          "--delay-mode", "sleep", "--delay-unit", "ms"])
    try:
        v = finish(subprocess.Popen(
            common.pinned(args.client_cpu, [
                args.bin, "load", "bucket", "--addr", addr, "--keep-alive", "--delay", "2",
                "--delay-unit", "ms", "--delay-mode", "sleep", "--connections", "8",
                "--search", "p99<=20ms", "--step-duration", f"{args.duration}s",
                "--warmup", "500ms", "--format", "json"]),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    finally:
        stop(server)
    s = v["search"]
    print("| requested/s | achieved/s | p99 | kept up | pass |")
    print("|---|---|---|---|---|")
    for t in s["steps"]:
        p99 = "–" if t["p99_us"] is None else f"{t['p99_us'] / 1000:.1f} ms"
        print(f"| {t['requested_rps']:.0f} | {t['achieved_rps']:.0f} | {p99} | "
              f"{'yes' if t['kept_up'] else 'no'} | {'yes' if t['pass'] else 'no'} |")
    capacity = s["capacity_rps"]
    if capacity is None:
        print(f"\nno capacity found at {s['target']}: {s.get('note')}")
    else:
        print(f"\ncapacity at {s['target']}: {capacity:.0f} requests/s, "
              f"{capacity / 1000:.2f} of the server's 1000/s")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=["stall", "client-cost", "known-capacity"])
    common.add_binary(ap)
    common.add_placement(ap)
    ap.add_argument("--duration", type=float, default=1.0,
                    help="stall: the stall's length, the run 4 times it (default 1 s); "
                         "client-cost: each step's window (default 5 s); "
                         "known-capacity: each search step's (default 2 s)")
    ap.add_argument("--rate", type=int, default=2000, help="stall: the open loop's rate")
    ap.add_argument("--connections", type=int, default=4, help="client-cost: connections")
    ap.add_argument("--steps", default="0.5,0.7,0.8,0.85,0.9,0.95,1.0,1.05,1.1",
                    help="client-cost: offered rates as shares of the closed loop's")
    args = ap.parse_args()
    common.require_binary(args.bin)
    if args.what == "client-cost" and "--duration" not in sys.argv:
        args.duration = 5.0
    if args.what == "known-capacity" and "--duration" not in sys.argv:
        args.duration = 2.0
    {"stall": stall, "client-cost": client_cost, "known-capacity": known_capacity}[args.what](args)


if __name__ == "__main__":
    main()
