"""A gated linear recurrence (RG-LRU / minGRU style) over a chunk of 16 time steps, unrolled with
``tl.static_range``: per step ``h = a_t * h + (1 - a_t) * x_t`` on a [16, 128] tile of (batch, channel),
then an RMS norm of ``h`` over the channels scaled by ``w``, stored as ``y_t``. Each step loads two
tiles, reduces along axis 1 and stores one: a straight-line kernel of several hundred ops."""
import triton
import triton.language as tl


@triton.jit
def unrolled_chain_kernel(x_ptr, a_ptr, w_ptr, h0_ptr, y_ptr, eps, T: tl.constexpr, BLOCK_B: tl.constexpr,
                          D: tl.constexpr):
    b = tl.program_id(0) * BLOCK_B + tl.arange(0, BLOCK_B)
    d = tl.arange(0, D)
    row = b[:, None] * D + d[None, :]
    h = tl.load(h0_ptr + row).to(tl.float32)
    w = tl.load(w_ptr + d).to(tl.float32)
    step = tl.num_programs(0) * BLOCK_B * D
    for t in tl.static_range(T):
        a = tl.sigmoid(tl.load(a_ptr + t * step + row).to(tl.float32))
        x = tl.load(x_ptr + t * step + row).to(tl.float32)
        h = a * h + (1.0 - a) * x
        rstd = 1.0 / tl.sqrt(tl.sum(h * h, axis=1) / D + eps)
        tl.store(y_ptr + t * step + row, (h * rstd[:, None] * w[None, :]).to(tl.bfloat16))


KERNEL = unrolled_chain_kernel
SIGNATURE = {"x_ptr": "*bf16", "a_ptr": "*bf16", "w_ptr": "*bf16", "h0_ptr": "*bf16", "y_ptr": "*bf16",
             "eps": "fp32"}
CONSTEXPRS = {"T": 16, "BLOCK_B": 16, "D": 128}
SCALARS = {"eps": 1e-6}
TENSORS = {"x_ptr": [16, 1024, 128], "a_ptr": [16, 1024, 128], "w_ptr": [128], "h0_ptr": [1024, 128],
           "y_ptr": [16, 1024, 128]}
GRID = (64,)
OPTIONS = {"num_warps": 4, "num_stages": 3}
