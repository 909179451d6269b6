#!/usr/bin/env bash
# CI: a short coverage-guided run of every fuzz target from its seeds;
# any crash fails CI (libFuzzer's input is left in fuzz/artifacts/).
# Parsers get 2 s each (tens of thousands to millions of executions),
# whole sessions 6 s: about a minute of fuzzing after the build, which
# needs only the Rust toolchain and a C++ compiler (for libFuzzer).
set -euo pipefail
cd "$(dirname "$0")"

cargo fmt --check

all=$(sed -n 's/^name = "\(.*\)"$/\1/p' Cargo.toml | grep -vx serverlab-fuzz)
mapfile -t sessions < <(grep '^session_' <<<"$all")
mapfile -t parsers < <(grep -v '^session_' <<<"$all")
SECONDS_EACH=${FUZZ_PARSER_SECONDS:-2} ./run.sh "${parsers[@]}"
SECONDS_EACH=${FUZZ_SESSION_SECONDS:-6} ./run.sh "${sessions[@]}"
