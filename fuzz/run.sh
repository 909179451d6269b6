#!/usr/bin/env bash
# Fuzz every target (or the ones named) one after another, one process
# each, and print a table row per target: executions, and libFuzzer's
# final cov, ft and corpus (units kept, and their total size). The corpus
# grows in fuzz/corpus/<target> (not committed); fuzz/seeds/<target> is
# read as well.
#
#   fuzz/run.sh                       # 10 million executions per target
#   RUNS=100000 fuzz/run.sh kv_head   # fewer, one target
#   SECONDS_EACH=30 fuzz/run.sh       # by time instead (what CI does)
#
# A crash stops the run: libFuzzer saves the input in
# fuzz/artifacts/<target>/ and the script exits non-zero.
set -euo pipefail
cd "$(dirname "$0")"
export RUSTC_BOOTSTRAP=1 # cargo-fuzz on stable Rust (libFuzzer needs -Z flags)

RUNS=${RUNS:-10000000}
targets=("$@")
if ((${#targets[@]} == 0)); then
  mapfile -t targets < <(cargo fuzz list)
fi
if [[ -n ${SECONDS_EACH:-} ]]; then
  limit=(-max_total_time="$SECONDS_EACH")
else
  limit=(-runs="$RUNS")
fi

cargo fuzz build -s none
mkdir -p runs
printf '| target | executions | cov | ft | corpus | time (s) |\n|---|---:|---:|---:|---|---:|\n'
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t"
  log="runs/$t.log"
  start=$(date +%s)
  # One process, one job: other engineers build on this machine.
  if ! cargo fuzz run -s none "$t" "corpus/$t" "seeds/$t" -- \
    "${limit[@]}" -print_final_stats=1 -rss_limit_mb=2048 >"$log" 2>&1; then
    echo "FAILED: $t (see fuzz/$log and fuzz/artifacts/$t/)" >&2
    tail -40 "$log" >&2
    exit 1
  fi
  secs=$(($(date +%s) - start))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1)
  cov=$(sed -E 's/.* cov: ([0-9]+).*/\1/' <<<"$done_line")
  ft=$(sed -E 's/.* ft: ([0-9]+).*/\1/' <<<"$done_line")
  corpus=$(sed -E 's/.* corp: ([0-9]+\/[0-9]+[a-zA-Z]*).*/\1/' <<<"$done_line")
  printf '| %s | %s | %s | %s | %s | %s |\n' "$t" "$execs" "$cov" "$ft" "$corpus" "$secs"
done
