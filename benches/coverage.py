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
percentile may lie that much lower). The first table gives, per model
and percentile, the runs, the nominal 95%, and the share of runs covered
each way, with the runs certified (every check of the verdict passed).

The server's own work per request (reading, parsing and answering it) is
in neither model: each request holds the worker longer than its delay,
so the queue is not quite the model's. So a second
table judges the same intervals against the truth computed from the
service the server really gave: the server runs with `--time-all
--stats-json`, and its `worker_busy_us` histogram (how long the worker
held each request, from taking its connection to handing it back; the
runs that answered none spread evenly over the requests) is the service
law S of an M/G/1 queue, at the arrival rate the run achieved
(`schedule.sent_rps`). Its response-time percentiles are computed
numerically from the Pollaczek–Khinchine formula (`mg1_quantiles`: the
waiting time as a geometric sum of residual services, on a lattice of
E[S]/200, with bounds the truth lies between; their middle is the truth,
half-width under 0.5%), not simulated. `--self-test` checks that
computation against the M/M/1 and M/D/1 closed forms and exits. What
neither truth holds: the time from a request reaching the server's
socket to the worker taking it when the worker was idle (the event
loop's wake-up and hand-off), and the network's.

Usage: benches/coverage.py [--runs 40] [--mean-us 1000] [--rho 0.7] [--duration 10]
                           [--models mm1,md1] [--connections 200] [--json out.json]
                           [--bin PATH] [--server-cpu 0] [--client-cpu 1]
       benches/coverage.py --self-test
(from the repository root, after `cargo build --release`). A tiny check
that it runs: benches/coverage.py --runs 1 --duration 1 --bin target/debug/serverlab
"""

import bisect
import itertools
import json
import math
import operator
import os
import statistics
import subprocess
import sys
import tempfile

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


def service_law(histogram_us):
    """A server's `worker_busy_us.histogram` ([µs, count] pairs) as the
    service's law: (seconds, probability) pairs, ascending."""
    total = sum(c for _, c in histogram_us)
    return [(v / 1e6, c / total) for v, c in sorted(histogram_us) if c]


def residual_cells(service, mean, h):
    """The equilibrium residual of the service, F_e(x) = E[min(S, x)]/E[S]
    (the law of the work left in service that an arrival finds), as its
    mass in each cell [kh, (k+1)h), up to the longest service."""
    cells, prev, below, tail, i, k = [], 0.0, 0.0, 1.0, 0, 0
    while i < len(service):
        k += 1
        x = k * h
        while i < len(service) and service[i][0] <= x:
            below += service[i][0] * service[i][1]
            tail -= service[i][1]
            i += 1
        fe = 1.0 if i == len(service) else min(1.0, (below + x * max(tail, 0.0)) / mean)
        cells.append(fe - prev)
        prev = fe
    return cells


def compound_geometric(masses, rho, enough, limit=8192):
    """P(X_1 + … + X_K = n) for n = 0, 1, …: K geometric, P(K = k) =
    (1 − ρ)ρ^k, and the X_i independent on the lattice 0, 1, … with
    P(X = j) = masses[j]. By the recursion p_n (1 − ρ m_0) = (1 − ρ)[n = 0]
    + ρ Σ_{j≥1} m_j p_{n−j}, extended 256 terms at a time until enough(p);
    None past `limit` terms."""
    scale = 1.0 / (1.0 - rho * masses[0])
    tail = [rho * m * scale for m in masses[1:]]
    p = [(1.0 - rho) * scale]
    while len(p) < limit:
        for _ in range(256):
            n = len(p)
            k = min(n, len(tail))
            p.append(sum(map(operator.mul, tail[:k], reversed(p[n - k:n]))))
        if enough(p):
            return p
    return None


def mg1_quantiles(service, lam, qs, cells=200):
    """Each q-quantile (s) of an M/G/1 FIFO queue's response time T = W + S,
    arrivals at rate λ, service S of the law `service` ((s, probability)
    pairs, ascending), as bounds (lo, hi) between which it lies.

    By the Pollaczek–Khinchine formula the waiting time W is a geometric
    sum: K ~ P(K = k) = (1 − ρ)ρ^k residuals of law F_e, independent.
    With the residual's mass in cells of width h = E[S]/cells put at each
    cell's low end, the sum is W's lower bound W_lo on the lattice (exact
    by the recursion), and at each cell's high end its upper bound
    W_hi = W_lo + K·h; T's CDF is then Σ_n P(W = nh)·P(S ≤ t − nh)
    exactly. So the true quantile lies in [lo, hi], hi − lo about K·h at
    that quantile (well under 1% at 200 cells). Raises ValueError when
    ρ = λ·E[S] is 1 or more: such a queue has no steady state."""
    mean = sum(v * p for v, p in service)
    rho = lam * mean
    if not 0.0 <= rho < 1.0:
        raise ValueError(f"ρ = {rho:.3f}: a queue at or past 1 has no steady state")
    values = [v for v, _ in service]
    cum = list(itertools.accumulate(p for _, p in service))

    def cdf_s(x):
        i = bisect.bisect_right(values, x)
        return cum[i - 1] if i else 0.0

    def cdf_t(p, t):
        return sum(pn * cdf_s(t - n * h) for n, pn in enumerate(p[:int(t / h) + 1]))

    def quantile(p, q):
        lo, hi = 0.0, (len(p) - 1) * h
        for _ in range(45):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if cdf_t(p, mid) < q else (lo, mid)
        return hi

    top = max(qs)
    enough = lambda p: cdf_t(p, (len(p) - 1) * h) >= top  # noqa: E731
    # At most 4,000 cells over the longest service (a rare stall of the
    # server's), and 8,192 lattice points to the top quantile (a queue near
    # ρ = 1): coarser cells where either would be more, so the cost stays
    # bounded and only the bounds widen.
    h = max(mean / cells, values[-1] / 4000)
    while True:
        g = residual_cells(service, mean, h)
        low = compound_geometric(g, rho, enough)
        high = low and compound_geometric([0.0] + g, rho, enough)
        if high:
            return {q: (quantile(low, q), quantile(high, q)) for q in qs}
        h *= 4


def mean_wait_bounds(service, lam, cells=200):
    """E[W] of the M/G/1 queue (s), as bounds (lo, hi), by the same lattice
    as mg1_quantiles (run until all but 1e-9 of W's mass is in): checked
    against the Pollaczek–Khinchine mean λE[S²]/(2(1 − ρ)) for a service
    neither exponential nor fixed."""
    mean = sum(v * p for v, p in service)
    rho = lam * mean
    h = mean / cells
    g = residual_cells(service, mean, h)
    enough = lambda p: sum(p) >= 1 - 1e-9  # noqa: E731
    low = compound_geometric(g, rho, enough, limit=1 << 16)
    high = compound_geometric([0.0] + g, rho, enough, limit=1 << 16)
    return (h * sum(n * x for n, x in enumerate(low)),
            h * sum(n * x for n, x in enumerate(high)))


def served_truth(histogram_us, lam):
    """Each percentile of the M/G/1 queue with the service the server
    really gave, µs: the middle of its bounds, and their half-width."""
    bounds = mg1_quantiles(service_law(histogram_us), lam, [q for _, q in LEVELS])
    return {n: (5e5 * (bounds[q][0] + bounds[q][1]), 5e5 * (bounds[q][1] - bounds[q][0]))
            for n, q in LEVELS}


def truth(model, lam, mean_s):
    """Each percentile's analytic value, µs."""
    if model == "mm1":
        return {n: 1e6 * mm1_quantile(q, lam, 1.0 / mean_s) for n, q in LEVELS}
    return {n: 1e6 * md1_quantile(q, lam, mean_s) for n, q in LEVELS}


def self_test():
    """The truth from a service law against the closed forms: with the
    service exactly the model's (no overhead), served_truth must put each
    closed-form percentile within its bounds, their half-width under
    0.5%. The exponential service is 20,000 equally likely values (its
    quantiles at the middles of 20,000 equal slices), given as a server's
    histogram. For a service neither exponential nor fixed (0.5 ms or
    3 ms), the mean wait against the Pollaczek–Khinchine mean."""
    n, mean_us = 20000, 1000.0
    exp_hist = [(-mean_us * math.log(1 - (i + 0.5) / n), 1) for i in range(n)]
    cases = [("M/M/1", rho, exp_hist, lambda q, lam: mm1_quantile(q, lam, 1e6 / mean_us))
             for rho in (0.3, 0.7)]
    cases += [("M/D/1", rho, [(mean_us, 7)], lambda q, lam: md1_quantile(q, lam, mean_us / 1e6))
              for rho in (0.3, 0.7, 0.9)]
    print("| model | ρ | percentile | closed form µs | computed µs | bounds µs | error |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for model, rho, hist, closed in cases:
        lam = rho * 1e6 / mean_us
        got = served_truth(hist, lam)
        for name, q in LEVELS:
            want = 1e6 * closed(q, lam)
            mid, half = got[name]
            err = (mid - want) / want
            print(f"| {model} | {rho} | {name} | {want:.1f} | {mid:.1f} "
                  f"| ±{half:.1f} | {100 * err:+.3f}% |")
            assert abs(mid - want) <= half + 1e-9 * want, (model, rho, name, want, mid, half)
            assert half < 0.005 * want, (model, rho, name, want, half)
    two = [(0.5e-3, 0.8), (3e-3, 0.2)]
    lam = 0.7 / sum(v * p for v, p in two)
    lo, hi = mean_wait_bounds(two, lam)
    pk = lam * sum(v * v * p for v, p in two) / (2 * (1 - 0.7))
    print(f"| M/G/1, S 0.5 ms (80%) or 3 ms | 0.7 | mean wait | {1e6 * pk:.1f} "
          f"| {5e5 * (lo + hi):.1f} | ±{5e5 * (hi - lo):.1f} | {100 * ((lo + hi) / 2 - pk) / pk:+.3f}% |")
    assert lo <= pk * (1 + 1e-9) and pk <= hi * (1 + 1e-9) and hi - lo < 0.01 * pk, (lo, pk, hi)
    shifted = served_histogram({"histogram": [(10.0, 3), (20.0, 1)], "timed": 4,
                                "unanswered_runs_us": 8.0})
    assert shifted == [(12.0, 3), (22.0, 1)], shifted


def one_run(args, model, seed):
    """A fresh one-worker server and one open-loop run: the `add`
    operation's latency figures, the client's share, whether certified,
    the arrival rate achieved (requests/s) and the server's busy time per
    request (`worker_busy_us`)."""
    with tempfile.TemporaryDirectory() as tmp:
        stats = os.path.join(tmp, "stats.json")
        server = common.Server(args.bin, "bucket", "pool-locked", args.server_cpu, (
            "--threads", "1", "--delay-unit", "us", "--delay-mode", "spin",
            "--max-delay", "100000000", "--time-all", "--stats-json", stats))
        delay = f"exp:{args.mean_us}" if model == "mm1" else str(args.mean_us)
        rate = args.rho * 1e6 / args.mean_us
        try:
            r = common.load_results(common.pinned(args.client_cpu, [
                args.bin, "load", "bucket", "--addr", server.addr, "--delay", delay,
                "--delay-unit", "us", "--keep-alive", "--connections", str(args.connections),
                "--rate", f"{rate:g}", "--arrivals", "poisson", "--duration",
                f"{args.duration}s", "--warmup", "1s", "--seed", str(seed), "--format",
                "json"]))
        finally:
            server.stop()
        with open(stats) as f:
            busy = json.load(f)["worker_busy_us"]
    add = next(o for o in r["operations"] if o["name"] == "add")
    return {"latency": add["latency_us"], "share": r.get("client_share"),
            "certified": r["validity"]["certified"], "lam": r["schedule"]["sent_rps"],
            "busy": busy}


def served_histogram(busy):
    """The busy-time histogram with the runs that answered no request
    spread over the requests: each request's time shifted by their total
    over the requests timed, so the service sums to the worker's busy
    time."""
    if not busy["timed"]:
        raise ValueError("the server timed no request")
    extra = busy["unanswered_runs_us"] / busy["timed"]
    return [(v + extra, c) for v, c in busy["histogram"]]


def covers(counts, name, lat, share, want):
    """Count one run's interval for `name` against the truth `want`:
    [runs with an interval, covered, covered with the client accounted]."""
    ci = (lat.get("ci95") or {}).get(name)
    if not ci:
        return
    lo, hi = ci
    own = share["total_us"][name] if share else 0.0
    c = counts[name]
    c[0] += 1
    c[1] += lo <= want <= hi
    c[2] += lo - own <= want <= hi


def tally(args, model):
    """Per percentile, against the analytic truth and against the truth
    from the service served: runs with an interval, covered, covered with
    the client accounted; runs certified; and each run's served figures."""
    lam = args.rho * 1e6 / args.mean_us
    want = truth(model, lam, args.mean_us / 1e6)
    counts = {n: [0, 0, 0] for n, _ in LEVELS}
    served_counts = {n: [0, 0, 0] for n, _ in LEVELS}
    certified, served = 0, []
    for k in range(args.runs):
        run = one_run(args, model, 1000 + k)
        lat, share = run["latency"], run["share"]
        certified += bool(run["certified"])
        mean, real = None, None
        try:
            hist = served_histogram(run["busy"])
            mean = sum(v * c for v, c in hist) / sum(c for _, c in hist)
            real = served_truth(hist, run["lam"])
        except ValueError as e:
            print(f"{model} run {k + 1}: no truth from the service served: {e}",
                  file=sys.stderr)
        served.append({"lam": run["lam"], "mean_service_us": mean,
                       "busy": {f: v for f, v in run["busy"].items() if f != "histogram"},
                       "truth_us": real and {n: t for n, (t, _) in real.items()},
                       "truth_bound_us": real and {n: e for n, (_, e) in real.items()}})
        for name, _ in LEVELS:
            covers(counts, name, lat, share, want[name])
            if real:
                covers(served_counts, name, lat, share, real[name][0])
        print(f"{model} run {k + 1}/{args.runs}: p50 {lat['p50']:.0f} µs "
              f"{lat.get('ci95', {}).get('p50')}, truth {want['p50']:.0f} µs; the service "
              f"served: mean {mean or float('nan'):.0f} µs at {run['lam']:.0f}/s, truth "
              f"{real['p50'][0] if real else float('nan'):.0f} µs", file=sys.stderr)
    return want, counts, certified, served_counts, served


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
    ap.add_argument("--self-test", action="store_true",
                    help="only check the truth computed from a service law against the "
                         "closed forms (M/M/1, M/D/1), print them, and exit")
    common.add_placement(ap)
    common.add_binary(ap)
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    common.require_binary(args.bin)
    if not 0 < args.rho < 1:
        sys.exit("--rho must lie between 0 and 1: a queue at or past 1 never settles")
    loadavg = os.getloadavg()[0]
    out = {"loadavg_1min_at_start": loadavg, "rho": args.rho, "mean_us": args.mean_us,
           "duration_s": args.duration, "models": {}}
    rows, served_rows = [], []
    for model in args.models.split(","):
        want, counts, certified, served_counts, served = tally(args, model)
        out["models"][model] = {"truth_us": want, "counts": counts, "certified": certified,
                                "served_counts": served_counts, "served_runs": served}
        for name, _ in LEVELS:
            n, raw, adj = counts[name]
            pct = (lambda k, n=n: f"{100 * k / n:.0f}%") if n else (lambda k: "–")
            rows.append(f"| {model} | {name} | {want[name]:.0f} | {n} | 95% | {pct(raw)} "
                        f"| {pct(adj)} | {certified} of {args.runs} |")
            n, raw, adj = served_counts[name]
            pct = (lambda k, n=n: f"{100 * k / n:.0f}%") if n else (lambda k: "–")
            means = [r["mean_service_us"] for r in served if r["mean_service_us"]]
            mean = f"{statistics.median(means):.0f}" if means else "–"
            truths = [r["truth_us"][name] for r in served if r["truth_us"]]
            real = f"{statistics.median(truths):.0f}" if truths else "–"
            served_rows.append(f"| {model} | {name} | {mean} | {real} | {n} | 95% "
                               f"| {pct(raw)} | {pct(adj)} |")
    print(f"load average at the start: {loadavg:.2f}; ρ = {args.rho}, mean service "
          f"{args.mean_us} µs, {args.duration:g} s runs, binary {args.bin}")
    print("\nAgainst the model's truth (the service asked for, the rate asked for):\n")
    print("| model | percentile | truth µs | runs with an interval | nominal | covered "
          "| covered, client accounted | runs certified |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    print("\n".join(rows))
    print("\nAgainst the truth from the service served (M/G/1 with the worker's busy time "
          "per request, at the rate achieved; medians of the runs):\n")
    print("| model | percentile | service served, mean µs | truth µs | runs with an interval "
          "| nominal | covered | covered, client accounted |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    print("\n".join(served_rows))
    common.write_json(args.json, out)


if __name__ == "__main__":
    try:
        main()
    except subprocess.CalledProcessError as e:
        sys.exit(f"{e.cmd[0]} failed: {e}")
