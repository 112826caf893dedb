#!/usr/bin/env bash
# Quick start: set up, build, print a sample CLI estimate and serve the web calculator on
# http://127.0.0.1:${PORT:-8080}/ until Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# Only what this script uses: the CLI and the site (the tests are scripts/test.sh's).
cmake --preset native-release >/dev/null
cmake --build --preset native-release --target flopcast
cmake --preset wasm-release >/dev/null
cmake --build --preset wasm-release --target flopcast_site

echo
echo "$ flopcast estimate --model llama-2-7b --hardware a100-sxm-80g --prompt-tokens 128 --output-tokens 128"
build/native-release/cli/flopcast estimate --model llama-2-7b --hardware a100-sxm-80g \
  --prompt-tokens 128 --output-tokens 128
echo
exec node web/serve.mjs --root build/wasm-release/site --port "${PORT:-8080}"
