#!/usr/bin/env python3
"""Agents that share a machine with each other and with the server: one
agent alone against four, under each `--poll` mode.

A board server runs on the machine, not pinned (or on --server-cpu); the
load, an open loop at --rate from --posters + --readers connections, runs
as one agent alone (`--agent 0/1`) and as four agents (`--agent I/4`), all
given one `--start-at` and an `--out` directory, then `serverlab merge DIR`.
Agents are not pinned unless --client-cpu is given. Each repetition runs
every poll mode (--polls, default spin then auto) with 1 and with 4 agents,
in turn, so a drift of the machine falls on all alike; the table gives the
medians over repetitions of the share of the asked rate reached (merged,
and the lowest agent's share of its own part), p99, the least of the
agents' largest latencies, the CPU the agents polled in vain and the share
of time they were allowed to spin (docs/measuring.md, "Agents that share a
machine").

With --stall the server is stopped (SIGSTOP) for 1 s in the middle of each
window: every agent must see it, its largest latency near a second; the
table then says how many agents did.

  benches/colocated_agents.py --reps 5
  benches/colocated_agents.py --stall --reps 3
"""

import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import common

#: Agents of the split runs.
SPLIT = 4
#: An agent saw the stall when its largest latency reached this share of it.
SAW = 0.8


class Serving:
    """The server: its process and address."""

    def __init__(self, p, addr):
        self.p, self.addr = p, addr


def agent_command(args, server, poll, i, n, start, out):
    """`load board` as agent I of N, polling as `poll`."""
    command = [args.bin, "load", "board", "--addr", server.addr,
               "--posters", str(args.posters), "--readers", str(args.readers),
               "--rate", args.rate, "--duration", f"{args.duration}s",
               "--warmup", f"{args.warmup}s", "--poll", poll,
               "--agent", f"{i}/{n}", "--start-at", f"{start:.3f}", "--out", out,
               "--format", "json"]
    return common.pinned(args.client_cpu, command) if args.client_cpu else command


def stall_later(server, at, length):
    """Stop `server` at wall-clock `at` for `length` seconds (a thread)."""
    def stall():
        time.sleep(max(0.0, at - time.time()))
        server.p.send_signal(signal.SIGSTOP)
        time.sleep(length)
        server.p.send_signal(signal.SIGCONT)
    t = threading.Thread(target=stall)
    t.start()
    return t


def run_agents(args, server, poll, n):
    """N agents of one load, started together: each agent's results and
    the merged results."""
    with tempfile.TemporaryDirectory() as out:
        start = time.time() + 1.5
        procs = [subprocess.Popen(agent_command(args, server, poll, i, n, start, out),
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                 for i in range(n)]
        stalling = None
        if args.stall:
            middle = start + args.warmup + args.duration / 2 - args.stall / 2
            stalling = stall_later(server, middle, args.stall)
        for p in procs:
            _, err = p.communicate()
            if p.returncode != 0:
                sys.exit(f"agent failed ({poll}, {n} agents): {err.strip()}")
        if stalling:
            stalling.join()
        agents = []
        for i in range(n):
            with open(os.path.join(out, f"agent-{i}-of-{n}.json")) as f:
                agents.append(json.load(f)["results"])
        merged = os.path.join(out, "merged.json")
        subprocess.run([args.bin, "merge", out, "--json", merged], check=True,
                       capture_output=True)
        with open(merged) as f:
            return agents, json.load(f)["results"]


def largest_latency_ms(results):
    """The largest latency of any operation, in ms."""
    return max(op["latency_us"]["max"] for op in results["operations"]) / 1000


def row(args, agents, merged):
    """What one run came to."""
    asked = merged.get("requested_rps") or common_rate(args.rate)
    polls = [a["client_cpu"].get("poll") or {} for a in agents]
    return {
        "share": merged["throughput_rps"] / asked,
        "lowest_agent_share": min(a["schedule"]["achieved_share"] for a in agents),
        "p99_ms": max(op["latency_us"]["p99"] for op in merged["operations"]) / 1000,
        "least_max_ms": min(largest_latency_ms(a) for a in agents),
        "saw_stall": sum(largest_latency_ms(a) >= SAW * args.stall * 1000 for a in agents),
        "idle_poll_s": sum(a["client_cpu"]["idle_poll_s"] for a in agents),
        "spin_share": statistics.mean(p.get("spin_share", float("nan")) for p in polls),
    }


def common_rate(rate):
    """`--rate` as a number: 4000, 20k, 1.5M."""
    scale = {"k": 1e3, "K": 1e3, "m": 1e6, "M": 1e6}.get(rate[-1:], 1)
    return float(rate[:-1] if scale != 1 else rate) * scale


def main():
    ap = common.parser(__doc__)
    common.add_binary(ap)
    ap.add_argument("--server-cpu", help="CPU list for the server (default: not pinned)")
    ap.add_argument("--client-cpu", help="CPU list for every agent (default: not pinned)")
    ap.add_argument("--rate", default="4000", help="the whole load's rate (default 4000)")
    ap.add_argument("--posters", type=int, default=4)
    ap.add_argument("--readers", type=int, default=4)
    ap.add_argument("--duration", type=float, default=10.0, help="seconds per run (default 10)")
    ap.add_argument("--warmup", type=float, default=1.0, help="seconds (default 1)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--polls", default="spin,auto", help="poll modes (default spin,auto)")
    ap.add_argument("--stall", type=float, nargs="?", const=1.0, default=0.0,
                    help="stop the server this long mid-window (default without: none; 1 s)")
    ap.add_argument("--json", help="also write every run here")
    args = ap.parse_args()
    common.require_binary(args.bin)
    polls = args.polls.split(",")
    command = [args.bin, "serve", "board", "--addr", "127.0.0.1:0"]
    if args.server_cpu:
        command += ["--cpus", args.server_cpu]
    server = Serving(*common.wait_listening(command))
    runs = {(poll, n): [] for poll in polls for n in (1, SPLIT)}
    try:
        for rep in range(args.reps):
            for poll in polls:
                for n in (1, SPLIT):
                    runs[poll, n].append(row(args, *run_agents(args, server, poll, n)))
                    print(f"rep {rep + 1}, --poll {poll}, {n} agents: {runs[poll, n][-1]}",
                          file=sys.stderr)
    finally:
        common.stop(server.p)
    report(args, polls, runs)
    common.write_json(args.json, {f"{poll} x{n}": r for (poll, n), r in runs.items()})


def report(args, polls, runs):
    """The medians, as a markdown table."""
    print(f"{args.rate} req/s from {args.posters}+{args.readers} connections, "
          f"{args.duration:g} s, {os.cpu_count()} CPUs, medians of {args.reps}"
          + (f", server stopped {args.stall:g} s mid-window" if args.stall else "") + ":")
    stall = " | agents that saw the stall" if args.stall else ""
    print("| --poll | agents | rate reached | lowest agent | p99 ms | least agent max ms "
          f"| polled in vain s | spin allowed{stall} |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|" + ("---:|" if args.stall else ""))
    for poll in polls:
        for n in (1, SPLIT):
            r = runs[poll, n]
            med = {k: statistics.median(x[k] for x in r) for k in r[0]}
            saw = f" | {min(x['saw_stall'] for x in r)} of {n}" if args.stall else ""
            print(f"| {poll} | {n} | {med['share']:.1%} | {med['lowest_agent_share']:.1%} | "
                  f"{med['p99_ms']:.2f} | {med['least_max_ms']:.1f} | {med['idle_poll_s']:.2f} | "
                  f"{med['spin_share']:.0%}{saw} |")


if __name__ == "__main__":
    main()
