"""FP8 training backward, input gradient: dX = dY @ W with dY in e5m2 [M, N] (gradients keep range) and the
weight in e4m3 [N, K] read row-major (the contraction runs along W's rows), per-tensor fp32 scales, bf16
[M, K] out; 128x128x64 tiles, 8 warps, 3 stages."""
import triton
import triton.language as tl


@triton.jit
def fp8_dgrad_kernel(dy_ptr, w_ptr, dys_ptr, ws_ptr, dx_ptr, M, N, K,
                     BM: tl.constexpr, BK: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rk = tl.program_id(1) * BK + tl.arange(0, BK)
    rn = tl.arange(0, BN)
    dy_ptrs = dy_ptr + rm[:, None] * N + rn[None, :]
    w_ptrs = w_ptr + rn[:, None] * K + rk[None, :]
    acc = tl.zeros([BM, BK], dtype=tl.float32)
    for n0 in range(0, N, BN):
        acc = tl.dot(tl.load(dy_ptrs), tl.load(w_ptrs), acc)
        dy_ptrs += BN
        w_ptrs += BN * K
    acc = acc * (tl.load(dys_ptr) * tl.load(ws_ptr))
    tl.store(dx_ptr + rm[:, None] * K + rk[None, :], acc.to(tl.bfloat16))


M_, N_, K_ = 4096, 4096, 4096
KERNEL = fp8_dgrad_kernel
SIGNATURE = {"dy_ptr": "*fp8e5", "w_ptr": "*fp8e4nv", "dys_ptr": "*fp32", "ws_ptr": "*fp32", "dx_ptr": "*bf16",
             "M": "i32", "N": "i32", "K": "i32"}
CONSTEXPRS = {"BM": 128, "BK": 128, "BN": 64}
SCALARS = {"M": M_, "N": N_, "K": K_}
TENSORS = {"dy_ptr": [M_, N_], "w_ptr": [N_, K_], "dys_ptr": [1], "ws_ptr": [1], "dx_ptr": [M_, K_]}
GRID = (M_ // 128, K_ // 128)
OPTIONS = {"num_warps": 8, "num_stages": 3}
