"""Weight-only int8 linear layer (W8A16): bf16 activations [M, K] times int8 weights stored [N, K] (read
K-major as [64, 128] tiles), the weights converted to bf16 in registers before ``tl.dot``, fp32
accumulation, a per-output-channel fp32 scale and bias in the epilogue, bf16 out; 128x128x64 tiles,
grouped program order."""
import triton
import triton.language as tl


@triton.jit
def w8a16_matmul_kernel(a_ptr, w_ptr, scale_ptr, bias_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                        BK: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BM)
    num_n = tl.cdiv(N, BN)
    in_group = GROUP_M * num_n
    first_m = (pid // in_group) * GROUP_M
    group_m = tl.minimum(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % in_group) % group_m
    pid_n = (pid % in_group) // group_m
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None].to(tl.int64) * K + rk[None, :]
    w_ptrs = w_ptr + rn[None, :].to(tl.int64) * K + rk[:, None]
    m_ok = rm[:, None] < M
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptrs, mask=m_ok, other=0.0)
        w = tl.load(w_ptrs).to(tl.bfloat16)
        acc = tl.dot(a, w, acc)
        a_ptrs += BK
        w_ptrs += BK
    scale = tl.load(scale_ptr + rn)
    bias = tl.load(bias_ptr + rn).to(tl.float32)
    y = acc * scale[None, :] + bias[None, :]
    tl.store(c_ptr + rm[:, None].to(tl.int64) * N + rn[None, :], y.to(tl.bfloat16), mask=m_ok)


M_, N_, K_ = 2000, 8192, 4096
KERNEL = w8a16_matmul_kernel
SIGNATURE = {"a_ptr": "*bf16", "w_ptr": "*i8", "scale_ptr": "*fp32", "bias_ptr": "*bf16", "c_ptr": "*bf16",
             "M": "i32", "N": "i32", "K": "i32"}
CONSTEXPRS = {"BM": 128, "BN": 128, "BK": 64, "GROUP_M": 8}
SCALARS = {"M": M_, "N": N_, "K": K_}
TENSORS = {"a_ptr": [M_, K_], "w_ptr": ([N_, K_], ("randint", -127, 128)), "scale_ptr": [N_], "bias_ptr": [N_],
           "c_ptr": [M_, N_]}
GRID = (((M_ + 127) // 128) * (N_ // 128),)
OPTIONS = {"num_warps": 8, "num_stages": 4}
