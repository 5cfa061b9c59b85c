#!/usr/bin/env bash
# Device step of the workflow GPU checks (issues 14, 15, 16), after benchmarks/gpu_workflow_prepare.sh on the CPU:
#   bash benchmarks/gpu_workflow_run.sh OUT [TOTAL_SECONDS=180]
# with benchmarks/build carried. Runs, in sequence, each measure mode under its share of TOTAL_SECONDS
# (each stops cleanly at its budget and still writes its results). Every kernel is launched 3 times under ncu
# (REPEATS=3 to change it); gpu_kernels.py also launches each corpus kernel on 1 CTA and on one wave (132 CTAs).
# Expected: ~20 s advice, ~60 s kernels, ~10 s cute (H100, 2026-11-26 estimate from the 16:12 run x 3 repeats).
#   OUT/advice/gpu_shared_advice.{json,md}   #14 item 4 (Gluon kernels from the advice, ncu vs prediction)
#   OUT/kernels/gpu_kernels.{json,md}        #15 item 5 (corpus kernels, ncu vs the report's predictions)
#   OUT/cute/gpu_cute.{json,md}              #16 item 7 (conversions through CuTe swizzles, ncu vs prediction)
# Needs python3 with NumPy and CuPy, ncu and an NVIDIA GPU; no PyTorch, no JIT (the cubins are prepared).
# Then, on the CPU: python3 benchmarks/gpu_workflow_collect.py OUT   (copies them into benchmarks/results/).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: gpu_workflow_run.sh OUT [TOTAL_SECONDS]}
TOTAL=${2:-180}
REPEATS=${REPEATS:-3}
PY=${PYTHON:-python3}
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p "$OUT/advice" "$OUT/kernels" "$OUT/cute"
for d in advice kernels cute; do
  [ -f "benchmarks/build/$d/plan.json" ] || [ -f "benchmarks/build/$d/variants.json" ] || \
    echo "WARNING: benchmarks/build/$d is missing: run benchmarks/gpu_workflow_prepare.sh on the CPU and carry benchmarks/build"
done
start=$SECONDS
left() { echo $(( TOTAL - (SECONDS - start) )); }
share() {  # share NUMERATOR DENOMINATOR: that part of what is left, at most 120 s, at least 20 s
  local s=$(( $(left) * $1 / $2 )); [ "$s" -gt 120 ] && s=120; [ "$s" -lt 20 ] && s=20; echo "$s"
}
run() {  # run NAME BUDGET CMD...: its output's last lines only (the device tool returns a tail)
  local name=$1 budget=$2; shift 2
  echo "== $name: budget ${budget} s"
  local t=$SECONDS
  timeout --kill-after=10 $(( budget + 20 )) "$@" > "/tmp/gpu_workflow_$name.log" 2>&1
  local rc=$?
  tail -n 6 "/tmp/gpu_workflow_$name.log"
  echo "== $name: rc $rc in $((SECONDS - t)) s"
}
b=$(share 1 3)
run advice "$b" $PY benchmarks/gpu_shared_advice.py --mode measure --budget "$b" --repeats "$REPEATS" --out "$OUT/advice"
b=$(share 3 4)
run kernels "$b" $PY benchmarks/gpu_kernels.py --mode measure --budget "$b" --repeats "$REPEATS" --out "$OUT/kernels"
b=$(share 1 1)
run cute "$b" $PY benchmarks/gpu_cute.py --mode measure --budget "$b" --repeats "$REPEATS" --out "$OUT/cute"
echo "== total $((SECONDS - start)) s of $TOTAL"
for f in "$OUT"/advice/*.md "$OUT"/kernels/*.md "$OUT"/cute/*.md; do
  [ -f "$f" ] && { echo "-- $f"; grep -m1 '^\*\*Summary' "$f"; }
done
ls -la "$OUT"/*/
