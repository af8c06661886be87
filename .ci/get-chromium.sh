#!/usr/bin/env bash
# Debian's chromium for the /dashboard browser tests (tests/server/test_dashboard_browser.py,
# driven by Playwright with executable_path=/usr/bin/chromium; never `playwright install`).
# Idempotent: nothing to do when it is installed.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get install -y --no-install-recommends chromium \
    || { $SUDO apt-get update && $SUDO apt-get install -y --no-install-recommends chromium; }
