"""Triton's own gather as a peer: ``tl.gather(src, index, axis=0)`` on one tile per program.

Triton chooses the layouts (its default blocked layout for ``num_warps``); since Triton 3.3 its
lowering is warp-local (shuffles) where the layouts allow, else through shared memory.  Works with
Triton 3.6 on the GPU machines.
"""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def gather_kernel(src_ptr, idx_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    base = tl.program_id(0) * (M * N)
    offs = base + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(src_ptr + offs)
    k = tl.load(idx_ptr + offs)
    tl.store(out_ptr + offs, tl.gather(x, k, 0))


def triton_gather_launcher(shape, tiles: int, num_warps: int, dtype=None):
    """``launch(src, index, out)`` over ``tiles`` tiles of ``shape`` (row-major, contiguous)."""
    m, n = shape

    def launch(src, index, out) -> None:
        gather_kernel[(tiles,)](src, index, out, m, n, num_warps=num_warps)

    return launch
