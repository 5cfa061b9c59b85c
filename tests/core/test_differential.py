"""Differential tests against Triton's C++ LinearLayout (``triton._C.libtriton.linear_layout``, 3.9).

For every operation Triton binds, one test function runs ``CASES`` (1000) seeded random cases and
compares ours with Triton bit for bit: in-dim names, order and bases, out-dim names, order and
sizes, and the derived flags.  The bound operations are: ``from_bases`` (explicit sizes, and
names-only with inferred sizes), ``identity_1d``, ``zeros_1d``, ``strided_1d``, ``apply``,
``is_surjective`` / ``is_injective`` / ``is_invertible``, ``*`` (``__mul__`` is bound),
``compose``, ``invert``, ``invert_and_compose``, ``pseudoinvert``, ``get_matrix_view``,
``__str__`` / ``__repr__`` (``toString``), ``__eq__`` (the binding's ``__hash__`` is by object
identity, so only our hash is checked: equal layouts hash equal), ``num_in_dims`` /
``num_out_dims``, ``get_in_dim_names`` / ``get_out_dim_names``.  Not compared:
``get_distributed_view`` / ``get_shared_view`` (layout pictures; tools' job, not the core's).

Triton aborts the process (LLVM fatal error) on invalid input, so the generators produce only
inputs that Triton accepts: several in/out dims in random orders, shared names between in- and
out-dims, zero (broadcast) bases, duplicated columns, non-injective and non-surjective layouts
where the operation allows them, distributed (permutation + zeros) and swizzle-like columns.
A failure lists the first mismatches with the seed that reproduces each one.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

pytest.importorskip("triton")
from triton._C.libtriton.linear_layout import LinearLayout as TritonLL  # noqa: E402

from linear_layouts import LayoutError, LinearLayout  # noqa: E402

from ._support import (  # noqa: E402
    IN_POOL,
    OUT_POOL,
    Spec,
    flat_of,
    gf2_rank,
    log2,
    ours,
    random_inputs,
    random_out_dims,
    random_spec,
    shuffled,
    spec_of_ours,
    spec_of_triton,
    spec_columns,
    split_flat,
    triton,
)

CASES = 1000


class Mismatches:
    """Collects mismatches (op, seed, inputs, ours, Triton) and fails once with the first few."""

    def __init__(self, op: str) -> None:
        self.op = op
        self.items: list[str] = []

    def check(self, seed: int, what: str, got_ours, got_triton, inputs: object = None) -> None:
        if got_ours != got_triton:
            self.items.append(
                f"{self.op} seed={seed} {what}: inputs={inputs!r}\n    ours:   {got_ours!r}\n    triton: {got_triton!r}"
            )

    def error(self, seed: int, what: str, exc: BaseException, inputs: object = None) -> None:
        self.items.append(f"{self.op} seed={seed} {what}: inputs={inputs!r}\n    ours raised {exc!r}")

    def assert_none(self) -> None:
        assert not self.items, f"{len(self.items)} mismatches with Triton; first ones:\n" + "\n".join(self.items[:8])


def rng_for(op: str, seed: int) -> random.Random:
    return random.Random(f"{op}:{seed}")


def same_layout(m: Mismatches, seed: int, what: str, got: LinearLayout, t, inputs: object = None) -> None:
    m.check(seed, what, spec_of_ours(got), spec_of_triton(t), inputs)


def _next_power_of_two_above(x: int) -> int:
    """llvm::NextPowerOf2: the smallest power of two strictly greater than x (1 for x == 0)."""
    return 1 << x.bit_length()


def _mode_surjective(rng: random.Random) -> bool | None:
    return rng.choice((None, None, True, False))


# ----------------------------------------------------------------------------- construction
def test_from_bases() -> None:
    m = Mismatches("from_bases")
    for seed in range(CASES):
        rng = rng_for(m.op, seed)
        spec = random_spec(rng, surjective=_mode_surjective(rng))
        bases, out_dims = spec
        t = triton(spec)
        try:
            got = ours(spec)
        except LayoutError as exc:
            m.error(seed, "explicit sizes", exc, spec)
            continue
        same_layout(m, seed, "explicit sizes", got, t, spec)
        m.check(seed, "in dims", list(got.in_dims.items()), [(n, 1 << len(b)) for n, b in t.bases], spec)
        m.check(seed, "dim names", (list(got.in_dim_names), list(got.out_dim_names)),
                (t.get_in_dim_names(), t.get_out_dim_names()), spec)
        m.check(seed, "num dims", (got.num_in_dims, got.num_out_dims), (t.num_in_dims, t.num_out_dims), spec)
        m.check(seed, "is_surjective", got.is_surjective(), t.is_surjective(), spec)
        # Names only: sizes are inferred (the smallest power of two above the largest coordinate)
        # and the layout must then be surjective; Triton aborts the process when it is not.
        names = [n for n, _ in out_dims]
        inferred = (bases, [(n, _next_power_of_two_above(max((v[i] for _, b in bases for v in b), default=0)))
                            for i, n in enumerate(names)])
        if gf2_rank(spec_columns(inferred)) == sum(log2(s) for _, s in inferred[1]):
            try:
                same_layout(m, seed, "inferred sizes", LinearLayout(bases, names), TritonLL.from_bases(bases, names),
                            spec)
            except LayoutError as exc:
                m.error(seed, "inferred sizes", exc, spec)
        else:
            try:
                LinearLayout(bases, names)
                m.items.append(f"from_bases seed={seed}: names-only non-surjective layout accepted: {spec!r}")
            except LayoutError:
                pass
    m.assert_none()


def test_identity_zeros_strided_1d() -> None:
    m = Mismatches("identity_1d/zeros_1d/strided_1d")
    for seed in range(CASES):
        rng = rng_for(m.op, seed)
        size = 1 << rng.randint(0, 12) if rng.random() < 0.95 else 0
        in_dim, out_dim = rng.choice(IN_POOL), rng.choice(OUT_POOL + IN_POOL)
        args = (size, in_dim, out_dim)
        same_layout(m, seed, "identity_1d", LinearLayout.identity_1d(*args), TritonLL.identity_1d(*args), args)
        out_size = 1 << rng.randint(0, 6)
        same_layout(m, seed, "zeros_1d", LinearLayout.zeros_1d(*args), TritonLL.zeros_1d(*args), args)
        same_layout(m, seed, "zeros_1d(out_dim_size)", LinearLayout.zeros_1d(*args, out_size),
                    TritonLL.zeros_1d(*args, out_size), args + (out_size,))
        if size:
            stride = 1 << rng.randint(0, 8)
            sargs = (size, stride, in_dim, out_dim)
            same_layout(m, seed, "strided_1d", LinearLayout.strided_1d(*sargs), TritonLL.strided_1d(*sargs), sargs)
    m.assert_none()


# ----------------------------------------------------------------------------- evaluation and predicates
def test_apply() -> None:
    m = Mismatches("apply")
    for seed in range(CASES):
        rng = rng_for(m.op, seed)
        spec = random_spec(rng, surjective=_mode_surjective(rng))
        got, t = ours(spec), triton(spec)
        xs = [random_inputs(rng, spec) for _ in range(4)]
        for x in xs:
            x = dict(shuffled(rng, x.items()))  # any key order
            m.check(seed, "apply", list(got.apply(x).items()), list(t.apply(x).items()), (spec, x))
        # the vectorized forms agree with Triton too
        if spec[0]:
            arrays = {d: np.array([x[d] for x in xs]) for d, _ in spec[0]}
            vec = got.apply_array(arrays)
            for k, x in enumerate(xs):
                m.check(seed, "apply_array", {d: int(np.broadcast_to(v, (len(xs),))[k]) for d, v in vec.items()},
                        t.apply(x), (spec, x))
    m.assert_none()


def test_is_surjective_injective_invertible() -> None:
    m = Mismatches("is_surjective/is_injective/is_invertible")
    for seed in range(CASES):
        rng = rng_for(m.op, seed)
        kind = rng.choice(("any", "surjective", "invertible", "non-surjective"))
        spec = random_spec(
            rng,
            surjective={"surjective": True, "non-surjective": False}.get(kind),
            invertible=kind == "invertible",
        )
        got, t = ours(spec), triton(spec)
        m.check(seed, "predicates", (got.is_surjective(), got.is_injective(), got.is_invertible()),
                (t.is_surjective(), t.is_injective(), t.is_invertible()), spec)
    m.assert_none()


def test_matrix_view() -> None:
    m = Mismatches("to_matrix/get_matrix_view")
    for seed in range(CASES):
        rng = rng_for(m.op, seed)
        spec = random_spec(rng, surjective=_mode_surjective(rng))
        got, t = ours(spec).to_matrix(), triton(spec).get_matrix_view()
        m.check(seed, "matrix", got.tolist(), [list(r) for r in t], spec)
        m.check(seed, "dtype", got.dtype, np.dtype(np.uint8), spec)
    m.assert_none()


def test_str_is_triton_to_string() -> None:
    m = Mismatches("str/toString")
    for seed in range(CASES):
        rng = rng_for(m.op, seed)
        spec = random_spec(rng, surjective=_mode_surjective(rng))
        if rng.random() < 0.05:  # some empty layouts, with and without out dims
            spec = ([], spec[1])
        got, t = ours(spec), triton(spec)
        m.check(seed, "str", str(got), str(t), spec)
        m.check(seed, "to_string", got.to_string(), repr(t), spec)
    m.assert_none()


def _mutate(rng: random.Random, spec: Spec) -> Spec:
    bases, out_dims = [(n, [list(v) for v in b]) for n, b in spec[0]], list(spec[1])
    how = rng.choice(("same", "same", "out_size", "basis", "in_order", "out_order", "rename"))
    if how == "out_size" and out_dims:
        i = rng.randrange(len(out_dims))
        out_dims[i] = (out_dims[i][0], out_dims[i][1] * 2)
    elif how == "basis":
        cands = [(i, j) for i, (_, b) in enumerate(bases) for j in range(len(b))]
        total = sum(log2(s) for _, s in out_dims)
        if cands and total:
            i, j = rng.choice(cands)
            flat = 1 << rng.randrange(total)
            delta = split_flat(flat, out_dims)
            bases[i][1][j] = [a ^ d for a, d in zip(bases[i][1][j], delta)]
    elif how == "in_order":
        bases = shuffled(rng, bases)
    elif how == "out_order" and out_dims:
        perm = shuffled(rng, range(len(out_dims)))
        out_dims = [out_dims[p] for p in perm]
        bases = [(n, [[v[p] for p in perm] for v in b]) for n, b in bases]
    elif how == "rename" and bases:
        i = rng.randrange(len(bases))
        fresh = [n for n in IN_POOL if n not in [b[0] for b in bases]]
        if fresh:
            bases[i] = (rng.choice(fresh), bases[i][1])
    return bases, out_dims


def test_equality_and_hash() -> None:
    m = Mismatches("__eq__/__hash__")
    for seed in range(CASES):
        rng = rng_for(m.op, seed)
        spec = random_spec(rng, surjective=_mode_surjective(rng), max_in_bits=6)
        other = _mutate(rng, spec)
        a, b = ours(spec), ours(other)
        ta, tb = triton(spec), triton(other)
        m.check(seed, "==", (a == b, a != b), (ta == tb, ta != tb), (spec, other))
        if a == b:
            m.check(seed, "hash of equal layouts", hash(a), hash(b), (spec, other))
    m.assert_none()


# ----------------------------------------------------------------------------- product
def test_product() -> None:
    m = Mismatches("__mul__")
    for seed in range(CASES):
        rng = rng_for(m.op, seed)
        # Both factors draw their dims from one order, so common dims keep the same relative order.
        in_order, out_order = shuffled(rng, IN_POOL)[:4], shuffled(rng, OUT_POOL)[:4]
        specs = []
        for _ in range(2):
            ins = [d for d in in_order if rng.random() < 0.6]
            outs = [d for d in out_order if rng.random() < 0.6]
            specs.append(random_spec(rng, in_names=ins, out_dims=random_out_dims(rng, 0, 4, names=outs),
                                     surjective=_mode_surjective(rng) if ins else None, max_in_bits=8))
        if rng.random() < 0.1:
            specs[1] = specs[0]  # a * a
        a, b = ours(specs[0]), ours(specs[1])
        try:
            got = a * b
        except LayoutError as exc:
            m.error(seed, "a * b", exc, specs)
            continue
        t = triton(specs[0]) * triton(specs[1])
        same_layout(m, seed, "a * b", got, t, specs)
        m.check(seed, "surjective", got.is_surjective(), a.is_surjective() and b.is_surjective(), specs)
    m.assert_none()


# ----------------------------------------------------------------------------- compose
def _outer_of(rng: random.Random, inner: Spec) -> Spec:
    """A random layout whose in-dims are `inner`'s out-dims (any order, each at least as large)."""
    out_dims = random_out_dims(rng, rng.choice((0, 1, 2, 2, 3)), 5)
    total = sum(log2(s) for _, s in out_dims)
    mode = rng.choice(("random", "distributed", "broadcast"))
    bases = []
    for d, size in shuffled(rng, inner[1]):
        nbits = log2(size) + rng.choice((0, 0, 1, 2))
        col = []
        for _ in range(nbits):
            if mode == "random" or total == 0:
                flat = rng.getrandbits(total)
            elif mode == "distributed":
                flat = 0 if rng.random() < 0.3 else 1 << rng.randrange(total)
            else:
                flat = 0 if rng.random() < 0.5 else rng.getrandbits(total)
            col.append(split_flat(flat, out_dims))
        bases.append((d, col))
    return bases, out_dims


