#!/usr/bin/env bash
# CI: a short coverage-guided run of every fuzz target from its seeds;
# any crash fails CI (libFuzzer's input is left in fuzz/artifacts/).
# Parsers get 10 s each (millions of executions), whole sessions 30 s:
# with building cargo-fuzz and the targets this stays under ~10 minutes.
set -euo pipefail
cd "$(dirname "$0")"

cargo fmt --check
if ! cargo fuzz --version >/dev/null 2>&1; then
  cargo install --locked cargo-fuzz
fi

mapfile -t all < <(cargo fuzz list)
sessions=() parsers=()
for t in "${all[@]}"; do
  case $t in
    session_*) sessions+=("$t") ;;
    *) parsers+=("$t") ;;
  esac
done
SECONDS_EACH=${FUZZ_PARSER_SECONDS:-10} ./run.sh "${parsers[@]}"
SECONDS_EACH=${FUZZ_SESSION_SECONDS:-30} ./run.sh "${sessions[@]}"
