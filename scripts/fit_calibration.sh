#!/usr/bin/env bash
# Refits presets/calibration/*.json (Tier-2 kernel efficiencies and Tier-0 residual bands) and the
# Tier-1 overheads of presets/engines/*.json from the train split of ../shared/groundtruth, the
# engine refits without each source (validation/engine_folds.json, ~30 min), the HTTP servers'
# request latency (vLLM, SGLang), then rewrites the
# validation ceilings, the leave-one-source-out ceilings and bands, and the golden files that
# depend on them. Review every diff: this changes flopcast's answers.
set -euo pipefail
cd "$(dirname "$0")/.."
groundtruth=${1:-../shared/groundtruth}
cmake --preset native-release >/dev/null
cmake --build --preset native-release
build/native-release/cli/flopcast fit "$groundtruth" --out presets/calibration
cmake --build --preset native-release  # re-embed the new coefficients
# Tier 1: engine overheads, fitted on top of the kernel fits just embedded.
build/native-release/cli/flopcast fit --engines "$groundtruth/e2e" --out presets/engines --min-rows 8
cmake --build --preset native-release
build/native-release/cli/flopcast fit --engine-folds validation/engine_folds.json "$groundtruth/e2e" --min-rows 8
cmake --build --preset native-release  # re-embed the gated engine profiles
# The HTTP servers' per-request latency (vLLM, SGLang), on top of the gated profiles.
build/native-release/cli/flopcast fit --request-overhead "$groundtruth/e2e" --out presets/engines
cmake --build --preset native-release
build/native-release/cli/flopcast validate "$groundtruth" --write-ceilings validation/ceilings.json >/dev/null
build/native-release/cli/flopcast validate "$groundtruth/e2e" --by-source \
  --engine-folds validation/engine_folds.json --write-loso-ceilings validation/loso_ceilings.json \
  --write-bands presets/bands/e2e.json >/dev/null
scripts/update_golden.sh
