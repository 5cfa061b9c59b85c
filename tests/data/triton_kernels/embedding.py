"""Embedding lookup (a pointer gather): ``out[t, :] = weight[ids[t], :]`` for 16 tokens per program,
the 4096-wide rows copied in 256-column chunks."""
import triton
import triton.language as tl


@triton.jit
def embedding_kernel(ids_ptr, weight_ptr, out_ptr, n_tokens, D, stride_w, stride_o,
                     BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr):
    t = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    ids = tl.load(ids_ptr + t, mask=t < n_tokens, other=0)
    for d0 in range(0, D, BLOCK_D):
        d = d0 + tl.arange(0, BLOCK_D)
        mask = (t[:, None] < n_tokens) & (d[None, :] < D)
        rows = tl.load(weight_ptr + ids[:, None].to(tl.int64) * stride_w + d[None, :], mask=mask)
        tl.store(out_ptr + t[:, None].to(tl.int64) * stride_o + d[None, :], rows, mask=mask)


KERNEL = embedding_kernel
SIGNATURE = {"ids_ptr": "*i32", "weight_ptr": "*fp16", "out_ptr": "*fp16", "n_tokens": "i32", "D": "i32",
             "stride_w": "i32", "stride_o": "i32"}
CONSTEXPRS = {"BLOCK_T": 16, "BLOCK_D": 256}
SCALARS = {"n_tokens": 8192, "D": 4096, "stride_w": 4096, "stride_o": 4096}
TENSORS = {"ids_ptr": ([8192], ("randint", 0, 32000)), "weight_ptr": [32000, 4096], "out_ptr": [8192, 4096]}
GRID = (512,)
OPTIONS = {"num_warps": 4, "num_stages": 3}
