#!/usr/bin/env python3
"""What durability costs: write throughput and p99 under each
`--durability` mode, against redis-server's append-only file.

Each round, in a shuffled order, runs every configuration once: `serve
resp --strategy S --durability M --data-dir (fresh)` for each strategy
asked for (default: pool-locked, a pool, and async, an event loop) and
each mode (none, os, everysec, always), and redis-server with
`appendonly no`, and with `appendonly yes` under `appendfsync everysec`
and `always`; each driven by `serverlab load resp --mix set=100` (64-byte
values over 100k keys) from 1, 8 and 64 connections. Servers are pinned to
one CPU and the load to the other. Each round also times this disk's own
`fdatasync` the way the log uses it: append 64 bytes to a file in the data
directory's file system, then `fdatasync`, many times. Every figure is the
median of its rounds.

With `--commit-delays`, serverlab's `always` also runs with each commit
delay (the hidden `serve --commit-delay`: the log thread waits that long
after a record arrives before it takes the batch): whether waiting to
gather more records per `fsync` pays. `--modes` and `--redis-modes`
narrow the grid (`--modes always --redis-modes always`).

`--mix get=50,set=50` measures what `always`'s reply barrier costs reads:
the table then gives GET p50 and p99 beside SET's p99.

Prints a Markdown table: per server, mode and connections, requests per
second, SET p99 latency (and GET p50 / p99 when the mix has GETs), and for serverlab's log the records per `fsync` (mean) and
the commit wait (median, p99) from the server's final statistics, and
`always`'s share of its physical ceiling: requests/s over (records per
`fsync` x the fsyncs per second one writer gets from this disk, timed
each round by `fsync_ceiling.py`'s probe). Then the disk's `fdatasync`
latency (median, p99 of each round's median) and that ceiling, and each
serverlab configuration over redis-server in the same mode and
connections (the median of the rounds' ratios, and their range).

Durable writes against Redis, by default (the lead's table, on a quiet
machine): `benches/durability.py --modes always --redis-modes always
--strategies thread-per-connection,pool-locked,async,shared-nothing,uring
--rounds 5`.

A strategy written `uring+loop` runs `--strategy uring --committer loop`:
each ring writes and syncs its own pass's records, as Redis does.

`--other-bin before=PATH` adds a second serverlab build (an earlier
commit's release binary) for every strategy and mode, interleaved with
the rest: before and after, in one sitting.

Usage (from the repository root, after `cargo build --release`, on a quiet
machine; about 9 minutes with the defaults):
    benches/durability.py [--rounds 3] [--duration 3] [--warmup 1]
        [--connections 1,8,64] [--strategies pool-locked,async] [--commit-delays 100,300]
        [--modes none,os,everysec,always] [--redis-modes none,everysec,always]
        [--dir DIR] [--json out.json] [--bin PATH]
    benches/durability.py --quick     # a tiny run: checks the script works
Needs redis-server and taskset. DIR (default: a directory under /tmp) must
be on the disk to be measured.
"""

import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (beside this script)
import fsync_ceiling  # noqa: E402  (beside this script)

MODES = ["none", "os", "everysec", "always"]
REDIS_MODES = ["none", "everysec", "always"]


def serverlab_server(args, binary, strategy, mode, delay, data):
    """A durable `serve resp`; (process, addr, stats file). A strategy
    `S+loop` is S with `--committer loop` (the ring commits its pass)."""
    stats = os.path.join(data, "stats.json")
    extra = ["--stats-json", stats]
    strategy, _, committer = strategy.partition("+")
    if committer and mode != "none":
        extra += ["--committer", committer]
    if mode != "none":
        extra += ["--durability", mode, "--data-dir", os.path.join(data, "wal")]
    if delay:
        extra += ["--commit-delay", f"{delay}us"]
    proc, addr = common.wait_listening(common.serve_command(
        binary, "resp", args.server_cpu, "--strategy", strategy, *extra))
    return proc, addr, stats


