#!/usr/bin/env bash
# One device run for the layout ops (issue 30) and the transposes against Triton's best tile (issue 29, item 3),
# about 4 minutes on an H200. Prepare on the CPU first (compiles every cubin: ours with nvcc, Triton's with
# Triton 3.6), then carry benchmarks/build/ops_cubins (its own kernel cache) and benchmarks/build/triton_transpose:
#   bash benchmarks/ops_device.sh prepare        # CPU, ~5 min on 2 cores (less when the cubins are cached;
#                                                 # JOBS=1 for one compiler process)
#   bash benchmarks/ops_device.sh "$OUT"          # device: writes into $OUT
#     ops_gpu_tests.txt    the GPU tests of linear_layouts.ops (tests/ops/test_gpu.py) against PyTorch
#     ops_bench.{json,md}  the sweep (benchmarks/ops_bench.py): ours (and ours at each tile), eager, torch.compile,
#                          Triton's best tile, copies; host µs per call of the small cases
#     ops_sanitize.json    memcheck and racecheck of the ops' kernels on odd, misaligned cases (benchmarks/ops_sanitize.py)
#     transposes.{json,md} the suite's 8192^2 transposes, Triton tl.trans at each tile and PyTorch, same run, with
#                          memcheck and racecheck of the suite's new transposes (SKIP_TRANSPOSES=1: left out)
#     device.log           the logs of the sweep and the transposes
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH=src PYTHONUNBUFFERED=1 LINEAR_LAYOUTS_CACHE="$PWD/benchmarks/build/ops_cubins"
# the suite's transposes timed: the best earlier kernel of each width and the new ones (PEER_TILE_TRANSPOSES)
ONLY=async256x8w_s3,shared256,blocks256x16w,blocks64x128x4w,blocks128x8w,shared128,blocks64x4w,shared64x8w
ONLY=$ONLY,blocks128x16w,shared64x8wh,shared64x8wg8,async128x8w_s3,async64x8w_s3
ONLY=$ONLY,blocks64x128x4wm,blocks128x8wm,blocks64x4wm,shared64x8wm,shared64x8whm
if [ "${1:-}" = prepare ]; then
  T36=${TRITON36:-/tmp/triton-3.6.0}
  if ! PYTHONPATH=$T36 python3 -c 'import triton, sys; sys.exit(triton.__version__ != "3.6.0")' 2>/dev/null; then
    python3 -m pip install -q --disable-pip-version-check --no-deps --target "$T36" triton==3.6.0
  fi
  PYTHONPATH=src:$T36 python3 benchmarks/ops_bench.py --mode prepare --jobs "${JOBS:-0}" | tail -n 2
  PYTHONPATH=src:$T36 python3 benchmarks/transpose_bench.py --mode prepare --only "$ONLY" | tail -n 2
  du -sh benchmarks/build/ops_cubins benchmarks/build/triton_transpose
  exit 0
fi
OUT=${1:?usage: ops_device.sh OUT | prepare}
mkdir -p "$OUT"
start=$SECONDS
timeout 120 python3 -m pytest -q -p no:cacheprovider -m gpu tests/ops/test_gpu.py > "$OUT/ops_gpu_tests.txt" 2>&1
echo "gpu tests: rc $? in $((SECONDS - start)) s: $(tail -n 1 "$OUT/ops_gpu_tests.txt")"
timeout 230 python3 benchmarks/ops_bench.py --out "$OUT" --budget 150 --compile-budget 40 > "$OUT/device.log" 2>&1
echo "ops_bench: rc $? at $((SECONDS - start)) s"; sed -n '/## Targets/,/## First call/p' "$OUT/ops_bench.md"
timeout 100 python3 benchmarks/ops_sanitize.py --out "$OUT" --timeout 45 >> "$OUT/device.log" 2>&1
echo "ops_sanitize: rc $? at $((SECONDS - start)) s"; tail -n 2 "$OUT/device.log"
if [ -n "${SKIP_TRANSPOSES:-}" ]; then echo "transposes: skipped (SKIP_TRANSPOSES)"; exit 0; fi
timeout 110 python3 benchmarks/transpose_bench.py --out "$OUT" --only "$ONLY" --repeats 10 --sanitizer-timeout 40 \
  >> "$OUT/device.log" 2>&1
echo "transposes: rc $? at $((SECONDS - start)) s"; sed -n '3,12p' "$OUT/transposes.md"; tail -n 3 "$OUT/transposes.md"
