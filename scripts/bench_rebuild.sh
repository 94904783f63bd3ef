#!/usr/bin/env bash
# Incremental rebuild time after a one-line edit: for each FILE given, append
# one line of code to it (a private function returning a fresh number: a
# comment alone lets rustc's incremental cache skip nearly everything), time `cargo build --workspace --bins` (dev profile,
# the profile the tests use; `--timings` writes the per-crate report under
# $CARGO_TARGET_DIR/cargo-timings/), then restore the file and rebuild so the
# next measurement starts warm. Prints one "seconds  file" line per file.
# `--workspace`, not `-p kebab`: the feature set the tests build, so a warm
# target directory stays warm.
#
#   scripts/bench_rebuild.sh crates/kebab/src/api/search.rs crates/search/src/search.rs
#
# Run it with a warm target directory and nothing else using the CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh >/dev/null
cargo build --workspace --bins --quiet
for file in "$@"; do
    cp "$file" "$file.bench-orig"
    n=$(date +%s%N)
    printf '\n#[allow(dead_code)] fn rebuild_benchmark_edit_%s() -> u64 { %s }\n' "$n" "$n" >>"$file"
    start=$(date +%s.%N)
    cargo build --workspace --bins --timings --quiet
    end=$(date +%s.%N)
    mv "$file.bench-orig" "$file"
    printf '%6.1f  %s\n' "$(echo "$end - $start" | bc)" "$file"
    cargo build --workspace --bins --quiet
done
