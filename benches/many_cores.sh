#!/bin/bash
# Board pipelined x16 on every store x strategy at k = 1, 2, 4, 8 server cores,
# and kv on every store at k = 1 and 8: the many-core figures in
# docs/strategies.md ("Many cores"). Needs a machine with 16 CPUs: the server
# runs on CPUs 0..k-1, `serverlab load` on CPUs 8-15 (eight event loops), so
# the client never shares the server's cores. One run per cell; each run's
# JSON is kept in $OUT/runs.tgz, one line per run in $OUT/log.txt.
#
# usage: SL=target/release/serverlab OUT=DIR benches/many_cores.sh
#   SECS, WARM: measured time and warm-up per run (1500ms, 500ms)
#   KS, KVKS, STRATS, CL: the core counts, kv's core counts, the strategies,
#   the load's CPUs; LOCKSTEP=1 adds lock-step runs of three stores.
set -u
SL=${SL:-$PWD/target/release/serverlab}; OUT=${OUT:-/tmp/out}; W=/tmp/many; mkdir -p $W/runs $OUT
SECS=${SECS:-1500ms}; WARM=${WARM:-500ms}; CL=${CL:-8-15}
LOG=$OUT/log.txt
echo "$(date -u +%FT%TZ) $(nproc) cpus; $(uname -r); $(grep -m1 'model name' /proc/cpuinfo)" | tee -a $LOG
lscpu 2>/dev/null | grep -E "Thread|Core|Socket|NUMA" >>$LOG
port=21000
up() { for _ in $(seq 200); do (echo >/dev/tcp/127.0.0.1/$port) 2>/dev/null && return 0; sleep 0.02; done; return 1; }
serve() { local p=$1 s=$2 k=$3; shift 3; port=$((port+1))
  local th="--threads $k"; case $s in thread-per-*) th="";; esac
  $SL serve $p --strategy $s $th --cpus 0-$((k-1)) --addr 127.0.0.1:$port "$@" >/dev/null 2>>$W/serve.err & SPID=$!
  up || echo "serve $p $s $k did not listen" >>$LOG; }
stop() { kill $SPID 2>/dev/null; wait $SPID 2>/dev/null; }
tput() { python3 -c "import json,sys
try:
  r=json.load(open(sys.argv[1]))['results']; c=r.get('client_cpu',{})
  print('%.0f util=%s' % (r['throughput_rps'], c.get('utilization', c.get('busy','?'))))
except Exception as e: print('ERR', e)" $1; }
board() { # name strategy k pipeline store
  local f=$W/runs/$1.json; serve board $2 $3 --store $5
  timeout 20 $SL load board --addr 127.0.0.1:$port --posters 32 --readers 32 --pipeline $4 --duration $SECS --warmup $WARM --cpus $CL --format json >$f 2>>$W/load.err
  stop; echo "$1 $(tput $f)" | tee -a $LOG; }
kv() { # name strategy k store
  local f=$W/runs/$1.json; serve kv $2 $3 --store $4
  timeout 25 $SL load kv --addr 127.0.0.1:$port --sessions 256 --requests-per-session 2500 --concurrency 64 --pipeline 8 --mix get=80,put=20 --preload --cpus $CL --format json >$f 2>>$W/load.err
  stop; echo "$1 $(tput $f)" | tee -a $LOG; }
save() { tar -C $W -czf $OUT/runs.tgz runs serve.err load.err 2>/dev/null; }
STRATS=${STRATS:-"pool-locked pool-lockfree async shared-nothing uring thread-per-connection"}
# 1. pipelined x16, every store, every strategy, k = 1 2 4 8 (stores adjacent)
for k in ${KS:-1 2 4 8}; do for s in $STRATS; do for st in mutex rwlock sharded lockfree; do
  board "p16-$s-$st-k$k" $s $k 16 $st; done; done; save; done
# 2. kv pipelined x8, every store, pool-locked and shared-nothing, k = 1 8
for k in ${KVKS:-1 8}; do for s in pool-locked shared-nothing; do for st in mutex rwlock sharded lockfree; do
  kv "kv-$s-$st-k$k" $s $k $st; done; done; done; save
[ -n "${LOCKSTEP:-}" ] || { echo "$(date -u +%FT%TZ) done" | tee -a $LOG; exit 0; }
# 3. lock-step, rwlock vs sharded vs lockfree, every strategy, k = 1 2 4 8
for k in 1 2 4 8; do for s in $STRATS; do for st in rwlock sharded lockfree; do
  board "p1-$s-$st-k$k" $s $k 1 $st; done; done; save; done
echo "$(date -u +%FT%TZ) done" | tee -a $LOG
