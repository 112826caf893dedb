#!/usr/bin/env bash
# Refits presets/calibration/*.json (Tier-2 kernel efficiencies and Tier-0 residual bands) from the
# train split of ../shared/groundtruth, then rewrites the validation ceilings and the golden files
# that depend on them. Review every diff: this changes flopcast's answers.
set -euo pipefail
cd "$(dirname "$0")/.."
groundtruth=${1:-../shared/groundtruth}
cmake --preset native-release >/dev/null
cmake --build --preset native-release
build/native-release/cli/flopcast fit "$groundtruth" --out presets/calibration
cmake --build --preset native-release  # re-embed the new coefficients
build/native-release/cli/flopcast validate "$groundtruth" --write-ceilings validation/ceilings.json >/dev/null
scripts/update_golden.sh