def test_compose() -> None:
    m = Mismatches("compose")
    for seed in range(CASES):
        rng = rng_for(m.op, seed)
        inner = random_spec(rng, surjective=_mode_surjective(rng), max_in_bits=10)
        outer = _outer_of(rng, inner)
        try:
            got = ours(inner).compose(ours(outer))
        except LayoutError as exc:
            m.error(seed, "compose", exc, (inner, outer))
            continue
        same_layout(m, seed, "compose", got, triton(inner).compose(triton(outer)), (inner, outer))
    m.assert_none()


# ----------------------------------------------------------------------------- inverses
def test_invert() -> None:
    m = Mismatches("invert")
    for seed in range(CASES):
        rng = rng_for(m.op, seed)
        if rng.random() < 0.2:  # in-dims named like the out-dims (as identity_1d(n, "block", "block"))
            out_dims = random_out_dims(rng, rng.randint(1, 3), 5)
            spec = random_spec(rng, invertible=True, out_dims=out_dims, in_names=[n for n, _ in out_dims])
        else:
            spec = random_spec(rng, invertible=True)
        try:
            got = ours(spec).invert()
        except LayoutError as exc:
            m.error(seed, "invert", exc, spec)
            continue
        same_layout(m, seed, "invert", got, triton(spec).invert(), spec)
    m.assert_none()


