"""The SIMD instruction tiles of paper §5.3 as LinearLayouts.

Thm 5.1: an instruction with tile ``T`` can lower a register -> shared-memory map ``L = A^-1 o B``
iff ``L /_l T`` (``divide_left``) exists. The tiles here (in dims ``register``, ``lane``):

- ``vectorized_shared_tile(bits, element_bitwidth)``: one ``ld.shared`` / ``st.shared`` of ``bits``
  bits per thread: the identity ``register -> offset`` on ``bits / element_bitwidth`` elements.
- ``ldmatrix_row_tile(element_bitwidth)``: the paper's ``ldmatrix``/``stmatrix`` tile
  ``id_k^{register,offset} x id_2^{lane,offset}`` with ``k = log2(32 / element_bitwidth)``: each thread
  moves 4 contiguous bytes, 4 threads one 16-byte row.
- ``ldmatrix_tile(num_matrices, element_bitwidth, transposed)``: the whole warp fragment of
  ``ldmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}.shared.b16`` (``stmatrix`` moves the same fragment the
  other way, see ``stmatrix_tile``), out dims ``dim0`` (row), ``dim1`` (column) of the tile read from
  memory; ``ldmatrix_offset_tile`` is the same with the tile's rows stored one after another.

PTX semantics modelled (PTX ISA, "Warp-level matrix load instruction: ldmatrix"): each 8x8 matrix of
b16 is 8 rows of 16 bytes; lane ``i`` supplies the address of row ``i % 8`` of matrix ``i // 8``
(lanes ``0..8*num_matrices-1``); destination register ``j`` of every lane holds 32 bits of matrix
``j``: lane ``t`` gets row ``t // 4``, bytes ``4 * (t % 4) .. 4 * (t % 4) + 3`` of it. With ``.trans``
lane ``t`` gets instead the two 16-bit elements at rows ``2 * (t % 4) + {0, 1}``, column ``t // 4``.
Matrices are stacked along ``dim0`` in address-lane order: matrix ``j`` is rows ``8j .. 8j+7``.
8-bit elements use the same b16 instruction with pairs of bytes as one b16 element (4 elements per
thread and register), as Triton does; ``.trans`` needs 16-bit elements (PTX transposes whole b16
elements; the 8-bit ``.m16n16`` / ``.m16n8`` transposing shapes are not modelled).
"""

from __future__ import annotations

from linear_layouts.core.arguments import checked
from linear_layouts.layouts.base import check_bool, check_int
from linear_layouts.core.element_type import DTypeLike, element_type
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import quote
from linear_layouts.core.layout import LinearLayout

__all__ = [
    "vectorized_shared_tile",
    "ldmatrix_row_tile",
    "ldmatrix_tile",
    "ldmatrix_offset_tile",
    "stmatrix_tile",
    "stmatrix_offset_tile",
]

_VECTOR_BITS = (8, 16, 32, 64, 128)
_ELEMENT_BITWIDTHS = (8, 16, 32, 64)
_MATRIX_BITWIDTHS = (8, 16)
_NUM_MATRICES = (1, 2, 4)


def _check_element_bitwidth(dtype: DTypeLike, allowed: tuple[int, ...]) -> int:
    """The width of ``dtype`` in bits, if one of ``allowed``."""
    element_bitwidth = element_type(dtype).bits
    if element_bitwidth not in allowed:
        raise LayoutError(f"dtype must be {allowed} bits wide here, got {quote(dtype)} ({element_bitwidth} bits)")
    return element_bitwidth


def _log2(value: int) -> int:
    return value.bit_length() - 1


