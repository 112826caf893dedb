#!/usr/bin/env bash
# clang-tidy over all production C++ the native build compiles (the estimators in core/src, the
# JSON layer in core/io/src, the CLI in cli/) with the checks in .clang-tidy (core/io and cli add
# their own .clang-tidy); any finding fails. wasm/bindings.cpp is compiled by Emscripten only and
# is not in the native compile commands.
# Needs a configured native build for its compile commands (default: build/native-release).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/native-release}
if [ ! -f "$build/compile_commands.json" ]; then
  echo "tidy: $build/compile_commands.json not found; configure that build first" >&2
  exit 2
fi
jobs=$(nproc 2>/dev/null || echo 2)
# clang-tidy counts the (suppressed) warnings of system headers on stderr: those lines go.
quiet() { grep -Ev '^[0-9]+ warnings? generated\.$' || true; }
files=$(ls core/src/*.cpp core/io/src/*.cpp cli/*.cpp cli/validate/*.cpp)
if ! echo "$files" | xargs -P "$jobs" -n 1 clang-tidy -p "$build" --quiet 2>&1 | quiet; then
  echo "tidy: findings above (fix them, or justify a change to .clang-tidy)" >&2
  exit 1
fi
echo "tidy: core/src, core/io/src and cli clean under .clang-tidy ($(echo "$files" | wc -l) files)"