def test_pseudoinvert() -> None:
    m = Mismatches("pseudoinvert")
    for seed in range(CASES):
        rng = rng_for(m.op, seed)
        spec = random_spec(rng, surjective=True, mode=rng.choice(("random", "distributed", "broadcast", "duplicate")))
        try:
            got = ours(spec).pseudoinvert()
        except LayoutError as exc:
            m.error(seed, "pseudoinvert", exc, spec)
            continue
        same_layout(m, seed, "pseudoinvert", got, triton(spec).pseudoinvert(), spec)
    m.assert_none()


def _distributed(rng: random.Random, out_dims, names=("register", "lane", "warp", "block")) -> Spec:
    """A realistic distributed layout: a permutation of the out bits with zero columns interleaved."""
    t_bits = sum(log2(s) for _, s in out_dims)
    cols = [1 << i for i in range(t_bits)]
    rng.shuffle(cols)
    for _ in range(rng.randint(0, 3)):
        cols.insert(rng.randint(0, len(cols)), 0)
    cuts = sorted(rng.randint(0, len(cols)) for _ in range(len(names) - 1))
    bounds = list(zip([0] + cuts, cuts + [len(cols)]))
    return [(n, [split_flat(c, out_dims) for c in cols[a:b]]) for n, (a, b) in zip(names, bounds)], list(out_dims)


