"""Vectorized global loads and stores of a distributed layout over a row-major tile.

Register ``r`` of thread ``(lane, warp)`` holds element ``(G o D)(r, lane, warp)`` of the tile, ``G``
the row-major flattening (``hardware_map.global_map``).  Runs of ``2**k`` registers at consecutive,
aligned offsets move as one access of up to 16 bytes (``ld.global.v4.b32`` for 16 bytes).

Example: a blocked layout with 4 fp32 registers per thread along the fastest dim loads with one
16-byte ``ld.global.v4`` per 4 registers.
"""

from __future__ import annotations

from linear_layouts.codegen.elements import check_element_bytes, element_type, pack_words, unpack_words
from linear_layouts.codegen.hardware_map import HardwareMap
from linear_layouts.codegen.shared import combine

__all__ = ["global_vector_elements", "emit_global_load", "emit_global_store", "global_instruction_count"]

_WORD_VECTORS = {1: "unsigned", 2: "uint2", 4: "uint4"}
_WORD_FIELDS = ("x", "y", "z", "w")


def global_vector_elements(hmap: HardwareMap, element_bytes: int) -> int:
    """Elements per global access: ``2**k`` for the longest aligned run of consecutive registers,
    capped at 16 bytes."""
    w = check_element_bytes(element_bytes)
    v = 1 << hmap.contiguous_registers()
    while v * w > 16:
        v //= 2
    return v


def _access_lines(hmap: HardwareMap, w: int, base: int, v: int, regs: str, pointer: str, load: bool) -> str:
    t = element_type(w)
    expr = hmap.address(base)
    offset = combine(expr.constant, expr.runtime_bits)
    nbytes = v * w
    elems = [f"{regs}[{base + j}]" for j in range(v)]
    if nbytes < 4:
        ctype = "unsigned short" if nbytes == 2 else "unsigned char"
        if load:
            body = [f"const {ctype} x = *reinterpret_cast<const {ctype}*>({pointer} + {offset});"]
            body += [f"{e} = ({t})(x >> {8 * w * j});" for j, e in enumerate(elems)]
        else:
            value = " | ".join(f"((unsigned)({e}) << {8 * w * j})" for j, e in enumerate(elems))
            body = [f"*reinterpret_cast<{ctype}*>({pointer} + {offset}) = ({ctype})({value});"]
        return "{ " + " ".join(body) + " }"
    n = nbytes // 4
    vtype = _WORD_VECTORS[n]
    if load:
        body = [f"const {vtype} x = *reinterpret_cast<const {vtype}*>({pointer} + {offset});"]
        words = ["x"] if n == 1 else [f"x.{_WORD_FIELDS[i]}" for i in range(n)]
        body += [f"{e} = {u};" for e, u in zip(elems, unpack_words(words, w))]
    else:
        # inline PTX: nvcc splits a C++ store of a uint4 temporary into four 32-bit stores
        words = pack_words(elems, w)
        op = "st.global.b32" if n == 1 else f"st.global.v{n}.b32"
        operands = "%1" if n == 1 else "{" + ", ".join(f"%{i + 1}" for i in range(n)) + "}"
        inputs = ", ".join(f'"r"({x})' for x in words)
        body = [f'asm volatile("{op} [%0], {operands};" :: "l"({pointer} + {offset}), {inputs} : "memory");']
    return "{ " + " ".join(body) + " }"


def _thread_offset(hmap: HardwareMap, lines: list[str]) -> list[str]:
    part = hmap.address(0).to_cuda()
    return ["{", f"  const unsigned thread_offset = {part};"] + ["  " + x for x in lines] + ["}"]


def emit_global_load(hmap: HardwareMap, element_bytes: int, regs: str = "a", pointer: str = "src") -> list[str]:
    """C++ lines filling register array ``regs`` from the tile at ``pointer`` (element pointer)."""
    w = check_element_bytes(element_bytes)
    v = global_vector_elements(hmap, w)
    return _thread_offset(hmap, [
        _access_lines(hmap, w, r, v, regs, pointer, load=True)
        for r in range(0, hmap.num_registers, v)
    ])


def emit_global_store(hmap: HardwareMap, element_bytes: int, regs: str = "b", pointer: str = "dst") -> list[str]:
    """C++ lines writing register array ``regs`` to the tile at ``pointer``, each element once."""
    w = check_element_bytes(element_bytes)
    v = global_vector_elements(hmap, w)
    lines = [
        _access_lines(hmap, w, r, v, regs, pointer, load=False)
        for r in range(0, hmap.num_registers, v)
        if not (r & hmap.free_register)
    ]
    lines = _thread_offset(hmap, lines)
    parts = []
    if hmap.free_lane:
        parts.append(f"(lane & {hmap.free_lane:#x}u)")
    if hmap.free_warp:
        parts.append(f"(warp & {hmap.free_warp:#x}u)")
    if parts:
        lines = [f"if (({' | '.join(parts)}) == 0u) {{"] + ["  " + x for x in lines] + ["}"]
    return lines


def global_instruction_count(hmap: HardwareMap, element_bytes: int, store: bool) -> int:
    """Static number of global accesses per thread the emitters above produce."""
    v = global_vector_elements(hmap, element_bytes)
    return sum(
        1 for r in range(0, hmap.num_registers, v) if not (store and r & hmap.free_register)
    )
