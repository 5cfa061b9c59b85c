"""Fused LoRA update of a linear layer's output (rank 16, bf16): a program owns 64 tokens, shrinks them
once with t = x @ A^T (A is [16, K], read K-major) over 64-wide K steps, then walks the output columns
adding y += scale * t @ B^T (B is [N, 16]) in place, 128 columns at a time -- two chained ``tl.dot``."""
import triton
import triton.language as tl


@triton.jit
def lora_fused_add_kernel(x_ptr, a_ptr, b_ptr, y_ptr, M, N, K, stride_xm, stride_ak, stride_bn, stride_ym, scale,
                          RANK: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rr = tl.arange(0, RANK)
    rk = tl.arange(0, BLOCK_K)
    row_ok = rm < M
    x_ptrs = x_ptr + rm[:, None].to(tl.int64) * stride_xm + rk[None, :]
    a_ptrs = a_ptr + rr[None, :] * stride_ak + rk[:, None]
    t = tl.zeros((BLOCK_M, RANK), dtype=tl.float32)
    for _ in range(0, K, BLOCK_K):
        t = tl.dot(tl.load(x_ptrs, mask=row_ok[:, None], other=0.0), tl.load(a_ptrs), t)
        x_ptrs += BLOCK_K
        a_ptrs += BLOCK_K
    t = (t * scale).to(tl.bfloat16)
    rn = tl.arange(0, BLOCK_N)
    for start in range(0, N, BLOCK_N):
        cols = start + rn
        b = tl.load(b_ptr + cols[None, :] * stride_bn + rr[:, None])
        y_ptrs = y_ptr + rm[:, None].to(tl.int64) * stride_ym + cols[None, :]
        y = tl.load(y_ptrs, mask=row_ok[:, None], other=0.0).to(tl.float32)
        y = tl.dot(t, b, y)
        tl.store(y_ptrs, y.to(tl.bfloat16), mask=row_ok[:, None])


TOKENS, IN_F, OUT_F, R = 8000, 4096, 4096, 16
KERNEL = lora_fused_add_kernel
SIGNATURE = {"x_ptr": "*bf16", "a_ptr": "*bf16", "b_ptr": "*bf16", "y_ptr": "*bf16", "M": "i32", "N": "i32",
             "K": "i32", "stride_xm": "i32", "stride_ak": "i32", "stride_bn": "i32", "stride_ym": "i32",
             "scale": "fp32"}
CONSTEXPRS = {"RANK": R, "BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64}
SCALARS = {"M": TOKENS, "N": OUT_F, "K": IN_F, "stride_xm": IN_F, "stride_ak": IN_F, "stride_bn": R,
           "stride_ym": OUT_F, "scale": 2.0}
TENSORS = {"x_ptr": [TOKENS, IN_F], "a_ptr": [R, IN_F], "b_ptr": [OUT_F, R], "y_ptr": [TOKENS, OUT_F]}
GRID = ((TOKENS + 63) // 64,)
OPTIONS = {"num_warps": 4, "num_stages": 3}
