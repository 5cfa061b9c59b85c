"""Algebraic laws of LinearLayout, checked with hypothesis on random layouts.

Linearity; associativity of ``*`` and ``compose``; inverse laws (``invert``, ``pseudoinvert``,
``invert_and_compose``); the matrix round trip; left / right division undoing a product;
transpose / reshape / flatten round trips; ``ColumnAction`` laws; vectorized apply == scalar apply.
The random layouts come from ``_support.random_spec`` driven by hypothesis's ``randoms()``
(all modes: random, distributed, swizzle, broadcast, duplicate columns).
"""

from __future__ import annotations

import random

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from linear_layouts import ColumnAction, LinearLayout, divide_left, divide_right

from ._support import (
    IN_POOL,
    OUT_POOL,
    log2,
    ours,
    random_inputs,
    random_out_dims,
    random_spec,
    gf2_rank,
    shuffled,
    spec_columns,
    spec_of_ours,
    split_flat,
)

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
rngs = st.randoms(use_true_random=False)


def identity_nd(dims: dict[str, int]) -> LinearLayout:
    """The identity on labeled dims: product of identity_1d(size, d, d)."""
    out = LinearLayout.empty()
    for d, size in dims.items():
        out = out * LinearLayout.identity_1d(size, d, d)
    return out


