#!/usr/bin/env python3
"""How often the load's 95% intervals cover the true percentile, on servers whose latency is known.

A bucket server with one worker (`serve bucket --strategy pool-locked
--threads 1`, delays spent spinning, in µs) fed by an open loop with
Poisson arrivals is a single FIFO queue with Poisson arrivals at rate λ:
- `load bucket --delay exp:MEAN`: exponential service of rate μ = 1/MEAN,
  an M/M/1 queue, whose response time is exponential of rate μ − λ:
  its p-quantile is −ln(1 − p)/(μ − λ);
- `load bucket --delay MEAN`: a fixed service D = MEAN, an M/D/1 queue,
  whose waiting time W has Erlang's distribution
  P(W ≤ t) = (1 − ρ) Σ_{k=0}^{⌊t/D⌋} (λ(kD − t))^k / k! · e^{−λ(kD − t)}
  (ρ = λD), and whose response time is W + D.

Each run (a fresh server and a seed of its own) gives, per percentile, the
95% interval the load reports for the latency (from the intended send
time) and the client's own share at that percentile
(`results.client_share`). A run covers the percentile when the analytic
value lies in the interval, and "with the client accounted" when it lies
in the interval with its low end lowered by the client's share there (the
client's time is in every latency it measures, so the server's own
percentile may lie that much lower). The table gives, per model and
percentile, the runs, the nominal 95%, and the share of runs covered
each way, with the runs certified (every check of the verdict passed).

The server's own overhead per request (its event loop handing the
connection to the worker, the worker's wake-up) is in its service time
and in neither model: it makes the served rate a little lower than μ, so
measured percentiles sit a little above the model's. Keep MEAN large
against it (the default, 1000 µs).

Usage: benches/coverage.py [--runs 40] [--mean-us 1000] [--rho 0.7] [--duration 10]
                           [--models mm1,md1] [--connections 200] [--json out.json]
                           [--bin PATH] [--server-cpu 0] [--client-cpu 1]
(from the repository root, after `cargo build --release`). A tiny check
that it runs: benches/coverage.py --runs 1 --duration 1 --bin target/debug/serverlab
"""

import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (beside this script)

LEVELS = (("p50", 0.5), ("p90", 0.9), ("p99", 0.99))


def mm1_quantile(q, lam, mu):
    """The q-quantile of an M/M/1 queue's response time (s)."""
    return -math.log(1.0 - q) / (mu - lam)


