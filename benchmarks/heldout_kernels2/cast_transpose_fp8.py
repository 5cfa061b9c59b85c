"""FP8 cast-transpose (as for an fp8 GEMM's forward and backward operands): a bf16 [M, N] activation is
scaled and cast to e4m3 both as is and transposed ([N, M], through ``tl.trans`` of a [64, 64] tile), with
the tensor's absmax merged by ``tl.atomic_max`` for the next scale."""
import triton
import triton.language as tl


@triton.jit
def cast_transpose_fp8_kernel(x_ptr, scale_ptr, y_ptr, yt_ptr, amax_ptr, M, N, stride_xm, stride_ym, stride_ytn,
                              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * stride_xm + rn[None, :], mask=mask, other=0.0).to(tl.float32)
    tl.atomic_max(amax_ptr, tl.max(tl.max(tl.abs(x), axis=1), axis=0))
    scale = tl.load(scale_ptr)
    y = tl.clamp(x * scale, -448.0, 448.0).to(tl.float8e4nv)
    tl.store(y_ptr + rm[:, None] * stride_ym + rn[None, :], y, mask=mask)
    yt = tl.trans(y)
    tl.store(yt_ptr + rn[:, None] * stride_ytn + rm[None, :], yt, mask=(rn[:, None] < N) & (rm[None, :] < M))


M_, N_ = 8100, 5120
KERNEL = cast_transpose_fp8_kernel
SIGNATURE = {"x_ptr": "*bf16", "scale_ptr": "*fp32", "y_ptr": "*fp8e4nv", "yt_ptr": "*fp8e4nv", "amax_ptr": "*fp32",
             "M": "i32", "N": "i32", "stride_xm": "i32", "stride_ym": "i32", "stride_ytn": "i32"}
CONSTEXPRS = {"BLOCK_M": 64, "BLOCK_N": 64}
SCALARS = {"M": M_, "N": N_, "stride_xm": N_, "stride_ym": N_, "stride_ytn": M_}
TENSORS = {"x_ptr": [M_, N_], "scale_ptr": [1], "y_ptr": [M_, N_], "yt_ptr": [N_, M_], "amax_ptr": ([1], "zeros")}
GRID = ((M_ + 63) // 64, N_ // 64)
OPTIONS = {"num_warps": 4}
