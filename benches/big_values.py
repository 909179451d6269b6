#!/usr/bin/env python3
"""What a write on a big value costs: SETBIT, SETRANGE and APPEND on a
large string, SADD, HSET, LSET and LMOVE on large collections, against
redis-server, with and without durability, and what they do to another
client's GET.

Each round, in a shuffled order, runs every configuration once: `serve
resp --strategy S --store ST` for each store asked for (default: every
store, strategy async), with no log and with `--durability always`, and
redis-server without an AOF and with `appendfsync always`; each (a fresh
server) is filled, then driven op by op by `redis-benchmark -c 1` (one
client, lock-step) for `--requests` requests:

- setbit: `SETBIT s __rand_int__ 1` over an 8 MiB string (`-r` its bits);
- setrange: `SETRANGE s __rand_int__ x` over the same string;
- append: `APPEND a x` onto a 4 MiB string;
- sadd: `SADD set __rand_int__` onto a set of `--set` members;
- hset: `HSET hash __rand_int__ v` onto a hash of `--hash` fields;
- lset: `LSET list MIDDLE v` in a list of `--list` elements;
- lmove: `LMOVE list list RIGHT LEFT` in the same list.

Meanwhile another client sends `GET small` lock-step and times each
reply; before the writes start it does the same alone (idle). Servers
are pinned to one CPU, both clients to the other. Every figure is the
median of its rounds.

Prints a Markdown table: per operation and server, operations per
second, the other client's GET p99 (ms) while they ran, and its idle
p99; then each serverlab configuration's ops/s as a share of
redis-server's in the same durability.

`--other-bin before=PATH` adds a second serverlab build (an earlier
commit's release binary) for every store, interleaved with the rest:
before and after, in one sitting.

Usage (from the repository root, after `cargo build --release`, on a quiet
machine; about 10 minutes with the defaults):
    benches/big_values.py [--rounds 3] [--requests 20000] [--ops setbit,sadd]
        [--stores mutex,lockfree] [--strategy async] [--set 300000]
        [--hash 100000] [--list 1000000] [--json out.json] [--bin PATH]
        [--other-bin before=PATH] [--dir DIR]
    benches/big_values.py --quick     # a tiny run: checks the script works
Needs redis-server, cc and taskset. DIR (default: under
/tmp) holds the logs: it must be on the disk to be measured.
"""

import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (beside this script)

STORES = ["mutex", "rwlock", "sharded", "lockfree"]
OPS = ["setbit", "setrange", "append", "sadd", "hset", "lset", "lmove"]