def xor_dicts(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    return {k: a[k] ^ b[k] for k in a}


# ----------------------------------------------------------------------------- evaluation
@SETTINGS
@given(rngs)
def test_linearity(rng: random.Random) -> None:
    spec = random_spec(rng)
    layout = ours(spec)
    for _ in range(8):
        x, y = random_inputs(rng, spec), random_inputs(rng, spec)
        assert layout.apply(xor_dicts(x, y)) == xor_dicts(layout.apply(x), layout.apply(y))
    assert layout.apply({}) == {d: 0 for d in layout.out_dim_names}


@SETTINGS
@given(rngs)
def test_vectorized_apply_matches_apply(rng: random.Random) -> None:
    spec = random_spec(rng, max_in_bits=10)
    layout = ours(spec)
    n = layout.total_in_dim_size
    flat_all = layout.apply_all()
    assert flat_all.shape == (n,)
    xs = [random_inputs(rng, spec) for _ in range(16)]
    arrays = {d: np.array([x[d] for x in xs]) for d in layout.in_dim_names}
    vec = layout.apply_array(arrays)
    assert list(vec) == list(layout.out_dim_names)
    if arrays:  # the result has the broadcast shape of the inputs, even where a basis is zero
        assert all(np.shape(v) == (16,) for v in vec.values())
    vec = {d: np.broadcast_to(v, (16,)) for d, v in vec.items()}
    for k, x in enumerate(xs):
        scalar = layout.apply(x)
        assert {d: int(vec[d][k]) for d in layout.out_dim_names} == scalar
        flat_in, shift = 0, 0
        for d, size in layout.in_dims.items():
            flat_in |= x[d] << shift
            shift += log2(size)
        flat_out, shift = 0, 0
        for d, size in layout.out_dims.items():
            flat_out |= scalar[d] << shift
            shift += log2(size)
        assert layout.apply_flat(flat_in) == flat_out == int(flat_all[flat_in])


# ----------------------------------------------------------------------------- product
def _prefix_dims(rng: random.Random, order: list[str], k: int) -> list[str]:
    return order[: rng.randint(0, k)]


@SETTINGS
@given(rngs)
def test_product_is_associative(rng: random.Random) -> None:
    # Dim lists that are prefixes of one order merge the same way whatever the bracketing.
    ins, outs = shuffled(rng, IN_POOL)[:3], shuffled(rng, OUT_POOL)[:3]
    layouts = []
    for _ in range(3):
        out_dims = [(d, 1 << rng.randint(0, 3)) for d in _prefix_dims(rng, outs, 3)]
        layouts.append(ours(random_spec(rng, out_dims=out_dims, in_names=_prefix_dims(rng, ins, 3), max_in_bits=6)))
    a, b, c = layouts
    assert (a * b) * c == a * (b * c)


@SETTINGS
@given(rngs)
def test_product_is_block_diagonal(rng: random.Random) -> None:
    """Disjoint dims: (a * b)(x, y) = (a(x), b(y)); shared dims: b's bits sit above a's."""
    a_spec = random_spec(rng, in_names=["in0", "lane"], out_dims=[("dim0", 1 << rng.randint(0, 3)), ("out", 4)])
    b_spec = random_spec(rng, in_names=["lane", "warp"], out_dims=[("dim0", 1 << rng.randint(0, 3)), ("dim1", 2)])
    a, b = ours(a_spec), ours(b_spec)
    p = a * b
    assert list(p.in_dim_names) == ["in0", "lane", "warp"]
    assert list(p.out_dim_names) == ["dim0", "out", "dim1"]
    assert p.out_dim_size("dim0") == a.out_dim_size("dim0") * b.out_dim_size("dim0")
    xa, xb = random_inputs(rng, a_spec), random_inputs(rng, b_spec)
    got = p.apply({"in0": xa["in0"], "lane": xa["lane"] | xb["lane"] << a.in_dim_size_log2("lane"), "warp": xb["warp"]})
    ya, yb = a.apply(xa), b.apply(xb)
    assert got == {"dim0": ya["dim0"] | yb["dim0"] << a.out_dim_size_log2("dim0"), "out": ya["out"], "dim1": yb["dim1"]}


# ----------------------------------------------------------------------------- compose
def _outer_spec(rng: random.Random, inner: LinearLayout):
    """A layout whose in-dims are `inner`'s out-dims (shuffled order, each at least as large)."""
    out_dims = random_out_dims(rng, rng.randint(0, 3), 4)
    total = sum(log2(s) for _, s in out_dims)
    bases = []
    for d in shuffled(rng, inner.out_dim_names):
        nbits = inner.out_dim_size_log2(d) + rng.randint(0, 1)
        bases.append((d, [split_flat(rng.getrandbits(total), out_dims) for _ in range(nbits)]))
    return bases, out_dims


@SETTINGS
@given(rngs)
def test_compose_is_associative_and_applies_in_order(rng: random.Random) -> None:
    a = ours(random_spec(rng, max_in_bits=8))
    b = ours(_outer_spec(rng, a))
    c = ours(_outer_spec(rng, b))
    ab = a.compose(b)
    assert ab.compose(c) == a.compose(b.compose(c))
    assert ab.out_dims == b.out_dims and ab.in_dims == a.in_dims
    for _ in range(4):
        x = {d: rng.randrange(s) for d, s in a.in_dims.items()}
        assert ab.apply(x) == b.apply(a.apply(x))


# ----------------------------------------------------------------------------- inverses
@SETTINGS
@given(rngs)
def test_invert_then_compose_is_identity(rng: random.Random) -> None:
    layout = ours(random_spec(rng, invertible=True))
    assert layout.is_invertible() and layout.is_injective() and layout.is_surjective()
    inverse = layout.invert()
    assert inverse.in_dims == layout.out_dims and inverse.out_dims == layout.in_dims
    assert layout.compose(inverse) == identity_nd(layout.in_dims)
    assert inverse.compose(layout) == identity_nd(layout.out_dims)
    assert inverse.invert() == layout


@SETTINGS
@given(rngs)
def test_pseudoinvert_is_a_right_inverse(rng: random.Random) -> None:
    layout = ours(random_spec(rng, surjective=True))
    assert layout.is_surjective()
    p = layout.pseudoinvert()
    assert p.in_dims == layout.out_dims and p.out_dims == layout.in_dims
    assert p.compose(layout) == identity_nd(layout.out_dims)
    if layout.is_injective():
        assert p == layout.invert()


@SETTINGS
@given(rngs)
def test_invert_and_compose_law(rng: random.Random) -> None:
    """C = a.invert_and_compose(b) satisfies b(C(x)) == a(x) for every x."""
    b_spec = random_spec(rng, surjective=True, max_in_bits=10)
    b = ours(b_spec)
    out_dims = [(d, s >> rng.randint(0, min(1, log2(s)))) for d, s in shuffled(rng, b_spec[1])]
    a = ours(random_spec(rng, out_dims=out_dims, max_in_bits=10))
    c = a.invert_and_compose(b)
    assert c.in_dims == a.in_dims and c.out_dims == b.in_dims
    for _ in range(8):
        x = {d: rng.randrange(s) for d, s in a.in_dims.items()}
        assert b.apply(c.apply(x)) == {d: a.apply(x)[d] for d in b.out_dim_names}
    # basis by basis: C.compose(b) is a with the outs in b's order (b's sizes)
    assert spec_of_ours(c.compose(b))[0] == spec_of_ours(a.transpose_outs(list(b.out_dim_names)))[0]


# ----------------------------------------------------------------------------- matrix view
@SETTINGS
@given(rngs)
def test_matrix_round_trip(rng: random.Random) -> None:
    spec = random_spec(rng)
    layout = ours(spec)
    m = layout.to_matrix()
    assert m.shape == (layout.total_out_dim_size_log2, layout.total_in_dim_size_log2)
    assert set(np.unique(m)) <= {0, 1}
    assert LinearLayout.from_matrix(m, layout.in_dims, layout.out_dims) == layout
    # column k is the flattened basis k, row r is out bit r
    flat = layout.flat_bases()
    for k, col in enumerate(flat):
        assert sum(int(m[r, k]) << r for r in range(m.shape[0])) == col


# ----------------------------------------------------------------------------- division
@SETTINGS
@given(rngs)
def test_divide_left_undoes_product(rng: random.Random) -> None:
    ins, outs = shuffled(rng, IN_POOL)[:3], shuffled(rng, OUT_POOL)[:3]
    b_out = [(d, 1 << rng.randint(0, 3)) for d in outs]
    b = ours(random_spec(rng, in_names=ins, out_dims=b_out, max_in_bits=8))
    a_ins = [d for d in ins if rng.random() < 0.6]
    a_out = [(d, 1 << rng.randint(0, 3)) for d, _ in b_out if rng.random() < 0.6]
    a = ours(random_spec(rng, in_names=a_ins, out_dims=a_out, max_in_bits=8))
    assert divide_left(a * b, a) == b
    assert (a * b).divide_left(a) == b


@SETTINGS
@given(rngs)
def test_divide_right_undoes_product(rng: random.Random) -> None:
    ins, outs = shuffled(rng, IN_POOL)[:3], shuffled(rng, OUT_POOL)[:3]
    a_out = [(d, 1 << rng.randint(0, 3)) for d in outs]
    a = ours(random_spec(rng, in_names=ins, out_dims=a_out, max_in_bits=8))
    b_ins = [d for d in ins if rng.random() < 0.6]
    b_out = [(d, 1 << rng.randint(0, 3)) for d, _ in a_out if rng.random() < 0.6]
    b = ours(random_spec(rng, in_names=b_ins, out_dims=b_out, max_in_bits=8))
    assert divide_right(a * b, b) == a
    assert (a * b).divide_right(b) == a


@SETTINGS
@given(rngs)
def test_divide_left_result_satisfies_definition(rng: random.Random) -> None:
    """Whenever division succeeds on arbitrary layouts, B * C == A (Def. 4.4)."""
    a = ours(random_spec(rng, in_names=["in0", "lane"], out_dims=[("dim0", 8), ("dim1", 4)], mode="distributed"))
    b = ours(random_spec(rng, in_names=["in0"], out_dims=[("dim0", 1 << rng.randint(0, 2))], mode="distributed"))
    c = divide_left(a, b)
    if c is not None:
        assert b * c == a
    r = divide_right(a, b)
    if r is not None:
        assert r * b == a


# ----------------------------------------------------------------------------- shape round trips
@SETTINGS
@given(rngs)
def test_transpose_round_trips(rng: random.Random) -> None:
    layout = ours(random_spec(rng))
    ins, outs = shuffled(rng, layout.in_dim_names), shuffled(rng, layout.out_dim_names)
    t = layout.transpose_ins(ins).transpose_outs(outs)
    assert list(t.in_dim_names) == ins and list(t.out_dim_names) == outs
    assert t.transpose_ins(list(layout.in_dim_names)).transpose_outs(list(layout.out_dim_names)) == layout
    x = {d: rng.randrange(s) for d, s in layout.in_dims.items()}
    assert t.apply(x) == {d: layout.apply(x)[d] for d in outs}


def _random_split(rng: random.Random, total_log2: int, prefix: str) -> list[tuple[str, int]]:
    parts, left, k = [], total_log2, 0
    while left > 0 or not parts:
        take = rng.randint(0, left)
        parts.append((f"{prefix}{k}", 1 << take))
        left -= take
        k += 1
    if left:
        parts.append((f"{prefix}{k}", 1 << left))
    return parts


@SETTINGS
@given(rngs)
def test_reshape_and_flatten_round_trips(rng: random.Random) -> None:
    layout = ours(random_spec(rng, n_in=rng.randint(1, 4), n_out=rng.randint(1, 4)))
    new_ins = _random_split(rng, layout.total_in_dim_size_log2, "i")
    new_outs = _random_split(rng, layout.total_out_dim_size_log2, "o")
    r = layout.reshape_ins(new_ins).reshape_outs(new_outs)
    assert list(r.in_dims.items()) == new_ins and list(r.out_dims.items()) == new_outs
    assert r.reshape_ins(list(layout.in_dims.items())).reshape_outs(list(layout.out_dims.items())) == layout
    # flattening keeps the first dim's name and the flat (matrix) view
    f = layout.flatten_ins().flatten_outs()
    assert f.in_dims == {layout.in_dim_names[0]: layout.total_in_dim_size}
    assert f.out_dims == {layout.out_dim_names[0]: layout.total_out_dim_size}
    np.testing.assert_array_equal(f.to_matrix(), layout.to_matrix())
    assert f.reshape_ins(list(layout.in_dims.items())).reshape_outs(list(layout.out_dims.items())) == layout


# ----------------------------------------------------------------------------- ColumnAction
def _random_action(rng: random.Random, n: int, permutation: bool) -> list[int]:
    if permutation:
        return shuffled(rng, range(n))
    return rng.sample(range(n), rng.randint(0, n))


@SETTINGS
@given(rngs)
def test_column_action_laws(rng: random.Random) -> None:
    spec = random_spec(rng, in_names=["register", "lane"], n_out=rng.randint(1, 3))
    layout = ours(spec)
    k = layout.in_dim_size_log2("register")
    perm = ColumnAction(_random_action(rng, k, True), "register", k)
    # a permutation is undone by its inverse, in both orders
    assert perm.inverse().apply(perm.apply(layout)) == layout
    assert perm.apply(perm.inverse().apply(layout)) == layout
    assert perm.inverse().inverse() == perm
    assert ColumnAction(list(range(k)), "register", k).is_identity
    # apply(layout) agrees with apply_values: action(L)(j) == L(P(j)), P = apply_values(range)
    drop = ColumnAction(_random_action(rng, k, rng.random() < 0.5), "register", k)
    acted = drop.apply(layout)
    p = list(drop.apply_values(list(range(1 << k))))
    assert len(p) == acted.in_dim_size("register")
    for j in range(len(p)):
        assert acted.apply({"register": j}) == layout.apply({"register": p[j]})
    # values move with the registers: apply_values then reading index j == reading P(j)
    values = [rng.randrange(1000) for _ in range(1 << k)]
    assert list(drop.apply_values(values)) == [values[p[j]] for j in range(len(p))]
    # a.compose(b) is "a, then b" (Triton's leftCompose), for permutations and for drops
    other = ColumnAction(_random_action(rng, k, rng.random() < 0.5), "register", k)
    assert perm.compose(other).apply(layout) == other.apply(perm.apply(layout))
    assert perm.compose(perm.inverse()).is_identity


# ----------------------------------------------------------------------------- other operations
@SETTINGS
@given(rngs)
def test_repr_is_a_pasteable_constructor_and_hash_is_consistent(rng: random.Random) -> None:
    layout = ours(random_spec(rng))
    again = eval(repr(layout), {"LinearLayout": LinearLayout})  # noqa: S307 - our own repr
    assert again == layout and hash(again) == hash(layout)
    assert len({layout, again, ours(random_spec(rng))}) in (1, 2)


@SETTINGS
@given(rngs)
def test_free_variable_masks_are_the_non_pivot_bits(rng: random.Random) -> None:
    """A bit is free iff its basis is in the span of all earlier ones (in-dims in order, LSB first)."""
    spec = random_spec(rng)
    layout = ours(spec)
    cols = spec_columns(spec)
    free, k = {}, 0
    for name, b in spec[0]:
        mask = 0
        for i in range(len(b)):
            if gf2_rank(cols[: k + 1]) == gf2_rank(cols[:k]):
                mask |= 1 << i
            k += 1
        free[name] = mask
    assert layout.free_variable_masks() == free
    assert sum(bin(m).count("1") for m in free.values()) == layout.total_in_dim_size_log2 - gf2_rank(cols)


@SETTINGS
@given(rngs)
def test_num_consecutive_in_out(rng: random.Random) -> None:
    """1 << min(c, t): c leading (2^i, 0, ...) bases of the first in-dim, t trailing zeros of the rest."""
    spec = random_spec(rng, mode=rng.choice(("distributed", "random")))
    if spec[0] and spec[1] and rng.random() < 0.5:  # make a contiguous prefix likely
        (name, b), rest = spec[0][0], spec[0][1:]
        c = min(len(b), log2(spec[1][0][1]))
        b = [[1 << i] + [0] * (len(spec[1]) - 1) for i in range(c)] + b[c:]
        spec = ([(name, b)] + rest, spec[1])
    layout = ours(spec)
    bases, out_dims = spec
    if not bases or not out_dims:
        assert layout.num_consecutive_in_out() == 1
        return
    first = bases[0][1]
    c = 0
    while c < len(first) and first[c][0] == 1 << c and not any(first[c][1:]):
        c += 1
    other = 0
    for n, (name, b) in enumerate(bases):
        for i, v in enumerate(b):
            if n > 0 or i >= c:
                other |= v[0]
    t = (other & -other).bit_length() - 1 if other else 31
    assert layout.num_consecutive_in_out() == 1 << min(c, t)


@SETTINGS
@given(rngs)
def test_quotient_exists_iff_trivial_over(rng: random.Random) -> None:
    # a product with an identity on "block" is trivial over block; a random layout rarely is
    base = ours(random_spec(rng, in_names=["register", "lane"], out_dims=[("dim0", 4), ("dim1", 8)]))
    k = rng.randint(0, 3)
    layout = base * LinearLayout.identity_1d(1 << k, "block", "block")
    assert layout.is_trivial_over(["block"])
    assert layout.quotient(["block"]) == base
    other = ours(random_spec(rng, in_names=["register", "block"], out_dims=[("dim0", 4), ("block", 4)]))
    q = other.quotient(["block"])
    assert (q is not None) == other.is_trivial_over(["block"])
    if q is not None:
        assert q == other.sublayout(["register"], ["dim0"])


@SETTINGS
@given(rngs)
def test_sublayout_keeps_the_layout_order(rng: random.Random) -> None:
    spec = random_spec(rng)
    layout = ours(spec)
    ins = [d for d in shuffled(rng, layout.in_dim_names) if rng.random() < 0.6]
    outs = [d for d in shuffled(rng, layout.out_dim_names) if rng.random() < 0.6]
    sub = layout.sublayout(ins, outs)
    assert list(sub.in_dim_names) == [d for d in layout.in_dim_names if d in ins]
    assert list(sub.out_dim_names) == [d for d in layout.out_dim_names if d in outs]
    assert sub.out_dims == {d: layout.out_dim_size(d) for d in sub.out_dim_names}
    x = {d: rng.randrange(layout.in_dim_size(d)) for d in ins}
    full = layout.apply(x)
    assert sub.apply(x) == {d: full[d] for d in sub.out_dim_names}
    assert layout.sublayout_is_zero(ins, outs) == all(v == 0 for b in sub.bases.values() for w in b for v in w)


@SETTINGS
@given(rngs)
def test_resize_rename_concat(rng: random.Random) -> None:
    spec = random_spec(rng, n_in=rng.randint(1, 3), n_out=rng.randint(1, 3))
    layout = ours(spec)
    d = rng.choice(layout.in_dim_names)
    k = layout.in_dim_size_log2(d)
    # growing an in dim appends zero (broadcast) bases; shrinking keeps the first bases (Triton resizeInDim)
    grown = layout.resize_in_dim(d, 1 << (k + 2))
    assert grown.bases[d] == layout.bases[d] + [[0] * layout.num_out_dims] * 2
    shrunk = layout.resize_in_dim(d, 1 << (k // 2))
    assert shrunk.bases[d] == layout.bases[d][: k // 2]
    # shrinking an out dim zeroes the coordinates that no longer fit (Triton resizeOutDim)
    o = rng.choice(layout.out_dim_names)
    j = list(layout.out_dim_names).index(o)
    new = max(1, layout.out_dim_size(o) // 2)
    r = layout.resize_out_dim(o, new)
    assert r.out_dim_size(o) == new
    assert all(v[j] == (w[j] if w[j] < new else 0) for n in layout.in_dim_names
               for v, w in zip(r.bases[n], layout.bases[n]))
    # renaming keeps everything else
    fresh = "renamed_" + d
    assert list(layout.rename_in_dim(d, fresh).bases.values()) == list(layout.bases.values())
    assert list(layout.rename_out_dim(o, "o_" + o).out_dims.values()) == list(layout.out_dims.values())
    # concat_ins / concat_outs are the block matrices [A B] and [A; B]
    other_in = ours(random_spec(rng, in_names=["extra_in"], out_dims=list(layout.out_dims.items())))
    ci = layout.concat_ins(other_in)
    assert list(ci.in_dim_names) == list(layout.in_dim_names) + ["extra_in"]
    x = {n: rng.randrange(s) for n, s in ci.in_dims.items()}
    want = {n: layout.apply({m: x[m] for m in layout.in_dim_names})[n] ^ other_in.apply({"extra_in": x["extra_in"]})[n]
            for n in layout.out_dim_names}
    assert ci.apply(x) == want
    rows = [("extra_out", 4)]
    b2 = [(n, [[rng.randrange(4)] for _ in range(layout.in_dim_size_log2(n))]) for n in layout.in_dim_names]
    co = layout.concat_outs(ours((b2, rows)))
    assert list(co.out_dim_names) == list(layout.out_dim_names) + ["extra_out"]
    assert co.sublayout(list(layout.in_dim_names), list(layout.out_dim_names)) == layout


@SETTINGS
@given(rngs)
def test_remove_zero_bases_and_unsqueeze(rng: random.Random) -> None:
    spec = random_spec(rng, mode="broadcast", n_in=rng.randint(1, 3), n_out=rng.randint(1, 3))
    layout = ours(spec)
    d = rng.choice(layout.in_dim_names)
    r = layout.remove_zero_bases_along_dim(d)
    assert r.bases[d] == [v for v in layout.bases[d] if any(v)]
    assert r.rank == layout.rank
    # unsqueeze_in / unsqueeze_out remove a size-1 dim (Triton's naming)
    with_unit = layout * LinearLayout.identity_1d(1, "unit_in", "unit_out")
    assert with_unit.unsqueeze_in("unit_in").unsqueeze_out("unit_out") == layout


def test_invert_and_compose_identity_rule_compares_coordinates() -> None:
    """Hypothesis's counterexample: a's register basis dim3=1 and b's dim2=16 are the same integer
    (32) once a's smaller dim2 (16) packs before dim3, but not the same coordinates: register is no
    identity dim, and C(register=1) is b's lane 32 (Triton 3.9 gives the same)."""
    a = LinearLayout({"lane": [[0, 0, 0, 0]], "register": [[0, 0, 0, 1]]},
                     {"dim0": 2, "dim2": 16, "dim1": 1, "dim3": 32}, require_surjective=False)
    b = LinearLayout({"register": [[0, 0, 16, 0]],
                      "lane": [[0, 0, 1, 0], [0, 0, 2, 0], [0, 0, 4, 0], [0, 0, 8, 0], [1, 0, 0, 0],
                               [0, 0, 0, 1], [0, 0, 0, 2], [0, 0, 0, 4], [0, 0, 0, 8], [0, 0, 0, 16]]},
                     {"dim0": 2, "dim1": 1, "dim2": 32, "dim3": 32})
    c = a.invert_and_compose(b)
    assert c.apply({"register": 1, "lane": 0}) == {"register": 0, "lane": 32}
    assert b.apply(c.apply({"register": 1, "lane": 0})) == {"dim0": 0, "dim1": 0, "dim2": 0, "dim3": 1}
