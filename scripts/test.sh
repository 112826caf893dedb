#!/usr/bin/env bash
# Every test: the C++ format check, clang-tidy on the estimators, unit, golden and CLI tests natively under ASan/UBSan and in release, the accuracy
# table against ../shared/groundtruth with its error ceilings (when that folder exists; with CI=true its absence is an error), the same
# GoogleTest suite under Node (WebAssembly), native/WASM parity, the browser test in headless
# Chromium, a bounded fuzz run of the JSON entry point, and one benchmark pass.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export NODE_PATH=/usr/share/nodejs

step() { printf '\n=== %s\n' "$*"; }

step "format: every C++ file as .clang-format says"
scripts/check_format.sh
step "native-debug (ASan + UBSan): unit, golden, cli"
cmake --workflow --preset native-debug
step "native-release: unit, golden, cli"
cmake --workflow --preset native-release
step "docs: the request-field tables of docs/schema.md match the registry (scripts/schema_tables.mjs)"
node scripts/schema_tables.mjs --check --cli build/native-release/cli/flopcast
step "tidy: clang-tidy over the estimators, the JSON layer and the CLI as .clang-tidy says"
scripts/check_tidy.sh build/native-release
step "validate: accuracy against ../shared/groundtruth (error ceilings in validation/ceilings.json)"
if [ -d ../shared/groundtruth ]; then
  build/native-release/cli/flopcast validate ../shared/groundtruth \
    --check-ceilings validation/ceilings.json
  step "validate: leave-one-source-out accuracy (ratchet in validation/loso_ceilings.json; README and docs/validation.md tables generated from it)"
  report=$(mktemp)
  build/native-release/cli/flopcast validate ../shared/groundtruth/e2e --by-source \
    --engine-folds validation/engine_folds.json \
    --check-loso-ceilings validation/loso_ceilings.json --format json >"$report"
  node scripts/accuracy_tables.mjs --check "$report"
  rm -f "$report"
elif [ "${CI:-}" = true ]; then
  # In CI the accuracy ratchet must run: a missing ../shared is a broken checkout, not a pass.
  echo "validate: ../shared/groundtruth not found and CI=true: the accuracy check cannot run" >&2
  exit 1
else
  echo "validate: ../shared/groundtruth not found, skipped (CI=true makes this an error)"
fi
step "validate: the power model against ML.ENERGY's measured runs (presets/energy/, ceilings in validation/energy_ceilings.json)"
build/native-release/cli/flopcast validate presets/energy/ml-energy-leaderboard-v3.jsonl \
  --check-ceilings validation/energy_ceilings.json
step "wasm-release: the same GoogleTest suite under Node, module smoke test"
cmake --workflow --preset wasm-release

step "parity: every golden request through the native CLI and the WASM module"
FLOPCAST_CLI=build/native-release/cli/flopcast FLOPCAST_SITE_DIR=build/wasm-release/site \
  node --test tests/parity/
step "browser: the page in headless Chromium (Playwright)"
FLOPCAST_SITE_DIR=build/wasm-release/site node --test tests/browser/

step "fuzz: libFuzzer over the JSON entry point for ${FUZZ_SECONDS:-60} s"
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz
corpus=$(mktemp -d)
cp tests/fuzz/corpus/* "$corpus"/
build/fuzz/tests/fuzz/flopcast_fuzz -max_total_time="${FUZZ_SECONDS:-60}" -print_final_stats=1 \
  "$corpus" 2>&1 | tail -n 14
rm -rf "$corpus"
step "fuzz: libFuzzer over the validator's file readers for ${FUZZ_SECONDS:-60} s"
corpus=$(mktemp -d)
cp tests/cli/fixtures/validate/*.jsonl tests/cli/fixtures/validate/*.csv \
  tests/cli/fixtures/validate/data/*.* "$corpus"/
build/fuzz/tests/fuzz/flopcast_fuzz_validate -max_total_time="${FUZZ_SECONDS:-60}" \
  -print_final_stats=1 "$corpus" 2>&1 | tail -n 14
rm -rf "$corpus"

step "benchmark (one estimate, native release)"
build/native-release/bench/flopcast_bench --benchmark_min_time=0.2

step "all tests passed"
