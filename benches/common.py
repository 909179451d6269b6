"""What the benchmark scripts share: the binary, starting and stopping a
pinned server, reading a process's CPU time and memory, running a pinned
client, and the strategies the binary serves. Imported by the scripts
beside it (`import common`); not a benchmark itself.
"""

import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
BIN = os.path.join(ROOT, "target", "release", "serverlab")
TICK = os.sysconf("SC_CLK_TCK")
MIB = 1 << 20


def strategies(binary):
    """Every strategy the binary serves, in its order: the block that
    `serve --help` lists them in (one per line, name first), so a strategy
    added to the code is benchmarked without editing any script."""
    out = subprocess.run([binary, "serve", "--help"], capture_output=True, text=True,
                         check=True).stdout
    block = out.split("Strategies (--strategy):", 1)[1].split("\n\n", 1)[0]
    return [line.split()[0] for line in block.strip().splitlines()]


def chosen_strategies(binary, listed):
    """`--strategies a,b` as a list, or every strategy the binary serves."""
    return listed.split(",") if listed else strategies(binary)


def add_placement(ap):
    """The flags every script that pins takes: where the server and the
    client run."""
    ap.add_argument("--server-cpu", default="0", help="CPU list for the server (default 0)")
    ap.add_argument("--client-cpu", default="1", help="CPU list for the client (default 1)")


def add_binary(ap):
    ap.add_argument("--bin", default=BIN,
                    help="the serverlab binary (default: target/release/serverlab)")


def parser(doc):
    """An argument parser described by the first paragraph of `doc`."""
    return argparse.ArgumentParser(description=doc.split("\n\n")[0],
                                   formatter_class=argparse.RawDescriptionHelpFormatter)


def require_binary(path):
    """Exit with the next step if the binary has not been built."""
    if not os.path.exists(path):
        sys.exit(f"no {path}: build first (cargo build --release)")


def cpu_seconds(pid):
    """User + system CPU time of process `pid` so far, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


def rss_mib(pid):
    """Resident memory of process `pid`, in MiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def free_port():
    """A port free on 127.0.0.1 now (another program could take it first)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(command):
    """Start `command`, a server that prints `listening on ADDR` first;
    (the process, ADDR)."""
    p = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    m = re.search(r"listening on (\S+)", line)
    if not m:
        p.kill()
        sys.exit(f"server did not start: {line!r}")
    return p, m.group(1)


def wait_port(proc, port, name, within=20):
    """Wait until `proc` (a server started without a `listening on` line,
    such as redis-server) accepts on 127.0.0.1:`port`; exit saying so if it
    dies or does not within `within` seconds."""
    deadline = time.time() + within
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if proc.poll() is not None or time.time() > deadline:
                sys.exit(f"{name} did not start on port {port}")
            time.sleep(0.05)


def serve_command(binary, protocol, cpu, *flags):
    """`serverlab serve PROTOCOL` pinned to `cpu`, on a free port."""
    return [binary, "serve", protocol, "--cpus", cpu, "--addr", "127.0.0.1:0", *flags]


def stop(proc, timeout=30):
    """SIGTERM (after SIGCONT, should it be stopped); wait; its stdout."""
    proc.send_signal(signal.SIGCONT)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=timeout)
    return out


class Server:
    """`serverlab serve PROTOCOL` on 127.0.0.1:0, pinned; stopped with SIGTERM."""

    def __init__(self, binary, protocol, strategy, cpu, extra=()):
        self.p, self.addr = wait_listening(
            serve_command(binary, protocol, cpu, "--strategy", strategy, *extra))
        host, port = self.addr.rsplit(":", 1)
        self.host, self.port = host, int(port)

    def stop(self):
        return stop(self.p)


def pinned(cpu, command):
    """`command` under `taskset -c cpu`."""
    return ["taskset", "-c", cpu, *command]


def load_results(command, what="load"):
    """Run a `serverlab load … --format json` command; its `results`.
    Exits, saying why, if it failed."""
    out = subprocess.run(command, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{what} failed: {out.stderr.strip()}")
    return json.loads(out.stdout)["results"]


def write_json(path, value, indent=1):
    """`value` as indented JSON to `path`, when one was given (`--json`)."""
    if path:
        with open(path, "w") as f:
            json.dump(value, f, indent=indent)
