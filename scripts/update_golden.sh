#!/usr/bin/env bash
# Regenerates tests/golden/<scenario>.expected.json from the native release CLI. Review the diff
# (git diff tests/golden) before committing: a golden change is a change of flopcast's answers.
set -euo pipefail
cd "$(dirname "$0")/.."
cli=${FLOPCAST_CLI:-build/native-release/cli/flopcast}
[ -x "$cli" ] || cmake --workflow --preset native-release
for f in presets/scenarios/*.json; do
  id=$(basename "$f" .json)
  node -e 'const fs=require("fs");process.stdout.write(JSON.stringify(JSON.parse(fs.readFileSync(process.argv[1],"utf8")).request))' "$f" |
    "$cli" estimate --request - --format json >"tests/golden/$id.expected.json"
  echo "tests/golden/$id.expected.json"
done
