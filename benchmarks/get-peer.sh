#!/usr/bin/env bash
# Puts kubernetes-mcp-server, pinned, into DEST (default benchmarks/.work/peer, where the suite
# keeps what it installs between runs) from npm, for the benchmark's peer slot
# (benchmarks/peer_server.py). The package's platform dependency (...-linux-amd64, ...)
# carries the Go binary itself, so no install script has to run, and none does: the
# benchmark never downloads anything at run time.
set -euo pipefail
version=0.0.67
dest=${1:-"$(dirname "$0")/.work/peer"}
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
if [ -x "$dest/node_modules/.bin/kubernetes-mcp-server" ] \
        && [ "$(cat "$dest/version" 2>/dev/null)" = "$version" ]; then
    exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
    echo "get-peer: npm not found; install Node.js (and npm)" >&2
    exit 1
fi
npm install --prefix "$dest" --no-audit --no-fund --ignore-scripts --no-package-lock \
    --loglevel=error "kubernetes-mcp-server@$version"
echo "$version" > "$dest/version"
