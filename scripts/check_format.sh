#!/usr/bin/env bash
# Fails when a C++ file differs from .clang-format (Debian 12's clang-format 14) or a JavaScript
# file (web/, tests/**/*.mjs: .prettierignore) from .prettierrc.json (prettier, pinned in
# package.json; `npm ci` installs it), or when ESLint (pinned too; eslint.config.js) finds a fault in
# that JavaScript. Fix with
#   git ls-files '*.cpp' '*.hpp' | xargs clang-format -i
#   node_modules/.bin/prettier --write .
set -euo pipefail
cd "$(dirname "$0")/.."
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  files=$(git ls-files '*.cpp' '*.hpp')
else
  files=$(find bench cli core tests wasm -name '*.cpp' -o -name '*.hpp')
fi
bad=()
for f in $files; do
  clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if ((${#bad[@]})); then
  echo "format: ${#bad[@]} file(s) differ from .clang-format:" >&2
  printf '  %s\n' "${bad[@]}" >&2
  echo "fix: git ls-files '*.cpp' '*.hpp' | xargs clang-format -i" >&2
  exit 1
fi
echo "format: $(echo "$files" | wc -w) C++ files follow .clang-format"

if [ ! -x node_modules/.bin/prettier ]; then
  echo "format: node_modules/.bin/prettier missing: run npm ci (scripts/setup.sh does)" >&2
  exit 1
fi
if ! js_bad=$(node_modules/.bin/prettier --list-different .); then
  echo "format: JavaScript file(s) differ from .prettierrc.json:" >&2
  printf '  %s\n' $js_bad >&2
  echo "fix: node_modules/.bin/prettier --write ." >&2
  exit 1
fi
echo "format: the JavaScript follows .prettierrc.json (prettier $(node_modules/.bin/prettier --version))"
if ! node_modules/.bin/eslint --max-warnings 0 .; then
  echo "lint: ESLint findings above (eslint.config.js says which rules)" >&2
  exit 1
fi
echo "lint: the JavaScript is clean under eslint.config.js (ESLint $(node_modules/.bin/eslint --version))"
