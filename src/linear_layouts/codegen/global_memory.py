"""Vectorized global loads and stores of a distributed layout over a row-major tile.

Register ``r`` of thread ``(lane, warp)`` holds element ``(G o D)(r, lane, warp)`` of the tile, ``G``
the row-major flattening (``hardware_map.global_map``).  The register bits at element offsets 1, 2,
4, ... (wherever they stand in the register index: ``vector_map``) span aligned runs that move as one
access of up to 16 bytes (``ld.global.v4.b32`` for 16 bytes).  Stores are issued sector by sector
(``store_order``): a warp's consecutive stores into the same 32-byte sectors reach L2 merged, scattered
ones do not (ncu's ``lts__t_sectors_srcunit_tex_op_write``; benchmarks/whole_kernel_profile.py).

A ``Pitch`` places the tile inside a larger matrix whose row stride is known only at run time (and,
with ``bounds``, predicates each access on the tile's valid part: the edge tiles of any shape).

Example: a blocked layout with 4 fp32 registers per thread along the fastest dim loads with one
16-byte ``ld.global.v4`` per 4 registers; with ``order=[0, 1]`` (register bit 0 along the slow dim)
too, since register bits 1 and 2 are the fast dim's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from linear_layouts.analysis.vectorization import unit_offset_bits
from linear_layouts.codegen.elements import check_element_bytes, cpp_storage_type, pack_words, unpack_words
from linear_layouts.codegen.hardware_map import HardwareMap, guard_redundant_threads
from linear_layouts.codegen.intrinsics import L2_PREFETCH_BYTES, global_load_function
from linear_layouts.codegen.packing import (
    Emission, Packing, Source, Word, assemble, gather_words, relevant_sources, repack, source_index,
)
from linear_layouts.codegen.shared import combine
from linear_layouts.core.errors import LayoutError

__all__ = [
    "global_vector_elements", "emit_global_load", "emit_global_store", "global_instruction_count",
    "emit_global_load_words", "emit_global_store_words", "emit_global_load_stages", "global_load_vectors",
    "check_l2_prefetch_bytes", "vector_map", "store_order", "SECTOR_BYTES", "Pitch", "FOLD_PARAMS", "fast_quotient",
]

_WORD_VECTORS = {1: "unsigned", 2: "uint2", 4: "uint4"}
_WORD_FIELDS = ("x", "y", "z", "w")

#: Bytes of an L2 sector (the unit of ``store_order``'s grouping).
SECTOR_BYTES = 32

#: The kernel parameters of a folded ``Pitch``: a matrix's extent along the folded side, the batch stride there
#: (elements) and the extent's ``codegen.permute.fast_divider``.
FOLD_PARAMS = ("fold_extent", "fold_stride", "fold_extent_div")


def fast_quotient(t: str, divider: str) -> str:
    """C expression of ``t / d`` for an unsigned ``t < 2**31``, by the parameter ``divider`` holding
    ``codegen.permute.fast_divider(d)`` (a multiply and a shift): ``fast_quotient("t", "tiles_n_div")``."""
    return f"(unsigned)((unsigned long long){t} * ({divider} & 0x1ffffffffull) >> ({divider} >> 56))"


@dataclass(frozen=True)
class Pitch:
    """Rows of a tile at a runtime row stride: a map's element offset ``o`` in the compact row-major tile
    ``2**column_bits`` elements wide is row ``o >> column_bits``, column ``o & (2**column_bits - 1)``,
    and lives at element ``row * pitch + column`` from the tile's pointer (``pitch``: a C expression of
    an integer type).  ``bounds``: C expressions ``(rows, columns)`` of the tile's valid part, or None
    (all valid); with them every access is predicated on its first element (a load that is off reads
    zeros, a store that is off writes nothing), so the caller keeps ``columns`` a multiple of the
    vector (a vector lies in one row: it is then valid whole or not at all).

    ``fold``: the tile's columns continue into the next matrix of a batch: column ``c`` is column ``q = fold + c``
    of the folded extent (``fold``: a C expression of the tile's first), at element ``(q / E) S + q mod E`` of the
    row (``E``, ``S``: the kernel parameters ``FOLD_PARAMS``, a matrix's columns and the batch stride; the quotient
    by ``fast_quotient``; a pointer for each column a thread accesses), so that tiles run on across the batch.

    Example: ``Pitch(6, "lda")``: offset ``0xc5`` is row 3, column 5, at ``3 * lda + 5``; the address of a
    vector ``0xc5`` from the thread's own (rows and columns of disjoint bits: ``^`` is ``+``) is
    ``ptr_thread + 0x3ull * lda + 0x5u``, with ``ptr_thread = ptr + (size_t)thread_row * lda + thread_col``."""

    column_bits: int
    pitch: str
    bounds: tuple[str, str] | None = None
    fold: str | None = None

    def __post_init__(self) -> None:
        if not 0 <= self.column_bits < 32:
            raise LayoutError(f"column_bits: must be in [0, 32), got {self.column_bits}")

    def split(self, hmap: HardwareMap) -> tuple[HardwareMap, HardwareMap]:
        """``(rows, columns)``: ``hmap`` with every image cut into its row and its column part."""
        mask = (1 << self.column_bits) - 1

        def part(f) -> HardwareMap:
            return replace(hmap, register=tuple(map(f, hmap.register)), lane=tuple(map(f, hmap.lane)),
                           warp=tuple(map(f, hmap.warp)))

        return part(lambda x: x >> self.column_bits), part(lambda x: x & mask)

    def thread_lines(self, hmap: HardwareMap, pointer: str, body: str = "") -> list[str]:
        """Declarations of ``thread_row`` and ``thread_col`` (the lane/warp part of every access) and
        of ``{pointer}_thread``, the address of the thread's own element (folded: and of the pointer to each other
        column of the thread that the code ``body`` uses)."""
        rows, cols = self.split(hmap)
        lines = [f"const unsigned thread_row = {rows.address(0).to_cuda()};",
                 f"const unsigned thread_col = {cols.address(0).to_cuda()};"]
        if self.fold is None:
            return lines + [f"auto* const {pointer}_thread = {pointer} + (size_t)thread_row * {self.pitch} + thread_col;"]
        for c in sorted({cols.address(r).constant for r in range(hmap.num_registers)}):
            if c and not re.search(rf"\b{self._folded(pointer, c)}\b", body):
                continue
            q, b = f"fold_q{c:x}", f"fold_b{c:x}"
            lines += [f"const unsigned {q} = {self.fold} + thread_col + {c:#x}u;",
                      f"const unsigned {b} = {fast_quotient(q, FOLD_PARAMS[2])};",
                      f"auto* const {self._folded(pointer, c)} = {pointer} + (size_t)thread_row * {self.pitch} + "
                      f"(size_t){b} * {FOLD_PARAMS[1]} + ({q} - {b} * {FOLD_PARAMS[0]});"]
        return lines

    @staticmethod
    def _folded(pointer: str, column: int) -> str:
        """The pointer of a folded tile's thread to its column ``column`` (from its own) at its own row."""
        return f"{pointer}_thread" if not column else f"{pointer}_fold{column:x}"

    def access(self, hmap: HardwareMap, register: int, pointer: str) -> tuple[str, str | None]:
        """``(address, guard)`` of the access whose first element is ``register``'s: the pointer
        expression, and the C condition of its validity (None without ``bounds``)."""
        address, guards = self.access_guards(hmap, register, pointer)
        return address, None if guards is None else " && ".join(guards)

    def offsets(self, hmap: HardwareMap, register: int) -> tuple[int, int] | None:
        """``(row, column)`` of the access whose first element is ``register``'s from the thread's own element,
        when its address is ``ptr_thread + row * pitch + column`` (``access``'s short form); else None."""
        rows, cols = self.split(hmap)
        row, col = rows.address(register), cols.address(register)
        if (row.constant & row.runtime_bits) or (col.constant & col.runtime_bits) or (self.fold and col.constant):
            return None
        return row.constant, col.constant

    def access_guards(self, hmap: HardwareMap, register: int, pointer: str) -> tuple[str, tuple[str, str] | None]:
        """``access`` with the guard as its two conditions ``(row < rows, column < columns)`` (None without
        ``bounds``): accesses of one column share the second, which can then be tested once."""
        rows, cols = self.split(hmap)
        row, col = rows.address(register), cols.address(register)
        if self.fold is not None and ((row.constant & row.runtime_bits) or (col.constant & col.runtime_bits)):
            raise LayoutError("pitch: a folded tile's accesses must lie at constant rows and columns from the "
                              "thread's own element")
        r = combine(row.constant, row.runtime_bits, "thread_row")
        c = combine(col.constant, col.runtime_bits, "thread_col")
        guard = None if self.bounds is None else (f"{r} < {self.bounds[0]}", f"{c} < {self.bounds[1]}")
        if (row.constant & row.runtime_bits) or (col.constant & col.runtime_bits):
            return f"{pointer} + (size_t){r} * {self.pitch} + {c}", guard
        address = f"{pointer}_thread" if self.fold is None else self._folded(pointer, col.constant)
        if row.constant:
            address += f" + {row.constant:#x}ull * {self.pitch}"
        if col.constant and self.fold is None:
            address += f" + {col.constant:#x}u"
        return address, guard


