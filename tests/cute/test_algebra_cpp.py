"""CuTe's layout algebra against CuTe's own C++ (CUTLASS's headers, as the ``nvidia-cutlass`` wheel ships
them, compiled by g++ on the CPU; skipped without them, g++ or the CUDA toolkit's headers).

The first seeded cases of every operation (``cute_cpp.OPERATIONS``; ``tests/cute/reference_run.py``
runs 1000 of each and every refused one): each result prints exactly as CuTe's ``print`` prints it, and
CuTe's printed forms (C++ and pycute's) round-trip through the parser and ``show --format cute``; CuTe's
C++ refuses (a static_assert) what we refuse, one case per rule; our two deliberate refusals; the calls
that once differed from CuTe's C++ (``test_algebra_regressions.py``).
"""

from __future__ import annotations

import random

import pytest

from linear_layouts.core.errors import LayoutError
from linear_layouts.cute import algebra
from linear_layouts.cute.layout import ComposedLayout, Layout, Swizzle
from linear_layouts.cute.parse import parse_cute

try:
    from . import cute_cpp as C
    from .test_algebra_regressions import CASES as REGRESSIONS
except ImportError:  # run as a script
    import cute_cpp as C  # type: ignore[no-redef]
    from test_algebra_regressions import CASES as REGRESSIONS  # type: ignore[no-redef]

INCLUDES = C.include_dirs()
pytestmark = pytest.mark.skipif(INCLUDES is None, reason="needs CuTe's headers (pip install --no-deps "
                                "nvidia-cutlass), g++ and the CUDA toolkit's headers")

PER_OPERATION = 2

#: Results in each of CuTe's printed forms, besides the drawn ones: a negative static int (``_-1``), a swizzle
#: with a negative shift (``Sw<1,0,-1>``, pycute's ``SW_1_0_-1``), a rank-1 tuple (pycute's ``(8,):(1,)``), a
#: rank-0 layout (``():()``), an offset (``(layout,_4)``), an integer (``_24``).
FORMS = [
    (Layout((4, 8), (-1, 4)), "coalesce(Layout<Shape<_4,_8>,Stride<_m1,_4>>{})", "(_4,_8):(_-1,_4)"),
    (ComposedLayout(Swizzle(1, 0, -1), 0, Layout((2, 8), (1, 2))),
     "composition(Swizzle<1,0,-1>{}, Layout<Shape<_2,_8>,Stride<_1,_2>>{})", "Sw<1,0,-1> o _0 o (_2,_8):(_1,_2)"),
    (Layout((8,), (1,)), "make_layout(Layout<_8,_1>{})", "(_8):(_1)"),
    ((Layout((), ()), 10), "slice_and_offset(make_coord(Int<10>{}), Layout<Shape<_12>, Stride<_1>>{})", "(():(),_10)"),
    ((Layout((4,), (2,)), 4), "slice_and_offset(make_coord(_, _1{}), Layout<Shape<_4,_2>,Stride<_2,_4>>{})",
     "((_4):(_2),_4)"),
    (24, "cosize(Layout<Shape<_4,_6>,Stride<_1,_4>>{})", "_24"),
]

#: Two calls CuTe's C++ compiles whose answer is not the operation's function: composition through a stride
#: that does not divide a mode (CuTe's weak "Stride Divisibility Condition"), the left inverse of
#: overlapping modes where CuTe's answer breaks its postcondition L(R(L(i))) == L(i). Ours refuse.
ANOTHER = [(Layout(((4,), (3,)), ((3,), (24,))), Layout(8, 3)), Layout((12, (2, 4), 5), (2, (12, 2), 12))]


def drawn(per_operation: int) -> list[tuple[str, object, str]]:
    """``(operation, our result, C++ expression)``: the benchmark's draw, its first ``per_operation`` computed
    cases of each operation."""
    cases = []
    for name, make in C.OPERATIONS.items():
        rng, kept = random.Random(f"cute-cpp-{name}"), 0
        while kept < per_operation:
            ours, expression = make(rng)
            try:
                cases.append((name, ours(), expression))
                kept += 1
            except LayoutError:
                continue
    return cases


@pytest.fixture(scope="module")
def cute():
    """CuTe's printed answers: the drawn cases, the forms, the deliberate refusals, and one case it refuses
    (the program is rebuilt without it)."""
    cases = drawn(PER_OPERATION)
    (a, b), L = ANOTHER
    extra = [e for _, e, _ in FORMS] + [f"composition({C.to_cpp(a)}, {C.to_cpp(b)})", f"left_inverse({C.to_cpp(L)})",
                                        "composition(Layout<Shape<_4,_8>,Stride<_1,_5>>{}, Layout<_6,_1>{})"]
    out = C.print_each([e for _, _, e in cases] + extra + [e for _, e, _ in REGRESSIONS], INCLUDES)
    return cases, out[:len(cases)], out[len(cases):len(cases) + len(extra)], out[len(cases) + len(extra):]


