"""Keys from a fused QKV projection ([B, S, H, D] bf16, token-major) written into a transposed K cache
[B, H, D, S] (keys stored D-major, as older paged-attention kernels read them): device-side tensor descriptors
(``tl.make_tensor_descriptor``, TMA on Hopper) load a [1, 64, 1, 128] box, ``tl.reshape`` it to [64, 128], scale
it, ``tl.trans`` it to [128, 64] and store it as a [1, 1, 128, 64] box."""
import triton
import triton.language as tl


@triton.jit
def tma_kcache_transpose_kernel(k_ptr, cache_ptr, S, H, B, scale, BS: tl.constexpr, D: tl.constexpr):
    s0 = tl.program_id(0) * BS
    h = tl.program_id(1)
    b = tl.program_id(2)
    src = tl.make_tensor_descriptor(k_ptr, shape=[B, S, H, D], strides=[S * H * D, H * D, D, 1],
                                    block_shape=[1, BS, 1, D])
    dst = tl.make_tensor_descriptor(cache_ptr, shape=[B, H, D, S], strides=[H * D * S, D * S, S, 1],
                                    block_shape=[1, 1, D, BS])
    tile = tl.reshape(src.load([b, s0, h, 0]), [BS, D])
    tile = (tile.to(tl.float32) * scale).to(tl.bfloat16)
    dst.store([b, h, 0, s0], tl.reshape(tl.trans(tile), [1, 1, D, BS]))


B_, S_, H_, D_ = 16, 4096, 8, 128
KERNEL = tma_kcache_transpose_kernel
SIGNATURE = {"k_ptr": "*bf16", "cache_ptr": "*bf16", "S": "i32", "H": "i32", "B": "i32", "scale": "fp32"}
CONSTEXPRS = {"BS": 64, "D": D_}
SCALARS = {"S": S_, "H": H_, "B": B_, "scale": 0.5}
TENSORS = {"k_ptr": [B_, S_, H_, D_], "cache_ptr": [B_, H_, D_, S_]}
GRID = (S_ // 64, H_, B_)
OPTIONS = {"num_warps": 4}
#: TMA descriptors made on the device need a global scratch allocator (``triton.set_allocator``).
NEEDS_ALLOCATOR = True
