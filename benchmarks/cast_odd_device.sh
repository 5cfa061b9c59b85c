#!/usr/bin/env bash
# One device run for the odd-shape fp8 cast-transpose (issue 30's cast_transpose target on rows that 16 bytes do
# not align), about 2 minutes on an H200. Prepare on the CPU first (about 30 s, one nvcc at a time), then carry
# benchmarks/build/cast_odd (cubins, their manifest and a kernel cache, about 2 MiB):
#   bash benchmarks/cast_odd_device.sh prepare     # CPU
#   bash benchmarks/cast_odd_device.sh "$OUT"       # device: writes into $OUT
#     cast_odd.{json,md}  the realigned kernel (codegen.realign), the scalar kernel (codegen.cast_scalar, ops' default
#                         for misaligned rows) at 64x64/8w, 64x128/8w and 128x64/8w (ops' tile), the chunked kernel
#                         (codegen.cast_chunks) at 64x64, 128x64, 64x128 and 32x64 (3 chunks a thread), the aligned
#                         kernel (shape rounded up to 16), PyTorch eager, copy bandwidth; a steady-state check (bf16
#                         4095x11007 and 1000x3000, inputs rotated over > 3 L2s); every run bit-exact or flagged
#     ops_sanitize.json   memcheck and racecheck of the ops' kernels, the realigned, scalar and chunked casts among them
#     cast_odd.log        the runs' output
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH=src PYTHONUNBUFFERED=1 LINEAR_LAYOUTS_CACHE="$PWD/benchmarks/build/cast_odd/cache"
if [ "${1:-}" = prepare ]; then
  python3 benchmarks/cast_odd_bench.py --mode prepare
  du -sh benchmarks/build/cast_odd
  exit 0
fi
OUT=${1:?usage: cast_odd_device.sh OUT | prepare}
mkdir -p "$OUT"
start=$SECONDS
timeout 140 python3 benchmarks/cast_odd_bench.py --repeats 7 --out "$OUT" > "$OUT/cast_odd.log" 2>&1
echo "cast_odd_bench: rc $? in $((SECONDS - start)) s"; sed -n '3,$p' "$OUT/cast_odd.md" 2>/dev/null
timeout 100 python3 benchmarks/ops_sanitize.py --out "$OUT" --timeout 45 >> "$OUT/cast_odd.log" 2>&1
echo "ops_sanitize: rc $? at $((SECONDS - start)) s"; tail -n 2 "$OUT/cast_odd.log"
