"""QLoRA NF4 weight dequantization (bitsandbytes layout): uint8 bytes hold two 4-bit codes (high nibble
first), split with shifts and ``tl.interleave``-d back to [32, 256] codes, looked up in the 16-entry NF4
codebook with ``tl.gather`` along axis 1, scaled per 64-element block through a ``tl.reshape`` to
[32, 4, 64], bf16 out."""
import triton
import triton.language as tl


@triton.jit
def nf4_dequant_kernel(w_ptr, absmax_ptr, code_ptr, out_ptr, K, BN: tl.constexpr, BK: tl.constexpr,
                       QB: tl.constexpr):
    rn = tl.program_id(0) * BN + tl.arange(0, BN)
    k0 = tl.program_id(1) * BK
    rb = tl.arange(0, BK // 2)
    packed = tl.load(w_ptr + rn[:, None] * (K // 2) + k0 // 2 + rb[None, :]).to(tl.int32)
    codes = tl.interleave(packed >> 4, packed & 15)
    book = tl.load(code_ptr + tl.arange(0, 16))
    vals = tl.gather(tl.broadcast_to(book[None, :], [BN, 16]), codes, axis=1)
    rq = tl.arange(0, BK // QB)
    amax = tl.load(absmax_ptr + rn[:, None] * (K // QB) + k0 // QB + rq[None, :])
    w = tl.reshape(tl.reshape(vals, [BN, BK // QB, QB]) * amax[:, :, None], [BN, BK])
    rk = k0 + tl.arange(0, BK)
    tl.store(out_ptr + rn[:, None] * K + rk[None, :], w.to(tl.bfloat16))


N_, K_ = 8192, 8192
KERNEL = nf4_dequant_kernel
SIGNATURE = {"w_ptr": "*u8", "absmax_ptr": "*fp32", "code_ptr": "*fp32", "out_ptr": "*bf16", "K": "i32"}
CONSTEXPRS = {"BN": 32, "BK": 256, "QB": 64}
SCALARS = {"K": K_}
TENSORS = {"w_ptr": ([N_, K_ // 2], ("randint", 0, 256)), "absmax_ptr": [N_, K_ // 64], "code_ptr": [16],
           "out_ptr": [N_, K_]}
GRID = (N_ // 32, K_ // 256)
OPTIONS = {"num_warps": 4}
