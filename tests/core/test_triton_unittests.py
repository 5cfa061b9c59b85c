"""Every case of Triton's LinearLayout unit tests (``tests/data/triton-unittests/algebra.json``) as a test.

Each JSON case is ``{name, op, args, expected, ...}``; its meaning per ``op`` is documented in the
folder's README.md ("algebra.json ops").  The cases were taken from
``unittest/Tools/LinearLayoutTest.cpp`` and ``LayoutUtilsTest.cpp`` of Triton; the expected values
are compared exactly (bases, dim names and order, out-dim sizes, the derived surjectivity).
"""

from __future__ import annotations

import json

import pytest

from ._support import ours_json, spec_of_json, spec_of_ours, unittests_dir

_DIR = unittests_dir()
_CASES = json.loads((_DIR / "algebra.json").read_text())["cases"]


def _assert_layout(got, expected: dict, *, check_surjective: bool = True) -> None:
    """`got` (our layout) equals the JSON layout exactly: in-dim order and bases, out-dim order and sizes."""
    assert spec_of_ours(got) == spec_of_json(expected)
    if check_surjective and "surjective" in expected:
        assert got.is_surjective() == expected["surjective"]


def _is_identity_on_out_dim(layout, dim: str) -> bool:
    """Triton's ``isIdentityOnOutDim``: identity dim -> dim, and no other in-dim reaches `dim`."""
    if not (layout.has_in_dim(dim) and layout.has_out_dim(dim)):
        return False
    others = [d for d in layout.in_dim_names if d != dim]
    return layout.square_sublayout_is_identity([dim]) and layout.sublayout_is_zero(others, [dim])


def _supremum(x: list[str], y: list[str]) -> list[str]:
    """Triton's ``supremum`` of two name orders (strict: inconsistent orders raise)."""
    from linear_layouts.core.layout import supremum

    return supremum(x, y)


def _block_local():
    """``invertAndComposeBlockLocal`` (Triton's LayoutUtils), wherever the package provides it."""
    import importlib

    for module in ("linear_layouts.core.layout", "linear_layouts.analysis.conversion", "linear_layouts.analysis"):
        try:
            mod = importlib.import_module(module)
        except ImportError:
            continue
        fn = getattr(mod, "invert_and_compose_block_local", None)
        if fn is not None:
            return fn
    pytest.skip("invert_and_compose_block_local (Triton LayoutUtils) is not provided by the package yet")


