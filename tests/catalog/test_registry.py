"""The layout-kind registry (src/linear_layouts/layouts/registry.py): a kind registered here, and nowhere else,
is read and printed as TTGIR (an attribute, a type, a whole module's aliases), written as Gluon, classed as
shared or distributed by the module reader, and found by ``recognize``; unregistered, it is unknown again.
The catalog's own kinds are each registered once, with the TTGIR names Triton 3.9 prints."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pytest

import linear_layouts.layouts as C
from linear_layouts import LayoutError, LinearLayout
from linear_layouts.layouts.gluon_text import gluon_expression
from linear_layouts.layouts.recognize import recognize
from linear_layouts.layouts.registry import LayoutKind, Space, kind_named, kind_of, kinds, register, unregister
from linear_layouts.layouts.ttgir_text import fields, format_attribute, parse_attribute
from linear_layouts.triton_model.encodings import is_shared_encoding
from linear_layouts.triton_model.ir_text import parse_module


@dataclass(frozen=True)
class StripLayout:
    """A toy distributed layout of a 1-D tensor: ``lanes`` lanes along dim0, then ``registers`` repeats."""

    lanes: int
    registers: int = 1

    @property
    def rank(self) -> int:
        return 1

    def to_linear(self, shape: Sequence[int]) -> LinearLayout:
        if list(shape) != [self.lanes * self.registers]:
            raise LayoutError(f"shape: a strip covers [{self.lanes * self.registers}], got {list(shape)}")
        lane = [[1 << i] for i in range(self.lanes.bit_length() - 1)]
        register = [[self.lanes << i] for i in range(self.registers.bit_length() - 1)]
        return LinearLayout({"register": register, "lane": lane, "warp": [], "block": []}, ["dim0"])


@dataclass(frozen=True)
class RowsLayout:
    """A toy shared layout: row-major offsets of a 2-D tile of ``columns`` columns."""

    columns: int

    def to_linear(self, shape: Sequence[int]) -> LinearLayout:
        rows = shape[0]
        bases = [[0, 1 << i] for i in range(self.columns.bit_length() - 1)]
        bases += [[1 << i, 0] for i in range(rows.bit_length() - 1)]
        return LinearLayout({"offset": bases, "block": []}, ["dim0", "dim1"])


def _parse_strip(body: dict) -> StripLayout:
    b = fields(body, "strip layout", ("lanes",), ("registers",))
    return StripLayout(b["lanes"], b.get("registers", 1))


def _format_strip(layout: StripLayout) -> str:
    registers = f", registers = {layout.registers}" if layout.registers != 1 else ""
    return f"#toy.strip<{{lanes = {layout.lanes}{registers}}}>"


def _strip_candidates(target: LinearLayout, bitwidth: int | None, depth: int):
    if target.num_out_dims == 1 and target.in_dim_size("warp") == 1:
        yield StripLayout(target.in_dim_size("lane"), target.in_dim_size("register"))


STRIP = LayoutKind(StripLayout, Space.DISTRIBUTED, "toy.strip", _parse_strip, _format_strip, gluon_module="gl.toy",
                   rank=-1, candidates=_strip_candidates)
ROWS = LayoutKind(RowsLayout, Space.SHARED, "toy.rows", lambda body: RowsLayout(body["columns"]),
                  lambda layout: f"#toy.rows<{{columns = {layout.columns}}}>")


@pytest.fixture
def toys():
    register(STRIP)
    register(ROWS)
    try:
        yield
    finally:
        unregister(STRIP)
        unregister(ROWS)


def test_a_registered_kind_reads_and_prints_as_ttgir_and_gluon(toys):
    strip = StripLayout(32, 2)
    text = "#toy.strip<{lanes = 32, registers = 2}>"
    assert parse_attribute(text) == strip and format_attribute(strip) == text
    assert gluon_expression(strip) == "gl.toy.StripLayout(lanes=32, registers=2)"
    assert gluon_expression(StripLayout(32)) == "gl.toy.StripLayout(lanes=32)"  # a default is left out
    # in a whole module: its aliases, its types, shared or not
    module = parse_module(f"#s = {text}\n#r = #toy.rows<{{columns = 8}}>\nmodule {{\n"
                          "  tt.func @k(%x: tensor<64xf32, #s>) {\n"
                          "    %0 = ttg.local_alloc %x : (tensor<64xf32, #s>) -> !ttg.memdesc<64xf32, #r, #smem>\n"
                          "    tt.return\n  }\n}\n")
    assert module.layout_aliases == (("#s", strip), ("#r", RowsLayout(8)))
    assert [t.layout for t in module.types] == [strip, RowsLayout(8)]
    assert module.types[0].linear_layout() == strip.to_linear([64])
    assert is_shared_encoding(module.types[1].encoding) and not is_shared_encoding(module.types[0].encoding)


def test_a_registered_kind_is_recognized_in_its_rank(toys):
    """``recognize`` tries the kinds of the layout's space by rank: the toy (rank -1) before BlockedLayout."""
    layout = C.BlockedLayout([1], [32], [1], [0]).to_linear([64])
    assert recognize(layout) == StripLayout(32, 2)
    unregister(STRIP)
    assert recognize(layout) == C.BlockedLayout([1], [32], [1], [0])


