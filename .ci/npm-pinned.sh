#!/usr/bin/env bash
# Installs one npm package at a pinned version into DEST, unless DEST already holds that
# version with its BIN: npm-pinned.sh PACKAGE VERSION BIN DEST. No install script runs
# (--ignore-scripts): what is fetched is only what the package ships.
set -euo pipefail
package=$1 version=$2 bin=$3 dest=$4
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
if [ -x "$dest/node_modules/.bin/$bin" ] \
        && [ "$(cat "$dest/version" 2>/dev/null)" = "$version" ]; then
    exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
    echo "$(basename "$0"): npm not found; install Node.js (and npm) for $package" >&2
    exit 1
fi
npm install --prefix "$dest" --no-audit --no-fund --ignore-scripts --no-package-lock \
    --loglevel=error "$package@$version"
echo "$version" > "$dest/version"
