#!/usr/bin/env python3
"""What watching a load costs it: `load --metrics` and `load --progress line`.

One board server pinned to --server-cpu under --strategy (the fastest, as
benches/strategies.py ranks them), driven as fast as it answers by
`serverlab load board` (5 posters + 5 readers, closed loop) pinned to
--client-cpu, lock-step and with --pipeline 16: the load's throughput is
what its own cost would lower. Three variants of the load run in turn on a
fresh server each: plain (A), with `--metrics` and a scraper fetching its
/metrics once a second as a Prometheus would (M), and with `--progress
line` (L, its lines on stderr, captured). Their order rotates every
repetition, so a drift of the machine falls on all alike. The table gives
each variant's median throughput and the median of the per-repetition
ratios M/A and L/A, with their range; the cost is 1 - ratio.

Usage: benches/load_metrics_cost.py [--strategy shared-nothing] [--duration 5] [--reps 7]
                                    [--json out.json] [--bin PATH]
(from the repository root, after `cargo build --release`). A tiny check
that it runs: benches/load_metrics_cost.py --duration 1 --reps 1 --bin target/debug/serverlab
"""

import os
import statistics
import sys
import threading
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (beside this script)

VARIANTS = ("plain", "metrics", "progress")


def scrape_every_second(url, stop, answered):
    """Fetch `url` once a second until `stop` is set (the endpoint may not
    be up yet at first); counts the scrapes answered in `answered`."""
    while not stop.wait(1.0):
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                r.read()
                answered[0] += 1
        except OSError:
            pass


def one_run(args, variant, pipeline):
    """Serve, load with `variant`, stop: the load's throughput (requests/s)."""
    server = common.Server(args.bin, "board", args.strategy, args.server_cpu)
    extra, stop, scraper, answered = [], threading.Event(), None, [0]
    if variant == "metrics":
        url_at = f"127.0.0.1:{common.free_port()}"
        extra = ["--metrics", url_at]
        scraper = threading.Thread(
            target=scrape_every_second,
            args=(f"http://{url_at}/metrics", stop, answered), daemon=True)
        scraper.start()
    elif variant == "progress":
        extra = ["--progress", "line"]
    try:
        r = common.load_results(common.pinned(args.client_cpu, [
            args.bin, "load", "board", "--addr", server.addr, "--posters", "5",
            "--readers", "5", "--duration", f"{args.duration}s", "--pipeline", str(pipeline),
            "--format", "json", *extra]))
    finally:
        stop.set()
        if scraper:
            scraper.join()
        server.stop()
    if not r["requests"]:
        sys.exit(f"the load counted no requests: is --duration ({args.duration:g} s) "
                 "longer than the load's warm-up?")
    if variant == "metrics" and args.duration >= 2 and not answered[0]:
        sys.exit("the load's --metrics endpoint answered no scrape")
    return r["throughput_rps"]


def main():
    ap = common.parser(__doc__)
    ap.add_argument("--strategy", default="shared-nothing",
                    help="the server's strategy: the fastest (default shared-nothing)")
    ap.add_argument("--duration", type=float, default=5.0, help="seconds per run (default 5)")
    ap.add_argument("--reps", type=int, default=7, help="rounds of the three variants (default 7)")
    ap.add_argument("--json", help="also write every run here")
    common.add_placement(ap)
    common.add_binary(ap)
    args = ap.parse_args()
    common.require_binary(args.bin)
    rows, runs = [], {}
    for mode, pipeline in (("lock-step", 1), ("pipelined", 16)):
        rounds = []
        for rep in range(args.reps):
            k = rep % len(VARIANTS)
            order = VARIANTS[k:] + VARIANTS[:k]
            got = {v: one_run(args, v, pipeline) for v in order}
            rounds.append(got)
            print(f"  {mode} rep {rep}: " + ", ".join(f"{v} {got[v]:,.0f}/s" for v in VARIANTS),
                  file=sys.stderr)
        runs[mode] = rounds
        plain = statistics.median(g["plain"] for g in rounds)
        for v, flag in (("metrics", "--metrics"), ("progress", "--progress line")):
            ratios = [g[v] / g["plain"] for g in rounds]
            rows.append((mode, flag, plain, statistics.median(g[v] for g in rounds),
                         statistics.median(ratios), min(ratios), max(ratios)))
    print(f"\n`load board` against `serve board --strategy {args.strategy}`, {args.reps} rounds "
          f"of {args.duration:g} s per mode\n")
    print("| mode | variant | plain (req/s) | with it (req/s) | with/plain (median, range) "
          "| cost |")
    print("|---|---|---:|---:|---:|---:|")
    for mode, flag, a, b, r, lo, hi in rows:
        print(f"| {mode} | `{flag}` | {a:,.0f} | {b:,.0f} | {r:.3f} ({lo:.3f}–{hi:.3f}) | "
              f"{(1 - r) * 100:+.1f}% |")
    if args.json:
        common.write_json(args.json, {"strategy": args.strategy, "runs": runs})


if __name__ == "__main__":
    main()
