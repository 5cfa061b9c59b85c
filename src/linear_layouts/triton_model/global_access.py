"""How Triton 3.9 lowers a TTGIR op that touches global memory through a tensor of pointers
(``LoadStoreOpToLLVM.cpp`` of its NVIDIA backend): how many PTX instructions each thread issues for
it and of what width, from the op's layout and ``axis_info``.

The rules, each Triton's:

* ``vec`` (elements per instruction) is ``min(128 / bits, contiguity)``, where ``contiguity`` is the
  smaller of the layout's contiguous registers along its fastest dim (``order[0]``: the dim of the first
  register basis; the run of register bases ``1, 2, 4, ..`` there) and the pointer's alignment there
  (``min(divisibility / element bytes, contiguity)`` of its ``AxisInfo``); with a mask, no more than the
  mask's constancy along that dim;
* each thread issues ``unique registers / vec`` instructions (registers holding copies of one another,
  zero register bases, are not re-accessed); a load or store of ``vec * bits`` bits is one
  ``ld/st.global[.v2|.v4].bN``;
* an atomic (``tt.atomic_rmw``) takes the same ``vec``, at most 128 bits; on sm_90 and later a float
  ``fadd`` of f32 / f16 / bf16 is one ``atom.global[.v2|.v4|.v8]`` of ``vec`` elements; otherwise it is
  scalar, two f16 packed into one ``f16x2`` where ``vec >= 2``; its result unused and its semantics
  relaxed or release (not ``xchg``), it is a ``red`` (no result); ``tt.atomic_cas`` is one per element;
* ``ttg.async_copy_global_to_local`` (``cp.async``) copies ``vec`` elements per instruction, ``vec``
  raised to the op's ``contiguity`` hint, at most 16 bytes;
* a scalar pointer is one instruction per thread.

Instructions are named as PTX spells them, normalized (``GlobalInstruction.key``):
``ld.global.16B``, ``st.global.4B``, ``cp.async.16B``, ``atom.global.add.f32.16B`` (a ``.v4.f32``),
``atom.global.add.f16.4B`` (an ``f16x2``), ``atom.global.max.b32.4B`` (``max.s32``).

>>> from linear_layouts.triton_model.ir_text import parse_module
>>> m = parse_module('''#b = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
... module attributes {"ttg.num-warps" = 4 : i32, ttg.target = "cuda:90"} {
...   tt.func public @k(%x: !tt.ptr<f32> {tt.divisibility = 16 : i32}) {
...     %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32, #b>
...     %p = tt.splat %x : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>, #b>
...     %q = tt.addptr %p, %r : tensor<1024x!tt.ptr<f32>, #b>, tensor<1024xi32, #b>
...     %v = tt.load %q : tensor<1024x!tt.ptr<f32>, #b>
...     tt.store %q, %v : tensor<1024x!tt.ptr<f32>, #b>
...     tt.return
...   }
... }''')
>>> global_inventory(m)
{'ld.global.16B': 2, 'st.global.16B': 2}
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from linear_layouts.core.arguments import checked
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout
from linear_layouts.target import VECTOR_ATOMICS
from linear_layouts.target.nvidia import features_of
from linear_layouts.triton_model.axis_info import AxisInfo, axis_info
from linear_layouts.triton_model.encodings import Layouts, parse_type
from linear_layouts.triton_model.ir_text import Module, Op

__all__ = ["GlobalInstruction", "GlobalAccess", "global_accesses", "global_inventory", "ptx_global_inventory",
           "register_order", "contiguous_per_thread", "GLOBAL_OPS"]

#: TTGIR ops that touch global memory through their operand 0
GLOBAL_OPS = ("tt.load", "tt.store", "tt.atomic_rmw", "tt.atomic_cas", "ttg.async_copy_global_to_local")
#: ``tt.atomic_rmw``'s kinds -> the PTX operation
_RMW = {"fadd": "add", "add": "add", "max": "max", "min": "min", "umax": "max", "umin": "min", "and": "and",
        "or": "or", "xor": "xor", "xchg": "exch", "fmax": "max", "fmin": "min"}


@dataclass(frozen=True)
class GlobalInstruction:
    """One form of global-memory instruction: ``kind`` (``ld``, ``st``, ``atom``, ``red``, ``cp.async``),
    the bytes each lane moves (``vector_bytes``), and for an atomic its ``operation`` (``add``, ``max``,
    ``cas``, ...) and ``element`` (``f32``, ``f16``, ``bf16``, ``f64``; ``b32`` / ``b64`` for integers)."""

    kind: str
    vector_bytes: int
    element: str = ""
    operation: str = ""

    @property
    def key(self) -> str:
        """``ld.global.16B``, ``cp.async.16B``, ``atom.global.add.f32.16B`` (module doc)."""
        if self.kind == "cp.async":
            return f"cp.async.{self.vector_bytes}B"
        if self.kind in ("ld", "st"):
            return f"{self.kind}.global.{self.vector_bytes}B"
        return f"{self.kind}.global.{self.operation}.{self.element}.{self.vector_bytes}B"

    @property
    def atomic(self) -> bool:
        return self.kind in ("atom", "red")


@dataclass(frozen=True)
class GlobalAccess:
    """A global-memory op of a TTGIR as Triton lowers it: ``index`` (its position in ``Function.walk``),
    the op, ``instruction`` and how many each thread issues (``per_thread``), ``vec`` (elements per
    instruction), the pointer tensor's ``layout`` (``None`` for a scalar pointer), the element's bits,
    whether a mask predicates it, and for a store or atomic the semantics text (``acq_rel``, ...)."""

    index: int
    op: Op
    instruction: GlobalInstruction
    per_thread: int
    vec: int
    layout: LinearLayout | None
    bits: int
    masked: bool = False
    semantics: str = ""

    @property
    def is_store(self) -> bool:
        return self.instruction.kind in ("st", "atom", "red")


def register_order(layout: LinearLayout) -> tuple[int, ...]:
    """Triton's ``LinearEncodingAttr::getOrder`` (what the lowering of a global access calls the order;
    not ``lowering.layout_order``, which reads lane and warp bases too): out dims in the order register
    bases first move them, the rest from the last dim down. E.g. registers along dim 1 first: ``(1, 0)``."""
    rank = layout.num_out_dims
    order: list[int] = []
    for basis in layout.bases.get("register", []):
        for d, v in enumerate(basis):
            if v and d not in order:
                order.append(d)
                break
    return tuple(order + [d for d in reversed(range(rank)) if d not in order])


def contiguous_per_thread(layout: LinearLayout) -> tuple[int, ...]:
    """Triton's ``getContigPerThread``: per dim, the run of leading register bases ``1, 2, 4, ..`` along
    it, the dims taken in ``register_order``."""
    rank = layout.num_out_dims
    bases = list(layout.bases.get("register", []))
    contiguous = [1] * rank
    k = 0
    for d in register_order(layout):
        step = 1
        while k < len(bases) and list(bases[k]) == [step if e == d else 0 for e in range(rank)]:
            contiguous[d] *= 2
            step *= 2
            k += 1
    return tuple(contiguous)


def _unique_registers(layout: LinearLayout) -> int:
    return 1 << sum(1 for b in layout.bases.get("register", []) if any(b))


def _alignment(info: AxisInfo, dim: int, element_bytes: int) -> int:
    """Triton's ``getAlignment`` of a pointer: contiguous elements a vector may start at, along ``dim``."""
    return max(1, min(max(info.divisibility[dim] // element_bytes, 1), info.contiguity[dim]))


def _vector_size(layout: LinearLayout, info: AxisInfo, bits: int, cap_bits: int = 128) -> int:
    order0 = register_order(layout)[0]
    contiguity = min(_alignment(info, order0, max(bits // 8, 1)), contiguous_per_thread(layout)[order0])
    return max(1, min(cap_bits // bits, contiguity))


def _mask_alignment(layout: LinearLayout, info: AxisInfo | None) -> int:
    if info is None:
        return 1
    return max(info.constancy[register_order(layout)[0]], 1)


def _atomic_element(element: str, rmw: str) -> str:
    """The PTX type of an atomic on ``element`` (normalized: floats by name, integers ``bN``)."""
    t = parse_type(element)
    bits = t.bitwidth or 32
    if rmw in ("fadd", "fmax", "fmin") or element.startswith(("f", "bf")):
        return "bf16" if element == "bf16" else f"f{bits}"
    return f"b{bits}"


def _used(module: Module) -> set[str]:
    names: set[str] = set()
    for op in module.functions[0].walk():
        names.update(o.split("#")[0] for o in op.operands)
        names.update(op.operands)
    return names


@checked
def global_accesses(module: Module, *, info: Mapping[str, AxisInfo] | None = None,
                    compute_capability: int | None = None) -> tuple[GlobalAccess, ...]:
    """Every global load, store, atomic and ``cp.async`` of ``module``'s first function, in walk order,
    as Triton lowers it (module doc). ``info``: ``axis_info`` of the function, if already made;
    ``compute_capability``: the target's (default the module's ``ttg.target``; sm_90 without one)."""
    fn = module.functions[0]
    info = axis_info(fn) if info is None else info
    cc = compute_capability or module.compute_capability or 90
    layouts = Layouts(module)
    used = _used(module)
    out: list[GlobalAccess] = []
    for index, op in enumerate(fn.walk()):
        if op.name not in GLOBAL_OPS or not op.operands:
            continue
        ptr_type = parse_type(op.operand_types[0], module) if op.operand_types else None
        if op.name == "ttg.async_copy_global_to_local":
            access = _async_copy(index, op, module, layouts, info)
        elif ptr_type is None or ptr_type.kind != "tensor":
            access = _scalar(index, op, module, used)
        else:
            access = _tensor(index, op, module, layouts, info, ptr_type, cc, used)
        if access is not None:
            out.append(access)
    return tuple(out)


def _pointee(type_text: str) -> str:
    """The element a (tensor of) pointer(s) points to: ``!tt.ptr<f32>`` -> ``f32``."""
    m = re.search(r"!tt\.ptr<([^,>]+)", type_text)
    return m.group(1).strip() if m else ""


def _pointee_bits(type_text: str) -> int:
    return parse_type(_pointee(type_text)).bitwidth or 32


def _scalar(index: int, op: Op, module: Module, used: set[str]) -> GlobalAccess:
    bits = _pointee_bits(op.operand_types[0] if op.operand_types else "")
    if op.name == "tt.load":
        instruction = GlobalInstruction("ld", max(bits // 8, 1))
    elif op.name == "tt.store":
        instruction = GlobalInstruction("st", max(bits // 8, 1))
    else:
        instruction = _atomic_instruction(op, bits, 1, 1, used)
    return GlobalAccess(index, op, instruction, 1, 1, None, bits, semantics=_semantics(op))


def _semantics(op: Op) -> str:
    m = re.search(r"\b(relaxed|acquire|release|acq_rel)\b", op.text)
    return m.group(1) if m else ""


def _atomic_instruction(op: Op, bits: int, vec: int, packed: int, used: set[str]) -> GlobalInstruction:
    element = _pointee(op.operand_types[0] if op.operand_types else "") or "f32"
    if op.name == "tt.atomic_cas":
        return GlobalInstruction("atom", max(bits // 8, 1), f"b{bits}", "cas")
    m = re.search(r"tt\.atomic_rmw\s+(\w+)\s*,", op.text)
    rmw = m.group(1) if m else "add"
    red = op.results and not any(r in used for r in op.results) and rmw != "xchg" \
        and _semantics(op) in ("relaxed", "release")
    return GlobalInstruction("red" if red else "atom", max(bits * vec * packed // 8, 1),
                             _atomic_element(element, rmw), _RMW.get(rmw, rmw))


def _tensor(index: int, op: Op, module: Module, layouts: Layouts, info: Mapping[str, AxisInfo], ptr_type, cc: int,
            used: set[str]) -> GlobalAccess | None:
    try:
        layout = layouts.linear(ptr_type)
    except LayoutError:
        return None
    bits = _pointee_bits(ptr_type.element)
    rank = len(ptr_type.shape)
    ptr_info = info.get(op.operands[0]) or AxisInfo.unknown(rank)
    mask_name = {"tt.load": 1, "tt.store": 2, "tt.atomic_rmw": 2}.get(op.name)
    mask = op.operands[mask_name] if mask_name is not None and len(op.operands) > mask_name else None
    mask_info = (info.get(mask) or AxisInfo.unknown(rank)) if mask else None
    registers = _unique_registers(layout)
    vec = _vector_size(layout, ptr_info, bits)  # the pointer's (and mask's) vector, for loads, stores and rmw
    if mask is not None:
        vec = min(vec, _mask_alignment(layout, mask_info))
    vec = max(1, min(vec, registers))
    if op.name in ("tt.load", "tt.store"):
        kind = "ld" if op.name == "tt.load" else "st"
        return GlobalAccess(index, op, GlobalInstruction(kind, vec * bits // 8 if vec * bits >= 8 else 1),
                            registers // vec, vec, layout, bits, mask is not None, _semantics(op))
    if op.name == "tt.atomic_cas":
        return GlobalAccess(index, op, _atomic_instruction(op, bits, 1, 1, used), registers, 1, layout, bits,
                            False, _semantics(op))
    m = re.search(r"tt\.atomic_rmw\s+(\w+)\s*,", op.text)
    rmw = m.group(1) if m else "add"
    element = _pointee(ptr_type.element)
    vectorized = VECTOR_ATOMICS in features_of(cc) and rmw == "fadd" and element in ("f16", "bf16", "f32")
    packed = 1
    if not vectorized:
        packed = min(vec, 2 if element == "f16" else 1)
        vec = 1
    instruction = _atomic_instruction(op, bits, vec, packed, used)
    return GlobalAccess(index, op, instruction, registers // (vec * packed), vec * packed, layout, bits,
                        mask is not None, _semantics(op))


def _async_copy(index: int, op: Op, module: Module, layouts: Layouts, info: Mapping[str, AxisInfo]) \
        -> GlobalAccess | None:
    from linear_layouts.triton_model.lowering import ldst_instructions

    ptr_type = parse_type(op.operand_types[0], module)
    try:
        layout = layouts.linear(ptr_type)
    except LayoutError:
        return None
    bits = _pointee_bits(ptr_type.element)
    rank = len(ptr_type.shape)
    ptr_info = info.get(op.operands[0]) or AxisInfo.unknown(rank)
    order0 = register_order(layout)[0]
    vec = min(_alignment(ptr_info, order0, max(bits // 8, 1)), contiguous_per_thread(layout)[order0])
    masked = " mask " in op.text
    if masked and len(op.operands) > 2:
        vec = min(vec, _mask_alignment(layout, info.get(op.operands[2])))
    vec = max(vec, op.attr_int("contiguity") or 1)
    vec = max(1, min(vec, 128 // bits, _unique_registers(layout)))
    shared = _shared_layout(op, module, layouts)
    if shared is not None:  # the copy is also a store to shared memory: its vectors must be contiguous there
        reg = layout.remove_zero_bases_along_dim("register")
        try:
            cvt = reg.invert_and_compose(shared)
            vec = max(1, ldst_instructions(cvt, bits, "store", max_vector_elements=vec).bytes * 8 // bits)
        except LayoutError:
            pass
    return GlobalAccess(index, op, GlobalInstruction("cp.async", vec * bits // 8), _unique_registers(layout) // vec,
                        vec, layout, bits, masked)


def _shared_layout(op: Op, module: Module, layouts: Layouts) -> LinearLayout | None:
    """The shared layout (offset -> tensor) of the buffer a ``cp.async`` writes (its result type)."""
    text = op.text.split(" loc(")[0]
    target = text.rsplit("->", 1)[-1].strip() if "->" in text else ""
    if not target:
        return None
    try:
        shared = layouts.linear(parse_type(target if target.startswith("!") else "!ttg.memdesc" + target, module))
    except LayoutError:
        return None
    if shared.has_in_dim("block"):
        shared = shared.sublayout(["offset"], shared.out_dim_names)
    return shared


@checked
def global_inventory(module: Module, *, compute_capability: int | None = None) -> dict[str, int]:
    """The static count of ``module``'s global-memory instructions by ``GlobalInstruction.key`` (each op's
    instructions once, as they appear in Triton's PTX), sorted by key."""
    counts: Counter = Counter()
    for access in global_accesses(module, compute_capability=compute_capability):
        counts[access.instruction.key] += access.per_thread
    return dict(sorted(counts.items()))


_PTX_GLOBAL = re.compile(r"^\s*(?:@!?%p\d+\s+)?((?:ld|st|atom|red)\.global[\w.:]*|cp\.async\.c[ag]\.shared\.global)"
                         r"([^;]*);", re.M)
_PTX_TYPE = re.compile(r"\.(b|s|u|f|bf)(\d+)(x2)?$")


@checked
def ptx_global_inventory(ptx: str) -> dict[str, int]:
    """The static count of a PTX text's global-memory instructions, by ``GlobalInstruction.key``:
    ``ld.global.v4.b32`` -> ``ld.global.16B``, ``atom.global.gpu.acq_rel.add.v4.f32`` ->
    ``atom.global.add.f32.16B``, ``cp.async.cg.shared.global [..], [..], 0x10`` -> ``cp.async.16B``.

    >>> ptx_global_inventory("@%p1 atom.global.gpu.acq_rel.add.v4.f32 {%r1, %r2, %r3, %r4}, [%rd1], {%r5, %r6, %r7, %r8};")
    {'atom.global.add.f32.16B': 1}
    """
    counts: Counter = Counter()
    for opcode, rest in _PTX_GLOBAL.findall(ptx):
        if opcode.startswith("cp.async"):
            size = re.search(r"\],\s*(0x[0-9a-fA-F]+|\d+)", rest)
            counts[f"cp.async.{int(size.group(1), 0) if size else 16}B"] += 1
            continue
        parts = opcode.split(".")
        vector = next((int(p[1:]) for p in parts if re.fullmatch(r"v\d", p)), 1)
        m = _PTX_TYPE.search(opcode)
        if not m:
            continue
        kind, bits, pair = m.group(1), int(m.group(2)), m.group(3)
        lanes = 2 if pair else 1
        nbytes = bits // 8 * vector * lanes
        if parts[0] in ("ld", "st"):
            counts[f"{parts[0]}.global.{nbytes}B"] += 1
            continue
        operation = next((p for p in parts[2:] if p in ("add", "max", "min", "and", "or", "xor", "exch", "cas",
                                                          "inc", "dec")), "?")
        element = (f"bf{bits}" if kind == "bf" else f"f{bits}") if kind in ("f", "bf") else f"b{bits}"
        counts[f"{parts[0]}.global.{operation}.{element}.{nbytes}B"] += 1
    return dict(sorted(counts.items()))
