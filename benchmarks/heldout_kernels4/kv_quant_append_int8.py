"""KV-cache quantize-on-append: a prefill chunk's new keys and values (fp16 [B, T, H, 128], token-major as
the projection writes them) are quantized to int8 with one fp32 scale per (token, head) -- the absmax
along the last axis of a [16, 8, 128] tile, libdevice ``rint`` -- and scattered, through ``tl.permute`` to
head-major [8, 16, 128], into the int8 cache [B, H, S_MAX, 128] at each sequence's current length."""
import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def _quant_store(src_ptr, cache_ptr, scale_ptr, b, t, rh, rd, pos, S_MAX, T, H: tl.constexpr, D: tl.constexpr):
    src = ((b * T + t)[:, None, None] * H + rh[None, :, None]) * D + rd[None, None, :]
    x = tl.load(src_ptr + src).to(tl.float32)
    amax = tl.maximum(tl.max(tl.abs(x), axis=2), 1e-6)
    q = libdevice.rint(x * (127.0 / amax)[:, :, None])
    q = tl.permute(q.to(tl.int8), [1, 0, 2])
    row = (b * H + rh)[:, None].to(tl.int64) * S_MAX + pos[None, :]
    tl.store(cache_ptr + row[:, :, None] * D + rd[None, None, :], q)
    tl.store(scale_ptr + row, tl.trans(amax / 127.0))


@triton.jit
def kv_quant_append_kernel(k_ptr, v_ptr, len_ptr, kc_ptr, vc_ptr, ks_ptr, vs_ptr, T, S_MAX, BT: tl.constexpr,
                           H: tl.constexpr, D: tl.constexpr):
    b = tl.program_id(1)
    t = tl.program_id(0) * BT + tl.arange(0, BT)
    rh = tl.arange(0, H)
    rd = tl.arange(0, D)
    pos = tl.load(len_ptr + b) + t
    _quant_store(k_ptr, kc_ptr, ks_ptr, b, t, rh, rd, pos, S_MAX, T, H, D)
    _quant_store(v_ptr, vc_ptr, vs_ptr, b, t, rh, rd, pos, S_MAX, T, H, D)


B_, T_, H_, D_, S_MAX_ = 32, 512, 8, 128, 4096
KERNEL = kv_quant_append_kernel
SIGNATURE = {"k_ptr": "*fp16", "v_ptr": "*fp16", "len_ptr": "*i32", "kc_ptr": "*i8", "vc_ptr": "*i8",
             "ks_ptr": "*fp32", "vs_ptr": "*fp32", "T": "i32", "S_MAX": "i32"}
CONSTEXPRS = {"BT": 16, "H": H_, "D": D_}
SCALARS = {"T": T_, "S_MAX": S_MAX_}
TENSORS = {"k_ptr": [B_, T_, H_, D_], "v_ptr": [B_, T_, H_, D_], "len_ptr": ([B_], ("randint", 0, S_MAX_ - T_ + 1)),
           "kc_ptr": ([B_, H_, S_MAX_, D_], "zeros"), "vc_ptr": ([B_, H_, S_MAX_, D_], "zeros"),
           "ks_ptr": ([B_, H_, S_MAX_], "zeros"), "vs_ptr": ([B_, H_, S_MAX_], "zeros")}
GRID = (T_ // 16, B_)
OPTIONS = {"num_warps": 4}