def md1_wait_cdf(t, lam, d):
    """P(W <= t) of an M/D/1 queue's waiting time (Erlang)."""
    total = 0.0
    for k in range(int(t // d) + 1):
        x = lam * (k * d - t)
        total += x ** k / math.factorial(k) * math.exp(-x)
    return (1.0 - lam * d) * total


def md1_quantile(q, lam, d):
    """The q-quantile of an M/D/1 queue's response time (s), W + D."""
    if q <= 1.0 - lam * d:
        return d
    lo, hi = 0.0, d
    while md1_wait_cdf(hi, lam, d) < q:
        hi *= 2
    for _ in range(100):
        mid = (lo + hi) / 2
        if md1_wait_cdf(mid, lam, d) < q:
            lo = mid
        else:
            hi = mid
    return d + hi


def truth(model, lam, mean_s):
    """Each percentile's analytic value, µs."""
    if model == "mm1":
        return {n: 1e6 * mm1_quantile(q, lam, 1.0 / mean_s) for n, q in LEVELS}
    return {n: 1e6 * md1_quantile(q, lam, mean_s) for n, q in LEVELS}


def one_run(args, model, seed):
    """A fresh one-worker server and one open-loop run: the `add`
    operation's latency figures and the client's share."""
    server = common.Server(args.bin, "bucket", "pool-locked", args.server_cpu, (
        "--threads", "1", "--delay-unit", "us", "--delay-mode", "spin",
        "--max-delay", "100000000"))
    delay = f"exp:{args.mean_us}" if model == "mm1" else str(args.mean_us)
    rate = args.rho * 1e6 / args.mean_us
    try:
        r = common.load_results(common.pinned(args.client_cpu, [
            args.bin, "load", "bucket", "--addr", server.addr, "--delay", delay,
            "--delay-unit", "us", "--keep-alive", "--connections", str(args.connections),
            "--rate", f"{rate:g}", "--arrivals", "poisson", "--duration", f"{args.duration}s",
            "--warmup", "1s", "--seed", str(seed), "--format", "json"]))
    finally:
        server.stop()
    add = next(o for o in r["operations"] if o["name"] == "add")
    return add["latency_us"], r.get("client_share"), r["validity"]["certified"]


def tally(args, model):
    """Per percentile: runs with an interval, covered, covered with the
    client accounted; and runs certified."""
    lam = args.rho * 1e6 / args.mean_us
    want = truth(model, lam, args.mean_us / 1e6)
    counts = {n: [0, 0, 0] for n, _ in LEVELS}
    certified = 0
    for k in range(args.runs):
        lat, share, ok = one_run(args, model, 1000 + k)
        certified += bool(ok)
        for name, _ in LEVELS:
            ci = (lat.get("ci95") or {}).get(name)
            if not ci:
                continue
            lo, hi = ci
            own = share["total_us"][name] if share else 0.0
            c = counts[name]
            c[0] += 1
            c[1] += lo <= want[name] <= hi
            c[2] += lo - own <= want[name] <= hi
        print(f"{model} run {k + 1}/{args.runs}: p50 {lat['p50']:.0f} µs "
              f"{lat.get('ci95', {}).get('p50')}, truth {want['p50']:.0f} µs", file=sys.stderr)
    return want, counts, certified


def main():
    ap = common.parser(__doc__)
    ap.add_argument("--runs", type=int, default=40, help="runs per model (default 40)")
    ap.add_argument("--mean-us", type=int, default=1000,
                    help="the mean service time, µs (default 1000)")
    ap.add_argument("--rho", type=float, default=0.7, help="the utilisation λ/μ (default 0.7)")
    ap.add_argument("--duration", type=float, default=10.0, help="seconds a run (default 10)")
    ap.add_argument("--models", default="mm1,md1", help="mm1, md1 or both (default)")
    ap.add_argument("--connections", type=int, default=200,
                    help="the load's connections: many, so a request seldom waits for one")
    ap.add_argument("--json", help="also write the figures here")
    common.add_placement(ap)
    common.add_binary(ap)
    args = ap.parse_args()
    common.require_binary(args.bin)
    if not 0 < args.rho < 1:
        sys.exit("--rho must lie between 0 and 1: a queue at or past 1 never settles")
    loadavg = os.getloadavg()[0]
    out = {"loadavg_1min_at_start": loadavg, "rho": args.rho, "mean_us": args.mean_us,
           "duration_s": args.duration, "models": {}}
    rows = []
    for model in args.models.split(","):
        want, counts, certified = tally(args, model)
        out["models"][model] = {"truth_us": want, "counts": counts, "certified": certified}
        for name, _ in LEVELS:
            n, raw, adj = counts[name]
            pct = (lambda k: f"{100 * k / n:.0f}%") if n else (lambda k: "–")
            rows.append(f"| {model} | {name} | {want[name]:.0f} | {n} | 95% | {pct(raw)} "
                        f"| {pct(adj)} | {certified} of {args.runs} |")
    print(f"load average at the start: {loadavg:.2f}; ρ = {args.rho}, mean service "
          f"{args.mean_us} µs, {args.duration:g} s runs, binary {args.bin}")
    print("| model | percentile | truth µs | runs with an interval | nominal | covered "
          "| covered, client accounted | runs certified |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    print("\n".join(rows))
    common.write_json(args.json, out)


if __name__ == "__main__":
    try:
        main()
    except subprocess.CalledProcessError as e:
        sys.exit(f"{e.cmd[0]} failed: {e}")
