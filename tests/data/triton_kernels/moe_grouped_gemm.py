"""Grouped GEMM of a mixture-of-experts layer (fp16): the tokens routed to each expert are stored one
expert after another (expert e's rows start at the sum of the counts before it), and each expert has
its own weight [N, K] (``nn.Linear`` layout, read K-major). A program takes one expert and one
64x128 output tile; the expert's offset is the exclusive prefix sum of the token counts, and tiles
past the expert's count exit early."""
import triton
import triton.language as tl


@triton.jit
def moe_grouped_gemm_kernel(x_ptr, w_ptr, counts_ptr, y_ptr, N, K, stride_xm, stride_we, stride_wn, stride_ym,
                            NUM_EXPERTS: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                            BLOCK_K: tl.constexpr):
    expert = tl.program_id(0)
    tile = tl.program_id(1)
    grid_n = tl.cdiv(N, BLOCK_N)
    tile_m = tile // grid_n
    tile_n = tile % grid_n
    experts = tl.arange(0, NUM_EXPERTS)
    counts = tl.load(counts_ptr + experts)
    start = tl.sum(tl.where(experts < expert, counts, 0))
    count = tl.sum(tl.where(experts == expert, counts, 0))
    if tile_m * BLOCK_M >= count:
        return
    rows = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + (start + rows)[:, None].to(tl.int64) * stride_xm + rk[None, :]
    w_ptrs = w_ptr + expert.to(tl.int64) * stride_we + rn[None, :] * stride_wn + rk[:, None]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, K, BLOCK_K):
        x = tl.load(x_ptrs, mask=rows[:, None] < count, other=0.0)
        acc = tl.dot(x, tl.load(w_ptrs), acc)
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K
    y_ptrs = y_ptr + (start + rows)[:, None].to(tl.int64) * stride_ym + rn[None, :]
    tl.store(y_ptrs, acc.to(tl.float16), mask=rows[:, None] < count)


EXPERTS, CAPACITY, N_, K_ = 8, 1024, 2048, 4096
KERNEL = moe_grouped_gemm_kernel
SIGNATURE = {"x_ptr": "*fp16", "w_ptr": "*fp16", "counts_ptr": "*i32", "y_ptr": "*fp16", "N": "i32", "K": "i32",
             "stride_xm": "i32", "stride_we": "i32", "stride_wn": "i32", "stride_ym": "i32"}
CONSTEXPRS = {"NUM_EXPERTS": EXPERTS, "BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64}
SCALARS = {"N": N_, "K": K_, "stride_xm": K_, "stride_we": N_ * K_, "stride_wn": K_, "stride_ym": N_}
TENSORS = {"x_ptr": [EXPERTS * CAPACITY, K_], "w_ptr": [EXPERTS, N_, K_],
           "counts_ptr": ([EXPERTS], ("randint", 0, CAPACITY + 1)), "y_ptr": [EXPERTS * CAPACITY, N_]}
GRID = (EXPERTS, (CAPACITY // 64) * (N_ // 128))
OPTIONS = {"num_warps": 4, "num_stages": 4}
