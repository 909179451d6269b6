#!/usr/bin/env python3
"""What `serverlab merge` holds and takes to merge many agents' files.

Runs one real agent (`load board --agent 0/1 --start-at T --out DIR`,
an open loop against `serve board`), then writes N copies of its result
and HDR log as agents 0 … N-1 of one N-agent run (each JSON's agent index,
count and run id rewritten; the log copied as it is), and times `serverlab
merge DIR --format json` over them: its peak resident memory (the maximum
RSS of the merge process alone, from getrusage in a wrapper process) and
its wall time, once per agent count. Merge reads each agent's log a line
at a time into the merged histograms, so its memory should follow the
agents' results, not their logs or their clocks: the target is 1000
agents in under 256 MiB (docs/measuring.md, "Loading from many
machines").

Usage (from the repository root, after `cargo build --release`):
    benches/merge_memory.py [--agents 10,100,1000] [--duration 2] [--bin PATH]
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import common

# The merge run in a process of its own whose peak RSS is its own: the
# wrapper's getrusage(RUSAGE_CHILDREN) sees only the merge.
MEASURE = r"""
import resource, subprocess, sys, time
t = time.monotonic()
p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
wall = time.monotonic() - t
rss_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(p.returncode, rss_kib, wall)
sys.stderr.write(p.stderr)
"""


def one_agent(args, out):
    """One real agent's files in `out`: agent-0-of-1.json and .hlog."""
    server = common.Server(args.bin, "board", "async", args.server_cpu)
    try:
        start = time.time() + 1.0
        cmd = common.pinned(args.client_cpu, [
            args.bin, "load", "board", "--addr", server.addr, "--posters", "2",
            "--readers", "2", "--rate", args.rate, "--duration", f"{args.duration}s",
            "--warmup", "0s", "--agent", "0/1", "--start-at", f"{start:.3f}",
            "--out", out, "--format", "json"])
        common.load_results(cmd, "the agent")
    finally:
        server.stop()


def copies(source, n, into):
    """Agents 0 … n-1 of one run in `into`, each a copy of the one agent."""
    with open(os.path.join(source, "agent-0-of-1.json")) as f:
        result = json.load(f)
    log = os.path.join(source, "agent-0-of-1.hlog")
    agent = result["results"]["agent"]
    agent["count"], agent["run_id"] = n, f"bench-{n}"
    size = 0
    for i in range(n):
        agent["index"] = i
        stem = os.path.join(into, f"agent-{i}-of-{n}")
        with open(stem + ".json", "w") as f:
            json.dump(result, f)
        shutil.copyfile(log, stem + ".hlog")
        size += os.path.getsize(stem + ".json") + os.path.getsize(stem + ".hlog")
    return size


def measure(binary, directory):
    """`serverlab merge DIR`: exit status, peak RSS (MiB), wall time (s)."""
    out = subprocess.run([sys.executable, "-c", MEASURE, binary, "merge", directory,
                          "--format", "json"], capture_output=True, text=True, check=True)
    code, rss_kib, wall = out.stdout.split()
    if int(code) != 0:
        sys.exit(f"merge failed ({code}): {out.stderr.strip()}")
    return int(rss_kib) / 1024, float(wall)


def main():
    ap = common.parser(__doc__)
    common.add_binary(ap)
    common.add_placement(ap)
    ap.add_argument("--agents", default="10,100,1000",
                    help="agent counts to merge, comma-separated (default 10,100,1000)")
    ap.add_argument("--duration", type=int, default=2, help="the agent's run, s (default 2)")
    ap.add_argument("--rate", default="400", help="the agent's open-loop rate (default 400)")
    ap.add_argument("--json", help="also write the rows as JSON to this file")
    args = ap.parse_args()
    common.require_binary(args.bin)
    rows = []
    with tempfile.TemporaryDirectory() as work:
        source = os.path.join(work, "one")
        one_agent(args, source)
        for n in [int(a) for a in args.agents.split(",")]:
            into = os.path.join(work, f"n{n}")
            os.mkdir(into)
            size = copies(source, n, into)
            rss, wall = measure(args.bin, into)
            rows.append({"agents": n, "files_mib": size / common.MIB, "peak_rss_mib": rss,
                         "wall_s": wall})
            shutil.rmtree(into)
    print(f"merge of N copies of one {args.duration} s agent ({args.rate} req/s, board):\n")
    print("| agents | files MiB | peak RSS MiB | wall s |")
    print("|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['agents']} | {r['files_mib']:.1f} | {r['peak_rss_mib']:.1f} "
              f"| {r['wall_s']:.2f} |")
    common.write_json(args.json, rows)


if __name__ == "__main__":
    main()
