#!/usr/bin/env python3
"""What blocking pops, transactions and deadlines cost serverlab's RESP
server, beside redis-server 7, measured the same way.

Three measurements, each in rounds that interleave every server (in a
shuffled order), each figure the median of its rounds; servers on CPU 0,
clients on CPU 1:

- wakeup: a client blocks in `BLPOP q 0`; once the server counts it
  blocked, another connection sends `RPUSH q x`; the time from that send
  to the blocked client's reply. Per strategy (the write that serves a
  blocked pop wakes it: docs/protocols/resp.md) and redis-server, and
  each median over redis-server's.
- multi: 4 client processes, each pipelining 32 transactions at a time
  (`MULTI; INCR a; INCR b; EXEC`) for --duration seconds: transactions
  per second, per store (strategy async), beside the same processes
  sending the two INCRs without MULTI (pairs per second): the cost of
  running a transaction alone.
- expiry: redis-benchmark GET -P 16 over 100k keys, first with no
  deadline, then with every key given one an hour away (so every GET on
  the fast path takes its key's deadline stripe): requests per second;
  then PEXPIRE of every key to 1 ms, and how long until INFO keyspace
  shows none, without a command touching a key (the active expirer
  alone).

Usage (repository root, after `cargo build --release`, on a quiet
machine; about 5 minutes with the defaults):
    benches/resp_hard.py [--rounds 3] [--duration 2] [--strategies a,b]
        [--stores a,b] [--only wakeup,multi,expiry] [--json out.json] [--bin PATH]
    benches/resp_hard.py --quick     # a tiny run: checks the script works
Needs redis-server, redis-benchmark, redis-cli and taskset.
"""

import multiprocessing
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (beside this script)
from common import free_port  # noqa: E402

SERVER_CPU, CLIENT_CPU = "0", "1"
STORES = ["mutex", "rwlock", "sharded", "lockfree"]
KEYS = 100_000


def cmd(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


class Server:
    def __init__(self, binary, strategy=None, store="sharded"):
        self.name = f"{strategy}/{store}" if strategy else "redis-server"
        self.port = free_port()
        if strategy:
            c = [binary, "serve", "resp", "--strategy", strategy, "--store", store,
                 "--cpus", SERVER_CPU, "--addr", f"127.0.0.1:{self.port}"]
        else:
            c = common.pinned(SERVER_CPU, ["redis-server", "--port", str(self.port), "--bind",
                                          "127.0.0.1", "--save", "", "--appendonly", "no"])
        self.err = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=self.err)
        try:
            common.wait_port(self.proc, self.port, self.name)
        except SystemExit:
            self.err.seek(0)
            sys.exit(f"{self.name} did not start: {self.err.read().decode(errors='replace')}")

    def cli(self, *args):
        return subprocess.run(["redis-cli", "-p", str(self.port), *map(str, args)],
                              capture_output=True, text=True, check=True).stdout.strip()

    def stop(self):
        common.stop(self.proc)


def connect(port):
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def read_reply(s, buf=b""):
    """One whole reply (simple shapes: a line, a bulk, an array of bulks)."""
    while True:
        end = _reply_end(buf)
        if end is not None:
            return buf[:end], buf[end:]
        chunk = s.recv(65536)
        if not chunk:
            raise EOFError("the server closed")
        buf += chunk


def _reply_end(buf, at=0):
    nl = buf.find(b"\r\n", at)
    if nl < 0:
        return None
    kind, head = buf[at:at + 1], buf[at + 1:nl]
    if kind in b"+-:":
        return nl + 2
    n = int(head)
    if kind == b"$":
        if n < 0:
            return nl + 2
        end = nl + 2 + n + 2
        return end if len(buf) >= end else None
    at = nl + 2
    for _ in range(max(n, 0)):
        at = _reply_end(buf, at)
        if at is None:
            return None
    return at


