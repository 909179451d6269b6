#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for tests:
#   cluster.sh start   write slurm.conf from slurm.conf.in, start munged,
#                      slurmctld and slurmd (as root), wait until sinfo
#                      shows the node idle
#   cluster.sh stop    stop them (by the pids they recorded), munged too
#                      when start started it (one already running, the
#                      machine's own, is left alone)
# Needs Debian's slurm-wlm and munge (apt-get install -y slurm-wlm munge).
# Variables: SLURM_CONF (where slurm.conf goes; default
# /etc/slurm/slurm.conf; a file there that this script did not write is
# never replaced), SERVERLAB_SLURM_STATE (state, spool, logs and pids;
# default /var/tmp/serverlab-slurm), SERVERLAB_SLURM_CPUS (CPUs the node
# claims; default 4 × the real count, at least 8).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
conf="${SLURM_CONF:-/etc/slurm/slurm.conf}"
state="${SERVERLAB_SLURM_STATE:-/var/tmp/serverlab-slurm}"
marker="# serverlab: a one-node Slurm cluster for tests"

die() { echo "cluster.sh: $*" >&2; exit 1; }

write_conf() {
  if [[ -e "$conf" ]] && ! head -1 "$conf" | grep -qF "$marker"; then
    die "$conf exists and is not this script's; set SLURM_CONF to another path"
  fi
  local host cpus
  host="$(hostname -s)"
  cpus="${SERVERLAB_SLURM_CPUS:-$(( $(nproc) * 4 > 8 ? $(nproc) * 4 : 8 ))}"
  mkdir -p "$(dirname "$conf")" "$state/ctld" "$state/d"
  sed -e "s|@HOST@|$host|g" -e "s|@CPUS@|$cpus|g" -e "s|@STATE@|$state|g" \
    "$here/slurm.conf.in" >"$conf"
}

start_munge() {
  if munge -n </dev/null >/dev/null 2>&1; then return; fi
  mkdir -p /run/munge /var/log/munge /var/lib/munge
  [[ -s /etc/munge/munge.key ]] || die "no /etc/munge/munge.key (is munge installed?)"
  chown -R munge:munge /run/munge /var/log/munge /var/lib/munge /etc/munge 2>/dev/null || true
  if id munge >/dev/null 2>&1; then
    runuser -u munge -- munged
  else
    munged --force
  fi
  for _ in $(seq 50); do
    if munge -n </dev/null >/dev/null 2>&1; then
      record_munged
      return
    fi
    sleep 0.1
  done
  die "munged did not start"
}

# The pid of the munged just started (munged writes its pid file; none
# ran before it, so the newest munged is it), for stop.
record_munged() {
  local pid=""
  [[ -s /run/munge/munged.pid ]] && pid="$(cat /run/munge/munged.pid)"
  [[ -n "$pid" ]] || pid="$(pgrep -n -x munged || true)"
  [[ -n "$pid" ]] && echo "$pid" >"$state/munged.pid"
  return 0
}

wait_idle() {
  for _ in $(seq 300); do
    if sinfo -h -o '%T' 2>/dev/null | grep -qx 'idle'; then return; fi
    sleep 0.1
  done
  sinfo >&2 || true
  tail -5 "$state/slurmctld.log" "$state/slurmd.log" >&2 || true
  die "the node did not become idle within 30 s"
}

start() {
  command -v slurmctld >/dev/null || die "no slurmctld: apt-get install -y slurm-wlm munge"
  write_conf
  export SLURM_CONF="$conf"
  start_munge
  slurmctld -f "$conf"
  slurmd -f "$conf"
  wait_idle
  echo "cluster.sh: node $(hostname -s) idle (SLURM_CONF=$conf, state in $state)"
}

stop_pid() {
  local file="$1" pid
  [[ -s "$file" ]] || return 0
  pid="$(cat "$file")"
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
}

stop() {
  stop_pid "$state/slurmd.pid"
  stop_pid "$state/slurmctld.pid"
  if [[ -s "$state/munged.pid" ]]; then
    stop_pid "$state/munged.pid"
    rm -f "$state/munged.pid"
    echo "cluster.sh: stopped, munged too"
  else
    echo "cluster.sh: stopped (munged was running before start: left running)"
  fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
