"""The compiled core against the pure-Python core: same results, same errors, no crash on junk.

Each case runs an operation under both backends (``linear_layouts.core._ccore.using``) and compares the
outcomes exactly: a layout field by field (names, flattened bases, out sizes, rank), a value by value and
type, an error by type and message. Layouts are seeded random specs (``_support.random_spec``), including
layouts wider than the 64-bit words of the C core (it declines them and the Python code answers).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from linear_layouts import LayoutError, LinearLayout
from linear_layouts.core import _ccore, f2

from . import fuzz_ccore
from ._support import OUT_POOL, Spec, ours, random_inputs, random_out_dims, random_spec

pytestmark = pytest.mark.skipif(not _ccore.available(), reason="the C extension is not built (pip install -e . builds it)")

CASES = 1000


@pytest.fixture(scope="module", autouse=True)
def backend() -> Iterator[None]:
    """Overrides the both-backends fixture of conftest.py: the tests here switch backends themselves."""
    yield None


def outcome(fn: Callable[[], Any]) -> Any:
    """What ``fn()`` gives, in a comparable form: layouts by their fields, arrays by dtype/shape/values."""
    try:
        value = fn()
    except LayoutError as error:
        return ("LayoutError", str(error))
    return normal(value)


def normal(value: Any) -> Any:
    if isinstance(value, LinearLayout):
        fields = (value._in_names, value._in_bases, value._out_names, value._out_log2, value._out_shifts,
                  value._in_bits, value._out_bits)
        assert all(type(f) is tuple for f in fields[:5]) and all(type(d) is tuple for d in value._in_bases)
        assert all(type(b) is int for d in value._in_bases for b in d)
        return ("layout", fields, value.rank, value.is_surjective(), value.is_injective(), value.is_invertible(),
                hash(value))
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape, value.tolist())
    if isinstance(value, dict):
        return ("dict", [(k, normal(v)) for k, v in value.items()])
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [normal(v) for v in value])
    return (type(value).__name__, value)


def same_on_both(fn: Callable[[], Any]) -> Any:
    """Run ``fn`` on both backends; assert equal outcomes; return the outcome."""
    with _ccore.using("c"):
        got = outcome(fn)
    with _ccore.using("python"):
        want = outcome(fn)
    assert got == want, f"c: {got!r:.600}\npython: {want!r:.600}"
    return got


def build(spec: Spec, surjective: bool = False) -> LinearLayout:
    with _ccore.using("python"):
        return ours(spec, surjective)


def rng_for(op: str, seed: int) -> random.Random:
    return random.Random(f"backends:{op}:{seed}")


def wide_spec(rng: random.Random) -> Spec:
    """Out dims of 2**31: more out bits than a 64-bit word holds."""
    out_dims = [(f"dim{k}", 1 << 31) for k in range(rng.randint(3, 4))]
    bases = [("register", [[rng.getrandbits(31) for _ in out_dims] for _ in range(rng.randint(1, 4))]),
             ("lane", [[1 << rng.randrange(31) if k == 0 else 0 for k in range(len(out_dims))]])]
    return bases, out_dims


def random_layout_spec(rng: random.Random) -> Spec:
    return wide_spec(rng) if rng.random() < 0.05 else random_spec(rng, surjective=rng.choice((None, True, False)))


# ----------------------------------------------------------------------------- results


def test_construction() -> None:
    answered = 0
    for seed in range(CASES):
        rng = rng_for("construct", seed)
        bases, out_dims = random_layout_spec(rng)
        req = rng.choice((True, False))
        form = rng.randrange(4)
        if form == 0:
            args = (dict(bases), dict(out_dims))
        elif form == 1:
            args = ([(n, [tuple(v) for v in b]) for n, b in bases], tuple(out_dims))
        elif form == 2:
            args = (bases, [n for n, _ in out_dims])  # names only: sizes inferred, surjective required
        else:
            args = (bases, out_dims)
        got = same_on_both(lambda: LinearLayout(*args, require_surjective=req))
        answered += got[0] == "layout"
    assert answered > CASES // 3


def test_apply_and_vectorized_apply() -> None:
    for seed in range(CASES):
        rng = rng_for("apply", seed)
        spec = random_layout_spec(rng)
        a = build(spec)
        x = random_inputs(rng, spec)
        if x and rng.random() < 0.3:
            x.pop(rng.choice(list(x)))  # missing dims are 0
        same_on_both(lambda: a.apply(x))
        shape = rng.choice(((5,), (2, 3), (0,), (4, 1)))
        arrays = {n: np.array([rng.getrandbits(len(b)) if b else 0 for _ in range(int(np.prod(shape)))],
                              dtype=rng.choice((np.int64, np.int32, np.uint16))).reshape(shape) for n, b in spec[0]}
        same_on_both(lambda: a.apply_array(arrays))
        if a.total_in_dim_size_log2 <= 12:
            same_on_both(lambda: a.apply_all())


def test_product() -> None:
    for seed in range(CASES):
        rng = rng_for("product", seed)
        a, b = build(random_layout_spec(rng)), build(random_layout_spec(rng))
        same_on_both(lambda: a * b)
        same_on_both(lambda: b * a)


def test_compose_invert_and_compose_pseudoinvert() -> None:
    for seed in range(CASES):
        rng = rng_for("solve", seed)
        outer_spec = random_spec(rng, surjective=rng.random() < 0.8)
        outer = build(outer_spec)
        out_names = [n for n, _ in outer_spec[1]]
        rng.shuffle(out_names)
        sizes = dict(outer_spec[1])
        small = [(n, max(1, sizes[n] >> rng.choice((0, 0, 1)))) for n in out_names]
        b = build(random_spec(rng, out_dims=small))
        same_on_both(lambda: b.invert_and_compose(outer))
        same_on_both(lambda: outer.pseudoinvert())
        same_on_both(lambda: outer.invert())
        # compose: self's out dims are outer's in dims
        ins = [(n, 1 << len(v)) for n, v in outer_spec[0]]
        s = build(random_spec(rng, out_dims=[(n, max(1, k >> rng.choice((0, 1)))) for n, k in ins]))
        same_on_both(lambda: s.compose(outer))
        same_on_both(lambda: outer.compose(s))  # usually an error: same message wanted


def test_reshapes_views_equality() -> None:
    for seed in range(CASES):
        rng = rng_for("views", seed)
        spec = random_layout_spec(rng)
        a = build(spec)
        outs = [n for n, _ in spec[1]]
        ins = [n for n, _ in spec[0]]
        out_order, in_order = rng.sample(outs, len(outs)), rng.sample(ins, len(ins))
        keep_in, keep_out = rng.sample(ins, rng.randint(0, len(ins))), rng.sample(outs, rng.randint(0, len(outs)))
        same_on_both(lambda: a.transpose_outs(out_order))
        same_on_both(lambda: a.transpose_ins(in_order))
        same_on_both(lambda: a.sublayout(keep_in, keep_out))
        same_on_both(lambda: a.flatten_outs().flatten_ins())
        same_on_both(lambda: str(a))
        same_on_both(lambda: a.to_matrix())
        copy = build(spec)
        same_on_both(lambda: (a == copy, a != copy, hash(a) == hash(copy), a == a.flatten_outs(), a == 3))


def test_f2_words() -> None:
    for seed in range(CASES):
        rng = rng_for("f2", seed)
        bits = rng.choice((4, 16, 63, 64, 65))
        cols = [rng.getrandbits(bits) for _ in range(rng.randint(0, 70))]
        y = rng.getrandbits(bits)
        same_on_both(lambda: f2.echelon(cols))
        same_on_both(lambda: f2.rank(cols))
        same_on_both(lambda: f2.rank(iter(cols)))
        same_on_both(lambda: f2.solve(cols, y))
        spanned = f2.apply(cols, rng.getrandbits(len(cols)))
        same_on_both(lambda: f2.solve(cols, spanned))
        for target in (y, spanned):  # the reusable solver answers what solve does, on either backend
            assert same_on_both(lambda: f2.solver(cols)(target)) == same_on_both(lambda: f2.solve(cols, target))


def test_wide_layouts_are_answered_by_python() -> None:
    rng = random.Random(7)
    a = build(wide_spec(rng))
    assert a.total_out_dim_size_log2 > 64
    other = build(([("warp", [[1]])], [("extra", 2)]))
    got = same_on_both(lambda: a * other)
    assert got[0] == "layout" and got[1][6] == a.total_out_dim_size_log2 + 1
    assert same_on_both(lambda: str(a))[0] == "str"
    assert same_on_both(lambda: a.apply({"lane": 1}))[0] == "dict"


# ----------------------------------------------------------------------------- bad input: same LayoutError

BAD_CONSTRUCTIONS: list[tuple[Any, Any, Any]] = [
    (None, ["dim0"], True),
    ({"lane": [[1], [2]]}, "dim0", True),
    ({"lane": [[1], [-2]]}, ["dim0"], True),
    ({"lane": [[1], [4]]}, {"dim0": 4}, False),
    ({"lane": [[1], [2]]}, {"dim0": 3}, False),
    ({"lane": [[1], [2]]}, {"dim0": True}, False),
    ({"lane": [[1], [2]]}, {"dim0": 1 << 32}, False),
    ({"lane": [[1, 0]]}, ["dim0"], True),
    ({"lane": [[1.0]]}, ["dim0"], True),
    ({"lane": [[True]]}, ["dim0"], True),
    ({"lane": [[1 << 31]]}, ["dim0"], True),
    ({"lane": [[1 << 70]]}, ["dim0"], True),
    ({"lane": [[1], [1]]}, {"dim0": 2}, True),
    ({"lane": [[1]] * 32}, {"dim0": 2}, False),
    ({"": [[1]]}, ["dim0"], True),
    ({3: [[1]]}, ["dim0"], True),
    ([("lane", [[1]]), ("lane", [[1]])], ["dim0"], True),
    ({"lane": [[1]]}, ["dim0", "dim0"], True),
    ({"lane": [[1]]}, [("dim0", 2), "dim1"], True),
    ({"lane": "ab"}, ["dim0"], True),
    ({"lane": [[1], {2}]}, ["dim0"], True),
    ({"lane": [[1]]}, ["dim0"], "yes"),
    ({"lane": [[1]]}, {"dim0": 2}, None),
    ([("lane",)], ["dim0"], True),
    ({"lane": [[np.int64(1)], [np.uint8(2)]]}, {"dim0": np.int64(4)}, True),  # accepted by the Python code
    ({"lane": [[1]], "warp": [[1 << 30]]}, [("dim0", 1 << 31)], False),
]


@pytest.mark.parametrize("bases,out_dims,req", BAD_CONSTRUCTIONS)
def test_same_error_for_bad_construction(bases: Any, out_dims: Any, req: Any) -> None:
    same_on_both(lambda: LinearLayout(bases, out_dims, require_surjective=req))


def test_same_error_for_bad_operations() -> None:
    a = build(([("lane", [[1], [2]]), ("warp", [[0]])], [("dim0", 4)]))
    b = build(([("lane", [[1, 0]])], [("dim0", 2), ("dim1", 2)]))
    cases = [
        lambda: a.apply({"lane": 4}), lambda: a.apply({"lane": -1}), lambda: a.apply({"nope": 0}),
        lambda: a.apply({"lane": True}), lambda: a.apply({"lane": 1.0}), lambda: a.apply([("lane", 1)]),
        lambda: a.apply({"lane": np.int64(3)}), lambda: a.apply({"lane": 1 << 80}),
        lambda: a.apply_array({"lane": np.array([4])}), lambda: a.apply_array({"lane": np.array([1.5])}),
        lambda: a.apply_array({"lane": [1, 2], "warp": [0, 0, 0]}), lambda: a.apply_array({"nope": [0]}),
        lambda: a.apply_array({"lane": np.array([1, 2]), "warp": np.array([[0], [1]])}),
        lambda: a.apply_array({"lane": np.array(3)}), lambda: a.apply_array({}),
        lambda: a.apply_array({"lane": np.arange(4) % 4}, max_elements=2),
        lambda: a.apply_all(max_elements=2),
        lambda: a.compose(b), lambda: b.compose(a), lambda: a.invert_and_compose(b), lambda: b.invert_and_compose(a),
        lambda: b.pseudoinvert(), lambda: a.invert(), lambda: a.compose(3), lambda: a.invert_and_compose(None),
        lambda: a.transpose_outs(["x"]), lambda: b.sublayout(["lane"], ["nope"]), lambda: a.to_matrix(max_elements=1),
        lambda: a * 3,
    ]
    for case in cases:
        try:
            same_on_both(case)
        except TypeError:  # `a * 3` is a TypeError on both: the same NotImplemented protocol
            with _ccore.using("c"), pytest.raises(TypeError, match="unsupported operand"):
                case()


def test_odd_names_are_printed_the_same() -> None:
    a = build(([("l\u00e9ne", [[1]]), ("é", [[2]])], [("dim\x00", 4)]))
    same_on_both(lambda: str(a))
    same_on_both(lambda: a.to_string())
    # a lone surrogate cannot be printed as UTF-8 (Triton's names are UTF-8): refused the same way by both
    outcome = same_on_both(lambda: LinearLayout([("l\udc80ne", [[1]])], ["dim0"]))
    assert "must be valid Unicode text" in str(outcome)


# ----------------------------------------------------------------------------- the C core never crashes


def test_fuzz_short() -> None:
    stats = fuzz_ccore.run(iterations=200, seed=1)
    assert stats["answered"] > 0 and stats["declined"] > 0


def test_backend_switch_restores_eq_hash_and_methods() -> None:
    def kind() -> str:
        return type(vars(LinearLayout)["is_surjective"]).__name__

    with _ccore.using("python"):
        assert (_ccore.backend(), kind()) == ("python", "function")
        a = build(([("lane", [[1]])], [("dim0", 2)]))
        assert a == build(([("lane", [[1]])], [("dim0", 2)])) and a.is_surjective()
        with _ccore.using("c"):
            assert (_ccore.backend(), kind()) == ("c", "method_descriptor")
            assert a == build(([("lane", [[1]])], [("dim0", 2)])) and a.is_surjective()
        assert (_ccore.backend(), kind()) == ("python", "function")
    with pytest.raises(ValueError, match="backend must be"):
        with _ccore.using("fortran"):
            pass


def test_out_pool_is_used() -> None:
    """The random specs above draw several out dims of the pool (a sanity check of the generator)."""
    rng = random.Random(3)
    names = {n for _ in range(50) for n, _ in random_out_dims(rng, 3)}
    assert names <= set(OUT_POOL) and len(names) > 3
