"""Layout specs: Gluon constructor syntax and raw bases, parsed without eval, with clear errors."""

from __future__ import annotations

import json
import random

import pytest

from linear_layouts import LayoutError, LinearLayout
from linear_layouts.spec import catalog_classes, layout_from_spec, parse_spec

from tools_helpers import random_distributed, random_shared


def _needs_catalog(*names: str) -> dict:
    classes = catalog_classes()
    missing = [n for n in names if n not in classes]
    if missing:
        pytest.skip(f"catalog lacks {missing}")
    return classes


def test_json_object_and_pair_forms_give_the_same_layout():
    rng = random.Random(3)
    for _ in range(40):
        layout = random_distributed(rng) if rng.random() < 0.5 else random_shared(rng)
        as_object = json.dumps({"bases": layout.bases, "out_dims": layout.out_dims})
        as_pairs = json.dumps({"bases": list(layout.bases.items()), "out_dims": list(layout.out_dims.items())})
        assert layout_from_spec(as_object) == layout
        assert layout_from_spec(as_pairs) == layout


def test_triton_unittest_encoding_is_accepted():
    text = ('{"bases": [["register", [[0,1],[8,0],[0,8]]], ["lane", [[0,2],[0,4],[1,0],[2,0],[4,0]]], '
            '["warp", []], ["block", []]], "out_dims": [["dim0", 16], ["dim1", 16]], "surjective": true}')
    layout = layout_from_spec(text)
    assert layout.apply({"register": 2, "lane": 0}) == {"dim0": 8, "dim1": 0}
    assert layout.out_dims == {"dim0": 16, "dim1": 16}


def test_out_dim_names_only_infers_sizes():
    layout = layout_from_spec('{"bases": {"offset": [[0,1],[0,2],[1,0]]}, "out_dims": ["dim0", "dim1"]}')
    assert layout.out_dims == {"dim0": 2, "dim1": 4}


def test_linear_layout_repr_round_trips():
    rng = random.Random(5)
    for _ in range(30):
        layout = random_distributed(rng)
        assert layout_from_spec(repr(layout)) == layout


def test_raw_triton_style_constructors():
    layout = layout_from_spec("DistributedLinearLayout(reg_bases=[[0,1]], lane_bases=[[0,2],[0,4],[0,8],[0,16],"
                              "[1,0]], warp_bases=[], block_bases=[], shape=[2, 32])")
    assert layout.in_dims == {"register": 2, "lane": 32, "warp": 1, "block": 1}
    assert layout.apply({"lane": 16}) == {"dim0": 1, "dim1": 0}
    shared = layout_from_spec("SharedLinearLayout(offset_bases=[[0,1],[0,2],[1,0]], block_bases=[])")
    assert shared.apply({"offset": 4}) == {"dim0": 1, "dim1": 0}


def test_gluon_blocked_layout_matches_direct_construction():
    classes = _needs_catalog("BlockedLayout")
    direct = classes["BlockedLayout"]([1, 4], [4, 8], [4, 1], [1, 0])
    for text in ("BlockedLayout([1,4],[4,8],[4,1],[1,0])",
                 "gl.BlockedLayout(size_per_thread=[1, 4], threads_per_warp=[4, 8], warps_per_cta=[4, 1], order=[1, 0])",
                 " ttgl.BlockedLayout([1,4], [4,8], [4,1], [1,0], cga_layout=[]) "):
        spec = parse_spec(text)
        assert spec.value == direct
        assert spec.to_linear([32, 64]) == direct.to_linear([32, 64])


def test_nested_specs():
    classes = _needs_catalog("BlockedLayout", "SliceLayout", "DotOperandLayout", "NVMMADistributedLayout",
                             "NVMMASharedLayout")
    blocked = classes["BlockedLayout"]([1, 4], [4, 8], [4, 1], [1, 0])
    assert parse_spec("SliceLayout(0, BlockedLayout([1,4],[4,8],[4,1],[1,0]))").value == \
        classes["SliceLayout"](0, blocked)
    mma = classes["NVMMADistributedLayout"]([2, 0], [4, 1], [16, 8])
    assert parse_spec("DotOperandLayout(0, NVMMADistributedLayout([2,0],[4,1],[16,8]), 2)").value == \
        classes["DotOperandLayout"](0, mma, 2)
    shared = parse_spec("NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16)")
    assert shared.value == classes["NVMMASharedLayout"](swizzle_byte_width=128, element_bitwidth=16)
    assert shared.to_linear([64, 64]).in_dim_names[0] == "offset"