def wakeup(server, samples):
    """Seconds from the push's send to the blocked client's reply, each."""
    waiter, pusher = connect(server.port), connect(server.port)
    got = []
    for _ in range(samples):
        waiter.sendall(cmd("BLPOP", "q", 0))
        deadline = time.time() + 5
        while "blocked_clients:1" not in server.cli("INFO", "clients"):
            if time.time() > deadline:
                sys.exit(f"{server.name}: the BLPOP never blocked")
        t0 = time.perf_counter()
        pusher.sendall(cmd("RPUSH", "q", "x"))
        read_reply(waiter)
        got.append(time.perf_counter() - t0)
        read_reply(pusher)
    waiter.close()
    pusher.close()
    return got


def _txn_worker(port, duration, transaction, out):
    os.sched_setaffinity(0, {int(CLIENT_CPU)})
    s = connect(port)
    batch = 32
    if transaction:
        one = cmd("MULTI") + cmd("INCR", "a") + cmd("INCR", "b") + cmd("EXEC")
        replies = 4
    else:
        one = cmd("INCR", "a") + cmd("INCR", "b")
        replies = 2
    done, buf = 0, b""
    end = time.time() + duration
    while time.time() < end:
        s.sendall(one * batch)
        for _ in range(batch * replies):
            _, buf = read_reply(s, buf)
        done += batch
    out.put(done)
    s.close()


def multi(server, duration, transaction):
    """Transactions (or INCR pairs) per second from 4 processes."""
    q = multiprocessing.Queue()
    procs = [multiprocessing.Process(target=_txn_worker,
                                     args=(server.port, duration, transaction, q))
             for _ in range(4)]
    t0 = time.time()
    for p in procs:
        p.start()
    total = sum(q.get() for _ in procs)
    for p in procs:
        p.join()
    return total / (time.time() - t0)


def get_rps(server, requests):
    out = subprocess.run(common.pinned(CLIENT_CPU, [
        "redis-benchmark", "-p", str(server.port), "-t", "get", "-n", str(requests), "-c", "50",
        "-P", "16", "-r", str(KEYS), "-q"]), capture_output=True, text=True, check=True).stdout
    m = re.search(r"GET: ([\d.]+) requests per second", out)
    if not m:
        sys.exit(f"redis-benchmark said: {out}")
    return float(m.group(1))


def fill(server, keys):
    """key:000000000000 … as redis-benchmark -r names them."""
    s = connect(server.port)
    for start in range(0, keys, 1000):
        batch = b"".join(cmd("SET", "key:%012d" % i, "v" * 64)
                         for i in range(start, min(keys, start + 1000)))
        s.sendall(batch)
        buf = b""
        for _ in range(min(keys, start + 1000) - start):
            _, buf = read_reply(s, buf)
    s.close()


def expire_all(server, keys, what, arg):
    s = connect(server.port)
    for start in range(0, keys, 1000):
        end = min(keys, start + 1000)
        s.sendall(b"".join(cmd(what, "key:%012d" % i, arg) for i in range(start, end)))
        buf = b""
        for _ in range(end - start):
            _, buf = read_reply(s, buf)
    s.close()


def expiry(server, keys, requests):
    """GET req/s without and with deadlines; seconds the expirer takes."""
    fill(server, keys)
    plain = get_rps(server, requests)
    expire_all(server, keys, "EXPIRE", 3600)
    with_deadlines = get_rps(server, requests)
    expire_all(server, keys, "PEXPIRE", 1)
    t0 = time.time()
    # INFO, not DBSIZE: serverlab's DBSIZE deletes its database's expired
    # keys before it counts; INFO touches no key on either server.
    while keyspace_keys(server) > 0:
        if time.time() - t0 > 60:
            sys.exit(f"{server.name}: keys past their deadline were never deleted")
        time.sleep(0.01)
    return plain, with_deadlines, time.time() - t0


