#!/usr/bin/env bash
# Puts the MCP Inspector CLI, pinned, into DEST (default .tools/inspector) from npm, for the
# tool-list portability test (tests/server/test_tool_list_is_portable.py): its
# `--cli --method tools/list --strict` reports the schema constructs that some clients
# reject. Fetched here once rather than by the first test that needs it. The package's
# postinstall only installs its sources' clients, so scripts are not run.
set -euo pipefail
version=2.12.0
dest=${1:-"$(dirname "$0")/../.tools/inspector"}
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
if [ -x "$dest/node_modules/.bin/mcp-inspector" ] \
        && [ "$(cat "$dest/version" 2>/dev/null)" = "$version" ]; then
    exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
    echo "get-inspector: npm not found; install Node.js (and npm)" >&2
    exit 1
fi
npm install --prefix "$dest" --no-audit --no-fund --ignore-scripts --no-package-lock \
    --loglevel=error "@modelcontextprotocol/inspector@$version"
echo "$version" > "$dest/version"
