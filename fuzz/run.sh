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
#
# The targets are built with plain cargo and the flags `cargo fuzz build
# -s none` passes (cargo-fuzz 0.13: libFuzzer's coverage instrumentation,
# no sanitizer, debug assertions on), into the directory cargo-fuzz uses,
# so `cargo fuzz run` works on them too but is not needed here (nor in CI).
set -euo pipefail
cd "$(dirname "$0")"

triple=x86_64-unknown-linux-gnu
bin=target/$triple/release
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
-Cllvm-args=-sanitizer-coverage-pc-table -Cllvm-args=-sanitizer-coverage-trace-compares \
-Cllvm-args=-sanitizer-coverage-stack-depth -Cllvm-args=-simplifycfg-branch-fold-threshold=0 \
--cfg fuzzing -Cdebug-assertions -Ccodegen-units=1"

RUNS=${RUNS:-10000000}
targets=("$@")
if ((${#targets[@]} == 0)); then
  mapfile -t targets < <(sed -n 's/^name = "\(.*\)"$/\1/p' Cargo.toml | grep -vx serverlab-fuzz)
fi
if [[ -n ${SECONDS_EACH:-} ]]; then
  limit=(-max_total_time="$SECONDS_EACH")
else
  limit=(-runs="$RUNS")
fi

cargo build --release --locked --target "$triple" --bins
mkdir -p runs
printf '| target | executions | cov | ft | corpus | time (s) |\n|---|---:|---:|---:|---|---:|\n'
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t" "artifacts/$t"
  log="runs/$t.log"
  start=$(date +%s)
  # One process, one job: other engineers build on this machine.
  if ! "$bin/$t" -artifact_prefix="artifacts/$t/" "${limit[@]}" \
    -print_final_stats=1 -rss_limit_mb=2048 "corpus/$t" "seeds/$t" >"$log" 2>&1; then
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
