"""Shared-memory store/load emitters: registers of a distributed layout <-> a (swizzled) shared
layout, with ``st/ld.shared`` v1/v2/v4 or ``stmatrix/ldmatrix`` x1/x2/x4 in inline PTX.

Register ``r`` of thread ``(lane, warp)`` holds the element at shared offset
``(S^-1 o D)(r, lane, warp)`` (``hardware_map.shared_map``).  A *vector* access moves ``2**k``
registers whose offsets are consecutive (register bits ``0..k-1`` map to offsets ``1..2**(k-1)``).
A *matrix* access follows the paper's tile ``id_k^{Reg,Off} x id_2^{Thr,Off}`` (§5.3),
``k = log2(4 / element_bytes)``: register bits ``0..k-1`` and lane bits 0, 1 span one 16-byte row,
lane bits 2..4 pick the 8 rows of a matrix, the next register bits pick the matrix; thread ``t``
gives the address of row ``t % 8`` of matrix ``t / 8``.

Example: the seed transpose (16x32 fp32, one warp) with the optimal swizzle stores with 16
``st.shared.b32`` and loads with 4 ``ldmatrix.x4`` per thread.
"""

from __future__ import annotations

from dataclasses import dataclass

from linear_layouts.analysis.steps import MemoryOp, SharedInstruction, shared_mnemonic
from linear_layouts.codegen.elements import check_element_bytes
from linear_layouts.codegen.hardware_map import HardwareMap, guard_redundant_threads
from linear_layouts.codegen.index import IndexExpression, xor_terms
from linear_layouts.codegen.intrinsics import matrix_function, vector_function
from linear_layouts.codegen.packing import (
    Emission, Packing, Source, Word, assemble, relevant_sources, repack, source_index,
)
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import quote

__all__ = [
    "EmittedAccess",
    "emit_shared_store",
    "emit_shared_load",
    "instruction_words",
    "access_packing",
    "shared_instruction_counts",
    "access_addresses",
    "vector_mnemonic",
    "matrix_mnemonic",
]


@dataclass(frozen=True)
class EmittedAccess:
    """How the emitted code of one side of a conversion touches shared memory (the executed form of an
    ``analysis.steps.SharedMemoryAccess``; baselines and tests build it directly).

    ``kind`` (an ``analysis.steps.SharedInstruction``, or its value ``"vector"`` / ``"matrix"``):
    ``st/ld.shared`` of ``width`` elements per lane (a power of two, at most 16 bytes), or
    ``stmatrix/ldmatrix`` ``.x{width}`` (width 1, 2 or 4).
    ``register_order``: register bits in the order the access uses them (vector bits first, as a
    plan's register permutation gives them); the rest follow in increasing order.
    """

    kind: SharedInstruction
    width: int
    register_order: tuple[int, ...] = ()
    trans: bool = False

    @property
    def description(self) -> str:
        """e.g. ``vector x4`` or ``matrix x4``."""
        return f"{self.kind.value} x{self.width}" + (" trans" if self.trans else "")

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "kind", SharedInstruction(self.kind))
        except ValueError:
            raise LayoutError(f"kind: must be 'vector' or 'matrix', got {quote(self.kind)}") from None
        if self.width < 1 or self.width & (self.width - 1):
            raise LayoutError(f"width: must be a power of two, got {self.width}")
        if self.kind is SharedInstruction.MATRIX and self.width > 4:
            raise LayoutError(f"width: ldmatrix/stmatrix take x1, x2 or x4, got x{self.width}")
        if self.trans and self.kind is not SharedInstruction.MATRIX:
            raise LayoutError("trans: only ldmatrix/stmatrix have a transposing form")
        object.__setattr__(self, "register_order", tuple(int(b) for b in self.register_order))

    def apply(self, hmap: HardwareMap) -> HardwareMap:
        """``hmap`` with its registers in this access's order."""
        return hmap.permute_registers(self.register_order) if self.register_order else hmap


def vector_mnemonic(store: bool, vector_bytes: int) -> str:
    """PTX opcode of a ``vector_bytes`` shared access, e.g. ``st.shared.v4.b32`` for 16 bytes
    (``analysis.steps.shared_mnemonic``, the one home of the names)."""
    return shared_mnemonic(MemoryOp.STORE if store else MemoryOp.LOAD, SharedInstruction.VECTOR, vector_bytes, 8)


def matrix_mnemonic(store: bool, matrices: int, trans: bool = False) -> str:
    """PTX opcode of ``stmatrix``/``ldmatrix`` of ``matrices`` 8x8 b16 matrices (``.trans``: transposed)."""
    return shared_mnemonic(MemoryOp.STORE if store else MemoryOp.LOAD, SharedInstruction.MATRIX, matrices, 16, trans)


