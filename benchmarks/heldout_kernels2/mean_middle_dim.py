"""Mean pooling over the sequence: out[b, d] = mean over s of x[b, s, d] for a bf16 [B, S, D] tensor into
fp32, reducing [64, 64] tiles along their rows (the non-contiguous axis) while walking down S."""
import triton
import triton.language as tl


@triton.jit
def mean_middle_dim_kernel(x_ptr, out_ptr, S, D, stride_b, stride_s, stride_ob,
                           BLOCK_S: tl.constexpr, BLOCK_D: tl.constexpr):
    b = tl.program_id(1).to(tl.int64)
    d = tl.program_id(0) * BLOCK_D + tl.arange(0, BLOCK_D)
    rs = tl.arange(0, BLOCK_S)
    d_ok = d < D
    acc = tl.zeros([BLOCK_D], dtype=tl.float32)
    for start in range(0, S, BLOCK_S):
        s = start + rs
        x = tl.load(x_ptr + b * stride_b + s[:, None] * stride_s + d[None, :],
                    mask=(s[:, None] < S) & d_ok[None, :], other=0.0)
        acc += tl.sum(x.to(tl.float32), axis=0)
    tl.store(out_ptr + b * stride_ob + d, acc / S, mask=d_ok)


B_, S_, D_ = 16, 4000, 1024
KERNEL = mean_middle_dim_kernel
SIGNATURE = {"x_ptr": "*bf16", "out_ptr": "*fp32", "S": "i32", "D": "i32", "stride_b": "i32", "stride_s": "i32",
             "stride_ob": "i32"}
CONSTEXPRS = {"BLOCK_S": 64, "BLOCK_D": 64}
SCALARS = {"S": S_, "D": D_, "stride_b": S_ * D_, "stride_s": D_, "stride_ob": D_}
TENSORS = {"x_ptr": [B_, S_, D_], "out_ptr": [B_, D_]}
GRID = (D_ // 64, B_)
OPTIONS = {"num_warps": 4, "num_stages": 3}