def test_gluon_layouts_agree_with_triton():
    """The parsed spec, converted, equals Triton's own to_linear_layout of the same Gluon text."""
    _needs_catalog("BlockedLayout", "SliceLayout")
    pytest.importorskip("triton")
    from triton._C.libtriton import gluon_ir, ir
    from triton.experimental.gluon import language as gl

    ctx = ir.context()
    ir.load_dialects(ctx)
    builder = gluon_ir.GluonOpBuilder(ctx)
    rng = random.Random(9)
    for _ in range(25):
        spt = [1 << rng.randint(0, 2) for _ in range(2)]
        tpw_bits = rng.randint(0, 5)
        tpw = [1 << tpw_bits, 1 << (5 - tpw_bits)]
        wpc_bits = rng.randint(0, 2)
        wpc = [1 << wpc_bits, 1 << (2 - wpc_bits)]
        order = rng.choice([[1, 0], [0, 1]])
        shape = [1 << rng.randint(2, 6), 1 << rng.randint(2, 6)]
        text = f"BlockedLayout({spt}, {tpw}, {wpc}, {order})"
        ours = layout_from_spec(text, shape)
        theirs = builder.to_linear_layout(gl.BlockedLayout(spt, tpw, wpc, order)._to_ir(builder), shape)
        kept = [b for b in ours.bases["register"] if any(b)]  # Gluon 3.9 drops zero register bases
        assert kept == [list(b) for b in theirs.reg_bases], text
        assert ours.bases["lane"] == [list(b) for b in theirs.lane_bases], text
        assert ours.bases["warp"] == [list(b) for b in theirs.warp_bases], text


@pytest.mark.parametrize("text, message", [
    ("__import__('os').system('true')", "not a layout name|unknown layout"),
    ("BlockedLayout.__class__", "bare name"),
    ("(lambda: 1)()", "not a layout name"),
    ("open('/etc/passwd')", "unknown layout 'open'"),
    ("[1, 2] + [3]", "not a literal"),
    ("LinearLayout({'lane': [[1]]}, ['dim0'], 1.5)", "1.5"),
    ("LinearLayout(*x)", r"'\*'"),
    ("LinearLayout({'lane': [[3]]}, {'dim0': 2})", "LinearLayout"),
    ("BlockedLayout([1,4],[4,8]", "syntax error at column"),
    ("", "empty"),
    ("{\"bases\": {\"lane\": [[1]]}}", "out_dims"),
    ("{\"bases\": {\"lane\": [[1]]], \"out_dims\": []}", "invalid JSON at line 1 column"),
    ("{\"bases\": 3, \"out_dims\": [\"dim0\"]}", "'bases' must be"),
    ("{\"bases\": {}, \"out_dims\": [], \"extra\": 1}", "unknown JSON keys"),
    ("os.system('x')", "not a layout name"),
])
def test_bad_specs_raise_layout_error(text, message):
    with pytest.raises(LayoutError, match=message):
        parse_spec(text)


def test_error_names_the_column():
    with pytest.raises(LayoutError, match=r"spec: bare name 'bar': a layout is written as a call, e\.g\.") as info:
        parse_spec("LinearLayout({'lane': [[1]]}, ['dim0'], foo=bar)")
    text = str(info.value)
    assert "column 45" in text and "bare name 'bar'" in text


def test_unknown_catalog_name_lists_known_ones():
    with pytest.raises(LayoutError, match="known: .*LinearLayout"):
        parse_spec("BlockdLayout([1],[32],[4],[0])")


def test_descriptor_needs_a_shape():
    _needs_catalog("BlockedLayout")
    with pytest.raises(LayoutError, match="shape"):
        layout_from_spec("BlockedLayout([1,4],[4,8],[4,1],[1,0])")


def test_raw_spec_shape_must_match():
    with pytest.raises(LayoutError, match="does not match"):
        layout_from_spec('{"bases": {"offset": [[1]]}, "out_dims": {"dim0": 2}}', [4])
    assert layout_from_spec('{"bases": {"offset": [[1]]}, "out_dims": {"dim0": 2}}', [2]) == \
        LinearLayout({"offset": [[1]]}, {"dim0": 2})
