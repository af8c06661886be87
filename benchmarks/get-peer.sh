#!/usr/bin/env bash
# Puts kubernetes-mcp-server, pinned, into DEST (default benchmarks/.work/peer, where the suite
# keeps what it installs between runs) from npm, for the benchmark's peer slot
# (benchmarks/peer_server.py). The package's platform dependency (...-linux-amd64, ...)
# carries the Go binary itself, so no install script has to run, and none does: the
# benchmark never downloads anything at run time.
set -euo pipefail
here=$(dirname "$0")
bash "$here/../.ci/npm-pinned.sh" "kubernetes-mcp-server" 0.0.67 kubernetes-mcp-server "${1:-"$here/.work/peer"}"
