"""CuTe's layout algebra against CuTe's own C++ (CUTLASS's headers, as the ``nvidia-cutlass`` wheel ships
them, compiled by g++ on the CPU; skipped without them, g++ or the CUDA toolkit's headers).

Seeded cases of every operation with static ints: each result prints exactly as CuTe's ``print`` prints
it, and that text parses back (``parse_cute``) to our value; and CuTe's C++ refuses (a static_assert) what
we refuse, one case per rule. ``python3 tests/cute/test_algebra_cpp.py N`` runs N cases per operation.
"""

from __future__ import annotations

import random
import sys
from collections import Counter

import pytest

from linear_layouts.cute.layout import Layout
from linear_layouts.cute.parse import parse_cute
from linear_layouts.core.errors import LayoutError

try:
    from . import cute_cpp as C
except ImportError:  # run as a script
    import cute_cpp as C  # type: ignore[no-redef]

INCLUDES = C.include_dirs()
pytestmark = pytest.mark.skipif(INCLUDES is None, reason="needs CuTe's headers (pip install --no-deps "
                                "nvidia-cutlass), g++ and the CUDA toolkit's headers")

PER_OPERATION = 3


def collect(per_operation: int) -> tuple[list[tuple[str, object, str]], list[tuple[str, str, str]]]:
    """``(operation, our result, C++ expression)`` for ``per_operation`` cases we compute, per operation;
    and ``(operation, our message, C++ expression)`` for the drawn cases we refused."""
    cases, refused = [], []
    for name, make in C.OPERATIONS.items():
        rng, kept = random.Random(f"cute-cpp-{name}"), 0
        while kept < per_operation:
            ours, expression = make(rng)
            try:
                value = ours()
            except LayoutError as error:
                refused.append((name, str(error), expression))
                continue
            cases.append((name, value, expression))
            kept += 1
    return cases, refused


def compare(per_operation: int) -> Counter:
    cases, _ = collect(per_operation)
    expressions = [e for _, _, e in cases]
    outputs = C.compile_and_run(expressions, INCLUDES, per_program=min(64, -(-len(expressions) // 2)))
    agree = Counter()
    for (name, value, expression), out in zip(cases, outputs):
        assert out == C.printed(value), f"{name}: {expression}\n  CuTe: {out}\n  ours: {C.printed(value)}"
        if isinstance(value, Layout) or " o " in out:
            assert parse_cute(out) == value, (expression, out)
        agree[name] += 1
    return agree


def test_every_operation_prints_what_cute_computes():
    agree = compare(PER_OPERATION)
    assert len(agree) == len(C.OPERATIONS) and set(agree.values()) == {PER_OPERATION}


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


def test_cute_refuses_what_we_refuse():
    from linear_layouts.cute import algebra

    names = {"Layout": Layout, **{n: getattr(algebra, n) for n in algebra.__all__}}
    for ours, _, _, words in REFUSALS:
        with pytest.raises(LayoutError, match=words):
            eval(ours, names)  # noqa: S307 - our own table above
    verdicts, messages = C.refused([cpp for _, cpp, _, _ in REFUSALS] + ["composition(Layout<_8,_2>{}, Layout<_4,_1>{})"],
                                   INCLUDES)
    assert verdicts == [True] * len(REFUSALS) + [False]
    for _, _, words, _ in REFUSALS:
        assert words in messages


def test_where_cute_returns_another_function_we_refuse():
    """Two cases CuTe's C++ compiles whose answer is not the operation's function: composition through a
    stride that does not divide a mode (its weak "Stride Divisibility Condition"), and the left inverse
    of overlapping modes. CuTe's printed answers fail the postconditions; ours refuse."""
    from linear_layouts.cute import algebra

    a, b = Layout(((4,), (3,)), ((3,), (24,))), Layout(8, 3)
    L = Layout((12, (2, 4), 5), (2, (12, 2), 12))
    composed, inverse = C.compile_and_run([f"composition({C.to_cpp(a)}, {C.to_cpp(b)})",
                                           f"left_inverse({C.to_cpp(L)})"], INCLUDES, jobs=1)
    composed, inverse = parse_cute(composed), parse_cute(inverse)
    assert [composed(i) for i in range(8)] != [a(b(i)) for i in range(8)]
    assert any(L(inverse(L(i))) != L(i) for i in range(L.size))
    with pytest.raises(LayoutError, match="returns another function"):
        algebra.composition(a, b)
    with pytest.raises(LayoutError, match="overlap"):
        algebra.left_inverse(L)


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 100
    if INCLUDES is None:
        sys.exit("needs CuTe's headers, g++ and the CUDA toolkit's headers")
    cases, refusals = collect(count)
    agree = compare(count) if "--refusals-only" not in sys.argv else Counter()
    unique = list(dict.fromkeys(e for _, _, e in refusals))
    verdict = dict(zip(unique, C.refused_each(unique, INCLUDES)))  # CuTe's C++ on every case we refused
    both, ours_only = Counter(), Counter()
    for name, message, expression in refusals:
        cpp_refuses = verdict[expression]
        (both if cpp_refuses else ours_only)[name] += 1
        assert cpp_refuses or "refused here" in message, (name, message)
    for name in C.OPERATIONS:
        print(f"{name:22} {agree[name]:5} agree with CuTe's C++; refused {both[name] + ours_only[name]:4}: CuTe's C++ "
              f"too {both[name]}, only here {ours_only[name]}")
