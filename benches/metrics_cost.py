#!/usr/bin/env python3
"""What `serve --metrics` costs a server's throughput: with and without it.

One board server pinned to --server-cpu under --strategy (pass the fastest
one, as benches/strategies.py ranks them), driven by `serverlab load board`
(5 posters + 5 readers) pinned to --client-cpu, lock-step and with
--pipeline 16. Runs without (A) and with (B) `--metrics` alternate, A B A B
(the pair's order swapped every repetition, so a drift of the machine falls
on both alike); while a B run is loaded, a scraper fetches its /metrics
once a second, as a Prometheus would, so the cost includes the scrapes. The
table gives the median throughput of each side and the median of the
per-pair ratios B/A, with their range; the cost is 1 - B/A.

Usage: benches/metrics_cost.py [--strategy shared-nothing] [--duration 5] [--reps 5]
                               [--json out.json] [--bin PATH]
(from the repository root, after `cargo build --release`). A tiny check
that it runs: benches/metrics_cost.py --duration 1 --reps 1 --bin target/debug/serverlab
"""

import os
import re
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (beside this script)


def start(args, with_metrics):
    """A board server, with `--metrics 127.0.0.1:0` or not; (process,
    address, metrics URL or None)."""
    extra = ["--strategy", args.strategy]
    if with_metrics:
        extra += ["--metrics", "127.0.0.1:0"]
    # The runs without: the baseline build's server where one is given
    # (from before the counters the server keeps with or without the flag).
    server = args.bin if with_metrics or not args.baseline_bin else args.baseline_bin
    cmd = common.serve_command(server, "board", args.server_cpu, *extra)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    m = re.search(r"listening on (\S+)", line)
    if not m:
        p.kill()
        sys.exit(f"server did not start: {line!r}")
    url = re.search(r"metrics at (\S+)", line)
    return p, m.group(1), url.group(1) if url else None


def scrape_every_second(url, stop):
    """Fetch `url` once a second until `stop` is set; how many answered."""
    n = 0
    while not stop.wait(1.0):
        with urllib.request.urlopen(url, timeout=5) as r:
            r.read()
            n += 1
    return n


def one_run(args, with_metrics, pipeline):
    """Serve, load, stop: the load's throughput (requests/s)."""
    p, addr, url = start(args, with_metrics)
    stop = threading.Event()
    scraper = None
    if url:
        scraper = threading.Thread(target=scrape_every_second, args=(url, stop), daemon=True)
        scraper.start()
    try:
        load = common.pinned(args.client_cpu, [
            args.bin, "load", "board", "--addr", addr, "--posters", "5", "--readers", "5",
            "--duration", f"{args.duration}s", "--pipeline", str(pipeline), "--format", "json"])
        r = common.load_results(load)
    finally:
        stop.set()
        if scraper:
            scraper.join()
        common.stop(p)
    if not r["requests"]:
        sys.exit(f"the load counted no requests: is --duration ({args.duration:g} s) "
                 "longer than the load's warm-up?")
    return r["throughput_rps"]


def main():
    ap = common.parser(__doc__)
    ap.add_argument("--strategy", default="shared-nothing",
                    help="the server's strategy: the fastest (default shared-nothing)")
    ap.add_argument("--duration", type=float, default=5.0, help="seconds per run (default 5)")
    ap.add_argument("--reps", type=int, default=5, help="A B pairs per mode (default 5)")
    ap.add_argument("--json", help="also write every run here")
    ap.add_argument("--baseline-bin",
                    help="serve the runs without --metrics with this binary (a build from "
                         "before the metrics, to count what the server keeps with or without "
                         "the flag too)")
    common.add_placement(ap)
    common.add_binary(ap)
    args = ap.parse_args()
    common.require_binary(args.bin)
    rows, runs = [], {}
    for mode, pipeline in (("lock-step", 1), ("pipelined", 16)):
        pairs = []
        for rep in range(args.reps):
            order = (False, True) if rep % 2 == 0 else (True, False)
            got = {side: one_run(args, side, pipeline) for side in order}
            pairs.append((got[False], got[True]))
            print(f"  {mode} rep {rep}: without {got[False]:,.0f}/s, with {got[True]:,.0f}/s",
                  file=sys.stderr)
        runs[mode] = [{"without_rps": a, "with_rps": b} for a, b in pairs]
        ratios = [b / a for a, b in pairs]
        rows.append((mode, statistics.median(a for a, _ in pairs),
                     statistics.median(b for _, b in pairs), statistics.median(ratios),
                     min(ratios), max(ratios)))
    base = f"; without: {args.baseline_bin}" if args.baseline_bin else ""
    print(f"\n`serve board --strategy {args.strategy}`, {args.reps} pairs of "
          f"{args.duration:g} s per mode{base}\n")
    print("| mode | without --metrics (req/s) | with --metrics (req/s) | with/without "
          "(median, range) | cost |")
    print("|---|---:|---:|---:|---:|")
    for mode, a, b, r, lo, hi in rows:
        print(f"| {mode} | {a:,.0f} | {b:,.0f} | {r:.3f} ({lo:.3f}–{hi:.3f}) | "
              f"{(1 - r) * 100:+.1f}% |")
    if args.json:
        common.write_json(args.json, {"strategy": args.strategy, "runs": runs})


if __name__ == "__main__":
    main()