def test_every_operation_prints_what_cute_computes(cute):
    cases, outputs, _, _ = cute
    for (name, value, expression), out in zip(cases, outputs):
        assert out == C.printed(value), f"{name}: {expression}\n  CuTe: {out}\n  ours: {C.printed(value)}"
    assert len({name for name, _, _ in cases}) == len(C.OPERATIONS) == 26


def test_cute_printed_forms_round_trip(cute):
    """CuTe's print (``Sw<B,M,S>``, ``_-1``), pycute's ``str`` (``SW_1_0_-1``) of every result parse back, and
    ``show --format cute`` prints each (or, with no F2 form, says why in one line)."""
    cases, outputs, extra, _ = cute
    for (value, expression, text), out in zip(FORMS, extra):
        assert out == text == C.printed(value), expression
    forms = [(value, out) for (_, value, _), out in zip(cases, outputs)] + \
        [(value, out) for (value, _, _), out in zip(FORMS, extra)]
    for value, out in forms:
        assert C.round_trip(out, value) == [], out
    assert C.pycute_text(FORMS[1][0]) in (None, "SW_1_0_-1 o 0 o (2, 8):(1, 2)")
    assert sum(isinstance(v, Layout) and v.size > 1 for v, _ in forms) > 20


def test_regressions_print_what_cute_prints(cute):
    """``test_algebra_regressions``' calls, once different from CuTe's C++: the text written there is CuTe's."""
    for (call, expression, text), out in zip(REGRESSIONS, cute[3]):
        assert out == text == C.printed(call()), expression


def test_a_case_cute_refuses_is_found_in_a_program(cute):
    assert cute[2][-1] is None  # its static_assert, traced to its line: the rest of the program still printed
    assert all(out is not None for out in cute[2][:-1])


REFUSALS = [  # (our call, its C++, the words of CuTe's static_assert, the words of our LayoutError)
    ("composition(Layout((4, 8), (1, 5)), Layout(2, 6))", "composition(Layout<Shape<_4,_8>,Stride<_1,_5>>{}, Layout<_2,_6>{})",
     "Stride Divisibility Condition", "Stride Divisibility Condition"),
    ("composition(Layout((4, 8), (1, 5)), Layout(6, 1))", "composition(Layout<Shape<_4,_8>,Stride<_1,_5>>{}, Layout<_6,_1>{})",
     "Shape Divisibility Condition", "Shape Divisibility Condition"),
    ("complement(Layout((2, 2), (1, 1)), 8)", "complement(Layout<Shape<_2,_2>,Stride<_1,_1>>{}, Int<8>{})",
     "Non-injective Layout detected in complement", "Non-injective Layout detected in complement"),
    ("left_inverse(Layout((2, 2), (2, 5)))", "left_inverse(Layout<Shape<_2,_2>,Stride<_2,_5>>{})",
     "Left inverse divisibility condition", "Left inverse divisibility condition"),
    ("upcast(Layout((3, 4), (1, 3)), 2)", "upcast<2>(Layout<Shape<_3,_4>,Stride<_1,_3>>{})",
     "Divisibility condition", "Divisibility condition"),
    ("downcast(Layout((4, 4), (4, 16)), 2)", "downcast<2>(Layout<Shape<_4,_4>,Stride<_4,_16>>{})",
     "Downcast requires adjacent elements", "Downcast requires adjacent elements"),
    ("blocked_product(Layout((5,), (1,)), Layout(4, 1))", "blocked_product(Layout<Shape<_5>,Stride<_1>>{}, Layout<_4,_1>{})",
     "tuple_size", "Mismatched Ranks"),
]


def test_cute_refuses_what_we_refuse(tmp_path):
    names = {"Layout": Layout, **{n: getattr(algebra, n) for n in algebra.__all__}}
    for ours, _, _, words in REFUSALS:
        with pytest.raises(LayoutError, match=words):
            eval(ours, names)  # noqa: S307 - our own table above
    verdicts, messages, _ = C.refused_in_batch([cpp for _, cpp, _, _ in REFUSALS] +
                                               ["composition(Layout<_8,_2>{}, Layout<_4,_1>{})"], INCLUDES, str(tmp_path))
    assert verdicts == [True] * len(REFUSALS) + [False]
    for _, _, words, _ in REFUSALS:
        assert words in messages


def test_where_cute_returns_another_function_we_refuse(cute):
    """CuTe's printed answers to ``ANOTHER`` fail the operations' postconditions; ours refuse."""
    (a, b), L = ANOTHER
    composed, inverse = (parse_cute(t) for t in cute[2][len(FORMS):len(FORMS) + 2])
    assert [composed(i) for i in range(8)] != [a(b(i)) for i in range(8)]
    assert any(L(inverse(L(i))) != L(i) for i in range(L.size))
    with pytest.raises(LayoutError, match="returns another function"):
        algebra.composition(a, b)
    with pytest.raises(LayoutError, match="overlap"):
        algebra.left_inverse(L)
