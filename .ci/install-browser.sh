#!/usr/bin/env bash
# Install what the browser tests (tests/tools/test_explorer_browser.py) need:
# Debian's Chromium (the tests launch /usr/bin/chromium) and the Playwright Python driver.
# Idempotent and quiet: does nothing when both are already present.
set -euo pipefail

if ! command -v chromium >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    SUDO=""
    if [ "$(id -u)" != "0" ] && command -v sudo >/dev/null 2>&1; then SUDO="sudo"; fi
    $SUDO apt-get update -qq >/dev/null
    $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi

if ! python -c "import playwright" >/dev/null 2>&1; then
    python -m pip install -q playwright >/dev/null
fi
