"""KV-cache append for a prefill chunk: the new keys and values ([batch, tokens, kv_heads, 128] bf16, as
the QKV projection lays them out) are scattered into a head-major cache ([batch, kv_heads, max_len, 128])
at each sequence's current length; a program moves 32 tokens of one head for K and for V."""
import triton
import triton.language as tl


@triton.jit
def kv_cache_append_kernel(k_ptr, v_ptr, k_cache_ptr, v_cache_ptr, start_ptr, T, stride_nb, stride_nt,
                           stride_cb, stride_ch, stride_ct, HEAD_DIM: tl.constexpr, BLOCK_T: tl.constexpr):
    pid_t = tl.program_id(0)
    head = tl.program_id(1)
    batch = tl.program_id(2)
    rt = pid_t * BLOCK_T + tl.arange(0, BLOCK_T)
    rd = tl.arange(0, HEAD_DIM)
    mask = rt[:, None] < T
    pos = tl.load(start_ptr + batch) + rt
    src = batch.to(tl.int64) * stride_nb + rt[:, None] * stride_nt + head * HEAD_DIM + rd[None, :]
    dst = batch.to(tl.int64) * stride_cb + head * stride_ch + pos[:, None].to(tl.int64) * stride_ct + rd[None, :]
    tl.store(k_cache_ptr + dst, tl.load(k_ptr + src, mask=mask), mask=mask)
    tl.store(v_cache_ptr + dst, tl.load(v_ptr + src, mask=mask), mask=mask)


BATCH, TOKENS, KV_HEADS, DIM, MAX_LEN = 16, 512, 8, 128, 8192
KERNEL = kv_cache_append_kernel
SIGNATURE = {"k_ptr": "*bf16", "v_ptr": "*bf16", "k_cache_ptr": "*bf16", "v_cache_ptr": "*bf16", "start_ptr": "*i32",
             "T": "i32", "stride_nb": "i32", "stride_nt": "i32", "stride_cb": "i32", "stride_ch": "i32",
             "stride_ct": "i32"}
CONSTEXPRS = {"HEAD_DIM": DIM, "BLOCK_T": 32}
SCALARS = {"T": TOKENS, "stride_nb": TOKENS * KV_HEADS * DIM, "stride_nt": KV_HEADS * DIM,
           "stride_cb": KV_HEADS * MAX_LEN * DIM, "stride_ch": MAX_LEN * DIM, "stride_ct": DIM}
TENSORS = {"k_ptr": [BATCH, TOKENS, KV_HEADS, DIM], "v_ptr": [BATCH, TOKENS, KV_HEADS, DIM],
           "k_cache_ptr": ([BATCH, KV_HEADS, MAX_LEN, DIM], "zeros"),
           "v_cache_ptr": ([BATCH, KV_HEADS, MAX_LEN, DIM], "zeros"),
           "start_ptr": ([BATCH], ("randint", 0, MAX_LEN - TOKENS + 1))}
GRID = (TOKENS // 32, KV_HEADS, BATCH)
OPTIONS = {"num_warps": 4}
