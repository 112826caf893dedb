#!/usr/bin/env bash
# Installs what flopcast needs on Debian 12 (only what is missing) and the npm dev dependencies.
# Safe to run again: it does nothing when everything is there.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake ninja-build g++ clang clang-format clang-tidy libclang-rt-14-dev nlohmann-json3-dev libcli11-dev
          googletest libgtest-dev libbenchmark-dev emscripten chromium)
command -v node >/dev/null || packages+=(nodejs)
command -v npm >/dev/null || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "flopcast setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# playwright-core (it never downloads a browser; the tests use Debian's /usr/bin/chromium),
# axe-core (the accessibility check the browser tests inject into the page), terser (the site's
# build minifies the page's scripts with it) and ESLint with its rule sets (scripts/check_format.sh).
if [ ! -d node_modules/playwright-core ] || [ ! -d node_modules/axe-core ] ||
  [ ! -d node_modules/terser ] || [ ! -d node_modules/eslint ] ||
  [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
