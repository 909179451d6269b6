#!/usr/bin/env python3
"""The disk's own ceiling for durable writes: how many `fdatasync`s per
second one writer gets, as `pg_test_fsync` measures it.

One writer appends a record to a file in --dir (on the disk to be
measured) and `fdatasync`s it, again and again for --seconds, as the
write-ahead log's `always` does for each group it commits: the count per
second is the ceiling of `always`'s commits, and `always`'s writes per
second can be at most (records per fsync) x (fsyncs per second). Each
record size asked for is timed in turn, --rounds times, interleaved;
figures are medians of the rounds.

Prints a Markdown table: per record size, fsyncs per second, and the
median and p99 time of one append + `fdatasync`.

Usage (from the repository root, on a quiet machine):
    benches/fsync_ceiling.py [--dir DIR] [--seconds 2] [--rounds 3] [--sizes 64,4096]
    benches/fsync_ceiling.py --quick     # a tiny run: checks the script works
DIR (default: a directory under /tmp) must be on the disk to be measured.
Imported by benches/durability.py for its share of the ceiling.
"""

import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (beside this script)


def ceiling(root, seconds, size=64):
    """One writer's appends of `size` bytes, each `fdatasync`ed, for
    `seconds` in a file under `root`: (fsyncs per second, median µs, p99 µs)."""
    path = os.path.join(root, "fsync-ceiling-probe")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    record = b"x" * size
    times = []
    try:
        start = time.perf_counter()
        end = start + seconds
        now = start
        while now < end or not times:
            os.write(fd, record)
            os.fdatasync(fd)
            t = time.perf_counter()
            times.append((t - now) * 1e6)
            now = t
    finally:
        os.close(fd)
        os.unlink(path)
    elapsed = now - start
    times.sort()
    return len(times) / elapsed, statistics.median(times), times[int(len(times) * 0.99)]


def main():
    ap = common.parser(__doc__)
    ap.add_argument("--dir", default=None, help="where the probe file goes (default: /tmp)")
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sizes", default="64,4096", help="record sizes in bytes")
    ap.add_argument("--json")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    if args.quick:
        args.seconds, args.rounds = 0.1, 1
    sizes = [int(s) for s in args.sizes.split(",")]
    root = tempfile.mkdtemp(prefix="fsync-ceiling-", dir=args.dir)
    runs = {s: [] for s in sizes}
    try:
        for _ in range(args.rounds):
            for s in sizes:
                runs[s].append(ceiling(root, args.seconds, s))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    load = os.getloadavg()
    print(f"One writer, append + fdatasync, {args.rounds} rounds of {args.seconds} s in "
          f"{args.dir or tempfile.gettempdir()} (load average {load[0]:.2f} {load[1]:.2f} "
          f"{load[2]:.2f})\n")
    print("| record | fsyncs per second | median | p99 |")
    print("|---:|---:|---:|---:|")
    for s in sizes:
        per_s = statistics.median(r[0] for r in runs[s])
        p50 = statistics.median(r[1] for r in runs[s])
        p99 = statistics.median(r[2] for r in runs[s])
        print(f"| {s} B | {per_s:,.0f} | {p50:.0f} µs | {p99:.0f} µs |")
    common.write_json(args.json, {str(s): runs[s] for s in sizes})


if __name__ == "__main__":
    main()
