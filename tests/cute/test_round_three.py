"""Calls outside the seeded draws of ``test_algebra_reference.py`` where our algebra differed from CuTe 4.2's C++,
each with the text CuTe's ``print`` gives (written down: no optional dependency; ``test_cute_cpp_prints_them``
compiles the same calls where g++ and CuTe's headers are present), and hypothesis checks (derandomized) of the
rules behind them.

* A negative stride in B: CuTe's ``composition_impl`` walks A's modes with ``abs(stride)`` and keeps the sign
  (``signum``); ours refused it for an A of several modes.
* A negative 1-D index: CuTe's ``crd2idx`` splits it with C++'s ``divmod``, truncating toward zero
  (``L(-i) == -L(i)``); ours split it with Python's floor division.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from linear_layouts.core.errors import LayoutError
from linear_layouts.cute import algebra as A
from linear_layouts.cute.int_tuple import flatten, idx2crd
from linear_layouts.cute.layout import Layout
from linear_layouts.cute.source import to_cpp, to_text

try:
    from . import cute_cpp as C
except ImportError:  # run as a script
    import cute_cpp as C  # type: ignore[no-redef]

#: (our call, CuTe's C++ expression, what CuTe 4.2 prints).
CASES = [
    (lambda: A.composition(Layout((4, 7), (14, 2)), Layout(12, -1)),
     f"composition({to_cpp(Layout((4, 7), (14, 2)))}, {to_cpp(Layout(12, -1))})", "(_4,_3):(_-14,_-2)"),
    (lambda: A.composition(Layout((12, 10), (-10, 1)), Layout((12, 2, (3,)), (1, -36, (12,)))),
     f"composition({to_cpp(Layout((12, 10), (-10, 1)))}, {to_cpp(Layout((12, 2, (3,)), (1, -36, (12,))))})",
     "(_12,_2,(_3)):(_-10,_-3,(_1))"),
    (lambda: A.composition(Layout((12, 25, (1, 4)), (100, 1, (1200, 25))), Layout((7, 2), (0, -1))),
     f"composition({to_cpp(Layout((12, 25, (1, 4)), (100, 1, (1200, 25))))}, {to_cpp(Layout((7, 2), (0, -1)))})",
     "(_7,_2):(_0,_-100)"),
    (lambda: A.composition(Layout((5, 15), (1, 5)), Layout(6, -2)),
     f"composition({to_cpp(Layout((5, 15), (1, 5)))}, {to_cpp(Layout(6, -2))})", "_6:_-2"),
    (lambda: A.logical_product(Layout(((8,),), ((2,),)), (Layout(25, -2),)),
     f"logical_product({to_cpp(Layout(((8,),), ((2,),)))}, make_tile({to_cpp(Layout(25, -2))}))",
     "(((_8),_25)):(((_2),_-16))"),
    (lambda: Layout((4, 3), (3, 1))(-5), f"{to_cpp(Layout((4, 3), (3, 1)))}(Int<-5>{{}})", "_-4"),
    (lambda: Layout((16, 9, 5), (45, 1, -9))(-1), f"{to_cpp(Layout((16, 9, 5), (45, 1, -9)))}(Int<-1>{{}})", "_-45"),
    (lambda: Layout(((2, 3), 4), ((1, 2), 6))(-7), f"{to_cpp(Layout(((2, 3), 4), ((1, 2), 6)))}(Int<-7>{{}})", "_-7"),
]


def printed(x: object) -> str:
    return f"_{x}" if isinstance(x, int) else to_text(x, static=True)  # type: ignore[arg-type]


@pytest.mark.parametrize("call, expression, cute", CASES, ids=[f"case{k}" for k in range(len(CASES))])
def test_prints_what_cute_prints(call, expression, cute):
    assert printed(call()) == cute


def test_negative_stride_refused_where_cute_returns_another_function():
    """A negative stride is below every mode size, so CuTe's weak "Stride Divisibility Condition" lets through
    one that is no multiple of A's mode: CuTe's C++ prints ``(_16):(_-17)`` here, but ``A(-100) == -40``."""
    a, b = Layout(((6,), 1), ((6,), 1)), Layout((16,), (-100,))
    assert a(-100) == -40
    with pytest.raises(LayoutError, match="returns another function; refused here"):
        A.composition(a, b)


@pytest.mark.skipif(C.include_dirs() is None, reason="needs CuTe's headers, g++ and the CUDA toolkit's headers")
def test_cute_cpp_prints_them():
    assert C.print_each([e for _, e, _ in CASES], C.include_dirs(), jobs=1) == [c for _, _, c in CASES]
    a, b = Layout(((6,), 1), ((6,), 1)), Layout((16,), (-100,))
    assert C.print_each([f"composition({to_cpp(a)}, {to_cpp(b)})"], C.include_dirs(), jobs=1) == ["(_16):(_-17)"]


# -- hypothesis: the rules -----------------------------------------------------------------------------

SIZES = st.sampled_from([1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16])
STRIDES = st.sampled_from([0, 1, 2, 3, 4, 5, 6, 8, 12, 16, 24, -1, -2, -3, -4, -8])


@st.composite
def layouts(draw, max_depth: int = 2, max_leaves: int = 4) -> Layout:
    def shape(depth: int):
        if depth < max_depth and draw(st.booleans()):
            return tuple(shape(depth + 1) for _ in range(draw(st.integers(1, 3))))
        return draw(SIZES)

    top = shape(0)
    count = len(flatten(top))
    if count > max_leaves:
        top = tuple(draw(SIZES) for _ in range(max_leaves))
    strides = iter(draw(st.lists(STRIDES, min_size=len(flatten(top)), max_size=len(flatten(top)))))

    def like(t):
        return tuple(like(e) for e in t) if isinstance(t, tuple) else next(strides)

    return Layout(top, like(top))


FIXED = settings(derandomize=True, max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))


@FIXED
@given(layouts(), st.integers(-2000, 2000))
def test_negative_index_splits_as_cpp(layout, i):
    """CuTe's ``crd2idx`` of an index: ``divmod`` truncating toward zero, so ``L(-i) == -L(i)`` and
    ``idx2crd(-i) == -idx2crd(i)`` leaf by leaf; a non-negative index as before."""
    assert layout(-i) == -layout(i)
    assert list(flatten(idx2crd(-i, layout.shape))) == [-c for c in flatten(idx2crd(i, layout.shape))]


@FIXED
@given(layouts(), layouts(max_depth=1, max_leaves=2))
def test_composition_with_negative_strides_is_a_of_b_or_refused(a, b):
    """``A ∘ B`` is ``k -> A(k * d)`` on each leaf mode ``k:d`` of B (any sign of d; C++'s A), or a
    LayoutError quoting CuTe's rule or our deliberate refusal."""
    try:
        r = A.composition(a, b)
    except LayoutError as error:
        assert "Divisibility Condition" in str(error) or str(error).endswith("refused here"), str(error)
        return
    assert r.size == b.size
    strides = list(flatten(b.stride))
    for i in range(b.size):
        coordinate = flatten(idx2crd(i, b.shape))
        assert r(i) == sum(a(c * d) for c, d in zip(coordinate, strides)), (str(a), str(b), str(r), i)
