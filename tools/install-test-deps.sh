#!/usr/bin/env bash
# Installs everything the test suite needs, saying what and how long each step took:
#   1. this package, editable, with its `test` extra (pytest, hypothesis, triton==3.9.0 as the reference
#      oracle, matplotlib for PNG pictures, playwright for the explorer-page browser tests, tensor-layouts
#      as the CuTe oracle, nvidia-cuda-nvrtc (Linux) for the NVRTC compile tests, ml_dtypes as the fp8 rounding
#      oracle of the emulated kernel tests, which skip without it);
#   2. the nvidia-cutlass wheel with --no-deps, for NVIDIA's pycute (CuTe's reference layout algebra, pure
#      Python) and CuTe's C++ headers (compiled by g++ on the CPU as a second oracle): the wheel's
#      dependencies (cuda-python, scipy, networkx, ...) serve its kernel generator and would add ~280 MB;
#      without it the CuTe differential tests skip;
#   3. where we are root (or have sudo) and apt is there, Debian's Chromium for those browser tests
#      (.ci/install-browser.sh; without it the browser tests skip).
# Idempotent: a second run only checks. pip's and apt's own chatter is kept quiet; failures are not.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf 'install-test-deps: %s\n' "$*"; }
started=$SECONDS

step "pip install -e '.[test]' (linear_layouts + pytest, hypothesis, triton==3.9.0, matplotlib, playwright, tensor-layouts, nvidia-cuda-nvrtc: NVRTC for the compile tests, ml_dtypes: the fp8 oracle) ..."
t=$SECONDS
PIP_ROOT_USER_ACTION=ignore python3 -m pip install -q --disable-pip-version-check -e ".[test]"
step "  done in $((SECONDS - t)) s: $(python3 -c 'from importlib.metadata import version as v; print(", ".join(f"{p} {v(p)}" for p in ("triton", "hypothesis", "pytest", "matplotlib", "playwright", "tensor-layouts", "ml_dtypes")))')"

t=$SECONDS
step "pip install --no-deps nvidia-cutlass==4.2.0.0 (pycute, the CuTe reference) ..."
PIP_ROOT_USER_ACTION=ignore python3 -m pip install -q --disable-pip-version-check --no-deps nvidia-cutlass==4.2.0.0
step "  done in $((SECONDS - t)) s: $(python3 -c 'import pycute, os; print("pycute at", os.path.dirname(pycute.__file__))')"

if [ -f .ci/install-browser.sh ]; then
  t=$SECONDS
  if command -v chromium >/dev/null 2>&1; then
    step "Chromium for the browser tests: already at $(command -v chromium)"
  else
    step "Chromium for the browser tests: apt-get install chromium (a minute or two) ..."
  fi
  if bash .ci/install-browser.sh; then
    command -v chromium >/dev/null 2>&1 && step "  ready in $((SECONDS - t)) s: $(chromium --version 2>/dev/null | head -n 1)"
  else
    step "  note: Chromium could not be installed; the browser tests will be skipped"
  fi
fi
step "all set in $((SECONDS - started)) s; run: python3 -m pytest"