def _log2(n: int) -> int:
    return n.bit_length() - 1


def combine(constant: int, runtime_bits: int, var: str = "thread_offset") -> str:
    """``var ^ constant``, written ``var + constant`` when no runtime bit meets the constant (then they
    are equal, and the compiler folds the constant into the instruction's immediate offset)."""
    if not constant:
        return var
    op = "+" if not constant & runtime_bits else "^"
    return f"({var} {op} {constant:#x}u)"


def _byte_address(
    constant: int, element_bytes: int, smem: str, padding: tuple[int, int] | None = None, runtime_bits: int = -1
) -> str:
    """Byte address of element offset ``thread_offset ^ constant`` (padded: ``o + (o / interval) * pad``)."""
    shift = _log2(element_bytes)
    offset = combine(constant, runtime_bits)
    if padding:
        interval, pad = padding
        offset = f"({offset} + ({offset} >> {_log2(interval)}) * {pad}u)"
    return f"{smem} + ({offset} << {shift})" if shift else f"{smem} + {offset}"


def _with_thread_offset(addresses: list[tuple[int, IndexExpression]], lines: list[str]) -> list[str]:
    """Wrap ``lines`` in a block defining ``thread_offset``, the lane/warp part shared by all addresses."""
    if not addresses:
        return lines
    terms = addresses[0][1].terms
    if any(expr.terms != terms for _, expr in addresses):  # pragma: no cover - by construction
        raise LayoutError("addresses: instructions of one access differ in their lane/warp part")
    part = IndexExpression(0, terms).to_cuda()
    return ["{", f"  const unsigned thread_offset = {part};"] + ["  " + x for x in lines] + ["}"]


def _check_vector(hmap: HardwareMap, element_bytes: int, access: EmittedAccess) -> int:
    k = _log2(access.width)
    if access.width * element_bytes > 16:
        raise LayoutError(f"access: {access.width} x {element_bytes} bytes exceeds a 16-byte vector")
    if k > len(hmap.register) or hmap.contiguous_registers() < k:
        raise LayoutError(
            f"access: a vector of {access.width} elements needs register bits 0..{k - 1} at "
            f"consecutive, aligned shared offsets; the layouts give {hmap.contiguous_registers()} bits"
        )
    return k


