"""MoE top-k router (128 experts, top 8 per token, as in Qwen3-MoE): a softmax over each token's expert
logits, then ``tl.topk`` of the probabilities with the expert index packed into the low bits of each key
(one 64-bit key per (token, expert), so the bitonic network carries the index), the chosen gates
renormalized to sum to 1; 32 tokens per program. ``tl.topk`` unrolls into a bitonic network of
reshapes to a [2, 2, ..] hypercube, xor-reductions, selects and max reductions."""
import triton
import triton.language as tl


@triton.jit
def topk_router_kernel(logits_ptr, expert_ptr, gate_ptr, BLOCK_T: tl.constexpr, E: tl.constexpr,
                       K: tl.constexpr):
    t = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    e = tl.arange(0, E)
    x = tl.load(logits_ptr + t[:, None] * E + e[None, :]).to(tl.float32)
    p = tl.exp(x - tl.max(x, axis=1)[:, None])
    p = p / tl.sum(p, axis=1)[:, None]
    # probabilities are positive: their fp32 bits order as the values do
    key = (p.to(tl.int32, bitcast=True).to(tl.int64) << 32) | e[None, :].to(tl.int64)
    top = tl.topk(key, K, dim=1)
    expert = (top & 0xFFFF).to(tl.int32)
    gate = (top >> 32).to(tl.int32).to(tl.float32, bitcast=True)
    gate = gate / tl.sum(gate, axis=1)[:, None]
    k = tl.arange(0, K)
    tl.store(expert_ptr + t[:, None] * K + k[None, :], expert)
    tl.store(gate_ptr + t[:, None] * K + k[None, :], gate)


KERNEL = topk_router_kernel
SIGNATURE = {"logits_ptr": "*bf16", "expert_ptr": "*i32", "gate_ptr": "*fp32"}
CONSTEXPRS = {"BLOCK_T": 32, "E": 128, "K": 8}
SCALARS = {}
TENSORS = {"logits_ptr": [16384, 128], "expert_ptr": [16384, 8], "gate_ptr": [16384, 8]}
GRID = (512,)
OPTIONS = {"num_warps": 4, "num_stages": 3}