def vector_map(hmap: HardwareMap) -> HardwareMap:
    """``hmap`` with its register bits renumbered so that bit ``i`` is the one at element offset
    ``2**i`` for as long as the layout has such bits (the others keep their order: the paper's §5.3
    permutation, ``analysis.vectorization.unit_offset_bits``); unchanged when they already lead.
    Codegen packs register words itself, so which array bits form a vector is free:
    ``register_index`` maps a renumbered register back to its array slot.

    Example: registers at offsets ``(8, 1, 64)`` (``order=[0, 1]`` over a row-major 16x8 tile) give
    the map with offsets ``(1, 8, 64)``, i.e. two-element vectors of array registers ``r, r | 2``."""
    order = unit_offset_bits(hmap.register)
    if order == list(range(len(order))):
        return hmap
    return hmap.permute_registers(order)


def global_vector_elements(hmap: HardwareMap, element_bytes: int) -> int:
    """Elements per global access: ``2**k`` for the longest aligned run of registers at consecutive
    offsets (``vector_map``), capped at 16 bytes."""
    w = check_element_bytes(element_bytes)
    v = 1 << vector_map(hmap).contiguous_registers()
    while v * w > 16:
        v //= 2
    return v


def store_order(hmap: HardwareMap, element_bytes: int, bases: list[int]) -> list[int]:
    """``bases`` (first registers of the store vectors) ordered by the 32-byte sectors they write:
    a store of register ``r`` writes, over the warp, the sectors ``(c(r) ^ lanes) >> s`` with ``c(r)``
    its constant element offset and ``s = log2(SECTOR_BYTES / element_bytes)``, so stores with equal
    ``c(r) >> s`` write the same sectors and go one after another (stable: register order within).

    Example: 16-bit registers at offsets ``(64, 2)`` store in the order ``[0, 2, 1, 3]`` (registers 0
    and 2 write sectors 0, ...; 1 and 3 those 128 bytes on)."""
    shift = max(0, (SECTOR_BYTES // element_bytes).bit_length() - 1)
    return sorted(bases, key=lambda r: hmap.address(r).constant >> shift)


def _store_function(nbytes: int, hint: str = "") -> str:
    """The ``intrinsics`` store of ``nbytes`` bytes, e.g. ``ll_stg128_cs`` (``hint`` on 16 bytes only)."""
    return f"ll_stg{8 * nbytes}" + (f"_{hint}" if hint and nbytes == 16 else "")


def _immediate(pointer: str, expr, w: int) -> tuple[str, str]:
    """(template argument, address) of an access at element offset ``expr``: the constant part as the
    instruction's immediate byte offset (``<0x40u>``, with ``pointer + thread_offset``) where it adds
    to the thread's part (no common bits), else ``""`` and the whole address."""
    if expr.constant and not expr.constant & expr.runtime_bits:
        return f"<{expr.constant * w:#x}u>", f"{pointer} + thread_offset"
    return "", f"{pointer} + {combine(expr.constant, expr.runtime_bits)}"


def _access_lines(hmap: HardwareMap, w: int, base: int, v: int, regs: str, pointer: str, load: bool) -> str:
    t = cpp_storage_type(w)
    expr = hmap.address(base)
    offset = combine(expr.constant, expr.runtime_bits)
    nbytes = v * w
    elems = [f"{regs}[{hmap.register_index(base + j)}]" for j in range(v)]
    if nbytes < 4:
        ctype = "unsigned short" if nbytes == 2 else "unsigned char"
        if load:
            body = [f"const {ctype} x = *reinterpret_cast<const {ctype}*>({pointer} + {offset});"]
            body += [f"{e} = ({t})(x >> {8 * w * j});" for j, e in enumerate(elems)]
        else:
            value = " | ".join(f"((unsigned)({e}) << {8 * w * j})" for j, e in enumerate(elems))
            template, address = _immediate(pointer, expr, w)
            body = [f"{_store_function(nbytes)}{template}({address}, {value});"]
        return "{ " + " ".join(body) + " }"
    n = nbytes // 4
    vtype = _WORD_VECTORS[n]
    if load:
        body = [f"const {vtype} x = *reinterpret_cast<const {vtype}*>({pointer} + {offset});"]
        words = ["x"] if n == 1 else [f"x.{_WORD_FIELDS[i]}" for i in range(n)]
        body += [f"{e} = {u};" for e, u in zip(elems, unpack_words(words, w))]
    else:
        # inline PTX (intrinsics' ll_stg*, which the CPU emulator defines too): nvcc splits a C++
        # store of a uint4 temporary into four 32-bit stores
        words = pack_words(elems, w)
        template, address = _immediate(pointer, expr, w)
        body = [f"{_store_function(nbytes)}{template}({address}, {', '.join(words)});"]
    return "{ " + " ".join(body) + " }"


def _thread_offset(hmap: HardwareMap, lines: list[str], pitch: Pitch | None = None, pointer: str = "") -> list[str]:
    if pitch is not None:
        return ["{"] + ["  " + x for x in pitch.thread_lines(hmap, pointer, "\n".join(lines)) + lines] + ["}"]
    part = hmap.address(0).to_cuda()
    return ["{", f"  const unsigned thread_offset = {part};"] + ["  " + x for x in lines] + ["}"]


def emit_global_load(hmap: HardwareMap, element_bytes: int, regs: str = "a", pointer: str = "src") -> list[str]:
    """C++ lines filling register array ``regs`` from the tile at ``pointer`` (element pointer)."""
    w = check_element_bytes(element_bytes)
    hmap = vector_map(hmap)
    v = global_vector_elements(hmap, w)
    return _thread_offset(hmap, [
        _access_lines(hmap, w, r, v, regs, pointer, load=True)
        for r in range(0, hmap.num_registers, v)
    ])


def emit_global_store(hmap: HardwareMap, element_bytes: int, regs: str = "b", pointer: str = "dst") -> list[str]:
    """C++ lines writing register array ``regs`` to the tile at ``pointer``, each element once, in
    ``store_order``."""
    w = check_element_bytes(element_bytes)
    hmap = vector_map(hmap)
    v = global_vector_elements(hmap, w)
    lines = [_access_lines(hmap, w, r, v, regs, pointer, load=False) for r in store_order(hmap, w, _store_bases(hmap, v))]
    return guard_redundant_threads(hmap, _thread_offset(hmap, lines))


def _store_bases(hmap: HardwareMap, v: int) -> list[int]:
    """First (renumbered) registers of the ``v``-element store vectors, duplicate registers left out."""
    return [r for r in range(0, hmap.num_registers, v) if not (r & hmap.free_register)]


def global_instruction_count(hmap: HardwareMap, element_bytes: int, store: bool) -> int:
    """Static number of global accesses per thread the emitters above produce."""
    hmap = vector_map(hmap)
    v = global_vector_elements(hmap, element_bytes)
    return len(_store_bases(hmap, v)) if store else hmap.num_registers // v


def _vector_bytes(hmap: HardwareMap, w: int, base: int, v: int) -> Word:
    """The (array register, byte) pairs of the vector at (renumbered) registers ``base ... base + v - 1``."""
    return tuple((hmap.register_index(base + j), i) for j in range(v) for i in range(w))


def _check_hint(hint: str, allowed: tuple[str, ...]) -> None:
    if hint not in allowed:
        raise LayoutError(f"hint: must be one of {allowed}, got {hint!r}")


def check_l2_prefetch_bytes(l2_prefetch_bytes: int) -> int:
    """``l2_prefetch_bytes`` if it is 0 (no prefetch size) or one of ``intrinsics.L2_PREFETCH_BYTES``.

    Example: ``check_l2_prefetch_bytes(256) == 256``; ``check_l2_prefetch_bytes(512)`` raises LayoutError."""
    if isinstance(l2_prefetch_bytes, bool) or l2_prefetch_bytes not in (0,) + L2_PREFETCH_BYTES:
        raise LayoutError(f"l2_prefetch_bytes: must be 0 (none) or one of {L2_PREFETCH_BYTES} (PTX .L2::<N>B), "
                          f"got {l2_prefetch_bytes!r}")
    return l2_prefetch_bytes


def _load_words(hmap: HardwareMap, w: int, packing: Packing, pointer: str, em: Emission,
                vector_names: list[str] | None, hint: str = "", l2_prefetch_bytes: int = 0,
                pitch: Pitch | None = None) -> tuple[list[str], list[str], list[str]]:
    """(issue lines, repack lines, register word expressions) of the loads of ``hmap``'s registers:
    vector ``i`` goes to ``vector_names[i]`` (assigned: the caller declares them; ``None``: fresh
    ``const`` locals); ``hint``, ``l2_prefetch_bytes``: the cache hint and L2 prefetch size of
    ``intrinsics.global_load_function`` (16-byte loads only); ``pitch``: addresses (and predicates)
    of a ``Pitch`` (plain loads only)."""
    if pitch is not None and (hint or l2_prefetch_bytes):
        raise LayoutError("pitch: pitched loads take no cache hint or L2 prefetch size")
    hmap = vector_map(hmap)
    v = global_vector_elements(hmap, w)
    nbytes = v * w
    issue: list[str] = []
    loaded: list[Source] = []
    for i, r in enumerate(range(0, hmap.num_registers, v)):
        expr = hmap.address(r)
        offset = combine(expr.constant, expr.runtime_bits)
        flat = list(_vector_bytes(hmap, w, r, v))
        declare = vector_names is None
        address, guard = pitch.access(hmap, r, pointer) if pitch is not None else (f"{pointer} + {offset}", None)
        if nbytes < 4:
            ctype = "unsigned short" if nbytes == 2 else "unsigned char"
            name = em.fresh("g") if declare else vector_names[i]
            lhs = f"const unsigned {name}" if declare else name
            issue.append(f"{lhs} = {_guarded(f'*reinterpret_cast<const {ctype}*>({address})', guard, 'unsigned')};")
            loaded.append(Source(name, tuple(flat + [None] * (4 - len(flat)))))
            continue
        n = nbytes // 4
        vtype = _WORD_VECTORS[n]
        q = em.fresh("q") if declare else vector_names[i]
        lhs = f"const {vtype} {q}" if declare else q
        if l2_prefetch_bytes and n == 4:  # the constant part as the load's immediate byte offset
            fn = global_load_function(hint == "na", l2_prefetch_bytes)
            template, address = _immediate(pointer, expr, w)
            issue.append(f"{lhs} = {fn}{template}({address});")
        elif hint and n == 4:
            issue.append(f"{lhs} = {global_load_function(True, 0)}({pointer} + {offset});")
        else:
            issue.append(f"{lhs} = {_guarded(f'*reinterpret_cast<const {vtype}*>({address})', guard, vtype)};")
        fields = [q] if n == 1 else [f"{q}.{_WORD_FIELDS[i]}" for i in range(n)]
        for j, f in enumerate(fields):
            loaded.append(Source(f, tuple(flat[4 * j:4 * j + 4])))
    mark = len(em.lines)
    natural = Packing.natural(w, packing.register_bits)
    by_content = {s.contents: s.expr for s in loaded}
    if all(natural.contents(i) in by_content for i in range(natural.num_words)):
        exprs = repack(natural, packing, [by_content[natural.contents(i)] for i in range(natural.num_words)], em)
    else:
        exprs = gather_words(packing, loaded, em)
    repacked = em.lines[mark:]
    del em.lines[mark:]
    return issue, repacked, exprs


def _guarded(load: str, guard: str | None, ctype: str) -> str:
    """``load``, or ``guard ? load : zero`` (the load is then predicated off)."""
    return load if guard is None else f"({guard}) ? {load} : {ctype}{{}}"


def global_load_vectors(hmap: HardwareMap, element_bytes: int) -> tuple[str, int]:
    """(C type, count) of the vectors ``emit_global_load_words`` loads, e.g. ``("uint4", 8)``."""
    w = check_element_bytes(element_bytes)
    v = global_vector_elements(hmap, w)
    ctype = "unsigned" if v * w < 4 else _WORD_VECTORS[v * w // 4]
    return ctype, hmap.num_registers // v


def emit_global_load_words(hmap: HardwareMap, element_bytes: int, packing: Packing, words: str = "a",
                           pointer: str = "src", em: Emission | None = None, hint: str = "",
                           l2_prefetch_bytes: int = 0, pitch: Pitch | None = None) -> list[str]:
    """C++ lines filling the packed register words ``words`` (``packing``) from the tile at ``pointer``
    with the widest aligned vector loads; loaded words become register words by byte permutes only
    where the packing differs from the register order of memory. ``hint="na"``: 16-byte loads are
    ``ld.global.nc.L1::no_allocate`` (``intrinsics.STREAMING_FUNCTIONS``); ``l2_prefetch_bytes``
    (0, 64, 128 or 256): 16-byte loads also carry ``.L2::<N>B`` (``intrinsics.prefetch_functions``).
    ``pitch``: the tile lies in a matrix of a runtime row stride, its loads maybe predicated (``Pitch``)."""
    w = check_element_bytes(element_bytes)
    _check_hint(hint, ("", "na"))
    check_l2_prefetch_bytes(l2_prefetch_bytes)
    em = em if em is not None else Emission("g")
    issue, repacked, exprs = _load_words(hmap, w, packing, pointer, em, None, hint, l2_prefetch_bytes, pitch)
    return _thread_offset(hmap, issue + repacked + [f"{words}[{i}] = {e};" for i, e in enumerate(exprs)], pitch,
                          pointer)


def emit_global_load_stages(hmap: HardwareMap, element_bytes: int, packing: Packing, vectors: str,
                            words: str = "a", pointer: str = "src", em: Emission | None = None,
                            hint: str = "", l2_prefetch_bytes: int = 0,
                            pitch: Pitch | None = None) -> tuple[list[str], list[str]]:
    """``emit_global_load_words`` in two stages, for software pipelining: (issue, unpack), where
    ``issue`` loads the vectors ``vectors0, vectors1, ...`` (the caller declares them:
    ``global_load_vectors``) and ``unpack`` turns them into the register words ``words`` by byte
    permutes; code between the two runs while the loads are in flight. ``hint``,
    ``l2_prefetch_bytes``, ``pitch``: as there."""
    w = check_element_bytes(element_bytes)
    _check_hint(hint, ("", "na"))
    check_l2_prefetch_bytes(l2_prefetch_bytes)
    em = em if em is not None else Emission("g")
    n = global_load_vectors(hmap, w)[1]
    issue, repacked, exprs = _load_words(hmap, w, packing, pointer, em, [f"{vectors}{i}" for i in range(n)], hint,
                                         l2_prefetch_bytes, pitch)
    return _thread_offset(hmap, issue, pitch, pointer), ["{"] + ["  " + x for x in repacked] + [
        f"  {words}[{i}] = {e};" for i, e in enumerate(exprs)] + ["}"]


def emit_global_store_words(hmap: HardwareMap, element_bytes: int, packing: Packing, words: str = "b",
                            pointer: str = "dst", em: Emission | None = None, hint: str = "",
                            pitch: Pitch | None = None) -> list[str]:
    """C++ lines writing the packed register words ``words`` (``packing``) to the tile at ``pointer``,
    each element once (duplicate registers skipped, duplicate lanes and warps predicated off).
    ``hint="cs"``: 16-byte stores are ``st.global.cs`` (streaming: evict first). ``pitch``: the tile
    lies in a matrix of a runtime row stride, its stores maybe predicated (``Pitch``)."""
    w = check_element_bytes(element_bytes)
    _check_hint(hint, ("", "cs"))
    em = em if em is not None else Emission("h")
    hmap = vector_map(hmap)
    v = global_vector_elements(hmap, w)
    nbytes = v * w
    natural = Packing.natural(w, packing.register_bits)
    index = {natural.contents(i): i for i in range(natural.num_words)}
    bases = store_order(hmap, w, _store_bases(hmap, v))
    targets = {}
    for r in bases:
        flat = list(_vector_bytes(hmap, w, r, v))
        flat += [None] * (-len(flat) % 4)
        targets[r] = [tuple(flat[i:i + 4]) for i in range(0, len(flat), 4)]
    needed = {index[t] for ts in targets.values() for t in ts if t in index}
    names = [f"{words}[{i}]" for i in range(packing.num_words)]
    body: list[str] = []
    mark = len(em.lines)
    repacked = repack(packing, natural, names, em, only=needed) if needed else []
    sources = [Source(names[i], packing.contents(i)) for i in range(packing.num_words)]
    by_byte = source_index(sources)
    for r in bases:
        expr = hmap.address(r)
        operands = []
        for t in targets[r]:
            i = index.get(t)
            if i is not None and repacked[i] is not None:
                operands.append(repacked[i])
            else:
                operands.append(assemble(t, relevant_sources(sources, by_byte, t, None), em).expr)
        body += em.lines[mark:]
        del em.lines[mark:]
        if pitch is None:
            template, address = _immediate(pointer, expr, w)
            body.append(f"{_store_function(nbytes, hint)}{template}({address}, {', '.join(operands)});")
            continue
        address, guard = pitch.access_guards(hmap, r, pointer)
        store = f"{_store_function(nbytes, hint)}({address}, {', '.join(operands)});"
        body.append(store if guard is None else _GuardedStore(guard, _store_function(nbytes, hint), address,
                                                              ", ".join(operands), pitch.offsets(hmap, r)))
    if pitch is not None:
        body = _column_guarded(body, pointer, pitch.pitch)
    return guard_redundant_threads(hmap, _thread_offset(hmap, body, pitch, pointer))


@dataclass(frozen=True)
class _GuardedStore:
    """A store behind ``guards`` ``(row < rows, column < columns)`` of ``function(address, operands)``;
    ``offsets``: ``Pitch.offsets`` of its address (None: not of the short form)."""

    guards: tuple[str, str]
    function: str
    address: str
    operands: str
    offsets: tuple[int, int] | None

    def line(self, guard: str, address: str) -> str:
        return f"if ({guard}) {self.function}({address}, {self.operands});"


def _column_guarded(body: list, pointer: str, pitch: str) -> list[str]:
    """Store lines with their guards (``_GuardedStore``): ``if (row && col) store`` each; or, when every store
    tests one column condition, ``if (col) { if (row) store ... }``, the column tested once, and, when their
    rows only grow, each address a row pointer advanced by the rows between (fewer registers live across the
    stores than one address per row): ``if (c) { auto* p = dst_thread; if (r0) st(p, ..); p += 0x1ull * ldb; ..}``."""
    guarded = [x for x in body if isinstance(x, _GuardedStore)]
    columns = {x.guards[1] for x in guarded}
    if len(columns) != 1 or any(isinstance(x, str) and x.startswith("}") for x in body[body.index(guarded[0]):]):
        return [x if isinstance(x, str) else x.line(" && ".join(x.guards), x.address) for x in body]
    first = body.index(guarded[0])
    rows = [x.offsets[0] if x.offsets else -1 for x in guarded]
    running = all(x.offsets for x in guarded) and rows == sorted(rows)
    lines, at = [f"auto* {pointer}_row = {pointer}_thread;"] if running else [], 0
    for x in body[first:]:
        if isinstance(x, str):
            lines.append(x)
            continue
        if not running:
            lines.append(x.line(x.guards[0], x.address))
            continue
        row, col = x.offsets
        if row != at:
            lines.append(f"{pointer}_row += {row - at:#x}ull * {pitch};")
            at = row
        lines.append(x.line(x.guards[0], f"{pointer}_row + {col:#x}u" if col else f"{pointer}_row"))
    return body[:first] + [f"if ({columns.pop()}) {{"] + ["  " + x for x in lines] + ["}"]
