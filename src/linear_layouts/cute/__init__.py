"""CuTe interop: CuTe's ``Shape:Stride`` layouts and ``Swizzle<B,M,S>`` as linear layouts.

============================  ==========================================================================
module                        job
============================  ==========================================================================
``int_tuple``                 nested integer tuples, colexicographic coordinates (CuTe ``int_tuple.hpp``)
``layout``                    the values: ``Layout``, ``Swizzle``, ``ComposedLayout``, ``TVLayout``
``algebra``                   CuTe's layout algebra: ``composition``, ``complement``, the divides and
                              products, ``coalesce``, inverses, slicing, ``upcast`` / ``downcast``
``linear``                    ``to_linear`` (CuTe -> LinearLayout), ``coordinate_to_offset``
``from_linear``               ``from_linear`` (LinearLayout -> the simplest CuTe form, or why none)
``atoms``                     CuTe's MMA atoms (SM80 m16n8k16 A/B/C, SM90 wgmma accumulators)
``best``                      ``best_cute_swizzle``: the best single CuTe swizzle for a store and a load
``source``                    C++ / CuTe DSL / print-form (C++ and pycute) text
``parse``                     reading that text back (the spec parser dispatches CuTe text here)
============================  ==========================================================================

>>> from linear_layouts.cute import Layout, Swizzle, composition, to_linear, from_linear
>>> S = to_linear(composition(Swizzle(3, 3, 3), Layout((8, 64), (64, 1))))   # fp16, 128-byte rows
>>> S.bases["offset"][6]    # offset 64 (row 1, chunk 0) holds row 1, columns 8..15: chunk 1
[1, 8]
>>> print(from_linear(S).layout)
Sw<3,3,3> o 0 o (8,64):(64,1)
"""

from linear_layouts.cute.algebra import (
    blocked_product,
    coalesce,
    complement,
    composition,
    cosize,
    downcast,
    filter,
    flat_divide,
    flat_product,
    left_inverse,
    logical_divide,
    logical_product,
    make_layout,
    make_ordered_layout,
    max_common_layout,
    max_common_vector,
    raked_product,
    recast_layout,
    right_inverse,
    slice,
    slice_and_offset,
    tile_to_shape,
    tiled_divide,
    tiled_product,
    upcast,
    zipped_divide,
    zipped_product,
)
from linear_layouts.cute.atoms import sm80_16x8x16, sm90_64xN_c
from linear_layouts.cute.best import CuteSwizzleChoice, best_cute_swizzle
from linear_layouts.cute.from_linear import CuteForm, from_linear
from linear_layouts.cute.layout import (
    ComposedLayout,
    Layout,
    Swizzle,
    TVLayout,
    column_major,
    element_swizzle,
    row_major,
)
from linear_layouts.cute.linear import coordinate_to_offset, to_linear
from linear_layouts.cute.parse import looks_like_cute, parse_cute
from linear_layouts.cute.source import to_cpp, to_cute_dsl, to_pycute, to_text

__all__ = [
    "Layout",
    "Swizzle",
    "ComposedLayout",
    "TVLayout",
    "row_major",
    "column_major",
    "element_swizzle",
    "make_layout",
    "make_ordered_layout",
    "cosize",
    "coalesce",
    "filter",
    "composition",
    "complement",
    "right_inverse",
    "left_inverse",
    "logical_divide",
    "zipped_divide",
    "tiled_divide",
    "flat_divide",
    "logical_product",
    "zipped_product",
    "tiled_product",
    "flat_product",
    "blocked_product",
    "raked_product",
    "tile_to_shape",
    "slice",
    "slice_and_offset",
    "upcast",
    "downcast",
    "recast_layout",
    "max_common_vector",
    "max_common_layout",
    "to_linear",
    "coordinate_to_offset",
    "from_linear",
    "CuteForm",
    "sm80_16x8x16",
    "sm90_64xN_c",
    "best_cute_swizzle",
    "CuteSwizzleChoice",
    "to_cpp",
    "to_cute_dsl",
    "to_text",
    "to_pycute",
    "parse_cute",
    "looks_like_cute",
]
