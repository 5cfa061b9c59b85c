"""CuTe source text for CuTe values: C++ (``cute::``), CuTe DSL Python, and CuTe's print form.

>>> from linear_layouts.cute.layout import Layout, Swizzle
>>> from linear_layouts.cute.algebra import composition
>>> L = composition(Swizzle(3, 4, 3), Layout((8, 64), (64, 1)))
>>> print(to_cpp(L))
composition(Swizzle<3,4,3>{}, Layout<Shape<_8,_64>, Stride<_64,_1>>{})
>>> print(to_cute_dsl(L))
cute.make_composed_layout(cute.make_swizzle(3, 4, 3), 0, cute.make_layout((8, 64), stride=(64, 1)))
>>> print(to_text(L))
Sw<3,4,3> o 0 o (8,64):(64,1)
"""

from __future__ import annotations

from linear_layouts.cute.int_tuple import IntTuple, format_int_tuple, is_tuple
from linear_layouts.cute.layout import ComposedLayout, Layout, Swizzle, TVLayout
from linear_layouts.core.errors import LayoutError

__all__ = ["to_cpp", "to_cute_dsl", "to_text", "cpp_int"]

#: The static integers CuTe names ``_N`` (``include/cute/numeric/integral_constant.hpp``).
_NAMED = {-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768,
          1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288}


def cpp_int(x: int) -> str:
    """A static CuTe integer: ``_8``, ``_m1``, else ``Int<N>``."""
    if x in _NAMED:
        return f"_m{-x}" if x < 0 else f"_{x}"
    return f"Int<{x}>"


def _cpp_tuple(t: IntTuple, kind: str) -> str:
    if is_tuple(t):
        return f"{kind}<" + ",".join(_cpp_tuple(e, kind) for e in t) + ">"
    return cpp_int(t)  # type: ignore[arg-type]


def _cpp_layout(layout: Layout) -> str:
    shape, stride = layout.shape, layout.stride
    return f"Layout<{_cpp_tuple(shape, 'Shape')}, {_cpp_tuple(stride, 'Stride')}>{{}}"


def to_cpp(x: Layout | Swizzle | ComposedLayout | TVLayout) -> str:
    """C++ for CUTLASS's ``cute`` namespace: ``composition(Swizzle<B,M,S>{}, Layout<Shape<..>, Stride<..>>{})``.
    A TVLayout gives its layout; its tile is the caller's (e.g. ``make_tiled_copy``'s tiler)."""
    if isinstance(x, Layout):
        return _cpp_layout(x)
    if isinstance(x, Swizzle):
        return f"Swizzle<{x.bits},{x.base},{x.shift}>{{}}"
    if isinstance(x, ComposedLayout):
        if x.offset == 0:
            return f"composition({to_cpp(x.outer)}, {to_cpp(x.inner)})"
        return f"make_composed_layout({to_cpp(x.outer)}, {cpp_int(x.offset)}{{}}, {to_cpp(x.inner)})"
    if isinstance(x, TVLayout):
        return f"{_cpp_layout(x.layout)}  // (thread, value) -> index in the {format_int_tuple(x.tile)} tile"
    raise LayoutError(f"to_cpp: expected a CuTe value, got {type(x).__name__}")


def _py_tuple(t: IntTuple) -> str:
    if is_tuple(t):
        inner = ", ".join(_py_tuple(e) for e in t)
        return f"({inner},)" if len(t) == 1 else f"({inner})"
    return str(t)


def to_cute_dsl(x: Layout | Swizzle | ComposedLayout | TVLayout) -> str:
    """CuTe DSL Python (``import cutlass.cute as cute``): ``cute.make_layout(shape, stride=...)``,
    ``cute.make_swizzle(B, M, S)``, ``cute.make_composed_layout(outer, offset, inner)``."""
    if isinstance(x, Layout):
        return f"cute.make_layout({_py_tuple(x.shape)}, stride={_py_tuple(x.stride)})"  # type: ignore[arg-type]
    if isinstance(x, Swizzle):
        return f"cute.make_swizzle({x.bits}, {x.base}, {x.shift})"
    if isinstance(x, ComposedLayout):
        return f"cute.make_composed_layout({to_cute_dsl(x.outer)}, {x.offset}, {to_cute_dsl(x.inner)})"
    if isinstance(x, TVLayout):
        return f"{to_cute_dsl(x.layout)}  # (thread, value) -> index in the {format_int_tuple(x.tile)} tile"
    raise LayoutError(f"to_cute_dsl: expected a CuTe value, got {type(x).__name__}")


def to_text(x: Layout | Swizzle | ComposedLayout | TVLayout) -> str:
    """CuTe's print form (``print(layout)`` without the ``_`` of static ints), which ``parse_cute`` reads."""
    if not isinstance(x, (Layout, Swizzle, ComposedLayout, TVLayout)):
        raise LayoutError(f"to_text: expected a CuTe value, got {type(x).__name__}")
    return str(x)
