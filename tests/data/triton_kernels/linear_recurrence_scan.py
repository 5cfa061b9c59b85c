"""A first-order linear recurrence ``h[t] = a[t] * h[t-1] + x[t]`` (state-space / RNN scan) with
``tl.associative_scan`` over a tuple combine, along axis 1 of [4, 1024] tiles."""
import triton
import triton.language as tl


@triton.jit
def _affine_combine(a1, x1, a2, x2):
    return a1 * a2, x1 * a2 + x2


@triton.jit
def linear_scan_kernel(a_ptr, x_ptr, h_ptr, BLOCK_B: tl.constexpr, T: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_B + tl.arange(0, BLOCK_B)
    offs = rows[:, None] * T + tl.arange(0, T)[None, :]
    a = tl.load(a_ptr + offs)
    x = tl.load(x_ptr + offs)
    _, h = tl.associative_scan((a, x), axis=1, combine_fn=_affine_combine)
    tl.store(h_ptr + offs, h)


KERNEL = linear_scan_kernel
SIGNATURE = {"a_ptr": "*fp32", "x_ptr": "*fp32", "h_ptr": "*fp32"}
CONSTEXPRS = {"BLOCK_B": 4, "T": 1024}
SCALARS = {}
TENSORS = {"a_ptr": [4096, 1024], "x_ptr": [4096, 1024], "h_ptr": [4096, 1024]}
GRID = (1024,)
OPTIONS = {"num_warps": 4, "num_stages": 3}
