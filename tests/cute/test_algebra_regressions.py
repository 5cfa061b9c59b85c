"""Calls where our algebra once differed from CuTe 4.2's C++, each with the text CuTe's ``print`` gives
(``tests/cute/reference_run.py`` found them; ``test_algebra_cpp.py`` compiles the same calls).
No optional dependency: the C++ answers are written down."""

from __future__ import annotations

import pytest

from linear_layouts.core.errors import LayoutError
from linear_layouts.cute import algebra as A
from linear_layouts.cute.layout import Layout
from linear_layouts.cute.source import to_text

#: (our call, CuTe's C++ expression, what CuTe 4.2 prints).
CASES = [
    # CuTe sorts strides with an exchange sort, which is not stable: of the equal strides 1, it meets
    # mode 2:1 first (the stable order would take 3:1 and give 3:8).
    (lambda: A.right_inverse(Layout((8, (3, 2, 5)), (4, (1, 1, 0)))),
     "right_inverse(Layout<Shape<_8,Shape<_3,_2,_5>>, Stride<_4,Stride<_1,_1,_0>>>{})", "_2:_24"),
    # Overlapping modes where CuTe's quasi-inverse meets its postcondition L(R(L(i))) == L(i) (R(L(i))
    # may lie past size(L), where L extends its last mode): returned, not refused.
    (lambda: A.left_inverse(Layout((8, 3), (3, 6))),
     "left_inverse(Layout<Shape<_8,_3>, Stride<_3,_6>>{})", "(_3,_2,_3):(_0,_1,_8)"),
    (lambda: A.left_inverse(Layout((5, 4), (1, 1))), "left_inverse(Layout<Shape<_5,_4>, Stride<_1,_1>>{})", "_4:_5"),
    (lambda: A.left_inverse(Layout(((1, 6, 3),), ((12, 6, 12),))),
     "left_inverse(Layout<Shape<Shape<_1,_6,_3>>, Stride<Stride<_12,_6,_12>>>{})", "(_6,_2,_3):(_0,_1,_6)"),
    # A stride (5) that does not divide A's mode (8) while B needs more elements than it reaches: CuTe's
    # answer is still A∘B here (that mode's stride is 0), so it is returned, not refused.
    (lambda: A.zipped_divide(Layout((8, 2), (0, 1)), Layout(5, 1)),
     "zipped_divide(Layout<Shape<_8,_2>, Stride<_0,_1>>{}, Layout<_5, _1>{})", "(_5,(_2,_2)):(_0,(_0,_1))"),
]


@pytest.mark.parametrize("call, expression, cute", CASES, ids=[c[1].split("(")[0] + str(k) for k, c in enumerate(CASES)])
def test_prints_what_cute_prints(call, expression, cute):
    assert to_text(call(), static=True) == cute


def test_left_inverse_meets_cute_postcondition_or_refuses():
    """Where the modes overlap, CuTe's answer is returned only when ``L(R(L(i))) == L(i)`` for every i."""
    L = Layout((8, 3), (3, 6))
    R = A.left_inverse(L)
    assert all(L(R(L(i))) == L(i) for i in range(L.size))
    assert any(R(L(i)) >= L.size for i in range(L.size))  # CuTe's postcondition, not an in-domain inverse
    broken = Layout((12, (2, 4), 5), (2, (12, 2), 12))  # CuTe's C++ returns (2,6,5):(0,24,96): it breaks it
    with pytest.raises(LayoutError, match="breaks its postcondition"):
        A.left_inverse(broken)
    with pytest.raises(LayoutError, match="max_elements"):
        A.left_inverse(broken, max_elements=100)


def test_composition_names_cute_rule_where_cute_refuses_too():
    """The deliberate refusal (a stride that does not divide a mode) is named only where CuTe's C++
    compiles; where one of CuTe's own conditions also fails, its rule is the message."""
    with pytest.raises(LayoutError, match="Shape Divisibility Condition"):
        A.composition(Layout((8, 5, (2, 1)), (10, 1, (5, 80))), Layout(6, 24))
    with pytest.raises(LayoutError, match="returns another function; refused here"):
        A.composition(Layout(((4,), (3,)), ((3,), (24,))), Layout(8, 3))