def redis_server(args, mode, data):
    """redis-server pinned like ours, its AOF in `data`; (process, addr)."""
    port = common.free_port()
    aof = ["--appendonly", "no"] if mode == "none" else [
        "--appendonly", "yes", "--appendfsync", mode, "--auto-aof-rewrite-percentage", "0"]
    proc = subprocess.Popen(common.pinned(args.server_cpu, [
        "redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
        "--dir", data, *aof]), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    common.wait_port(proc, port, "redis-server")
    return proc, f"127.0.0.1:{port}"


def set_load(args, addr, connections):
    """`load resp --mix MIX` (default set=100) from the client CPU: (requests/s,
    SET p99 µs, GET p50 and p99 µs or None when the mix has no GET)."""
    r = common.load_results([
        args.bin, "load", "resp", "--addr", addr, "--mix", args.mix,
        "--connections", str(connections), "--duration", f"{args.duration}s",
        "--warmup", f"{args.warmup}s", "--cpus", args.client_cpu, "--format", "json"])
    ops = {o["name"]: o["latency_us"] for o in r["operations"]}
    get = ops.get("GET") if "get" in args.mix.lower() else None
    return (r["throughput_rps"], ops["SET"]["p99"],
            get and get["p50"], get and get["p99"])


def run_one(args, config, root):
    """One configuration once: its figures."""
    server, strategy, mode, connections, delay = config
    data = tempfile.mkdtemp(dir=root)
    try:
        if server.startswith("serverlab"):
            binary = args.other_bins.get(server.partition("@")[2], args.bin)
            proc, addr, stats = serverlab_server(args, binary, strategy, mode, delay, data)
            rps, p99, g50, g99 = set_load(args, addr, connections)
            common.stop(proc)
            fig = {"rps": rps, "p99_us": p99, "get_p50_us": g50, "get_p99_us": g99}
            with open(stats) as f:
                d = json.load(f)["protocol"].get("durability")
            if d:
                fig.update(records_per_fsync=d["records_per_fsync"]["mean"],
                           fsyncs=d["fsyncs"], commit_p50_us=d["commit_us"]["median"],
                           commit_p99_us=d["commit_us"]["p99"])
            return fig
        proc, addr = redis_server(args, mode, data)
        rps, p99, g50, g99 = set_load(args, addr, connections)
        proc.terminate()
        proc.wait(20)
        return {"rps": rps, "p99_us": p99, "get_p50_us": g50, "get_p99_us": g99}
    finally:
        shutil.rmtree(data, ignore_errors=True)


def fdatasync_latency(root, n):
    """Median and p99 of `n` appends of 64 bytes, each `fdatasync`ed, µs."""
    path = os.path.join(root, "fsync-probe")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        times = []
        for _ in range(n):
            t = time.perf_counter()
            os.write(fd, b"x" * 64)
            os.fdatasync(fd)
            times.append((time.perf_counter() - t) * 1e6)
    finally:
        os.close(fd)
        os.unlink(path)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.99)]


def configurations(args):
    out = []
    for c in args.connections:
        for s in args.strategies:
            out += [("serverlab", s, m, c, 0) for m in args.modes]
            out += [("serverlab", s, "always", c, d) for d in args.commit_delays]
            for name in args.other_bins:
                out += [(f"serverlab@{name}", s, m, c, 0) for m in args.modes
                        if "+" not in s]
        out += [("redis-server", "", m, c, 0) for m in args.redis_modes]
    return out


def median_of(runs, key):
    vals = [r[key] for r in runs if r.get(key) is not None]
    return statistics.median(vals) if vals else None


