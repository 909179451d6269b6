#!/usr/bin/env python3
"""The pub/sub fan-out sweeps' table: delivery latency and rate per server.

Reads the results of `serverlab sweep experiments/pubsub-fanout.toml` (and
of experiments/pubsub-fanout-10k.toml) and prints one Markdown row per
server (each strategy, and redis-server: the sweep runs it beside every
strategy, so its row gives the median of those runs), subscriber count
and message size: publishes per second, deliveries per second, the
`deliver` latency (from a PUBLISH's send to its message read by the
subscriber) p50 and p99, and what was lost, duplicated or reordered
(`--verify`: each must be 0).

Usage: benches/pubsub_table.py RESULTS_DIR [RESULTS_DIR …]
       benches/pubsub_table.py --self-test
"""

import glob
import json
import os
import statistics
import sys


def point(name):
    """`protocol=resp,strategy=async,subscribers=100` as a dict."""
    return dict(kv.split("=", 1) for kv in name.split(","))


def runs(results):
    """(server, subscribers, size, figures) for every run's load.json."""
    for path in sorted(glob.glob(os.path.join(results, "runs", "*", "rep-*", "load.json"))):
        p = point(os.path.basename(os.path.dirname(os.path.dirname(path))))
        with open(path) as f:
            j = json.load(f)
        cfg, r = j["config"], j["results"]
        ps = r["resp"]["pubsub"]
        ops = {o["name"]: o for o in r["operations"]}
        server = "redis-server" if p.get("protocol") == "external" else p.get("strategy", "serve resp")
        yield server, ps["subscribers"], cfg.get("value_size"), {
            "published": r["throughput_rps"],
            "delivered": ps["delivered_per_s"],
            "p50": ops["deliver"]["latency_us"]["p50"],
            "p99": ops["deliver"]["latency_us"]["p99"],
            "faults": ps["lost"] + ps["duplicated"] + ps["reordered"] + ps["garbled"],
        }


def size_of(value):
    """The config's value size (a number, or {"fixed": n}-like shapes)."""
    if isinstance(value, dict):
        return next(iter(value.values()))
    return value


def table(rows):
    """Markdown, rows grouped by (subscribers, size); Redis's medians."""
    groups = {}
    for server, subs, size, fig in rows:
        groups.setdefault((subs, json.dumps(size_of(size)), server), []).append(fig)
    out = ["| subscribers | bytes | server | published/s | delivered/s | deliver p50 µs | deliver p99 µs | lost+dup+reordered |",
           "|---:|---:|---|---:|---:|---:|---:|---:|"]
    for (subs, size, server), figs in sorted(groups.items(), key=lambda g: (g[0][0], g[0][1], g[0][2] == "redis-server", g[0][2])):
        med = lambda k: statistics.median(f[k] for f in figs)
        note = f" (median of {len(figs)})" if len(figs) > 1 else ""
        out.append(f"| {subs:,} | {size} | {server}{note} | {med('published'):,.0f} | {med('delivered'):,.0f} "
                   f"| {med('p50'):,.0f} | {med('p99'):,.0f} | {sum(f['faults'] for f in figs)} |")
    return "\n".join(out)


def self_test():
    rows = [("async", 100, 64, {"published": 200, "delivered": 20000, "p50": 900.4, "p99": 5000, "faults": 0}),
            ("redis-server", 100, 64, {"published": 200, "delivered": 20000, "p50": 800, "p99": 4000, "faults": 0}),
            ("redis-server", 100, 64, {"published": 200, "delivered": 20000, "p50": 1000, "p99": 6000, "faults": 0})]
    t = table(rows)
    assert "| 100 | 64 | async | 200 | 20,000 | 900 | 5,000 | 0 |" in t, t
    assert "| 100 | 64 | redis-server (median of 2) | 200 | 20,000 | 900 | 5,000 | 0 |" in t, t
    assert point("protocol=resp,strategy=uring") == {"protocol": "resp", "strategy": "uring"}
    print(t)


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if not sys.argv[1:]:
        sys.exit(__doc__)
    print(table([r for d in sys.argv[1:] for r in runs(d)]))


if __name__ == "__main__":
    main()
