#!/usr/bin/env python3
"""`load resp` under each `--poll` against redis-benchmark, on one redis-server.

redis-server runs pinned to the server CPU (no persistence, 100,000 keys of
64 bytes); on the client CPU, for each connections × pipeline row,
`serverlab load resp --mix get=1 --cpus 1` under `--poll spin`, `sleep` and
`auto`, and `redis-benchmark -t get` at the same connections and pipeline,
the four in turn, the order reversed every other round. Prints each run,
then a table of medians (req/s), each round's spin / sleep ratio, and the
default's (auto's) ratio to redis-benchmark. The figures in
docs/measuring.md ("Why auto sleeps where many replies are due") came
from it.
"""

import re
import statistics
import subprocess

import common

ROWS = [(1, 1), (4, 1), (8, 1), (50, 1), (50, 16)]
MODES = ["spin", "sleep", "auto", "redis-benchmark"]


def ours(args, port, conns, pipeline, mode):
    """One `load resp` run: (req/s, what auto resolved to)."""
    r = common.load_results(common.pinned(args.client_cpu, [
        args.bin, "load", "resp", "--addr", f"127.0.0.1:{port}", "--mix", "get=1",
        "--keys", "100000", "--value-size", "64", "--connections", str(conns),
        "--pipeline", str(pipeline), "--cpus", "1", "--duration", f"{args.duration}s",
        "--warmup", "0.5s", "--poll", mode, "--format", "json"]))
    return r["throughput_rps"], r["client_cpu"]["poll"].get("resolved", mode)


def redis_benchmark(args, port, conns, pipeline):
    """One redis-benchmark run of about `--duration` seconds' worth of GETs."""
    n = int(args.duration * 60000 * (conns ** 0.5) * pipeline)
    out = subprocess.run(common.pinned(args.client_cpu, [
        "redis-benchmark", "-p", str(port), "-t", "get", "-d", "64", "-r", "100000",
        "-c", str(conns), "-P", str(pipeline), "-n", str(n), "--csv"]),
        capture_output=True, text=True, check=True).stdout
    return float(re.findall(r'"GET","([0-9.]+)"', out)[0]), ""


def main():
    ap = common.parser(__doc__)
    common.add_binary(ap)
    common.add_placement(ap)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=float, default=2.0, help="seconds per load run")
    args = ap.parse_args()
    common.require_binary(args.bin)
    port = common.free_port()
    srv = subprocess.Popen(common.pinned(args.server_cpu, [
        "redis-server", "--port", str(port), "--save", "", "--appendonly", "no"]),
        stdout=subprocess.DEVNULL)
    try:
        common.wait_port(srv, port, "redis-server")
        subprocess.run(["redis-benchmark", "-p", str(port), "-t", "set", "-d", "64",
                        "-r", "100000", "-n", "300000", "-q"],
                       stdout=subprocess.DEVNULL, check=True)
        runs, resolved = rounds(args, port)
    finally:
        srv.terminate()
        srv.wait()
    table(runs, resolved)


def rounds(args, port):
    runs, resolved = {}, {}
    for rnd in range(args.rounds):
        for conns, pipeline in ROWS:
            order = MODES if rnd % 2 == 0 else MODES[::-1]
            for mode in order:
                if mode == "redis-benchmark":
                    rate, how = redis_benchmark(args, port, conns, pipeline)
                else:
                    rate, how = ours(args, port, conns, pipeline, mode)
                runs.setdefault((conns, pipeline, mode), []).append(rate)
                if mode == "auto":
                    resolved[(conns, pipeline)] = how
                print(rnd, f"{conns}x{pipeline}", mode, round(rate), how, flush=True)
    return runs, resolved


def table(runs, resolved):
    print("| connections × pipeline | spin | sleep | auto (resolved) | redis-benchmark "
          "| spin / sleep, each round | auto / redis-benchmark |")
    print("|---|---:|---:|---:|---:|---|---:|")
    for conns, pipeline in ROWS:
        med = {m: statistics.median(runs[(conns, pipeline, m)]) for m in MODES}
        ratios = ", ".join(f"{a / b:.2f}" for a, b in zip(runs[(conns, pipeline, "spin")],
                                                        runs[(conns, pipeline, "sleep")]))
        print(f"| {conns} × {pipeline} | {med['spin']:,.0f} | {med['sleep']:,.0f} | "
              f"{med['auto']:,.0f} ({resolved[(conns, pipeline)]}) | "
              f"{med['redis-benchmark']:,.0f} | {ratios} | "
              f"{med['auto'] / med['redis-benchmark']:.2f} |")


if __name__ == "__main__":
    main()
