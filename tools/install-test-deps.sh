#!/usr/bin/env bash
# Installs everything the test suite needs: the package with its `test` extra (pytest, hypothesis,
# triton 3.9 as the oracle, playwright for browser tests) and, where we are root and apt is there,
# Debian's Chromium for the explorer-page tests. Idempotent and quiet.
set -euo pipefail
cd "$(dirname "$0")/.."
PIP_ROOT_USER_ACTION=ignore python3 -m pip install -q -e ".[test]"
if [ -f .ci/install-browser.sh ]; then
  bash .ci/install-browser.sh || echo "note: Chromium could not be installed; browser tests will be skipped"
fi
