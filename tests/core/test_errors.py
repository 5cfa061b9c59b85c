"""Bad input raises LayoutError (a ValueError) whose message names the argument and the rule.

Every kind of bad input of the core issue (item 4) has cases here: a size that is not a power of two,
a basis of the wrong length, an out-of-range coordinate, an unknown or duplicate dim name,
mismatched dims in compose / product / invert_and_compose / division, a non-surjective layout where
one is required, and inverting a non-invertible layout.  Then hypothesis fuzzes the constructor and
the operations with junk and checks that nothing but LayoutError escapes (no AssertionError,
IndexError, KeyError, TypeError, NumPy error, ...).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from linear_layouts import ColumnAction, LayoutError, LinearLayout, divide_left, divide_right

ID8 = LinearLayout.identity_1d(8, "in", "out")
TWO_D = LinearLayout({"register": [[0, 1], [1, 0]], "lane": [[0, 2], [2, 0]]}, ["dim0", "dim1"])
BROADCAST = LinearLayout({"in": [[1], [0]]}, ["out"])  # surjective, not injective
NOT_SURJECTIVE = LinearLayout({"in": [[1]]}, {"out": 4}, require_surjective=False)

# (id, thunk, words the message must contain (case-insensitive): the argument / dim named, and the rule)
BAD_INPUTS = [
    # a size that is not a power of two
    ("out size 3", lambda: LinearLayout({"in": [[1]]}, {"out": 3}), ["out", "power of two"]),
    ("out size 0", lambda: LinearLayout({"in": []}, {"out": 0}), ["out", "power of two"]),
    ("out size -4", lambda: LinearLayout({"in": []}, [("out", -4)]), ["out", "power of two"]),
    ("identity_1d size 3", lambda: LinearLayout.identity_1d(3, "i", "o"), ["size", "power of two"]),
    ("zeros_1d size 6", lambda: LinearLayout.zeros_1d(6, "i", "o"), ["size", "power of two"]),
    ("zeros_1d out_dim_size 3", lambda: LinearLayout.zeros_1d(4, "i", "o", 3), ["out_dim_size", "power of two"]),
    ("strided_1d stride 3", lambda: LinearLayout.strided_1d(4, 3, "i", "o"), ["stride", "power of two"]),
    ("reshape_ins size 3", lambda: ID8.reshape_ins([("a", 3), ("b", 2)]), ["a", "power of two"]),
    ("reshape_outs size 6", lambda: ID8.reshape_outs([("a", 6)]), ["a", "power of two"]),
    ("resize_in_dim 12", lambda: ID8.resize_in_dim("in", 12), ["power of two"]),
    ("resize_out_dim 12", lambda: ID8.resize_out_dim("out", 12), ["power of two"]),
    ("from_matrix in size 3", lambda: LinearLayout.from_matrix(np.zeros((1, 1), np.uint8), {"i": 3}, {"o": 2}),
     ["i", "power of two"]),
    # reshape to a different total size
    ("reshape_ins total", lambda: ID8.reshape_ins([("a", 4)]), ["reshape_ins", "8"]),
    ("reshape_outs total", lambda: ID8.reshape_outs([("a", 16)]), ["reshape_outs", "8"]),
    # a basis of the wrong length
    ("basis too long", lambda: LinearLayout({"in": [[1, 2]]}, {"out": 4}), ["bases", "in", "coordinate"]),
    ("basis too short", lambda: LinearLayout({"in": [[1]]}, ["a", "b"]), ["bases", "in", "coordinate"]),
    ("basis not a list", lambda: LinearLayout({"in": [5]}, ["out"]), ["bases", "in"]),
    ("from_matrix shape", lambda: LinearLayout.from_matrix(np.zeros((2, 2), np.uint8), {"i": 2}, {"o": 2}),
     ["matrix", "shape"]),
    # an out-of-range coordinate / value
    ("coordinate >= size", lambda: LinearLayout({"in": [[4]]}, {"out": 4}), ["bases", "out", "range"]),
    ("negative coordinate", lambda: LinearLayout({"in": [[-1]]}, ["out"]), ["bases", "in", "negative"]),
    ("float coordinate", lambda: LinearLayout({"in": [[1.0]]}, ["out"]), ["bases", "in", "int"]),
    ("apply value too big", lambda: ID8.apply({"in": 8}), ["in", "[0, 8)"]),
    ("apply negative value", lambda: ID8.apply({"in": -1}), ["in", "[0, 8)"]),
    ("apply_array value too big", lambda: ID8.apply_array({"in": np.array([1, 9])}), ["in", "[0, 8)"]),
    ("apply_flat too big", lambda: ID8.apply_flat(8), ["apply_flat", "8"]),
    ("get_basis pos", lambda: ID8.get_basis("in", 3), ["pos", "in"]),
    # an unknown dim name
    ("apply unknown dim", lambda: ID8.apply({"nope": 1}), ["nope"]),
    ("in_dim_size unknown", lambda: ID8.in_dim_size("nope"), ["nope"]),
    ("out_dim_size unknown", lambda: ID8.out_dim_size("nope"), ["nope"]),
    ("get_basis unknown", lambda: ID8.get_basis("nope", 0), ["nope"]),
    ("get_basis unknown out", lambda: ID8.get_basis("in", 0, "nope"), ["nope"]),
    ("sublayout unknown in", lambda: ID8.sublayout(["nope"], ["out"]), ["nope", "in"]),
    ("sublayout unknown out", lambda: ID8.sublayout(["in"], ["nope"]), ["nope", "out"]),
    ("sublayout_is_zero unknown", lambda: ID8.sublayout_is_zero(["nope"], []), ["nope"]),
    ("transpose_ins unknown", lambda: TWO_D.transpose_ins(["lane", "nope"]), ["nope"]),
    ("transpose_outs missing", lambda: TWO_D.transpose_outs(["dim0"]), ["dim1"]),
    ("rename_in_dim unknown", lambda: ID8.rename_in_dim("nope", "x"), ["nope"]),
    ("resize_in_dim unknown", lambda: ID8.resize_in_dim("nope", 16), ["nope"]),
    ("remove_zero_bases unknown", lambda: ID8.remove_zero_bases_along_dim("nope"), ["nope"]),
    ("column action unknown dim", lambda: ColumnAction([0, 1, 2], "nope", 3).apply(ID8), ["nope"]),
    # a duplicate dim name
    ("duplicate in dim", lambda: LinearLayout([("in", [[1]]), ("in", [[2]])], ["out"]), ["in", "duplicate"]),
    ("duplicate out dim", lambda: LinearLayout({"in": [[1, 1]]}, ["out", "out"]), ["out", "duplicate"]),
    ("duplicate sized out dim", lambda: LinearLayout({"in": [[1, 1]]}, [("o", 2), ("o", 2)]), ["o", "duplicate"]),
    ("transpose_ins duplicate", lambda: TWO_D.transpose_ins(["lane", "lane"]), ["lane"]),
    ("reshape_ins duplicate", lambda: ID8.reshape_ins([("a", 2), ("a", 4)]), ["a", "duplicate"]),
    ("rename_in_dim clash", lambda: TWO_D.rename_in_dim("lane", "register"), ["register"]),
    ("unsqueeze_in of a size-8 dim", lambda: ID8.unsqueeze_in("in"), ["in"]),
    ("concat_ins overlapping", lambda: ID8.concat_ins(ID8), ["in"]),
    # mismatched dims in compose / product / invert_and_compose / division
    ("compose dims differ", lambda: ID8.compose(LinearLayout.identity_1d(8, "x", "y")), ["compose", "out"]),
    ("compose outer too small", lambda: ID8.compose(LinearLayout.identity_1d(4, "out", "y")), ["compose", "out"]),
    ("invert_and_compose dims differ",
     lambda: ID8.invert_and_compose(LinearLayout.identity_1d(8, "in", "x")), ["invert_and_compose", "out"]),
    ("invert_and_compose self larger",
     lambda: ID8.invert_and_compose(LinearLayout.identity_1d(4, "x", "out")), ["invert_and_compose", "out"]),
    ("divide_left by non-layout", lambda: divide_left(ID8, 3), ["divide"]),
    ("divide_right by non-layout", lambda: divide_right(ID8, "x"), ["divide"]),
    ("compose with non-layout", lambda: ID8.compose("x"), ["compose", "outer"]),
    # non-surjective where surjectivity is required
    ("names-only not surjective", lambda: LinearLayout({"in": [[1, 0], [5, 1], [2, 2]]}, ["out1", "out2"]),
     ["surjective"]),
    # (Triton 3.9 accepts a non-surjective outer as long as it reaches every output of self)
    ("invert_and_compose image not contained",
     lambda: ID8.invert_and_compose(LinearLayout({"x": [[1], [2]]}, {"out": 8}, require_surjective=False)),
     ["invert_and_compose", "outer"]),
    ("pseudoinvert not surjective", lambda: NOT_SURJECTIVE.pseudoinvert(), ["pseudoinvert", "surjective"]),
    # inverting a non-invertible layout
    ("invert not injective", lambda: BROADCAST.invert(), ["invert"]),
    ("invert not surjective", lambda: NOT_SURJECTIVE.invert(), ["invert"]),
    ("column action inverse of a drop", lambda: ColumnAction([1], "in", 3).inverse(), ["inverse"]),
    ("column action index out of range", lambda: ColumnAction([0, 3], "in", 3), ["action"]),
    ("column action values length", lambda: ColumnAction([0, 1], "in", 2).apply_values([1, 2, 3]), ["values"]),
]


def _bad_input_params():
    for i, t, w in BAD_INPUTS:
        yield pytest.param(t, w, id=i)


@pytest.mark.parametrize("thunk, words", list(_bad_input_params()))
def test_bad_input_raises_layout_error(thunk, words: list[str]) -> None:
    every_word = "(?is)" + "".join(f"(?=.*{re.escape(w)})" for w in words)
    with pytest.raises(LayoutError, match=every_word) as info:
        thunk()
    assert isinstance(info.value, ValueError)
    message = str(info.value).lower()
    missing = [w for w in words if w.lower() not in message]
    assert not missing, f"message {str(info.value)!r} does not name {missing}"


def test_layout_error_is_a_value_error() -> None:
    assert issubclass(LayoutError, ValueError)
    with pytest.raises(ValueError, match=r"size must be a positive power of two"):
        LinearLayout.identity_1d(3, "i", "o")


def test_missing_ok_counts_an_absent_in_dim_as_size_one() -> None:
    layout = LinearLayout({"register": [[1], [2]], "lane": [[4]]}, ["dim0"])
    assert (layout.in_dim_size("warp", missing_ok=True), layout.in_dim_size_log2("warp", missing_ok=True)) == (1, 0)
    assert layout.flat_bases("warp", missing_ok=True) == ()
    # a present dim is unchanged, and without missing_ok an absent one is still an error naming it
    assert (layout.in_dim_size("register", missing_ok=True), layout.flat_bases("lane", missing_ok=True)) == (4, (4,))
    for call in (layout.in_dim_size, layout.in_dim_size_log2, layout.flat_bases):
        with pytest.raises(LayoutError, match="warp"):
            call("warp")


def test_immutable() -> None:
    with pytest.raises(AttributeError, match=r"LinearLayout is immutable"):
        ID8._in_names = ("x",)  # type: ignore[misc]
    bases = ID8.bases
    bases["in"][0][0] = 7  # a fresh copy: the layout is unchanged
    assert ID8.bases == {"in": [[1], [2], [4]]}


# ----------------------------------------------------------------------------- fuzzing
names = st.sampled_from(["in", "out", "register", "lane", "", "dim0", "x"]) | st.text(max_size=3)
junk_scalar = st.one_of(
    st.integers(-5, 70), st.integers(min_value=2**31 - 2, max_value=2**64), st.none(), st.booleans(),
    st.floats(allow_nan=True), st.text(max_size=3), st.just(np.int64(2)), st.just(np.float32(1.0)),
)
coords = st.lists(junk_scalar | st.integers(0, 16), max_size=4)
junk = st.recursive(junk_scalar, lambda kids: st.lists(kids, max_size=3) | st.dictionaries(names, kids, max_size=3),
                    max_leaves=8)
bases_args = st.one_of(
    st.dictionaries(names, st.lists(coords | junk, max_size=4), max_size=3),
    st.lists(st.tuples(names, st.lists(coords, max_size=4)), max_size=3),
    junk,
)
out_dims_args = st.one_of(
    st.lists(names, max_size=3),
    st.dictionaries(names, junk_scalar | st.sampled_from([1, 2, 4, 8, 16]), max_size=3),
    st.lists(st.tuples(names, junk_scalar | st.sampled_from([1, 2, 4, 8])), max_size=3),
    junk,
)
FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(bases_args, out_dims_args, st.booleans())
def test_constructor_fuzz_raises_only_layout_error(bases, out_dims, require_surjective: bool) -> None:
    try:
        layout = LinearLayout(bases, out_dims, require_surjective=require_surjective)
    except LayoutError:
        return
    # whatever was accepted is a well-formed layout
    assert all(s & (s - 1) == 0 for s in layout.out_dims.values())
    assert all(s & (s - 1) == 0 for s in layout.in_dims.values())
    for d, vecs in layout.bases.items():
        for v in vecs:
            assert len(v) == layout.num_out_dims
            assert all(0 <= c < s for c, s in zip(v, layout.out_dims.values()))
    assert not require_surjective or layout.is_surjective()
    assert LinearLayout(layout.bases, layout.out_dims, require_surjective=False) == layout


LAYOUTS = [ID8, TWO_D, BROADCAST, NOT_SURJECTIVE, LinearLayout.empty(), LinearLayout.zeros_1d(4, "lane", "dim0", 2)]
name_lists = st.lists(names, max_size=3)
sized = st.lists(st.tuples(names, junk_scalar | st.sampled_from([1, 2, 4, 8])), max_size=3)
OPS = {
    "apply": (lambda L, a: L.apply(a), st.dictionaries(names, junk_scalar, max_size=3) | junk),
    "apply_array": (lambda L, a: L.apply_array(a), st.dictionaries(names, st.lists(st.integers(-2, 9)).map(np.array))
                    | junk),
    "apply_flat": (lambda L, a: L.apply_flat(a), junk_scalar),
    "get_basis": (lambda L, a: L.get_basis(*a), st.tuples(names, junk_scalar) | st.tuples(names, junk_scalar, names)),
    "in_dim_size": (lambda L, a: L.in_dim_size(a), names | junk_scalar),
    "out_dim_size_log2": (lambda L, a: L.out_dim_size_log2(a), names | junk_scalar),
    "sublayout": (lambda L, a: L.sublayout(*a), st.tuples(name_lists | junk, name_lists | junk)),
    "sublayout_is_zero": (lambda L, a: L.sublayout_is_zero(*a), st.tuples(name_lists, name_lists)),
    "square_sublayout_is_identity": (lambda L, a: L.square_sublayout_is_identity(a), name_lists | junk),
    "is_trivial_over": (lambda L, a: L.is_trivial_over(a), name_lists),
    "quotient": (lambda L, a: L.quotient(a), name_lists | junk),
    "transpose_ins": (lambda L, a: L.transpose_ins(a), name_lists | junk),
    "transpose_outs": (lambda L, a: L.transpose_outs(a), name_lists | junk),
    "reshape_ins": (lambda L, a: L.reshape_ins(a), sized | junk),
    "reshape_outs": (lambda L, a: L.reshape_outs(a), sized | junk),
    "resize_in_dim": (lambda L, a: L.resize_in_dim(*a), st.tuples(names, junk_scalar)),
    "resize_out_dim": (lambda L, a: L.resize_out_dim(*a), st.tuples(names, junk_scalar)),
    "rename_in_dim": (lambda L, a: L.rename_in_dim(*a), st.tuples(names, names | junk_scalar)),
    "rename_out_dim": (lambda L, a: L.rename_out_dim(*a), st.tuples(names, names | junk_scalar)),
    "unsqueeze_in": (lambda L, a: L.unsqueeze_in(a), names | junk_scalar),
    "unsqueeze_out": (lambda L, a: L.unsqueeze_out(a), names | junk_scalar),
    "remove_zero_bases_along_dim": (lambda L, a: L.remove_zero_bases_along_dim(a), names | junk_scalar),
    "column_action": (lambda L, a: ColumnAction(*a).apply(L), st.tuples(st.lists(junk_scalar, max_size=4), names,
                                                                      junk_scalar)),
    "from_matrix": (lambda L, a: LinearLayout.from_matrix(a, L.in_dims, L.out_dims), junk),
    "identity_1d": (lambda L, a: LinearLayout.identity_1d(*a), st.tuples(junk_scalar, names, names | junk_scalar)),
    "strided_1d": (lambda L, a: LinearLayout.strided_1d(*a), st.tuples(junk_scalar, junk_scalar, names, names)),
}
BINARY = {
    "compose": lambda a, b: a.compose(b),
    "invert_and_compose": lambda a, b: a.invert_and_compose(b),
    "product": lambda a, b: a * b,
    "divide_left": divide_left,
    "divide_right": divide_right,
    "concat_ins": lambda a, b: a.concat_ins(b),
    "concat_outs": lambda a, b: a.concat_outs(b),
    "equal_ignoring_out_dim_sizes": lambda a, b: a.equal_ignoring_out_dim_sizes(b),
}
UNARY = ["invert", "pseudoinvert", "flatten_ins", "flatten_outs", "free_variable_masks", "num_consecutive_in_out",
         "to_matrix", "apply_all", "is_injective", "is_surjective", "is_invertible"]


@FUZZ
@given(st.sampled_from(LAYOUTS), st.sampled_from(sorted(OPS)), st.data())
def test_operation_fuzz_raises_only_layout_error(layout: LinearLayout, op: str, data) -> None:
    fn, strategy = OPS[op]
    arg = data.draw(strategy, label=op)
    try:
        fn(layout, arg)
    except LayoutError:
        pass


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(LAYOUTS), st.sampled_from(LAYOUTS), st.sampled_from(sorted(BINARY) + UNARY))
def test_algebra_on_mismatched_layouts_raises_only_layout_error(a: LinearLayout, b: LinearLayout, op: str) -> None:
    try:
        if op in BINARY:
            BINARY[op](a, b)
        else:
            getattr(a, op)()
    except LayoutError as exc:
        assert re.search(r"\w", str(exc))


def test_product_with_common_dims_in_other_orders_follows_triton() -> None:
    """Triton's ``operator*`` merges common dims given in different orders (self's order first)
    instead of failing; layout constructions rely on it, so we do the same, bit for bit."""
    triton_ll = pytest.importorskip("triton._C.libtriton.linear_layout").LinearLayout
    for other in (TWO_D.transpose_ins(list(reversed(TWO_D.in_dim_names))),
                  TWO_D.transpose_outs(list(reversed(TWO_D.out_dim_names)))):
        ours = TWO_D * other
        theirs = _to_triton(triton_ll, TWO_D) * _to_triton(triton_ll, other)
        assert [(n, v) for n, v in ours.bases.items()] == [(n, v) for n, v in theirs.bases]
        assert list(ours.out_dims.items()) == [(n, s) for n, s in theirs.out_dims]


def _to_triton(triton_ll, layout: LinearLayout):
    return triton_ll.from_bases(list(layout.bases.items()), list(layout.out_dims),
                                list(layout.out_dims.values()), False)
