"""Persistent fp16 matrix multiplication with device-side tensor descriptors
(``tl.make_tensor_descriptor``, TMA on Hopper): each program walks output tiles with a stride of the
grid size; 128x128x64 tiles, 4 warps (Triton tutorial 09's descriptor variant, simplified)."""
import triton
import triton.language as tl


@triton.jit
def tma_persistent_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                                 NUM_SMS: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    tiles_n = tl.cdiv(N, BLOCK_N)
    num_tiles = tl.cdiv(M, BLOCK_M) * tiles_n
    for tile in tl.range(tl.program_id(0), num_tiles, NUM_SMS):
        off_m = (tile // tiles_n) * BLOCK_M
        off_n = (tile % tiles_n) * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k0 in range(0, K, BLOCK_K):
            acc = tl.dot(a_desc.load([off_m, k0]), b_desc.load([k0, off_n]), acc)
        c_desc.store([off_m, off_n], acc.to(tl.float16))


KERNEL = tma_persistent_matmul_kernel
SIGNATURE = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32"}
CONSTEXPRS = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "NUM_SMS": 132}
SCALARS = {"M": 4096, "N": 4096, "K": 4096}
TENSORS = {"a_ptr": [4096, 4096], "b_ptr": [4096, 4096], "c_ptr": [4096, 4096]}
GRID = (132,)
OPTIONS = {"num_warps": 4, "num_stages": 3}
#: TMA descriptors made on the device need a global scratch allocator (``triton.set_allocator``).
NEEDS_ALLOCATOR = True
