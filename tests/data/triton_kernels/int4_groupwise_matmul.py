"""W4A16 GEMM in the GPTQ layout: int4 weights packed 8 to an int32 along K ([K / 8, N]), one fp16 scale
and one packed 4-bit zero point per group of 128 rows of K and output column; a weight element is
((q >> 4 * (k % 8)) & 15) - zero, times its group's scale, unpacked in registers from a pointer tile
that reads every packed word 8 times."""
import triton
import triton.language as tl


@triton.jit
def int4_groupwise_matmul_kernel(a_ptr, qw_ptr, scales_ptr, qzeros_ptr, c_ptr, M, N, K, stride_am, stride_qk,
                                 stride_sg, stride_zg, stride_cm, GROUP_SIZE: tl.constexpr,
                                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :]
    q_ptrs = qw_ptr + (rk[:, None] // 8) * stride_qk + rn[None, :]
    shifts = (rk % 8) * 4
    zero_shifts = (rn % 8) * 4
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        group = k // GROUP_SIZE
        scale = tl.load(scales_ptr + group * stride_sg + rn)
        zeros = (tl.load(qzeros_ptr + group * stride_zg + rn // 8) >> zero_shifts) & 0xF
        a = tl.load(a_ptrs)
        q = (tl.load(q_ptrs) >> shifts[:, None]) & 0xF
        w = (q - zeros[None, :]).to(tl.float16) * scale[None, :]
        acc = tl.dot(a, w, acc)
        a_ptrs += BLOCK_K
        q_ptrs += (BLOCK_K // 8) * stride_qk
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc.to(tl.float16))


M_, N_, K_, GROUP = 512, 4096, 4096, 128
KERNEL = int4_groupwise_matmul_kernel
SIGNATURE = {"a_ptr": "*fp16", "qw_ptr": "*i32", "scales_ptr": "*fp16", "qzeros_ptr": "*i32", "c_ptr": "*fp16",
             "M": "i32", "N": "i32", "K": "i32", "stride_am": "i32", "stride_qk": "i32", "stride_sg": "i32",
             "stride_zg": "i32", "stride_cm": "i32"}
CONSTEXPRS = {"GROUP_SIZE": GROUP, "BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64}
SCALARS = {"M": M_, "N": N_, "K": K_, "stride_am": K_, "stride_qk": N_, "stride_sg": N_, "stride_zg": N_ // 8,
           "stride_cm": N_}
TENSORS = {"a_ptr": [M_, K_], "qw_ptr": ([K_ // 8, N_], ("randint", -2 ** 31, 2 ** 31)),
           "scales_ptr": [K_ // GROUP, N_], "qzeros_ptr": ([K_ // GROUP, N_ // 8], ("randint", -2 ** 31, 2 ** 31)),
           "c_ptr": [M_, N_]}
GRID = (M_ // 64, N_ // 128)
OPTIONS = {"num_warps": 4, "num_stages": 3}
