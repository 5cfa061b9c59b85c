"""CuTe text: C++ / CuTe DSL / print form out, the parser in, the spec dispatch, and the parser's bounds."""

from __future__ import annotations

import random
import string

import pytest

from linear_layouts.cute.atoms import sm80_16x8x16
from linear_layouts.cute.algebra import composition
from linear_layouts.cute.layout import ComposedLayout, Layout, Swizzle
from linear_layouts.cute.linear import to_linear
from linear_layouts.cute.parse import MAX_TERMS, looks_like_cute, parse_cute
from linear_layouts.core.limits import MAX_INT_DIGITS, MAX_SPEC_CHARS, MAX_SPEC_DEPTH
from linear_layouts.cute.source import cpp_int, to_cpp, to_cute_dsl, to_pycute, to_text
from linear_layouts.core.errors import LayoutError
from linear_layouts.spec import layout_from_spec, parse_spec

from . import random_cute as R


def test_cpp_and_dsl_text_of_the_cutlass_atom():
    L = composition(Swizzle(3, 4, 3), Layout((8, 64), (64, 1)))
    assert to_cpp(L) == "composition(Swizzle<3,4,3>{}, Layout<Shape<_8,_64>, Stride<_64,_1>>{})"
    assert to_cute_dsl(L) == ("cute.make_composed_layout(cute.make_swizzle(3, 4, 3), 0, "
                              "cute.make_layout((8, 64), stride=(64, 1)))")
    assert to_text(L) == "Sw<3,4,3> o 0 o (8,64):(64,1)"
    nested = Layout(((4, 8), (2, 2)), ((32, 1), (16, 8)))
    assert to_cpp(nested) == "Layout<Shape<Shape<_4,_8>,Shape<_2,_2>>, Stride<Stride<_32,_1>,Stride<_16,_8>>>{}"
    assert to_cpp(Layout(24, 3)) == "Layout<_24, _3>{}" and cpp_int(40) == "Int<40>" and cpp_int(-1) == "_m1"
    assert to_cpp(ComposedLayout(Swizzle(1, 0, 1), 4, Layout(4, 1))) == \
        "make_composed_layout(Swizzle<1,0,1>{}, _4{}, Layout<_4, _1>{})"
    assert "(thread, value)" in to_cpp(sm80_16x8x16("C")) and "(16,8) tile" in to_cute_dsl(sm80_16x8x16("C"))


def test_every_output_form_parses_back_to_the_same_value():
    rng = random.Random(31)
    for _ in range(300):
        x = R.random_swizzled_layout(rng, 10, within=rng.random() < 0.7)
        assert parse_cute(to_text(x)) == x
        assert parse_cute(to_cpp(x)) == x
        assert parse_cute(to_cute_dsl(x)) == x
    tv = sm80_16x8x16("A")
    assert parse_cute(to_text(tv)) == tv


@pytest.mark.parametrize("text, expected", [
    ("Sw<3,4,3> o _0 o (_8,_64):(_64,_1)", "Sw<3,4,3> o 0 o (8,64):(64,1)"),  # CuTe's print
    ("Swizzle<3,4,3> o (8,64):(64,1)", "Sw<3,4,3> o 0 o (8,64):(64,1)"),
    ("Swizzle<3,4,3> ∘ (8,64):(64,1)", "Sw<3,4,3> o 0 o (8,64):(64,1)"),
    ("SW_3_4_3 o (8,64):(64,1)", "Sw<3,4,3> o 0 o (8,64):(64,1)"),  # pycute's str
    ("cute::composition(cute::Swizzle<2,3,3>{}, cute::make_layout(cute::make_shape(8,64), cute::make_stride(64,1)))",
     "Sw<2,3,3> o 0 o (8,64):(64,1)"),
    ("make_layout(make_shape(Int<8>{}, C<4>{}))", "(8,4):(1,8)"),
    ("Layout<_64,_1>{}", "64:1"),
    ("Sw<1,0,1> o Sw<2,3,4> o 1024:1", "Sw<1,0,1> o 0 o Sw<2,3,4> o 0 o 1024:1"),
    ("Swizzle(3, 0, -3) o (8,8):(8,1)", "Sw<3,0,-3> o 0 o (8,8):(8,1)"),
    ("(8,):(1,)", "(8):(1)"),
    ("():()", "():()"),  # CuTe's rank-0 layout (a slice at a full coordinate)
    ("(_4,_8):(_-1,_4)", "(4,8):(-1,4)"),
])
def test_parse_forms(text, expected):
    assert str(parse_cute(text)) == expected