def test_an_unregistered_kind_is_unknown():
    with pytest.raises(LayoutError, match="unsupported attribute '#toy.strip'; known layouts: #ttg.amd_mfma"):
        parse_attribute("#toy.strip<{lanes = 32}>")
    with pytest.raises(LayoutError, match="must be a catalog layout with a TTGIR attribute, got StripLayout"):
        format_attribute(StripLayout(32))
    with pytest.raises(LayoutError, match="must be a linear_layouts.catalog layout or a LinearLayout"):
        gluon_expression(StripLayout(32))


def test_registering_twice_is_refused(toys):
    with pytest.raises(LayoutError, match="StripLayout is registered already"):
        register(LayoutKind(StripLayout, Space.DISTRIBUTED, "toy.other", _parse_strip, _format_strip))
    with pytest.raises(LayoutError, match="toy.strip is registered already"):
        register(LayoutKind(type("Other", (), {}), Space.SHARED, "toy.strip", _parse_strip, _format_strip))
    with pytest.raises(LayoutError, match="ttgir_name must be 'dialect.mnemonic'"):
        LayoutKind(RowsLayout, Space.SHARED, "rows", _parse_strip, _format_strip)


def test_the_catalog_kinds():
    """Each class of the catalog has one kind, named as Triton 3.9 prints it, and Gluon's module for it."""
    names = {kind.name: (kind.ttgir_name, kind.space.value, kind.gluon_module) for kind in kinds()}
    assert names == {
        "BlockedLayout": ("ttg.blocked", "distributed", "gl"),
        "SliceLayout": ("ttg.slice", "distributed", "gl"),
        "NVMMADistributedLayout": ("ttg.nvidia_mma", "distributed", "gl"),
        "DotOperandLayout": ("ttg.dot_op", "distributed", "gl"),
        "DistributedLinearLayout": ("ttg.linear", "distributed", "gl"),
        "AMDMFMALayout": ("ttg.amd_mfma", "distributed", "gl.amd"),
        "AMDWMMALayout": ("ttg.amd_wmma", "distributed", "gl.amd"),
        "SwizzledSharedLayout": ("ttg.swizzled_shared", "shared", "gl"),
        "AMDRotatingSharedLayout": ("ttg.amd_rotating_shared", "shared", None),
        "NVMMASharedLayout": ("ttg.nvmma_shared", "shared", "gl"),
        "SharedLinearLayout": ("ttg.shared_linear", "shared", "gl"),
        "PaddedSharedLayout": ("ttg.padded_shared", "shared", "gl"),
        "TensorMemoryLayout": ("ttng.tensor_memory_encoding", "tensor memory", "gl.nvidia.blackwell"),
        "TensorMemoryScalesLayout": ("ttng.tensor_memory_scales_encoding", "tensor memory", "gl.nvidia.blackwell"),
    }
    assert all(kind_of(getattr(C, name)) is kind_named(ttgir) for name, (ttgir, _, _) in names.items())
    assert [k.name for k in kinds(Space.SHARED)] == ["NVMMASharedLayout", "SwizzledSharedLayout",
                                                     "PaddedSharedLayout", "SharedLinearLayout",
                                                     "AMDRotatingSharedLayout"]
    assert {k.name for k in kinds() if k.general} == {"DistributedLinearLayout", "SharedLinearLayout"}