def _run_case(case: dict) -> None:  # noqa: C901 - one branch per JSON op, read top to bottom
    from linear_layouts import ColumnAction, LayoutError, LinearLayout, divide_left, divide_right

    op, a, e = case["op"], case["args"], case.get("expected")

    if op == "empty":
        got = LinearLayout.empty()
        _assert_layout(got, e)
        assert list(got.in_dim_names) == case["checks"]["in_dim_names"]
        assert list(got.out_dim_names) == case["checks"]["out_dim_names"]
    elif op in ("identity_1d", "zeros_1d"):
        ctor = LinearLayout.identity_1d if op == "identity_1d" else LinearLayout.zeros_1d
        got = ctor(a["size"], a["in_dim"], a["out_dim"])
        _assert_layout(got, e)
        checks = case.get("checks", {})
        if "in_dim_names" in checks:
            assert list(got.in_dim_names) == checks["in_dim_names"]
            assert list(got.out_dim_names) == checks["out_dim_names"]
        for d, v in checks.get("in_dim_size_log2", {}).items():
            assert got.in_dim_size_log2(d) == v
        for d, v in checks.get("out_dim_size_log2", {}).items():
            assert got.out_dim_size_log2(d) == v
    elif op == "construct":
        got = LinearLayout([(n, b) for n, b in a["bases"]], a["out_dim_names"])
        _assert_layout(got, e)
    elif op == "out_dim_size_log2":
        got = LinearLayout([(n, b) for n, b in a["bases"]], a["out_dim_names"])
        _assert_layout(got, case["layout"])
        assert got.out_dim_size_log2(a["out_dim"]) == e
    elif op == "total_out_dim_size":
        assert ours_json(a["layout"]).total_out_dim_size == e
    elif op == "to_string":
        assert str(ours_json(a["layout"])) == e
    elif op == "product":
        got = ours_json(a["lhs"]) * ours_json(a["rhs"])
        _assert_layout(got, e)
        if "checks" in case:
            assert list(got.in_dim_names) == case["checks"]["in_dim_names"]
            assert list(got.out_dim_names) == case["checks"]["out_dim_names"]
    elif op == "compose":
        got = ours_json(a["lhs"]).compose(ours_json(a["rhs"]))
        if e is None:
            want = case["expected_equal_ignoring_out_dim_sizes"]
            assert got.equal_ignoring_out_dim_sizes(ours_json(want))
            assert spec_of_ours(got)[0] == spec_of_json(want)[0]
        else:
            _assert_layout(got, e)
        if "checks" in case:
            assert got.is_surjective() == case["checks"]["is_surjective"]
    elif op == "invert_and_compose":
        got = ours_json(a["lhs"]).invert_and_compose(ours_json(a["rhs"]))
        if e is not None:
            _assert_layout(got, e)
        if "is_surjective" in case.get("checks", {}):
            assert got.is_surjective() == case["checks"]["is_surjective"]
        if "expected_properties" in case:
            prop = case["expected_properties"]["is_trivial_over"]
            assert got.is_trivial_over(prop["dims"]) == prop["value"]
    elif op == "compose_with_inverse":
        got = ours_json(a["lhs"]).compose(ours_json(a["rhs"]).invert())
        _assert_layout(got, e)
    elif op == "invert_and_compose_roundtrip":
        lhs, rhs = ours_json(a["lhs"]), ours_json(a["rhs"])
        got = lhs.invert_and_compose(rhs).compose(rhs)
        _assert_layout(got, e)
    elif op == "invert_and_compose_apply_roundtrip":
        lhs, rhs = ours_json(a["lhs"]), ours_json(a["rhs"])
        x = dict(a["input"])
        want = [[n, v] for n, v in e]
        conversion = lhs.invert_and_compose(rhs)
        assert [[n, v] for n, v in lhs.apply(x).items()] == want
        assert [[n, v] for n, v in rhs.apply(conversion.apply(x)).items()] == want
    elif op == "invert_and_compose_is_identity_on_out_dim":
        got = ours_json(a["lhs"]).invert_and_compose(ours_json(a["rhs"]))
        assert _is_identity_on_out_dim(got, a["dim"]) == e
    elif op == "invert_and_compose_block_local":
        fn = _block_local()
        got = fn(ours_json(a["mem_layout"]), ours_json(a["reg_layout"]))
        _assert_layout(got, e)
        checks = case.get("checks", {})
        for d, v in checks.get("is_identity_on_out_dim", {}).items():
            assert _is_identity_on_out_dim(got, d) == v
        if "is_trivial_over" in checks:
            assert got.is_trivial_over(checks["is_trivial_over"]["dims"]) == checks["is_trivial_over"]["value"]
    elif op == "invert_and_compose_block_local_equals_invert_and_compose":
        fn = _block_local()
        mem, reg = ours_json(a["mem_layout"]), ours_json(a["reg_layout"])
        assert (fn(mem, reg) == reg.invert_and_compose(mem)) == e
    elif op == "apply":
        layout = ours_json(a["layout"])
        got = layout.apply(dict(a["inputs"]))
        assert [[n, v] for n, v in got.items()] == e
    elif op == "pseudoinvert_apply_grid":
        pinv = ours_json(a["layout"]).pseudoinvert()
        (d0, n0), (d1, n1) = a["grid"]
        got = [[pinv.apply({d0: i, d1: j})["offset"] for j in range(n1)] for i in range(n0)]
        assert got == e["offsets"]
    elif op == "equal":
        assert (ours_json(a["lhs"]) == ours_json(a["rhs"])) == e
    elif op == "not_equal":
        assert (ours_json(a["lhs"]) != ours_json(a["rhs"])) == e
    elif op == "equal_ignoring_out_dim_sizes":
        assert ours_json(a["lhs"]).equal_ignoring_out_dim_sizes(ours_json(a["rhs"])) == e
    elif op == "transpose_ins":
        _assert_layout(ours_json(a["layout"]).transpose_ins(a["order"]), e)
    elif op == "transpose_outs":
        _assert_layout(ours_json(a["layout"]).transpose_outs(a["order"]), e)
    elif op == "reshape_ins":
        _assert_layout(ours_json(a["layout"]).reshape_ins([tuple(p) for p in a["new_in_dims"]]), e)
    elif op == "reshape_outs":
        _assert_layout(ours_json(a["layout"]).reshape_outs([tuple(p) for p in a["new_out_dims"]]), e)
    elif op == "flatten_ins":
        _assert_layout(ours_json(a["layout"]).flatten_ins(), e)
    elif op == "flatten_outs":
        _assert_layout(ours_json(a["layout"]).flatten_outs(), e)
    elif op == "sublayout":
        _assert_layout(ours_json(a["layout"]).sublayout(a["in_dims"], a["out_dims"]), e)
    elif op == "sublayout_is_zero":
        assert ours_json(a["layout"]).sublayout_is_zero(a["in_dims"], a["out_dims"]) == e
    elif op == "square_sublayout_is_identity":
        assert ours_json(a["layout"]).square_sublayout_is_identity(a["dims"]) == e
    elif op == "quotient":
        got = ours_json(a["layout"]).quotient(a["dims"])
        assert (got is not None) == case["expected_has_value"]
        if e is not None:
            _assert_layout(got, e)
    elif op == "quotient_chain":
        layout = ours_json(a["layout"])
        for dims, has_value in zip(a["dims_sequence"], case["expected_has_value"]):
            layout = layout.quotient(dims)
            assert (layout is not None) == has_value
            if layout is None:
                break
    elif op == "free_variable_masks":
        got = ours_json(a["layout"]).free_variable_masks()
        assert [[n, m] for n, m in got.items()] == e
    elif op == "num_consecutive_in_out":
        assert ours_json(a["layout"]).num_consecutive_in_out() == e
    elif op in ("divide_left", "divide_right"):
        lhs, rhs = ours_json(a["lhs"]), ours_json(a["rhs"])
        fn, method = (divide_left, lhs.divide_left) if op == "divide_left" else (divide_right, lhs.divide_right)
        for got in (fn(lhs, rhs), method(rhs)):
            assert (got is not None) == case["expected_has_value"]
            if e is not None:
                _assert_layout(got, e)
                # and the defining law: lhs == rhs * got (left) or got * rhs (right)
                assert (rhs * got if op == "divide_left" else got * rhs) == lhs
    elif op == "supremum":
        if case.get("expected_error"):
            with pytest.raises(LayoutError, match=r"dims \['a', 'b'\] and \['b', 'a'\] appear in different relative"):
                _supremum(a["x"], a["y"])
        else:
            assert _supremum(a["x"], a["y"]) == e
    elif op == "column_action_apply_layout":
        action = ColumnAction(a["action"], a["in_dim"], a["in_size_log2"])
        _assert_layout(action.apply(ours_json(a["layout"])), e)
    elif op == "column_action_apply_values":
        action = ColumnAction(a["action"], a["in_dim"], a["in_size_log2"])
        assert list(action.apply_values(a["values"])) == e
    else:  # a new op in the JSON must not pass silently
        pytest.fail(f"unknown op {op!r} in algebra.json; add it to this test")


def _params():
    for c in _CASES:
        yield pytest.param(c, id=c["name"])


@pytest.mark.parametrize("case", list(_params()))
def test_algebra_case(case: dict) -> None:
    _run_case(case)


def test_every_op_of_the_json_is_covered() -> None:
    """The README's op list: all 39 ops are present, so a renamed op cannot silently drop cases."""
    ops = {c["op"] for c in _CASES}
    assert len(_CASES) == 161
    assert len(ops) == 39