@pytest.mark.parametrize("text, message", [
    ("(8,64):(64)", r"not congruent .*column 1"),
    ("Sw<3,4,2> o (8,8):(8,1)", r"\|S\| must be >= B"),
    ("(8,64)", "expected ':' between shape and stride"),
    ("Sw<3,4,3> o", "expected a layout, got the end"),
    ("(8,64):(64,1) extra", r"unexpected 'extra' after a complete layout \(column 15\)"),
    ("Sw<1,0,1> o 5", "must end with a layout or a swizzle"),
    ("(8,a):(1,2)", r"expected an integer \(column 4\)"),
    ("Layout<Shape<_8>>{}", "expected ','"),
    ("$", "unexpected character"),
    ("1" * 41 + ":1", "integer of 41 digits"),
    ("TV(16,8) Sw<1,0,1>", "must be followed by a layout"),
    ("TV(16,8) (4,2):(2,1) o 8:1", "cannot be composed"),
    ("", "empty"),
    ("   ", "empty"),
])
def test_parse_errors_name_the_rule_and_the_column(text, message):
    with pytest.raises(LayoutError, match=message):
        parse_cute(text)


def test_parser_bounds():
    with pytest.raises(LayoutError, match=f"nested deeper than {MAX_SPEC_DEPTH}"):
        parse_cute("(" * (MAX_SPEC_DEPTH + 1) + "1" + ")" * (MAX_SPEC_DEPTH + 1) + ":1")
    with pytest.raises(LayoutError, match=f"nested deeper than {MAX_SPEC_DEPTH}"):  # <> counts too
        parse_cute("Layout<" + "Shape<" * MAX_SPEC_DEPTH + "_1" + ">" * MAX_SPEC_DEPTH + ",_1>{}")
    with pytest.raises(LayoutError, match=f"exceed the limit of {MAX_SPEC_CHARS}"):
        parse_cute("(" + "1," * MAX_SPEC_CHARS + "1):1")
    with pytest.raises(LayoutError, match=f"longer than {MAX_INT_DIGITS} digits"):
        parse_cute("_" + "9" * (MAX_INT_DIGITS + 1) + ":1")
    with pytest.raises(LayoutError, match=f"more than {MAX_TERMS} terms"):
        parse_cute(" o ".join(["Sw<1,0,1>"] * (MAX_TERMS + 1)) + " o 4:1")
    with pytest.raises(LayoutError, match="expected a string"):
        parse_cute(b"8:1")  # type: ignore[arg-type]


def test_fuzz_only_layout_errors():
    rng = random.Random(41)
    alphabet = "()<>,:{}_ o0123456789-SwTVLayoutShapeStride" + string.ascii_letters[:6]
    seeds = ["Sw<3,4,3> o (8,64):(64,1)", "composition(Swizzle<1,2,3>{}, Layout<Shape<_8,_8>, Stride<_8,_1>>{})",
             "cute.make_composed_layout(cute.make_swizzle(3, 4, 3), 0, cute.make_layout((8, 64), stride=(64, 1)))"]
    for _ in range(3000):
        if rng.random() < 0.5:
            text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40)))
        else:
            s = list(rng.choice(seeds))
            for _ in range(rng.randint(1, 4)):
                i = rng.randrange(len(s))
                op = rng.random()
                if op < 0.4:
                    del s[i]
                elif op < 0.8:
                    s.insert(i, rng.choice(alphabet))
                else:
                    s[i] = rng.choice(alphabet)
            text = "".join(s)
        try:
            parse_cute(text)
        except LayoutError:
            pass


