#!/usr/bin/env python3
"""glibc (with malloc_trim after bursts) vs mimalloc vs jemalloc, side by
side in one sitting (docs/design.md, "Memory").

Builds the release binary once per allocator (`cargo build --release
[--features mimalloc|jemalloc]`, each copied to target/alloc/) unless
given with --glibc/--mimalloc/--jemalloc. Then, --reps times, rotating the
allocators' order so slow drifts of the machine hit each alike, and for
each allocator against a fresh server (pinned to --server-cpu, the client
to --client-cpu):

  lock-step   `load board` (5 posters + 5 readers) for --duration: req/s
  pipelined   the same with --pipeline 16: req/s
  burst       `serve kv`: resident memory at start, while --clients
              clients pipeline GETs of a 1 MiB value and never read, and
              5 s after they reset their connections

Prints the medians per allocator.

Usage: benches/alloc.py [--strategy async] [--duration 4] [--reps 3] [--clients 50]
                        [--glibc BIN --mimalloc BIN --jemalloc BIN] [--json out.json]
(from the repository root). A tiny check that it runs, on one debug build:
benches/alloc.py --duration 1 --reps 1 --clients 5 --glibc target/debug/serverlab \\
  --mimalloc target/debug/serverlab --jemalloc target/debug/serverlab
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (beside this script)
import hostile  # noqa: E402
from common import ROOT, Server, rss_mib  # noqa: E402

ALLOCATORS = ["glibc", "mimalloc", "jemalloc"]


def build(allocator):
    """The release binary with `allocator`, copied aside."""
    features = [] if allocator == "glibc" else ["--features", allocator]
    subprocess.run(["cargo", "build", "--release", "-p", "serverlab", *features],
                   cwd=ROOT, check=True)
    os.makedirs(os.path.join(ROOT, "target", "alloc"), exist_ok=True)
    dest = os.path.join(ROOT, "target", "alloc", f"serverlab-{allocator}")
    shutil.copy2(os.path.join(ROOT, "target", "release", "serverlab"), dest)
    return dest


def throughput(binary, args, pipeline):
    srv = Server(binary, "board", args.strategy, args.server_cpu)
    try:
        return common.load_results(common.pinned(args.client_cpu, [
            binary, "load", "board", "--addr", srv.addr, "--posters", "5", "--readers", "5",
            "--duration", f"{args.duration}s", "--pipeline", str(pipeline),
            "--format", "json"]))["throughput_rps"]
    finally:
        srv.stop()


def burst(binary, args):
    srv = Server(binary, "kv", args.strategy, args.server_cpu)
    try:
        hostile.put_big(srv)
        time.sleep(0.3)
        start = rss_mib(srv.p.pid)
        socks = hostile.never_reading(srv, args.clients, hostile.kv_request("GET", "/big") * 64)
        peak = start
        for _ in range(20):
            time.sleep(0.1)
            peak = max(peak, rss_mib(srv.p.pid))
        hostile.reset(socks)
        time.sleep(5.0)
        after = rss_mib(srv.p.pid)
    finally:
        srv.stop()
    return start, peak, after


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--strategy", default="async")
    ap.add_argument("--duration", type=float, default=4.0)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--clients", type=int, default=50)
    common.add_placement(ap)
    for a in ALLOCATORS:
        ap.add_argument(f"--{a}", metavar="BIN", help=f"a binary built with {a} (default: build it)")
    ap.add_argument("--json", help="also write every run here")
    args = ap.parse_args()
    hostile.raise_fd_limit()
    bins = {a: getattr(args, a) or build(a) for a in ALLOCATORS}
    runs = {a: [] for a in ALLOCATORS}
    for rep in range(args.reps):
        k = rep % len(ALLOCATORS)
        for a in ALLOCATORS[k:] + ALLOCATORS[:k]:
            lock = throughput(bins[a], args, 1)
            piped = throughput(bins[a], args, 16)
            start, peak, after = burst(bins[a], args)
            fig = {"allocator": a, "rep": rep, "lockstep_rps": lock, "pipelined_rps": piped,
                   "rss_start_mib": start, "rss_peak_mib": peak, "rss_after_mib": after}
            runs[a].append(fig)
            print(f"  {fig}", file=sys.stderr)
    med = lambda a, k: statistics.median(f[k] for f in runs[a])
    print(f"\nallocators, strategy {args.strategy}; board 5+5 for {args.duration:g} s;"
          f" {args.clients} never-reading kv clients; medians of {args.reps}\n")
    print("| allocator | lock-step req/s | pipelined (16) req/s "
          "| RSS start / peak / 5 s after the burst (MiB) |")
    print("|---|---:|---:|---|")
    for a in ALLOCATORS:
        print(f"| {a} | {med(a, 'lockstep_rps'):,.0f} | {med(a, 'pipelined_rps'):,.0f} "
              f"| {med(a, 'rss_start_mib'):.0f} / {med(a, 'rss_peak_mib'):.0f} / "
              f"{med(a, 'rss_after_mib'):.0f} |")
    common.write_json(args.json, [f for a in ALLOCATORS for f in runs[a]])


if __name__ == "__main__":
    main()
