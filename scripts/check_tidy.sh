#!/usr/bin/env bash
# clang-tidy over the estimators (core/src) with the checks in .clang-tidy; any finding fails.
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
if ! ls core/src/*.cpp | xargs -P "$jobs" -n 1 clang-tidy -p "$build" --quiet 2>&1 | quiet; then
  echo "tidy: findings above (fix them, or justify a change to .clang-tidy)" >&2
  exit 1
fi
echo "tidy: core/src clean under .clang-tidy ($(ls core/src/*.cpp | wc -l) files)"