def test_spec_dispatches_cute_text():
    assert looks_like_cute("Sw<3,4,3> o (8,64):(64,1)") and looks_like_cute("64:1")
    assert not looks_like_cute("BlockedLayout([1,4],[4,8],[4,1],[1,0])") and not looks_like_cute('{"bases": 1}')
    S = layout_from_spec("Swizzle<3,3,3> o (8,64):(64,1)")
    assert S == to_linear(composition(Swizzle(3, 3, 3), Layout((8, 64), (64, 1))))
    assert layout_from_spec("Swizzle<3,3,3> o (8,64):(64,1)", [8, 64]) == S
    with pytest.raises(LayoutError, match="does not match"):
        layout_from_spec("(8,64):(64,1)", [64, 8])
    with pytest.raises(LayoutError, match=r"2\*\*40 is above 2\*\*31"):
        layout_from_spec(f"({2 ** 40}):(1)")
    spec = parse_spec("TV(16,8) ((4,8),(2,2)):((32,1),(16,8))")
    assert spec.is_linear and spec.to_linear().in_dim_names == ("register", "lane", "warp", "block")
    with pytest.raises(LayoutError, match="CuTe spec: .*column"):
        parse_spec("(8,64):(64,1) o")


def test_what_cute_prints_reads_back():
    """CuTe's C++ prints ``Int<-1>`` as ``_-1`` and ``Swizzle<1,0,-1>`` as ``Sw<1,0,-1>``; pycute prints
    ``SW_1_0_-1`` and Python tuples. Each reads back; CuTe's source aliases ``_m1`` too, never ``SW_..._m1``."""
    assert parse_cute("SW_1_0_-1 o 0 o (2, 8):(1, 2)") == ComposedLayout(Swizzle(1, 0, -1), 0, Layout((2, 8), (1, 2)))
    assert parse_cute("Sw<1,0,-1> o _0 o (_2,_8):(_1,_2)") == parse_cute("SW_1_0_-1 o 0 o (2, 8):(1, 2)")
    assert parse_cute("(_4,_8):(_-1,_4)") == Layout((4, 8), (-1, 4)) == parse_cute("Layout<Shape<_4,_8>,Stride<_m1,_4>>{}")
    assert parse_cute("(8,):(1,)") == Layout((8,), (1,)) and parse_cute("((2, 2), 3):((24, 2), 8)").shape == ((2, 2), 3)
    with pytest.raises(LayoutError, match=r"expected SW_B_M_S as pycute prints a swizzle \(a negative shift: SW_1_0_-1\)"):
        parse_cute("SW_1_0_m1 o 0 o (2, 8):(1, 2)")
    with pytest.raises(LayoutError, match="_m11 is no CuTe name"):
        parse_cute("Layout<Shape<_4>,Stride<_m11>>{}")
    with pytest.raises(LayoutError, match="expected SW_B_M_S"):
        parse_cute("SW_1_0_ -1 o 8:1")


def test_every_printed_form_round_trips():
    rng = random.Random(32)
    values = [R.random_swizzled_layout(rng, 10, within=False) for _ in range(200)]
    values += [R.random_int_layout(rng, negative=True) for _ in range(200)]
    for x in values:
        assert parse_cute(to_text(x)) == x
        assert parse_cute(to_text(x, static=True)) == x
        assert parse_cute(to_pycute(x)) == x


def test_pycute_prints_what_we_read():
    """NVIDIA's pycute's own ``str`` of the same values."""
    P = pytest.importorskip("pycute")

    def theirs(x):
        if isinstance(x, Layout):
            return P.Layout(x.shape, x.stride)
        if isinstance(x, Swizzle):
            return P.Swizzle(x.bits, x.base, x.shift)
        return P.ComposedLayout(theirs(x.outer), x.offset, theirs(x.inner))

    rng = random.Random(33)
    for _ in range(300):
        x = R.random_swizzled_layout(rng, 10, within=False) if rng.random() < 0.5 else R.random_int_layout(rng, negative=True)
        assert str(theirs(x)) == to_pycute(x)
        assert parse_cute(str(theirs(x))) == x