def _matrix_layout(hmap: HardwareMap, element_bytes: int, access: EmittedAccess, store: bool = True) -> tuple[int, int]:
    """Check the ldmatrix/stmatrix tile; return (k, m): element bits per word, matrix-index bits.

    Plain: register bits 0..k-1 and lane bits 0, 1 span a 16-byte row, lane bits 2..4 pick rows.
    ``.trans`` (16-bit): lane bits 2..4 walk the 8 elements of a row; register bit 0 and lane bits
    0, 1 pick rows.  Either way the next ``m`` register bits pick the matrix."""
    if element_bytes > 4 or (access.trans and element_bytes != 2):
        raise LayoutError(
            f"element_bytes: ldmatrix/stmatrix need elements of at most 4 bytes (2 for .trans), got {element_bytes}"
        )
    k = _log2(4 // element_bytes)
    m = _log2(access.width)
    row = 16 // element_bytes
    rule = (
        f"access: {'transposed ' if access.trans else ''}ldmatrix/stmatrix need its register and lane bits "
        f"to span 16-byte rows and every other bit to move by whole rows"
    )
    if len(hmap.register) < k + m or len(hmap.lane) != 5:
        raise LayoutError(rule + f" (x{access.width} needs {k + m} register bits)")
    if access.trans:
        within = hmap.lane[2:5] == (1, 2, 4)
        others = (hmap.register[0],) + hmap.lane[0:2] + hmap.register[1:] + hmap.warp
    else:
        within = all(hmap.register[i] == 1 << i for i in range(k)) and hmap.lane[0:2] == (
            4 // element_bytes, 8 // element_bytes)
        others = hmap.register[k:] + hmap.lane[2:] + hmap.warp
    if not within or any(image % row for image in others):
        raise LayoutError(rule)
    # Broadcast lanes (lane bits 2..4 of image 0) make two rows share one address; stmatrix then
    # writes identical data there within one instruction, which is well defined.
    return k, m


def _matrix_address(hmap: HardwareMap, base_register: int, k: int, m: int, trans: bool = False) -> IndexExpression:
    """Lane ``t`` gives the start of row ``t % 8`` of matrix ``t / 8``."""
    if trans:
        lane_images = [hmap.register[0], hmap.lane[0], hmap.lane[1]] + [hmap.register[k + i] for i in range(m)]
    else:
        lane_images = list(hmap.lane[2:5]) + [hmap.register[k + i] for i in range(m)]
    constant = 0
    for bit, image in enumerate(hmap.register):
        if (base_register >> bit) & 1:
            constant ^= image
    terms = xor_terms("lane", lane_images) + xor_terms("warp", hmap.warp)
    return IndexExpression(constant, tuple(terms))


def _groups(hmap: HardwareMap, low_bits: int, skip: int) -> list[int]:
    return [
        r for r in range(0, hmap.num_registers, 1 << low_bits) if not (r & skip)
    ]


def access_addresses(
    hmap: HardwareMap, element_bytes: int, access: EmittedAccess, store: bool
) -> list[tuple[int, IndexExpression]]:
    """``(first register, element-offset expression)`` of each emitted instruction, in order.

    Vector: lane ``l`` of the instruction for register ``r`` moves registers ``r .. r+width-1`` at
    offsets ``e(l, w) .. e(l, w)+width-1``.  Matrix: lane ``t`` gives ``e(t, w)``, the start of row
    ``t % 8`` of matrix ``t / 8``; lane ``t`` moves word ``i`` = row ``t / 4`` of matrix ``i``, column
    word ``t % 4``, holding registers ``r + (i << k) .. + 2**k - 1``.
    """
    w = check_element_bytes(element_bytes)
    hmap = access.apply(hmap)
    skip = hmap.free_register if store else hmap.zero_register
    if access.kind is SharedInstruction.VECTOR:
        k = _check_vector(hmap, w, access)
        return [(r, hmap.address(r)) for r in _groups(hmap, k, skip)]
    k, m = _matrix_layout(hmap, w, access, store)
    if store and hmap.free_register & ((1 << (k + m)) - 1):
        raise LayoutError("access: stmatrix cannot store a layout whose matrix registers are duplicates")
    return [(r, _matrix_address(hmap, r, k, m, access.trans)) for r in _groups(hmap, k + m, skip)]


def instruction_words(hmap: HardwareMap, element_bytes: int, access: EmittedAccess, r: int) -> list[Word]:
    """Byte ids (array register, byte) of the 32-bit operands of the instruction whose first
    (permuted) register is ``r``, in operand order; a 1- or 2-byte access is one partial word.
    ``hmap`` is already in the access's register order."""
    w = element_bytes
    if access.kind is SharedInstruction.VECTOR:
        regs = [hmap.register_index(r + j) for j in range(access.width)]
    else:
        k = _log2(4 // w)
        regs = [hmap.register_index(r + (i << k) + j) for i in range(access.width) for j in range(1 << k)]
    flat = [(reg, j) for reg in regs for j in range(w)]
    flat += [None] * (-len(flat) % 4)
    return [tuple(flat[i:i + 4]) for i in range(0, len(flat), 4)]


def access_packing(hmap: HardwareMap, element_bytes: int, register_bits: int) -> Packing:
    """The packing in which every full word an access moves is one register word: its first
    in-word register bits (array bits) in the access's order (``hmap`` in the access's order)."""
    lead = [hmap.register_index(1 << i).bit_length() - 1 for i in range(len(hmap.register))]
    return Packing.leading(element_bytes, register_bits, lead)


def _store_plan(hmap: HardwareMap, element_bytes: int, access: EmittedAccess, packing: Packing, words: str,
                em: Emission, addresses) -> dict:
    """Operand words of every store instruction: whole words through ``repack`` from ``packing`` to
    the access's packing (staged byte exchanges where cheaper), partial words assembled."""
    natural = access_packing(hmap, element_bytes, packing.register_bits)
    index = {natural.contents(i): i for i in range(natural.num_words)}
    needed = set()
    for r, _ in addresses:
        for t in instruction_words(hmap, element_bytes, access, r):
            if t in index:
                needed.add(index[t])
    names = [f"{words}[{i}]" for i in range(packing.num_words)]
    repacked = repack(packing, natural, names, em, only=needed) if needed else []
    sources = [Source(names[i], packing.contents(i)) for i in range(packing.num_words)]
    return dict(natural=index, repacked=repacked, sources=sources, by_byte=source_index(sources))


def _operands(targets: list[Word], em: Emission, plan: dict) -> list[str]:
    out = []
    for target in targets:
        i = plan["natural"].get(target)
        if i is not None and plan["repacked"][i] is not None:
            out.append(plan["repacked"][i])
        else:
            out.append(assemble(target, relevant_sources(plan["sources"], plan["by_byte"], target, None), em).expr)
    return out


def emit_shared_store(
    hmap: HardwareMap,
    element_bytes: int,
    access: EmittedAccess,
    packing: Packing,
    words: str = "a",
    smem: str = "smem",
    padding: tuple[int, int] | None = None,
    em: Emission | None = None,
) -> list[str]:
    """C++ lines storing the register words ``words`` (laid out by ``packing``) to shared memory
    (``smem``: a 32-bit shared-window byte address; ``padding=(interval, pad)``: Triton's padded
    layout, ``pad`` elements after every ``interval``).  Each logical element is written once: free
    (duplicate) registers are skipped and duplicate lanes/warps predicated off.  Operand words come
    from the register words by byte permutes only where the access's register order differs from the
    packing (``em.prmt`` counts them)."""
    w = check_element_bytes(element_bytes)
    em = em if em is not None else Emission("s")
    addresses = access_addresses(hmap, w, access, True)
    hmap = access.apply(hmap)
    body: list[str] = []
    mark = len(em.lines)
    plan = _store_plan(hmap, w, access, packing, words, em, addresses)
    if access.kind is SharedInstruction.VECTOR:
        _check_vector(hmap, w, access)
        nbytes = access.width * w
        fn = vector_function(True, nbytes)
    else:
        _matrix_layout(hmap, w, access)
        fn = matrix_function(True, access.width, access.trans)
    for r, expr in addresses:
        addr = _byte_address(expr.constant, w, smem, padding, expr.runtime_bits)
        operands = _operands(instruction_words(hmap, w, access, r), em, plan)
        body += em.lines[mark:]
        del em.lines[mark:]
        body.append(f"{fn}({addr}, {', '.join(operands)});")
    # stmatrix is .sync.aligned (every lane of the warp runs it): only duplicate warps are skipped around it
    lines = _with_thread_offset(addresses, body)
    return guard_redundant_threads(hmap, lines, lanes=access.kind is not SharedInstruction.MATRIX)


def emit_shared_load(
    hmap: HardwareMap,
    element_bytes: int,
    access: EmittedAccess,
    packing: Packing,
    words: str = "b",
    smem: str = "smem",
    padding: tuple[int, int] | None = None,
    em: Emission | None = None,
    zero_mask: int = 0,
) -> list[str]:
    """C++ lines loading the register words ``words`` (laid out by ``packing``) from shared memory.
    Registers whose basis vector is zero (``zero_mask``: their array bits) are copies: they take the
    bytes of register ``r & ~zero_mask``.  Loaded words become register words by byte permutes only
    where the access's register order differs from the packing."""
    w = check_element_bytes(element_bytes)
    em = em if em is not None else Emission("l")
    addresses = access_addresses(hmap, w, access, False)
    hmap = access.apply(hmap)
    if access.kind is SharedInstruction.VECTOR:
        _check_vector(hmap, w, access)
        fn = vector_function(False, access.width * w)
    else:
        _matrix_layout(hmap, w, access, False)
        fn = matrix_function(False, access.width, access.trans)
    body: list[str] = []
    loaded: list[Source] = []
    for r, expr in addresses:
        addr = _byte_address(expr.constant, w, smem, padding, expr.runtime_bits)
        targets = instruction_words(hmap, w, access, r)
        names = [em.fresh("v") for _ in targets]
        loaded += [Source(n, t) for n, t in zip(names, targets)]
        if fn in ("ll_lds8", "ll_lds16", "ll_lds32"):
            body.append(f"const unsigned {names[0]} = {fn}({addr});")
        else:
            body.append(f"unsigned {', '.join(names)}; {fn}({addr}, {', '.join(names)});")
    canon = (lambda r: r & ~zero_mask) if zero_mask else None
    natural = access_packing(hmap, w, packing.register_bits)
    by_content = {s.contents: s.expr for s in loaded}
    mark = len(em.lines)
    if canon is None and all(natural.contents(i) in by_content for i in range(natural.num_words)):
        exprs = repack(natural, packing, [by_content[natural.contents(i)] for i in range(natural.num_words)], em)
    else:
        by_byte = source_index(loaded)
        exprs = [assemble(packing.contents(i), relevant_sources(loaded, by_byte, packing.contents(i), canon), em, canon).expr
                 for i in range(packing.num_words)]
    body += em.lines[mark:]
    del em.lines[mark:]
    body += [f"{words}[{i}] = {e};" for i, e in enumerate(exprs)]
    return _with_thread_offset(addresses, body)


def shared_instruction_counts(
    hmap: HardwareMap, element_bytes: int, access: EmittedAccess, store: bool
) -> dict[str, int]:
    """Static count, per thread, of the shared-memory instructions the emitters above produce:
    ``{ptx opcode: count}``."""
    w = check_element_bytes(element_bytes)
    n = len(access_addresses(hmap, w, access, store))
    if access.kind is SharedInstruction.VECTOR:
        return {vector_mnemonic(store, access.width * w): n}
    return {matrix_mnemonic(store, access.width, access.trans): n}
