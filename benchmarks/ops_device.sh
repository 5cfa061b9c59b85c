#!/usr/bin/env bash
# One device run for the layout ops (issue 30) and the transposes against Triton's best tile (issue 29, item 3),
# about 4 minutes on an H200. Prepare on the CPU first (compiles every cubin: ours with nvcc, Triton's with
# Triton 3.6), then carry benchmarks/build:
#   bash benchmarks/ops_device.sh prepare        # CPU, ~4 min on 2 cores (less when the cubins are cached)
#   bash benchmarks/ops_device.sh "$OUT"          # device: writes into $OUT
#     ops_gpu_tests.txt   the GPU tests of linear_layouts.ops (tests/ops/test_gpu.py) against PyTorch
#     ops_bench.{json,md} the sweep (benchmarks/ops_bench.py)
#     transposes.{json,md} the suite's 8192^2 transposes, Triton tl.trans at each tile and PyTorch, same run
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH=src PYTHONUNBUFFERED=1 LINEAR_LAYOUTS_CACHE="$PWD/benchmarks/build/cubins"
if [ "${1:-}" = prepare ]; then
  T36=${TRITON36:-/tmp/triton-3.6.0}
  if ! PYTHONPATH=$T36 python3 -c 'import triton, sys; sys.exit(triton.__version__ != "3.6.0")' 2>/dev/null; then
    python3 -m pip install -q --disable-pip-version-check --no-deps --target "$T36" triton==3.6.0
  fi
  PYTHONPATH=src:$T36 python3 benchmarks/ops_bench.py --mode prepare | tail -n 2
  PYTHONPATH=src:$T36 python3 benchmarks/transpose_bench.py --mode prepare | tail -n 2
  du -sh benchmarks/build
  exit 0
fi
OUT=${1:?usage: ops_device.sh OUT | prepare}
mkdir -p "$OUT"
start=$SECONDS
# the suite's transposes: the best earlier kernels per width, the new 32-bit candidates, the peers
ONLY=persist256x32w,persist256x16w,persist256x16wh,blocks256x16w,shared256,persist256x8w_rows,async256x8w_s3
ONLY=$ONLY,blocks256,shared128,persist128x16w,persist64x4w_shared,shared,blocks64x4w,blocks128x16w,shared64x8w
ONLY=$ONLY,persist64x8w,persist64x8w_shared
timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests/ops/test_gpu.py > "$OUT/ops_gpu_tests.txt" 2>&1
echo "gpu tests: rc $? in $((SECONDS - start)) s: $(tail -n 1 "$OUT/ops_gpu_tests.txt")"
timeout 200 python3 benchmarks/ops_bench.py --out "$OUT" --budget 130 --compile-budget 60 > "$OUT/ops_bench.log" 2>&1
echo "ops_bench: rc $? at $((SECONDS - start)) s"; sed -n '/## Targets/,/## First call/p' "$OUT/ops_bench.md"
timeout 150 python3 benchmarks/transpose_bench.py --out "$OUT" --only "$ONLY" > "$OUT/transposes.log" 2>&1
echo "transposes: rc $? at $((SECONDS - start)) s"; sed -n '3,12p' "$OUT/transposes.md"
