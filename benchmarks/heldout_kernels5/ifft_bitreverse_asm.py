"""Input stage of a radix-2 inverse FFT through the conjugate trick: complex64 signals of 4096 points
([B, 4096, 2] fp32) are ``tl.split`` into (re, im), conjugated and scaled by 1/N, ``tl.join``-ed back and stored
at the bit-reversed position computed with PTX ``brev.b32`` (``tl.inline_asm_elementwise``); 1 warp."""
import triton
import triton.language as tl


@triton.jit
def ifft_bitreverse_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr, LOG_N: tl.constexpr):
    b = tl.program_id(1).to(tl.int64)
    n = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    rc = tl.arange(0, 2)
    base = b * (2 << LOG_N)
    x = tl.load(x_ptr + base + n[:, None] * 2 + rc[None, :])
    re, im = tl.split(x)
    inv_n = 1.0 / (1 << LOG_N)
    y = tl.join(re * inv_n, -im * inv_n)
    rev = tl.inline_asm_elementwise("brev.b32 $0, $1;", "=r,r", [n], dtype=tl.int32, is_pure=True, pack=1)
    rev = (rev >> (32 - LOG_N)) & ((1 << LOG_N) - 1)
    tl.store(y_ptr + base + rev[:, None] * 2 + rc[None, :], y)


B_, LOG_N_ = 4096, 12
KERNEL = ifft_bitreverse_kernel
SIGNATURE = {"x_ptr": "*fp32", "y_ptr": "*fp32"}
CONSTEXPRS = {"BLOCK": 1024, "LOG_N": LOG_N_}
TENSORS = {"x_ptr": [B_, 1 << LOG_N_, 2], "y_ptr": [B_, 1 << LOG_N_, 2]}
GRID = ((1 << LOG_N_) // 1024, B_)
OPTIONS = {"num_warps": 1}
