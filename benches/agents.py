#!/usr/bin/env python3
"""The same total load from 1, 2 and 4 agents against one server, merged.

One board server pinned to --server-cpu; the load (an open loop at --rate,
posters + readers) split into N agents (`load board --agent I/N --start-at T
--out DIR`), every agent pinned to --client-cpu, then `serverlab merge DIR`.
Agent counts take turns within each repetition (1 2 4 1 2 4 …), so a drift
of the machine falls on all of them alike; the medians over repetitions are
printed side by side. On one machine the agents share its CPUs, so this
shows that the merge is faithful (the same throughput and latency however
the load is split), not what agents on several machines gain
(docs/measuring.md, "Loading from many machines").
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import common


def run_agents(args, server, n):
    """N agents of one load, started together; the merged results."""
    with tempfile.TemporaryDirectory() as out:
        start = time.time() + 1.0
        procs = [subprocess.Popen(common.pinned(args.client_cpu, [
            args.bin, "load", "board", "--addr", server.addr,
            "--posters", str(args.posters), "--readers", str(args.readers),
            "--rate", args.rate, "--duration", f"{args.duration}s",
            "--agent", f"{i}/{n}", "--start-at", f"{start:.3f}", "--out", out,
            "--format", "json"]), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            for i in range(n)]
        for p in procs:
            _, err = p.communicate()
            if p.returncode != 0:
                sys.exit(f"agent failed: {err.strip()}")
        merged = os.path.join(out, "merged.json")
        subprocess.run([args.bin, "merge", out, "--json", merged], check=True,
                       capture_output=True)
        with open(merged) as f:
            return json.load(f)["results"]


def percentile(histogram, q):
    """The value at quantile `q` of (value, count) pairs, sorted by value."""
    total = sum(c for _, c in histogram)
    seen = 0
    for value, count in histogram:
        seen += count
        if seen >= q * total:
            return value
    return histogram[-1][0] if histogram else 0.0


def row(results):
    """Throughput, p50 and p99 of every operation's latency together (the
    merged histograms added once more), and the client's CPU seconds."""
    both = sorted(pair for op in results["operations"] for pair in op["histogram_us"])
    cpu = results["client_cpu"]
    return {"rps": results["throughput_rps"], "p50_us": percentile(both, 0.5),
            "p99_us": percentile(both, 0.99), "client_cpu_s": cpu["user_s"] + cpu["system_s"]}


def main():
    ap = common.parser(__doc__)
    common.add_binary(ap)
    common.add_placement(ap)
    ap.add_argument("--rate", default="20k", help="the whole load's rate (default 20k)")
    ap.add_argument("--posters", type=int, default=8)
    ap.add_argument("--readers", type=int, default=8)
    ap.add_argument("--duration", type=float, default=5.0, help="seconds per run")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--agents", default="1,2,4")
    ap.add_argument("--json", help="also write every run here")
    args = ap.parse_args()
    common.require_binary(args.bin)
    counts = [int(n) for n in args.agents.split(",")]
    server = common.Server(args.bin, "board", "async", args.server_cpu)
    runs = {n: [] for n in counts}
    try:
        for rep in range(args.reps):
            for n in counts:
                runs[n].append(row(run_agents(args, server, n)))
                print(f"rep {rep + 1}, {n} agents: {runs[n][-1]}", file=sys.stderr)
    finally:
        server.stop()
    print(f"{args.rate} req/s from {args.posters}+{args.readers} connections, "
          f"{args.duration:g} s, medians of {args.reps}:")
    print("| agents | merged req/s | p50 µs | p99 µs | client CPU s |")
    print("|---:|---:|---:|---:|---:|")
    for n in counts:
        med = {k: statistics.median(r[k] for r in runs[n]) for k in runs[n][0]}
        print(f"| {n} | {med['rps']:,.0f} | {med['p50_us']:,.0f} | {med['p99_us']:,.0f} | "
              f"{med['client_cpu_s']:.2f} |")
    common.write_json(args.json, runs)


if __name__ == "__main__":
    main()
