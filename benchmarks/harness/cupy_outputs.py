"""Two outputs of one kernel, Triton's and ours, compared on the device (CuPy arrays): equal integers, floats
within ``ATOL + RTOL * |Triton's|`` (NaN equals NaN, an infinity itself), bfloat16 bits as floats."""

from __future__ import annotations



#: float outputs agree when |ours - triton| <= ATOL + RTOL * |triton| (atomics may add in another order)
RTOL = ATOL = 1e-2


def compare(a, b, element: str = "") -> tuple[bool, float]:
    """(equal within the tolerance, max |a - b|) of two CuPy arrays of one dtype; ``element`` ``bf16``:
    their uint16 bits are bfloat16 values (compared as floats)."""
    import cupy

    if element == "bf16":
        a, b = ((x.astype(cupy.uint32) << 16).view(cupy.float32) for x in (a, b))
    if a.dtype.kind in "iub":
        diff = cupy.abs(a.astype(cupy.int64) - b.astype(cupy.int64))
        worst = float(diff.max()) if diff.size else 0.0
        return worst == 0.0, worst
    x, y = a.astype(cupy.float64), b.astype(cupy.float64)
    both_nan = (cupy.isnan(x) & cupy.isnan(y)) | (x == y)  # (x == y: equal infinities too)
    diff = cupy.where(both_nan, 0.0, cupy.abs(x - y))
    worst = float(cupy.nan_to_num(diff, nan=float("inf")).max()) if diff.size else 0.0
    ok = bool(cupy.all(both_nan | (cupy.isfinite(diff) & (diff <= ATOL + RTOL * cupy.abs(y)))))
    return ok, worst