def _invert_and_compose_pair(rng: random.Random) -> tuple[Spec, Spec]:
    """(self, outer): outer surjective; self's out dims = outer's (any order), each no larger."""
    kind = rng.choice(("random", "distributed", "shared_dims", "shared_dims", "smaller_outs", "non_surjective_outer",
                       "same_flats_smaller_outs"))
    if kind == "non_surjective_outer":
        # Triton 3.9 needs only image(self) inside image(outer): self's columns are sums of outer's.
        outer = random_spec(rng, surjective=False, max_in_bits=8, n_out=rng.randint(1, 3))
        cols = spec_columns(outer)
        names = shuffled(rng, IN_POOL)[: rng.randint(1, 3)]
        bases = []
        for n in names:
            vecs = []
            for _ in range(rng.randint(0, 4)):
                flat = 0
                for c in cols:
                    if rng.random() < 0.5:
                        flat ^= c
                vecs.append(split_flat(flat, outer[1]))
            bases.append((n, vecs))
        perm = shuffled(rng, range(len(outer[1])))
        return ([(n, [[v[p] for p in perm] for v in b]) for n, b in bases], [outer[1][p] for p in perm]), outer
    if kind == "distributed":
        out_dims = random_out_dims(rng, rng.randint(1, 3), 4)
        outer = _distributed(rng, out_dims)
        self_ = _distributed(rng, shuffled(rng, out_dims))
        return self_, outer
    if kind == "same_flats_smaller_outs":  # distributed: one bit per basis, so dims can be identity dims
        outer = _distributed(rng, random_out_dims(rng, rng.randint(2, 3), 4))
    else:
        outer = random_spec(rng, surjective=True, max_in_bits=10, n_out=rng.randint(1, 3))
    out_dims = shuffled(rng, outer[1])
    if kind in ("smaller_outs", "same_flats_smaller_outs"):
        out_dims = [(d, s >> rng.randint(0, min(2, log2(s)))) for d, s in out_dims]
    if kind == "same_flats_smaller_outs":
        # self's dims share outer's flattened bases read with self's smaller out sizes (in outer's out
        # order): the same integers, other coordinates; a coordinate of outer beyond self's size must
        # not pass for self's next out dim (the identity rule compares coordinates)
        out_dims = [(d, dict(out_dims)[d]) for d, _ in outer[1]]
        total = sum(log2(s) for _, s in out_dims)
        keep = [(n, b) for n, b in outer[0] if rng.random() < 0.5] or [rng.choice(outer[0])]
        bases = [(n, [split_flat(flat_of(v, outer[1]) & ((1 << total) - 1), out_dims) for v in b]) for n, b in keep]
        perm = shuffled(rng, range(len(out_dims)))
        return ([(n, [[v[p] for p in perm] for v in b]) for n, b in bases], [out_dims[p] for p in perm]), outer
    if kind == "shared_dims":
        # self shares in-dims with outer: some with identical bases (data that need not move),
        # some with permuted or fresh bases, plus maybe dims outer lacks.
        perm = [[n for n, _ in outer[1]].index(d) for d, _ in out_dims]
        bases = []
        for n, b in outer[0]:
            b = [[v[p] for p in perm] for v in b]
            r = rng.random()
            if r < 0.5:
                bases.append((n, b))
            elif r < 0.75:
                bases.append((n, shuffled(rng, b)))
            else:
                total = sum(log2(s) for _, s in out_dims)
                bases.append((n, [split_flat(rng.getrandbits(total), out_dims) for _ in b]))
        if rng.random() < 0.3:
            extra = [d for d in IN_POOL if d not in [n for n, _ in bases]]
            total = sum(log2(s) for _, s in out_dims)
            vecs = [split_flat(rng.getrandbits(total), out_dims) for _ in range(rng.randint(0, 3))]
            bases.append((rng.choice(extra), vecs))
        if rng.random() < 0.3:
            bases = shuffled(rng, bases)
        return (bases, out_dims), outer
    return random_spec(rng, out_dims=out_dims, max_in_bits=10), outer


