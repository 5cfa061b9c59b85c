#!/usr/bin/env bash
# CPU step of the workflow GPU checks (issues 14, 15, 16): everything the device would otherwise compile.
#   bash benchmarks/gpu_workflow_prepare.sh            # ~2 minutes on 2 cores; writes benchmarks/build/{advice,kernels,engine_kernels,cute}
# Triton 3.6.0 (the device's Triton) is installed once under /tmp/triton-3.6.0 (pip --no-deps --target, not
# over the tests' Triton 3.9) and compiles the Gluon / Triton kernels to sm_90 cubins; nvcc builds the CuTe
# conversion kernels. Then carry benchmarks/build to the device and run benchmarks/gpu_workflow_run.sh there.
set -euo pipefail
cd "$(dirname "$0")/.."
T36=${TRITON36:-/tmp/triton-3.6.0}
if ! PYTHONPATH=$T36 python3 -c 'import triton, sys; sys.exit(triton.__version__ != "3.6.0")' 2>/dev/null; then
  echo "installing triton==3.6.0 under $T36 ..."
  python3 -m pip install -q --disable-pip-version-check --no-deps --target "$T36" triton==3.6.0
fi
start=$SECONDS
PYTHONPATH=src:$T36 python3 benchmarks/gpu_shared_advice.py --mode prepare | tail -n 2
PYTHONPATH=src:$T36 python3 benchmarks/gpu_kernels.py --mode prepare | tail -n 2
PYTHONPATH=src:$T36 python3 benchmarks/gpu_engine_kernels.py --mode prepare | tail -n 1  # #15 item 6 (run it apart)
PYTHONPATH=src python3 benchmarks/gpu_cute.py --mode prepare | tail -n 2
echo "prepared in $((SECONDS - start)) s: $(du -sh benchmarks/build | cut -f1) under benchmarks/build (carry it)"
