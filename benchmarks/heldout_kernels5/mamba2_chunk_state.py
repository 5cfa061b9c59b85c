"""Mamba-2 (SSD) chunk states: per (batch * head, chunk of 256 positions) the state
sum_l B[l, :]^T exp(dA_last - dA[l]) x[l, :] as [128, 64] fp32, built over 64-position steps from
device-side tensor descriptor loads of [1, 64, 128] / [1, 64, 64] boxes (``tl.make_tensor_descriptor``, TMA)
``tl.reshape``-d to 2-D, the decay-scaled B tile ``tl.trans``-ed into ``tl.dot``."""
import triton
import triton.language as tl


@triton.jit
def mamba2_chunk_state_kernel(x_ptr, b_ptr, dacs_ptr, st_ptr, BH, L, NCHUNK,
                              CHUNK: tl.constexpr, BL: tl.constexpr, N: tl.constexpr, P: tl.constexpr):
    c = tl.program_id(0)
    bh = tl.program_id(1)
    x_desc = tl.make_tensor_descriptor(x_ptr, shape=[BH, L, P], strides=[L * P, P, 1], block_shape=[1, BL, P])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[BH, L, N], strides=[L * N, N, 1], block_shape=[1, BL, N])
    da = dacs_ptr + bh.to(tl.int64) * L + c * CHUNK
    da_last = tl.load(da + CHUNK - 1)
    rl = tl.arange(0, BL)
    acc = tl.zeros([N, P], dtype=tl.float32)
    for l0 in range(0, CHUNK, BL):
        x = tl.reshape(x_desc.load([bh, c * CHUNK + l0, 0]), [BL, P])
        bm = tl.reshape(b_desc.load([bh, c * CHUNK + l0, 0]), [BL, N]).to(tl.float32)
        decay = tl.exp(da_last - tl.load(da + l0 + rl))
        bd = (bm * decay[:, None]).to(tl.bfloat16)
        acc = tl.dot(tl.trans(bd), x, acc)
    rn = tl.arange(0, N)
    rp = tl.arange(0, P)
    out = st_ptr + (bh.to(tl.int64) * NCHUNK + c) * N * P
    tl.store(out + rn[:, None] * P + rp[None, :], acc)


BH_, L_, N_, P_, CH_ = 256, 2048, 128, 64, 256
KERNEL = mamba2_chunk_state_kernel
SIGNATURE = {"x_ptr": "*bf16", "b_ptr": "*bf16", "dacs_ptr": "*fp32", "st_ptr": "*fp32", "BH": "i32",
             "L": "i32", "NCHUNK": "i32"}
CONSTEXPRS = {"CHUNK": CH_, "BL": 64, "N": N_, "P": P_}
SCALARS = {"BH": BH_, "L": L_, "NCHUNK": L_ // CH_}
TENSORS = {"x_ptr": [BH_, L_, P_], "b_ptr": [BH_, L_, N_], "dacs_ptr": [BH_, L_],
           "st_ptr": [BH_, L_ // CH_, N_, P_]}
GRID = (L_ // CH_, BH_)
OPTIONS = {"num_warps": 4, "num_stages": 2}
#: TMA descriptors made on the device need a global scratch allocator (``triton.set_allocator``).
NEEDS_ALLOCATOR = True
