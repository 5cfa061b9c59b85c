"""Triton's own gather as a peer: ``tl.gather(src, index, axis=0)`` on one tile per program, repeated
``iterations`` more times on the previous result XOR 1 (as our gather kernels do).

Triton chooses the layouts (its default blocked layout for ``num_warps``); its lowering is warp-local
(shuffles) where the layouts allow, else through shared memory.  Works with Triton 3.6 on the GPU
machines.
"""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def gather_kernel(src_ptr, idx_ptr, out_ptr, iterations, M: tl.constexpr, N: tl.constexpr):
    base = tl.program_id(0) * (M * N)
    offs = base + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(src_ptr + offs)
    k = tl.load(idx_ptr + offs)
    y = tl.gather(x, k, 0)
    for _ in range(iterations):
        y = tl.gather(y ^ 1, k, 0)
    tl.store(out_ptr + offs, y)


def triton_gather_launcher(shape, tiles: int, num_warps: int, dtype=None):
    """``launch(src, index, out, iterations=0)`` over ``tiles`` tiles of ``shape`` (row-major)."""
    m, n = shape

    def launch(src, index, out, iterations: int = 0) -> None:
        gather_kernel[(tiles,)](src, index, out, iterations, m, n, num_warps=num_warps)

    return launch