@checked
def vectorized_shared_tile(bits: int, dtype: DTypeLike) -> LinearLayout:
    """The tile of a ``bits``-bit vectorized ``ld.shared`` / ``st.shared``: ``register i -> offset i``
    for the ``bits / element_bitwidth`` elements of ``dtype`` one thread moves (paper §5.3).

    >>> vectorized_shared_tile(128, 16).bases["register"]
    [[1], [2], [4]]
    """
    bits = check_int("bits", bits)
    if bits not in _VECTOR_BITS:
        raise LayoutError(f"bits must be one of {_VECTOR_BITS} (one ld/st.shared), got {bits}")
    element_bitwidth = _check_element_bitwidth(dtype, _ELEMENT_BITWIDTHS)
    if element_bitwidth > bits:
        raise LayoutError(f"element_bitwidth ({element_bitwidth}) must be at most bits ({bits})")
    return LinearLayout.identity_1d(bits // element_bitwidth, "register", "offset")


@checked
def ldmatrix_row_tile(dtype: DTypeLike) -> LinearLayout:
    """The paper's ``ldmatrix``/``stmatrix`` tile ``id_k^{register,offset} x id_2^{lane,offset}``:
    register bit ``i`` -> offset ``2**i`` (``k = log2(32 / element_bitwidth)`` bits: 4 bytes per
    thread), then lane bits 0, 1 -> the next two offset bits (4 lanes cover one 16-byte row).

    >>> ldmatrix_row_tile(16).bases
    {'register': [[1]], 'lane': [[2], [4]]}
    """
    element_bitwidth = _check_element_bitwidth(dtype, _MATRIX_BITWIDTHS)
    per_register = 32 // element_bitwidth
    registers = LinearLayout.identity_1d(per_register, "register", "offset")
    return registers * LinearLayout.identity_1d(4, "lane", "offset")


@checked
def ldmatrix_tile(num_matrices: int, dtype: DTypeLike, transposed: bool = False) -> LinearLayout:
    """The warp fragment of ``ldmatrix.m8n8.x{num_matrices}{.trans}.b16``: ``(register, lane) -> (row,
    col)`` of the ``8 * num_matrices`` x ``16 bytes`` tile read (matrix ``j`` = rows ``8j..8j+7``).

    Plain: register ``r`` of lane ``t`` is element ``(8 * (r // e) + t // 4, e * (t % 4) + r % e)`` with
    ``e = 32 / element_bitwidth`` elements per 32-bit register. ``.trans`` (16-bit only): element
    ``(8 * (r // 2) + 2 * (t % 4) + r % 2, t // 4)``.

    >>> ldmatrix_tile(4, 16).bases
    {'register': [[0, 1], [8, 0], [16, 0]], 'lane': [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]]}
    """
    num_matrices = check_int("num_matrices", num_matrices)
    if num_matrices not in _NUM_MATRICES:
        raise LayoutError(f"num_matrices must be one of {_NUM_MATRICES} (.x1, .x2, .x4), got {num_matrices}")
    element_bitwidth = _check_element_bitwidth(dtype, _MATRIX_BITWIDTHS)
    transposed = check_bool("transposed", transposed)
    if transposed and element_bitwidth != 16:
        raise LayoutError(
            "transposed (.trans) requires element_bitwidth 16: .m8n8 transposes whole b16 elements "
            f"(the 8-bit .m16n16/.m16n8 shapes are not modelled), got {element_bitwidth}"
        )
    per_register = 32 // element_bitwidth
    matrix_bases = [[8 << i, 0] for i in range(_log2(num_matrices))]
    if transposed:
        register = [[1, 0]] + matrix_bases
        lane = [[2, 0], [4, 0], [0, 1], [0, 2], [0, 4]]
    else:
        register = [[0, 1 << i] for i in range(_log2(per_register))] + matrix_bases
        lane = [[0, per_register], [0, 2 * per_register], [1, 0], [2, 0], [4, 0]]
    return LinearLayout(
        {"register": register, "lane": lane},
        {"dim0": 8 * num_matrices, "dim1": 4 * per_register},
    )


@checked
def ldmatrix_offset_tile(num_matrices: int, dtype: DTypeLike, transposed: bool = False) -> LinearLayout:
    """``ldmatrix_tile`` with the tile's rows stored contiguously: ``offset = row * (16 bytes) + col``.

    Its sub-tile on the first register bits and lane bits 0, 1 is ``ldmatrix_row_tile`` (plain) —
    the tile of Thm 5.1 divides it on the left.

    >>> ldmatrix_offset_tile(1, 16).bases["lane"]
    [[2], [4], [8], [16], [32]]
    """
    tile = ldmatrix_tile(num_matrices, dtype, transposed)
    columns = tile.out_dim_size("dim1")
    return tile.transpose_outs(["dim1", "dim0"]).reshape_outs([("offset", columns * tile.out_dim_size("dim0"))])


@checked
def stmatrix_tile(num_matrices: int, dtype: DTypeLike, transposed: bool = False) -> LinearLayout:
    """The warp fragment of ``stmatrix.m8n8.x{num_matrices}{.trans}.b16``: the same map as
    ``ldmatrix_tile`` (lane ``i`` supplies row ``i % 8`` of matrix ``i // 8``; register ``j`` of lane ``t``
    holds 32 bits of row ``t // 4`` of matrix ``j``, or of column ``t // 4`` with ``.trans``), data
    flowing from registers to shared memory.

    >>> stmatrix_tile(2, 16, transposed=True).bases["register"]
    [[1, 0], [8, 0]]
    """
    return ldmatrix_tile(num_matrices, dtype, transposed)


@checked
def stmatrix_offset_tile(num_matrices: int, dtype: DTypeLike, transposed: bool = False) -> LinearLayout:
    """``stmatrix_tile`` with the tile's rows stored contiguously (see ``ldmatrix_offset_tile``)."""
    return ldmatrix_offset_tile(num_matrices, dtype, transposed)
