"""Backward of the GeGLU gate (tanh GELU), element-wise over flat fp16 tensors: given dOut, gate and up,
dUp = dOut * gelu(gate) and dGate = dOut * up * gelu'(gate), computed in fp32 (1024 elements a program)."""
import triton
import triton.language as tl


@triton.jit
def geglu_bwd_kernel(dout_ptr, gate_ptr, up_ptr, dgate_ptr, dup_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    dout = tl.load(dout_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    g = tl.load(gate_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    up = tl.load(up_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    inner = 0.7978845608028654 * (g + 0.044715 * g * g * g)
    tanh = 2.0 / (1.0 + tl.exp(-2.0 * inner)) - 1.0
    gelu = 0.5 * g * (1.0 + tanh)
    dinner = 0.7978845608028654 * (1.0 + 3.0 * 0.044715 * g * g)
    dgelu = 0.5 * (1.0 + tanh) + 0.5 * g * (1.0 - tanh * tanh) * dinner
    tl.store(dup_ptr + offs, (dout * gelu).to(tl.float16), mask=mask)
    tl.store(dgate_ptr + offs, (dout * up * dgelu).to(tl.float16), mask=mask)


ELEMENTS = 8192 * 14336
KERNEL = geglu_bwd_kernel
SIGNATURE = {"dout_ptr": "*fp16", "gate_ptr": "*fp16", "up_ptr": "*fp16", "dgate_ptr": "*fp16", "dup_ptr": "*fp16",
             "n_elements": "i32"}
CONSTEXPRS = {"BLOCK": 1024}
SCALARS = {"n_elements": ELEMENTS}
TENSORS = {name: [ELEMENTS] for name in ("dout_ptr", "gate_ptr", "up_ptr", "dgate_ptr", "dup_ptr")}
GRID = (ELEMENTS // 1024,)
OPTIONS = {"num_warps": 4}