def cmd(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def connect(port):
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def read_replies(s, n, buf=b""):
    """Reads `n` replies of a simple shape (a line or a bulk); the rest."""
    for _ in range(n):
        while True:
            nl = buf.find(b"\r\n")
            if nl >= 0:
                if buf[:1] == b"-":
                    sys.exit(f"the server said {buf[:nl].decode(errors='replace')}")
                if buf[:1] != b"$" or int(buf[1:nl]) < 0:
                    buf = buf[nl + 2:]
                    break
                end = nl + 2 + int(buf[1:nl]) + 2
                if len(buf) >= end:
                    buf = buf[end:]
                    break
            chunk = s.recv(1 << 20)
            if not chunk:
                sys.exit("the server closed")
            buf += chunk
    return buf


def pipelined(port, commands, batch=1000):
    """Sends `commands` (encoded) in batches, reading every reply."""
    s = connect(port)
    for i in range(0, len(commands), batch):
        part = commands[i:i + batch]
        s.sendall(b"".join(part))
        read_replies(s, len(part))
    s.close()


def fill(port, args):
    """The values every operation works on, and `small` for the GET."""
    big = b"x" * (8 << 20)
    pipelined(port, [cmd("SET", "s", big), cmd("SET", "a", big[:4 << 20]),
                     cmd("SET", "small", "v" * 64)])
    for head, n, member in [(["SADD", "set"], args.set, lambda j: [f"m{j}"]),
                            (["HSET", "hash"], args.hash, lambda j: [f"f{j}", "v"]),
                            (["RPUSH", "list"], args.list, lambda j: [f"e{j}"])]:
        batches = []
        for i in range(0, n, 1000):
            words = list(head)
            for j in range(i, min(n, i + 1000)):
                words += member(j)
            batches.append(cmd(*words))
        pipelined(port, batches, batch=10)


def op_command(op, args):
    """`op`'s command, its placeholders for benches/resp_lockstep.c."""
    return {
        "setbit": ["SETBIT", "s", f"{{{8 << 23}}}", "{alt}"],
        "setrange": ["SETRANGE", "s", f"{{{8 << 20}}}", "x"],
        "append": ["APPEND", "a", "x"],
        "sadd": ["SADD", "set", "m{1000000000}"],
        "hset": ["HSET", "hash", "f{1000000000}", "v"],
        "lset": ["LSET", "list", str(args.list // 2), "v"],
        "lmove": ["LMOVE", "list", "list", "RIGHT", "LEFT"],
    }[op]


CLIENT_SRC = os.path.join(common.HERE, "resp_lockstep.c")
CLIENT = os.path.join(common.ROOT, "target", "resp_lockstep")


def build_client():
    """Build benches/resp_lockstep.c (again, if the source is newer)."""
    if os.path.exists(CLIENT) and os.path.getmtime(CLIENT) >= os.path.getmtime(CLIENT_SRC):
        return
    cc = shutil.which("cc") or sys.exit("no C compiler (cc) to build benches/resp_lockstep.c")
    os.makedirs(os.path.dirname(CLIENT), exist_ok=True)
    subprocess.run([cc, "-O2", "-o", CLIENT, CLIENT_SRC], check=True)


def ops_per_second(args, port, op):
    out = subprocess.run(common.pinned(args.client_cpu, [
        CLIENT, str(port), str(args.requests), *op_command(op, args)]),
        capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{op}: {out.stderr.strip()}")
    return float(out.stdout)


class Getter(threading.Thread):
    """Another client: GET small, lock-step, each reply timed, from a
    thread pinned to the clients' CPUs; `limit` GETs, or until stopped."""

    def __init__(self, port, cpus, limit=None):
        super().__init__(daemon=True)
        self.s, self.times, self.go = connect(port), [], True
        self.cpus, self.limit = cpus, limit

    def run(self):
        if self.cpus:
            os.sched_setaffinity(0, self.cpus)  # this thread only
        buf, one = b"", cmd("GET", "small")
        while self.go and (self.limit is None or len(self.times) < self.limit):
            t0 = time.perf_counter()
            self.s.sendall(one)
            buf = read_replies(self.s, 1, buf)
            self.times.append(time.perf_counter() - t0)

    def stop(self):
        self.go = False
        self.join()
        self.s.close()

    def p99_ms(self):
        t = sorted(self.times)
        return t[int(len(t) * 0.99)] * 1000 if t else float("nan")


def client_cpus(args):
    """The clients' CPUs as a set, if given as a list of numbers."""
    try:
        return {int(c) for c in args.client_cpu.split(",")}
    except ValueError:
        return None


def idle_p99(args, port, n=2000):
    g = Getter(port, client_cpus(args), limit=n)
    g.start()
    g.join()
    g.stop()
    return g.p99_ms()


def start(args, config, data):
    """A fresh server of `config`; (process, port)."""
    kind, store, mode = config
    if kind == "redis":
        port = common.free_port()
        aof = ["--appendonly", "no"] if mode == "none" else [
            "--appendonly", "yes", "--appendfsync", "always",
            "--auto-aof-rewrite-percentage", "0"]
        proc = subprocess.Popen(common.pinned(args.server_cpu, [
            "redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
            "--dir", data, *aof]),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        common.wait_port(proc, port, "redis-server")
        return proc, port
    binary = args.other_bins.get(kind.partition("@")[2], args.bin)
    extra = ["--store", store, "--max-bulk", "16MiB", "--max-query", "32MiB"]
    if mode != "none":
        extra += ["--durability", mode, "--data-dir", os.path.join(data, "wal")]
    proc, addr = common.wait_listening(common.serve_command(
        binary, "resp", args.server_cpu, "--strategy", args.strategy, *extra))
    return proc, int(addr.rsplit(":", 1)[1])


def run_one(args, config, root):
    """Every operation on one fresh, filled server: {op: figures}."""
    data = tempfile.mkdtemp(dir=root)
    proc, port = start(args, config, data)
    try:
        fill(port, args)
        idle = idle_p99(args, port)
        figs = {}
        for op in args.ops:
            g = Getter(port, client_cpus(args))
            g.start()
            rps = ops_per_second(args, port, op)
            g.stop()
            figs[op] = {"ops": rps, "get_p99_ms": g.p99_ms(), "idle_p99_ms": idle}
        return figs
    finally:
        common.stop(proc)
        shutil.rmtree(data, ignore_errors=True)


def name(config):
    kind, store, mode = config
    who = "redis-server" if kind == "redis" else f"{kind} {store}"
    return f"{who}, {'no log' if mode == 'none' else 'always'}"


def main():
    ap = common.parser(__doc__)
    common.add_binary(ap)
    common.add_placement(ap)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--requests", type=int, default=20000)
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--stores", default=",".join(STORES))
    ap.add_argument("--strategy", default="async")
    ap.add_argument("--modes", default="none,always")
    ap.add_argument("--set", type=int, default=300_000)
    ap.add_argument("--hash", type=int, default=100_000)
    ap.add_argument("--list", type=int, default=1_000_000)
    ap.add_argument("--other-bin", action="append", default=[], metavar="NAME=PATH")
    ap.add_argument("--dir", default=None)
    ap.add_argument("--json")
    ap.add_argument("--quick", action="store_true", help="a tiny run")
    args = ap.parse_args()
    common.require_binary(args.bin)
    build_client()
    if args.quick:
        args.rounds, args.requests, args.stores = 1, 200, "sharded,lockfree"
        args.set, args.hash, args.list = 2000, 2000, 2000
    args.ops = args.ops.split(",")
    args.other_bins = dict(o.split("=", 1) for o in args.other_bin)
    modes = args.modes.split(",")
    kinds = ["serverlab"] + [f"serverlab@{n}" for n in args.other_bins]
    configs = [(k, st, m) for k in kinds for st in args.stores.split(",") for m in modes]
    configs += [("redis", "-", m) for m in modes]
    root = tempfile.mkdtemp(dir=args.dir)
    runs = {c: [] for c in configs}
    try:
        for r in range(args.rounds):
            order = configs[:]
            random.shuffle(order)
            for c in order:
                print(f"round {r + 1}: {name(c)}", file=sys.stderr)
                runs[c].append(run_one(args, c, root))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    med = {c: {op: {k: statistics.median(run[op][k] for run in runs[c])
                    for k in ("ops", "get_p99_ms", "idle_p99_ms")}
               for op in args.ops} for c in configs}
    print("| operation | server | ops/s | other GET p99 ms | idle GET p99 ms | × redis |")
    print("|---|---|---|---|---|---|")
    for op in args.ops:
        for c in configs:
            f = med[c][op]
            redis = med[("redis", "-", c[2])][op]["ops"]
            share = f"{f['ops'] / redis:.2f}" if c[0] != "redis" and redis else ""
            print(f"| {op} | {name(c)} | {f['ops']:,.0f} | {f['get_p99_ms']:.2f} "
                  f"| {f['idle_p99_ms']:.2f} | {share} |")
    common.write_json(args.json, {name(c): med[c] for c in configs})
    load = os.getloadavg()
    print(f"\nload average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