def keyspace_keys(server):
    m = re.search(r"^db0:keys=(\d+)", server.cli("INFO", "keyspace"), re.M)
    return int(m.group(1)) if m else 0


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def main():
    ap = common.parser(__doc__)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=float, default=2.0)
    ap.add_argument("--samples", type=int, default=200, help="wake-ups per server per round")
    ap.add_argument("--requests", type=int, default=1_000_000, help="GETs per expiry figure")
    ap.add_argument("--keys", type=int, default=KEYS)
    ap.add_argument("--strategies", default=None)
    ap.add_argument("--stores", default=",".join(STORES))
    ap.add_argument("--json", default=None)
    ap.add_argument("--only", default="wakeup,multi,expiry",
                    help="which measurements (wakeup alone: a minute or two)")
    ap.add_argument("--quick", action="store_true")
    common.add_binary(ap)
    args = ap.parse_args()
    if args.quick:
        args.rounds, args.duration, args.samples, args.requests, args.keys = 1, 0.3, 5, 20000, 2000
        if args.strategies is None:
            args.strategies = common.strategies(args.bin)[0]
        args.stores = args.stores.split(",")[0]
    common.require_binary(args.bin)
    strategies = common.chosen_strategies(args.bin, args.strategies)
    stores = args.stores.split(",")
    only = args.only.split(",")
    wake, txn, pairs, exp = {}, {}, {}, {}
    for _ in range(args.rounds):
        servers = []
        if "wakeup" in only:
            servers += [("wake", s, "sharded") for s in strategies] + [("wake", None, None)]
        if "multi" in only:
            servers += [("multi", "async", st) for st in stores] + [("multi", None, None)]
        if "expiry" in only:
            servers += [("expiry", "async", "sharded"), ("expiry", None, None)]
        random.shuffle(servers)
        for what, strategy, store in servers:
            server = Server(args.bin, strategy, store or "sharded")
            try:
                if what == "wake":
                    wake.setdefault(server.name, []).extend(wakeup(server, args.samples))
                elif what == "multi":
                    txn.setdefault(server.name, []).append(multi(server, args.duration, True))
                    pairs.setdefault(server.name, []).append(multi(server, args.duration, False))
                else:
                    exp.setdefault(server.name, []).append(
                        expiry(server, args.keys, args.requests))
            finally:
                server.stop()
    print_wakeups(wake)
    if txn:
        print_multi(txn, pairs)
    if exp:
        print_expiry(exp, args.keys)
    if args.json:
        common.write_json(args.json, {"wakeup_s": wake, "multi_tps": txn, "pairs_ps": pairs,
                                      "expiry": exp})


def print_wakeups(wake):
    if not wake:
        return
    load = os.getloadavg()
    print("BLPOP wake-up: from the RPUSH's send to the blocked client's reply "
          f"(load average at the end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f})\n")
    print("| server | median (µs) | p90 (µs) | p99 (µs) | wake-ups | median / redis-server |")
    print("|---|---:|---:|---:|---:|---:|")
    redis = med(wake.get("redis-server", []))
    for name, xs in sorted(wake.items()):
        xs = sorted(xs)
        q = lambda p: xs[min(len(xs) - 1, int(p * len(xs)))] * 1e6  # noqa: E731
        print(f"| {name} | {med(xs) * 1e6:.0f} | {q(0.9):.0f} | {q(0.99):.0f} | {len(xs)} "
              f"| {med(xs) / redis:.2f}x |")


def print_multi(txn, pairs):
    print("\nMULTI/EXEC: 4 processes, 32 transactions in flight each\n")
    print("| server | transactions/s | INCR pairs/s without MULTI | ratio |")
    print("|---|---:|---:|---:|")
    for name in sorted(txn):
        t, p = med(txn[name]), med(pairs[name])
        print(f"| {name} | {t:,.0f} | {p:,.0f} | {t / p:.2f} |")


def print_expiry(exp, keys):
    print(f"\nDeadlines: redis-benchmark GET -P 16 over {keys} keys\n")
    print("| server | GET/s, no deadlines | GET/s, every key a deadline | ratio |"
          " expirer: s to delete every key |")
    print("|---|---:|---:|---:|---:|")
    for name, rows in sorted(exp.items()):
        a, b, c = (med([r[i] for r in rows]) for i in range(3))
        print(f"| {name} | {a:,.0f} | {b:,.0f} | {b / a:.2f} | {c:.2f} |")


if __name__ == "__main__":
    main()
