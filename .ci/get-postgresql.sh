#!/usr/bin/env bash
# Debian's PostgreSQL server binaries for the knowledge base's PostgreSQL tests
# (tests/knowledge/conftest.py starts a throwaway server from /usr/lib/postgresql/*/bin).
# Idempotent: nothing to do when they are installed. No service is started here.
set -euo pipefail
if compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get install -y --no-install-recommends postgresql \
    || { $SUDO apt-get update && $SUDO apt-get install -y --no-install-recommends postgresql; }