def test_invert_and_compose() -> None:
    m = Mismatches("invert_and_compose")
    for seed in range(CASES):
        rng = rng_for(m.op, seed)
        self_, outer = _invert_and_compose_pair(rng)
        try:
            got = ours(self_).invert_and_compose(ours(outer))
        except LayoutError as exc:
            m.error(seed, "invert_and_compose", exc, (self_, outer))
            continue
        same_layout(m, seed, "invert_and_compose", got, triton(self_).invert_and_compose(triton(outer)), (self_, outer))
    m.assert_none()


def test_compose_with_invert_matches_triton() -> None:
    """``a.compose(b.invert())`` (Triton's own idiom for conversions between invertible layouts)."""
    m = Mismatches("compose(invert)")
    for seed in range(CASES // 4):
        rng = rng_for(m.op, seed)
        b = random_spec(rng, invertible=True, n_out=rng.randint(1, 3))
        a_out = [(d, s >> rng.randint(0, min(1, log2(s)))) for d, s in shuffled(rng, b[1])]
        a = random_spec(rng, out_dims=a_out, max_in_bits=10)
        try:
            got = ours(a).compose(ours(b).invert())
        except LayoutError as exc:
            m.error(seed, "compose(invert)", exc, (a, b))
            continue
        same_layout(m, seed, "compose(invert)", got, triton(a).compose(triton(b).invert()), (a, b))
    m.assert_none()
