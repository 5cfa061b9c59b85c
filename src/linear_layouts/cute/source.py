"""CuTe source text for CuTe values: C++ (``cute::``), CuTe DSL Python, CuTe's print form (C++ ``print``,
dynamic or static ints) and pycute's ``str``; ``parse_cute`` reads every one of them back.

>>> from linear_layouts.cute.layout import Layout, Swizzle
>>> from linear_layouts.cute.algebra import composition
>>> L = composition(Swizzle(3, 4, 3), Layout((8, 64), (64, 1)))
>>> print(to_cpp(L))
composition(Swizzle<3,4,3>{}, Layout<Shape<_8,_64>, Stride<_64,_1>>{})
>>> print(to_cute_dsl(L))
cute.make_composed_layout(cute.make_swizzle(3, 4, 3), 0, cute.make_layout((8, 64), stride=(64, 1)))
>>> print(to_text(L))
Sw<3,4,3> o 0 o (8,64):(64,1)
>>> print(to_text(L, static=True))
Sw<3,4,3> o _0 o (_8,_64):(_64,_1)
>>> print(to_pycute(composition(Swizzle(1, 0, -1), Layout((2, 8), (1, 2)))))
SW_1_0_-1 o 0 o (2, 8):(1, 2)
"""

from __future__ import annotations

from linear_layouts.cute.int_tuple import IntTuple, format_int_tuple, is_tuple
from linear_layouts.cute.layout import ComposedLayout, Layout, Swizzle, TVLayout
from linear_layouts.core.errors import LayoutError

__all__ = ["to_cpp", "to_cute_dsl", "to_text", "to_pycute", "cpp_int"]

#: The static integers CuTe names ``_N`` / ``_mN`` (``include/cute/numeric/integral_constant.hpp``).
_NAMED = {-32, -24, -16, -12, -10, -9, -8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 16,
          24, 32, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072,
          262144, 524288}


def cpp_int(x: int) -> str:
    """A static CuTe integer in C++ source: CuTe's alias ``_8`` / ``_m1``, else ``Int<N>``."""
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


def _static_tuple(t: IntTuple) -> str:
    if is_tuple(t):
        return "(" + ",".join(_static_tuple(e) for e in t) + ")"
    return f"_{t}"


def _static_text(x: Layout | Swizzle | ComposedLayout) -> str:
    if isinstance(x, Layout):
        return f"{_static_tuple(x.shape)}:{_static_tuple(x.stride)}"
    if isinstance(x, ComposedLayout):
        return f"{_static_text(x.outer)} o _{x.offset} o {_static_text(x.inner)}"
    return str(x)


def to_text(x: Layout | Swizzle | ComposedLayout | TVLayout, *, static: bool = False) -> str:
    """CuTe's print form (C++ ``print`` / ``operator<<``): of dynamic ints, ``(8,64):(64,1)``; with
    ``static``, as CuTe prints ``Int<N>``: ``(_8,_64):(_64,_1)``, ``_-1`` for ``Int<-1>``. A swizzle is
    ``Sw<B,M,S>`` either way; a TVLayout (this package's notation) prints its tile then its layout."""
    if not isinstance(x, (Layout, Swizzle, ComposedLayout, TVLayout)):
        raise LayoutError(f"to_text: expected a CuTe value, got {type(x).__name__}")
    if static and not isinstance(x, TVLayout):
        return _static_text(x)
    return str(x)


def to_pycute(x: Layout | Swizzle | ComposedLayout) -> str:
    """pycute's ``str``: ``(8, 64):(64, 1)`` (Python tuples), ``SW_B_M_S``, ``outer o offset o inner``."""
    if isinstance(x, Layout):
        return f"{x.shape!r}:{x.stride!r}"
    if isinstance(x, Swizzle):
        return f"SW_{x.bits}_{x.base}_{x.shift}"
    if isinstance(x, ComposedLayout):
        return f"{to_pycute(x.outer)} o {x.offset} o {to_pycute(x.inner)}"
    raise LayoutError(f"to_pycute: pycute has Layout, Swizzle and ComposedLayout, got {type(x).__name__}")
