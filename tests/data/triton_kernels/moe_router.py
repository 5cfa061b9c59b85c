"""MoE top-1 router: softmax over 64 expert logits per token and ``tl.argmax`` (a max with indices),
for 64 tokens per program; the chosen expert and its gate weight are stored."""
import triton
import triton.language as tl


@triton.jit
def moe_router_kernel(logits_ptr, expert_ptr, gate_ptr, BLOCK_T: tl.constexpr, E: tl.constexpr):
    t = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    x = tl.load(logits_ptr + t[:, None] * E + tl.arange(0, E)[None, :]).to(tl.float32)
    p = tl.exp(x - tl.max(x, axis=1)[:, None])
    p = p / tl.sum(p, axis=1)[:, None]
    best = tl.argmax(p, axis=1)
    tl.store(expert_ptr + t, best)
    tl.store(gate_ptr + t, tl.max(p, axis=1))


KERNEL = moe_router_kernel
SIGNATURE = {"logits_ptr": "*bf16", "expert_ptr": "*i32", "gate_ptr": "*fp32"}
CONSTEXPRS = {"BLOCK_T": 64, "E": 64}
SCALARS = {}
TENSORS = {"logits_ptr": [16384, 64], "expert_ptr": [16384], "gate_ptr": [16384]}
GRID = (256,)
OPTIONS = {"num_warps": 4, "num_stages": 3}