def report(results, disk, ceilings):
    """The table; `ceilings`: each round's fsyncs per second from one
    writer (the disk's own ceiling, `fsync_ceiling.py`)."""
    ceiling = statistics.median(ceilings)
    print("| server | mode | connections | requests/s | SET p99 | GET p50 / p99 | records per fsync | commit wait p50 / p99 | share of the ceiling |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for (server, strategy, mode, c, delay), runs in results.items():
        name = f"{server} {strategy}" if strategy else server
        if delay:
            mode = f"{mode}, {delay} µs commit delay"
        rps, p99 = median_of(runs, "rps"), median_of(runs, "p99_us")
        per = median_of(runs, "records_per_fsync")
        c50, c99 = median_of(runs, "commit_p50_us"), median_of(runs, "commit_p99_us")
        # everysec's one fsync a second covers all that second's records.
        per_s = f"{per:.1f}" if per and mode.startswith("always") else ""
        commit = f"{c50:.0f} / {c99:.0f} µs" if c50 is not None and mode != "none" else ""
        g50, g99 = median_of(runs, "get_p50_us"), median_of(runs, "get_p99_us")
        gets = f"{g50 / 1000:.2f} / {g99 / 1000:.2f} ms" if g50 is not None else ""
        # always's physical ceiling: records per fsync x fsyncs per second.
        share = f"{rps / (per * ceiling):.0%}" if per_s else ""
        print(f"| {name} | {mode} | {c} | {rps:,.0f} | {p99 / 1000:.2f} ms | {gets} | {per_s} "
              f"| {commit} | {share} |")
    meds = [d[0] for d in disk]
    p99s = [d[1] for d in disk]
    print(f"\nthis disk's fdatasync after a 64-byte append: median {statistics.median(meds):.0f} µs, "
          f"p99 {statistics.median(p99s):.0f} µs (median of {len(disk)} rounds); one writer's "
          f"ceiling {ceiling:,.0f} fsyncs per second (`fsync_ceiling.py`, median of "
          f"{len(ceilings)} rounds); share of the ceiling = requests/s / (records per fsync x "
          f"that)")
    versus_redis(results)


def versus_redis(results):
    """Each serverlab configuration over redis-server in the same mode and
    connections: the median of the rounds' ratios (each round runs both)."""
    rows = []
    for (server, strategy, mode, c, delay), runs in results.items():
        redis = results.get(("redis-server", "", mode, c, 0))
        if not server.startswith("serverlab") or not redis:
            continue
        ratios = [a["rps"] / b["rps"] for a, b in zip(runs, redis) if b["rps"]]
        if ratios:
            name = f"{server} {strategy}" + (f", {delay} µs commit delay" if delay else "")
            rows.append((name, mode, c, statistics.median(ratios), min(ratios), max(ratios)))
    if not rows:
        return
    print("\n| server | mode | connections | over redis-server (median of rounds) | rounds' range |")
    print("|---|---|---:|---:|---:|")
    for name, mode, c, m, lo, hi in rows:
        print(f"| {name} | {mode} | {c} | {m:.2f}x | {lo:.2f}-{hi:.2f}x |")


def main():
    ap = common.parser(__doc__)
    common.add_binary(ap)
    common.add_placement(ap)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=float, default=3)
    ap.add_argument("--warmup", type=float, default=1)
    ap.add_argument("--connections", default="1,8,64")
    ap.add_argument("--other-bin", action="append", default=[], metavar="NAME=PATH",
                    help="also run this serverlab build (an earlier commit), named NAME, "
                         "interleaved with the others")
    ap.add_argument("--mix", default="set=100",
                    help="the load's --mix (get=50,set=50: what the read barrier costs GETs)")
    ap.add_argument("--strategies", default="pool-locked,async")
    ap.add_argument("--commit-delays", default="",
                    help="also run always with these delays before each fsync, µs (100,300)")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--redis-modes", default=",".join(REDIS_MODES))
    ap.add_argument("--fsyncs", type=int, default=2000, help="fdatasyncs timed per round")
    ap.add_argument("--ceiling-seconds", type=float, default=1.0,
                    help="how long each round times one writer's fsyncs per second")
    ap.add_argument("--dir", default=None, help="where data directories go (default: /tmp)")
    ap.add_argument("--json")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    if args.quick:
        args.rounds, args.duration, args.warmup, args.fsyncs = 1, 0.3, 0.1, 50
        args.ceiling_seconds = 0.1
        args.connections = "1,8"
    args.connections = [int(c) for c in args.connections.split(",")]
    args.other_bins = dict(b.split("=", 1) for b in args.other_bin)
    args.strategies = args.strategies.split(",")
    args.commit_delays = [int(d) for d in args.commit_delays.split(",") if d]
    args.modes = [m for m in args.modes.split(",") if m]
    args.redis_modes = [m for m in args.redis_modes.split(",") if m]
    common.require_binary(args.bin)
    root = tempfile.mkdtemp(prefix="durability-", dir=args.dir)
    configs = configurations(args)
    results = {c: [] for c in configs}
    disk, ceilings = [], []
    try:
        for r in range(args.rounds):
            order = configs[:]
            random.shuffle(order)
            for i, config in enumerate(order):
                results[config].append(run_one(args, config, root))
                if i == len(order) // 2:
                    disk.append(fdatasync_latency(root, args.fsyncs))
                    ceilings.append(fsync_ceiling.ceiling(root, args.ceiling_seconds)[0])
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    report(results, disk, ceilings)
    common.write_json(args.json, {
        "results": [{"server": s, "strategy": st, "mode": m, "connections": c,
                     "commit_delay_us": d, "runs": runs}
                    for (s, st, m, c, d), runs in results.items()],
        "fdatasync_us": [{"median": a, "p99": b} for a, b in disk],
        "ceiling_fsyncs_per_s": ceilings})


if __name__ == "__main__":
    main()
