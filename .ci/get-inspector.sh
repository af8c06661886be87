#!/usr/bin/env bash
# Puts the MCP Inspector CLI, pinned, into DEST (default .tools/inspector) from npm, for the
# tool-list portability test (tests/server/test_tool_list_is_portable.py): its
# `--cli --method tools/list --strict` reports the schema constructs that some clients
# reject. Fetched here once rather than by the first test that needs it. The package's
# postinstall only installs its sources' clients, so scripts are not run.
set -euo pipefail
here=$(dirname "$0")
bash "$here/npm-pinned.sh" "@modelcontextprotocol/inspector" 2.12.0 mcp-inspector "${1:-"$here/../.tools/inspector"}"
