"""GEMM whose epilogue both stores the result transposed and reduces it: C = A @ B (fp16, fp32
accumulator), ``tl.trans`` of the [64, 128] accumulator stored fp16 into C^T [N, M], and each row's maximum
over the tile's 128 columns written to a [N / 128, M] fp32 partial (a later pass finishes the row max, as
for a softmax over the output)."""
import triton
import triton.language as tl


@triton.jit
def matmul_trans_rowmax_kernel(a_ptr, b_ptr, ct_ptr, pmax_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                               BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * N + rn[None, :]
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)
        a_ptrs += BK
        b_ptrs += BK * N
    tl.store(ct_ptr + rn[:, None] * M + rm[None, :], tl.trans(acc).to(tl.float16))
    tl.store(pmax_ptr + pid_n * M + rm, tl.max(acc, axis=1))


M_, N_, K_ = 4096, 4096, 4096
KERNEL = matmul_trans_rowmax_kernel
SIGNATURE = {"a_ptr": "*fp16", "b_ptr": "*fp16", "ct_ptr": "*fp16", "pmax_ptr": "*fp32", "M": "i32", "N": "i32",
             "K": "i32"}
CONSTEXPRS = {"BM": 64, "BN": 128, "BK": 64}
SCALARS = {"M": M_, "N": N_, "K": K_}
TENSORS = {"a_ptr": [M_, K_], "b_ptr": [K_, N_], "ct_ptr": [N_, M_], "pmax_ptr": [N_ // 128, M_]}
GRID = (M_ // 64, N_ // 128)
OPTIONS = {"num_warps": 4, "num_stages": 3}
