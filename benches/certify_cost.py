#!/usr/bin/env python3
"""What certifying a run costs the load: its top throughput against the build before, interleaved.

The load keeps, per event loop, what its verdict and the client's measured
share need: a thinned series of replies, a thinned sample of send gaps, a
histogram of send lags, the client's share (a clock read before each send
call; on one batch of replies in 16, at random gaps, a `recvmsg` bringing
the kernel's receive timestamp instead of a `read`, and three small
histograms), and after the run it computes each percentile's interval and
the checks. This measures what that costs where the load is busiest: an
echo server (`serve echo`, this build) pinned to --server-cpu, driven as
fast as it answers by `serverlab load board` (--connections split into
posters and readers) pinned to --client-cpu, lock-step and with
--pipeline 16, once by this build's load (NEW) and once by --old-bin's
(OLD, the same load without certification), on a fresh server each. The two
alternate, their order swapped every repetition, so a drift of the machine
falls on both alike. The table gives each side's median throughput and the
median of the per-repetition ratios NEW/OLD with their range; the cost is
1 − NEW/OLD (the target: at most 2%).

OLD, built so that it differs from NEW by certification alone: the same
commit, built with `--cfg serverlab_uncertified`, whose load does none of
certification's work per request (no receive timestamps asked or read,
every read a `read`, no clock read before the send call, no client's
share, thinned series, send gaps or lags recorded: see
`serverlab_load::certify::PER_REQUEST`) and certifies nothing; into a
target directory of its own, so that NEW's build is left alone:

    RUSTFLAGS="--cfg serverlab_uncertified" cargo build --release -p serverlab \
        --target-dir target/uncertified
    cargo build --release -p serverlab
    benches/certify_cost.py --old-bin target/uncertified/release/serverlab

(What certification costs once the run is over — the intervals, the
checks — falls outside the measured window and is not counted.) The
build from before certification was merged (4a6cc48, main just before
the merge of 9b7505b brought it in) can be given as --old-bin too, but
it differs by more than certification: every later change to the load
comes between.

Usage: benches/certify_cost.py --old-bin PATH [--duration 5] [--reps 9] [--connections 4]
                               [--json out.json] [--bin PATH]
(from the repository root, after `cargo build --release`; run it on a quiet
machine: a busy one's noise is far larger than 2%). A tiny check that it
runs: benches/certify_cost.py --duration 1 --reps 1 --bin target/debug/serverlab
--old-bin target/debug/serverlab
"""

import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (beside this script)

MODES = (("lock-step", "1"), ("pipelined", "16"))


def one_run(args, binary, pipeline):
    """A fresh echo server (this build) loaded by `binary`: req/s."""
    server = common.Server(args.bin, "echo", args.strategy, args.server_cpu)
    half = args.connections // 2
    try:
        r = common.load_results(common.pinned(args.client_cpu, [
            binary, "load", "board", "--addr", server.addr, "--posters", str(half),
            "--readers", str(args.connections - half), "--duration", f"{args.duration}s",
            "--warmup", "0.5s", "--pipeline", pipeline, "--format", "json"]))
    finally:
        server.stop()
    if not r["requests"]:
        sys.exit("the load counted no requests: is the server answering?")
    return r["throughput_rps"]


def main():
    ap = common.parser(__doc__)
    ap.add_argument("--old-bin", required=True,
                    help="the load without certification (OLD): this commit built with "
                    "--cfg serverlab_uncertified (see above)")
    ap.add_argument("--strategy", default="shared-nothing",
                    help="the echo server's strategy (default shared-nothing)")
    ap.add_argument("--duration", type=float, default=5.0, help="seconds a run (default 5)")
    ap.add_argument("--reps", type=int, default=9, help="repetitions (default 9)")
    ap.add_argument("--connections", type=int, default=4, help="connections (default 4)")
    ap.add_argument("--json", help="also write the figures here")
    common.add_placement(ap)
    common.add_binary(ap)
    args = ap.parse_args()
    common.require_binary(args.bin)
    common.require_binary(args.old_bin)
    loadavg = os.getloadavg()[0]
    rows, out = [], {"loadavg_1min_at_start": loadavg, "modes": {}}
    for mode, pipeline in MODES:
        new, old, ratios = [], [], []
        for k in range(args.reps):
            order = [("new", args.bin), ("old", args.old_bin)]
            if k % 2:
                order.reverse()
            got = {side: one_run(args, b, pipeline) for side, b in order}
            new.append(got["new"])
            old.append(got["old"])
            ratios.append(got["new"] / got["old"])
        out["modes"][mode] = {"new_rps": new, "old_rps": old, "ratios": ratios}
        ratio = statistics.median(ratios)
        rows.append(f"| {mode} | {statistics.median(old):,.0f} | {statistics.median(new):,.0f} "
                    f"| {ratio:.3f} ({min(ratios):.3f} – {max(ratios):.3f}) "
                    f"| {100 * (1 - ratio):+.1f}% |")
    print(f"load average at the start: {loadavg:.2f}; {args.reps} repetitions of "
          f"{args.duration:g} s, {args.connections} connections, echo server "
          f"({args.strategy}) on CPU {args.server_cpu}, load on CPU {args.client_cpu}")
    print("| mode | OLD req/s (median) | NEW req/s (median) | NEW ÷ OLD, median (range) "
          "| cost |")
    print("|---|---:|---:|---:|---:|")
    print("\n".join(rows))
    common.write_json(args.json, out)


if __name__ == "__main__":
    main()
