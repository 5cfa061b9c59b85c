"""Seeded dropout (Triton tutorial 04): the keep mask recomputed from ``tl.rand(seed, offset)``
(Philox), so no mask tensor is stored."""
import triton
import triton.language as tl


@triton.jit
def seeded_dropout_kernel(x_ptr, out_ptr, n_elements, p, seed, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    keep = tl.rand(seed, offs) > p
    tl.store(out_ptr + offs, tl.where(keep, x / (1 - p), 0.0), mask=mask)


KERNEL = seeded_dropout_kernel
SIGNATURE = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n_elements": "i32", "p": "fp32", "seed": "i32"}
CONSTEXPRS = {"BLOCK_SIZE": 1024}
SCALARS = {"n_elements": 1 << 22, "p": 0.5, "seed": 123}
TENSORS = {"x_ptr": [1 << 22], "out_ptr": [1 << 22]}
GRID = (4096,)
OPTIONS = {"num_warps": 4, "num_stages": 3}
