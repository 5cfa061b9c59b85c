"""SIMD shared-memory instructions by left division (paper §5.3, Theorem 5.1).

With ``cvt = S^-1 ∘ L`` (register, lane, warp -> offset; broadcast registers removed), an
instruction with tile ``T`` can lower the access iff ``cvt /_l T`` exists after a register
permutation (the division reads the columns in order, so the permutation is found while dividing).

Tiles (offsets in elements of ``bitwidth`` bits):

* ``ld.shared`` / ``st.shared`` of ``2**n`` bits: ``id_n(register -> offset)``, n = 8 .. 128 bits.
* ``ldmatrix`` / ``stmatrix`` (one 8 x 16-byte matrix per register): ``id_k(register -> offset) x
  id_2(lane -> offset)``, k = log2(32 / bitwidth): each lane holds 4 contiguous bytes, 4 lanes a
  16-byte row; lanes 2..4 pick the 8 rows (any 16-byte-aligned offsets). ``.x2`` / ``.x4`` take 2 / 4
  matrices, one per further register bit.
* ``ldmatrix.trans`` / ``stmatrix.trans`` (16-bit elements): lanes 2..4 walk the 8 contiguous
  elements of a row, ``id_3(lane_hi -> offset)``; register bit 0 and lanes 0, 1 pick the rows.

The tiles come from ``linear_layouts.layouts.instruction_tiles`` (``vectorized_shared_tile``,
``ldmatrix_row_tile``) where it covers them; built here: 128-bit elements, 32-bit ``ldmatrix``
(a b16 pair per lane, as Triton emits for fp32) and the ``.trans`` division tile.

Example (a 16x16 fp16 mma-operand fragment: register -> col 1, row 8, col 8; lanes -> cols 2, 4,
rows 1, 2, 4) over a row-major tile: ``best_instruction(row_major, fragment, 16)`` is
``ldmatrix.sync.aligned.m8n8.x4.shared.b16`` once (ld.shared.b32: 4 times, same 8 wavefronts); over a
column-major tile it is the ``.trans`` variant.

The matrix instructions are offered only where the ``target`` has them (``ldmatrix`` from sm_75,
``stmatrix`` from sm_90; neither on AMD), and every count is the target's bank model.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from linear_layouts.core import f2
from linear_layouts.analysis.banks import SharedAccess, access_wavefronts, shared_access
from linear_layouts.analysis.steps import MemoryOp, SharedInstruction, shared_mnemonic
from linear_layouts.core.arguments import checked
from linear_layouts.core.element_type import DTypeLike, element_type
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import quote
from linear_layouts.core.layout import ColumnAction, LinearLayout
from linear_layouts.target import LDMATRIX, STMATRIX, Target, resolve

__all__ = [
    "SimdChoice",
    "vector_tile",
    "matrix_tile",
    "simd_choices",
    "best_instruction",
    "conversion_instructions",
]

_VECTOR_BITS = (8, 16, 32, 64, 128)


@dataclass(frozen=True)
class SimdChoice:
    """One way to lower a shared-memory access: the instruction, how many, and the division found.

    ``op``/``family``/``width``/``trans``: ``ld/st.shared`` of ``width`` elements of ``element_bits`` per
    lane, or ``ldmatrix/stmatrix .x{width}`` (``.trans``). ``permutation`` acts on the distributed
    layout's registers (broadcast registers dropped) so that ``cvt`` (register, lane, warp -> offset) is
    ``tile * quotient``; ``count`` is over all warps; ``wavefronts`` is the predicted total (banks model;
    ldmatrix/stmatrix: one phase per 8x16-byte matrix, its 8 row addresses as 16-byte units).
    """

    op: MemoryOp
    family: SharedInstruction
    width: int
    element_bits: int
    trans: bool
    count: int
    wavefronts: int
    permutation: ColumnAction
    tile: LinearLayout
    quotient: LinearLayout

    @property
    def instruction(self) -> str:
        """The PTX opcode, e.g. ``ld.shared.v4.b32`` or ``stmatrix.sync.aligned.m8n8.x4.shared.b16``."""
        return shared_mnemonic(self.op, self.family, self.width, self.element_bits, self.trans)

    @property
    def matrices(self) -> int:
        """8x8 matrices per instruction (0 for ld/st.shared)."""
        return self.width if self.family is SharedInstruction.MATRIX else 0

    @property
    def bits_per_lane(self) -> int:
        """Bits each lane moves per instruction (32 per matrix for ldmatrix/stmatrix)."""
        return 32 * self.width if self.family is SharedInstruction.MATRIX else self.width * self.element_bits


@checked
def vector_tile(vector_bits: int, dtype: DTypeLike) -> LinearLayout:
    """id_n(register -> offset): a lane's ``vector_bits`` contiguous bits, ``vector_bits/bitwidth`` elements
    of ``dtype`` (``bitwidth`` bits each)."""
    if isinstance(vector_bits, bool) or not isinstance(vector_bits, int):
        raise LayoutError(f"vector_bits must be an int, got {quote(vector_bits)}")
    return _vector_tile(vector_bits, element_type(dtype).bits)


@functools.lru_cache(maxsize=64)
def _vector_tile(vector_bits: int, bitwidth: int) -> LinearLayout:
    if vector_bits % bitwidth or vector_bits not in _VECTOR_BITS:
        raise LayoutError(f"vector_bits must be 8..128 bits and a multiple of bitwidth, got {vector_bits}, {bitwidth}")
    if bitwidth <= 64:
        from linear_layouts.layouts.instruction_tiles import vectorized_shared_tile  # the catalog owns tiles

        return vectorized_shared_tile(vector_bits, bitwidth)
    return LinearLayout.identity_1d(vector_bits // bitwidth, "register", "offset")


@checked
def matrix_tile(dtype: DTypeLike, *, trans: bool = False) -> LinearLayout:
    """The ldmatrix/stmatrix tile of one 8x16-byte matrix (see the module doc); ``trans`` needs 16 bits.

    Plain: register -> offsets 1 .. 2**(k-1), lane 0, 1 -> offsets 2**k, 2**(k+1) (k = log2(32/bitwidth)).
    Trans: ``lane_hi`` (lane bits 2..4) -> offsets 1, 2, 4.
    """
    return _matrix_tile(element_type(dtype).bits, bool(trans))


@functools.lru_cache(maxsize=64)
def _matrix_tile(bitwidth: int, trans: bool) -> LinearLayout:
    if trans:
        if bitwidth != 16:
            raise LayoutError(f"ldmatrix/stmatrix .trans moves 16-bit elements, got bitwidth {bitwidth}")
        return LinearLayout.identity_1d(8, "lane_hi", "offset")
    if bitwidth not in (8, 16, 32):
        raise LayoutError(f"ldmatrix/stmatrix need 8-, 16- or 32-bit elements (4 bytes per lane), got {bitwidth}")
    if bitwidth != 32:
        from linear_layouts.layouts.instruction_tiles import ldmatrix_row_tile  # the catalog owns tiles

        return ldmatrix_row_tile(bitwidth)
    return LinearLayout({"register": [], "lane": [[1], [2]]}, {"offset": 4})


def _cvt_bases(access: SharedAccess, order: list[int], split_lanes: bool) -> dict[str, list[int]]:
    """The bases of ``cvt = S^-1 ∘ L`` (register, lane or lane_lo / lane_hi, warp -> offset), registers in
    ``order`` (indices into ``access.register_offsets``)."""
    lanes = list(access.lane_offsets)
    bases = {"register": [access.register_offsets[j] for j in order]}
    if split_lanes:
        bases["lane_lo"], bases["lane_hi"] = lanes[:2], lanes[2:]
    else:
        bases["lane"] = lanes
    bases["warp"] = list(access.warp_offsets)
    return bases


def _divide(access: SharedAccess, tile: LinearLayout, *, split_lanes: bool) -> tuple[list[int], LinearLayout] | None:
    """Register order (indices into access.register_offsets) and quotient with ``cvt = tile * quotient``
    (Thm 5.1; ``divide_left(cvt, tile)``, computed on the bases: each of the tile's in dims starts cvt's
    dim of that name, and every other basis of cvt has zero low bits, the tile's offset bits)."""
    want = tile.flat_bases("register", missing_ok=True)  # the tile's one out dim is offset: flat = offset
    where = {o: j for j, o in enumerate(access.register_offsets)}
    if any(o not in where for o in want):
        return None
    front = [where[o] for o in want]
    order = front + [j for j in range(len(access.register_offsets)) if j not in front]
    cvt = _cvt_bases(access, order, split_lanes)
    if any(d not in cvt for d in tile.in_dim_names):
        return None
    t = tile.out_dim_size_log2("offset")
    n_off = max([o.bit_length() for o in access.register_offsets + access.lane_offsets + access.warp_offsets] + [0])
    if n_off < t:
        return None
    low = (1 << t) - 1
    rest: dict[str, list[list[int]]] = {}
    for d, columns in cvt.items():
        own = list(tile.flat_bases(d, missing_ok=True))
        if columns[:len(own)] != own or any(x & low for x in columns[len(own):]):
            return None
        rest[d] = [[x >> t] for x in columns[len(own):]]
    return order, LinearLayout(rest, {"offset": 1 << (n_off - t)}, require_surjective=False)


def _permutation(access: SharedAccess, order: list[int]) -> ColumnAction:
    return ColumnAction([access.permutation.action[j] for j in order], "register", access.permutation.in_size_log2)


def _row_wavefronts(rows: list[int], bitwidth: int) -> int:
    """Wavefronts of one matrix: its 8 rows are 16-byte units u (in 8 bank groups of 4 banks), the
    row offsets span an affine space, so each group gets 2**(rank{u} - rank{u mod 8}) of them."""
    units = [(o * bitwidth // 8) >> 4 for o in rows]
    return 1 << (f2.rank(units) - f2.rank([u & 7 for u in units]))


@checked
def simd_choices(shared_layout: LinearLayout, distributed_layout: LinearLayout, dtype: DTypeLike,
                 *, op: str = "load", target: Target | str | None = None) -> tuple[SimdChoice, ...]:
    """Every instruction that can lower this access on ``target`` (widest ld/st.shared, ldmatrix/stmatrix
    x1/x2/x4, plain and .trans, where the target has them), each with its instruction count over all warps
    and predicted wavefronts; fewest wavefronts first (shared-memory bandwidth), then fewest instructions."""
    if op not in ("load", "store"):
        raise LayoutError(f"op must be 'load' or 'store', got {quote(op)}")
    target = resolve(target)
    access = shared_access(shared_layout, distributed_layout, dtype, target=target)
    bitwidth = access.bitwidth
    memory_op = MemoryOp(op)
    n_reg = len(access.register_offsets)
    warps = access.num_warps
    out: list[SimdChoice] = []

    bits = access.vector_bits
    found = _divide(access, vector_tile(bits, bitwidth), split_lanes=False)
    if found is None:  # never: shared_access chose this vector by the same division
        raise LayoutError(f"shared_layout, distributed_layout: the {bits}-bit ld/st.shared tile that shared_access "
                          "chose must divide the access (Thm 5.1), and it does not")
    order, quotient = found
    out.append(SimdChoice(memory_op, SharedInstruction.VECTOR, bits // bitwidth, bitwidth, False,
                          access.instructions, access_wavefronts(access, op=op), _permutation(access, order),
                          vector_tile(bits, bitwidth), quotient))

    for trans in (False, True) if target.has(STMATRIX if op == "store" else LDMATRIX) else ():
        if (trans and bitwidth != 16) or bitwidth not in (8, 16, 32):
            continue
        tile = matrix_tile(bitwidth, trans=trans)
        found = _divide(access, tile, split_lanes=trans)
        if found is None:
            continue
        order, quotient = found
        k = 1 if trans else (32 // bitwidth).bit_length() - 1  # register bits inside one 32-bit register
        spare = n_reg - k
        if spare < 0:
            continue
        # the 8 rows of one matrix: lanes 2..4 (plain) or register bit 0 and lanes 0, 1 (.trans)
        rows = ([access.register_offsets[order[0]]] + list(access.lane_offsets[:2]) if trans
                else list(access.lane_offsets[2:5]))
        per_matrix = _row_wavefronts(rows, bitwidth)
        for m_log2 in range(min(spare, 2) + 1):
            matrices = 1 << m_log2
            count = (1 << (spare - m_log2)) * warps
            out.append(SimdChoice(memory_op, SharedInstruction.MATRIX, matrices, bitwidth, trans, count,
                                  count * matrices * per_matrix, _permutation(access, order), tile, quotient))
    out.sort(key=lambda c: (c.wavefronts, c.count, c.family is SharedInstruction.MATRIX))
    return tuple(out)


@checked
def best_instruction(shared_layout: LinearLayout, distributed_layout: LinearLayout, dtype: DTypeLike,
                     *, op: str = "load", target: Target | str | None = None) -> SimdChoice:
    """The choice with the fewest wavefronts, then fewest instructions (ld/st.shared on a tie)."""
    return simd_choices(shared_layout, distributed_layout, dtype, op=op, target=target)[0]


@checked
def conversion_instructions(shared_layout: LinearLayout, store_layout: LinearLayout, load_layout: LinearLayout,
                            dtype: DTypeLike, *, target: Target | str | None = None) -> tuple[SimdChoice, SimdChoice]:
    """(store, load) instructions of a conversion through ``shared_layout``: best stmatrix/st.shared
    for the store side and best ldmatrix/ld.shared for the load side (on ``target``)."""
    return (best_instruction(shared_layout, store_layout, dtype, op="store", target=target),
            best_instruction(shared_layout, load_layout, dtype, op="load", target=target))


