"""Integers in TTIR / TTGIR text are ASCII digits only, in every reader of the IR, not only in the layout
attributes and tensor sizes (``test_ascii_digits``): a regular expression's ``\\d`` matches any script's decimal
digit and ``int`` reads it, so ``order = array<i32: ١, ٠>``, ``tt.divisibility = ١٦``, ``arith.constant ٦٤``,
``swizzlingByteWidth = ٦٤``, ``num_warps(٤)`` or ``!tt.tensordesc<١٢٨x64xf16>`` were read as 1, 0, 16, 64, 64,
4 and 128. Each is now a LayoutError naming what was read and the rule (``limits.INT_RULE``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from linear_layouts import LayoutError
from linear_layouts.core.limits import INT_RULE
from linear_layouts.pipeline.kernel_model import kernel_time
from linear_layouts.pipeline.rewrite import rewrite_ttgir
from linear_layouts.pipeline.shared_memory import shared_memory_need
from linear_layouts.pipeline.ttir_import import import_ttir
from linear_layouts.target.target import Target
from linear_layouts.triton_model.axis_info import axis_info
from linear_layouts.triton_model.ir_text import parse_module
from linear_layouts.triton_model.liveness import lower_function
from linear_layouts.triton_model.trips import op_counts

IR = Path(__file__).resolve().parents[1] / "data/triton_kernels/ir/sm_90"


def replaced(name: str, old: str, new: str) -> str:
    """The corpus file ``name`` with its first ``old`` replaced by ``new``."""
    text = (IR / name).read_text()
    assert old in text, old
    return text.replace(old, new, 1)


def refused(call, *needles: str) -> str:
    """``call()`` raises a LayoutError holding the rule and every needle; its message."""
    with pytest.raises(LayoutError, match="ASCII digits") as info:
        call()
    message = str(info.value)
    for needle in (INT_RULE, *needles):
        assert needle in message, message
    return message


def test_read_ints_reads_ascii_digits_only():
    from linear_layouts.core.mlir_text import read_ints

    assert read_ints("1, 0", "order") == (1, 0) and read_ints("2,0,1", "order") == (2, 0, 1)
    refused(lambda: read_ints("١, ٠", "order"), "order: expected a non-negative integer, got '١'")
    refused(lambda: read_ints("1,,0", "order"), "order: expected a non-negative integer, got ''")


@pytest.mark.parametrize("old, new, needle", [
    ("order = array<i32: 1, 0>", "order = array<i32: ١, ٠>", "ir text: tt.trans's order: "),
    ("tt.divisibility = 16 : i32}", "tt.divisibility = ١٦ : i32}", "ir text: %x_ptr's tt.divisibility: "),
    ("arith.constant 64 : i32", "arith.constant ٦٤ : i32", "ir text: %c64_i32's arith.constant: "),
], ids=["order", "divisibility", "constant"])
def test_ttir_import(old, new, needle):
    """`import_ttir` read `order = array<i32: ١, ٠>` as [1, 0], `tt.divisibility = ١٦` as 16, a constant ٦٤ as 64."""
    text = replaced("transpose.ttir", old, new)
    refused(lambda: import_ttir(parse_module(text), cc=90, num_warps=4), needle)
    import_ttir(parse_module(text.replace(new, old)), cc=90, num_warps=4)


@pytest.mark.parametrize("old, new, needle", [
    ("order = array<i32: 1, 0>", "order = array<i32: ١, ٠>", "ir text: tt.trans's order: "),
    ("tt.divisibility = 16 : i32}", "tt.divisibility = ١٦ : i32}", "ir text: tt.divisibility: "),
    ("arith.constant 64 : i32", "arith.constant ٦٤ : i32", "ir text: %c64_i32's arith.constant: "),
], ids=["order", "divisibility", "constant"])
def test_axis_info(old, new, needle):
    """The axis analysis read hints and constants written in other scripts' digits as numbers."""
    text = replaced("transpose.ttgir", old, new)
    refused(lambda: axis_info(parse_module(text).functions[0]), needle)
    axis_info(parse_module(text.replace(new, old)).functions[0])


def test_rewrite_reads_a_transpose_order_in_ascii_digits():
    """The rewrite's `tt.trans` of an operand given a new layout read `order = array<i32: ١, ٠>` as [1, 0]."""
    from linear_layouts.layouts import BlockedLayout

    values = {"%x_27": BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0])}
    rewrite_ttgir((IR / "transpose.ttgir").read_text(), values)
    ttgir = replaced("transpose.ttgir", "order = array<i32: 1, 0>", "order = array<i32: ١, ٠>")
    refused(lambda: rewrite_ttgir(ttgir, values), "ir text: tt.trans's order: ")


def test_shared_memory_reads_a_swizzle_width_in_ascii_digits():
    """`swizzlingByteWidth = ١٢٨` set a buffer's alignment as 128 did."""
    text = replaced("attention_fwd.ttgir", "swizzlingByteWidth = 128", "swizzlingByteWidth = ١٢٨")
    refused(lambda: shared_memory_need(parse_module(text)), "'s swizzlingByteWidth: expected a non-negative integer")


def test_kernel_model_reads_a_tensor_descriptor_shape_in_ascii_digits():
    """A TMA copy of a `!tt.tensordesc<١٢٨x64xf16>` was priced as 128x64 elements."""
    old = "%acc_17 : !tt.tensordesc<128x64xf16, #shared>"
    text = replaced("tma_persistent_matmul.ttgir", old, old.replace("128", "١٢٨"))
    refused(lambda: kernel_time(text, {}, table=None), "tensor descriptor: a size: expected a non-negative integer")


WARP_SPECIALIZED = """module attributes {"ttg.num-warps" = 4 : i32} {
  tt.func @k(%a: i32) {
    ttg.warp_specialize(%a)
    default {
      ttg.warp_yield
    }
    partition0(%p: i32) num_warps(4) {
      %t = arith.addi %p, %p : i32
      ttg.warp_return
    } : (i32) -> ()
    tt.return
  }
}"""


def test_liveness_reads_a_partition_s_warps_in_ascii_digits():
    """`partition0(...) num_warps(٤)` was a partition of 4 warps."""
    lower_function(parse_module(WARP_SPECIALIZED).functions[0])
    text = WARP_SPECIALIZED.replace("num_warps(4)", "num_warps(٤)")
    refused(lambda: lower_function(parse_module(text).functions[0]), "ir text: partition0's num_warps: ")


@pytest.mark.parametrize("old, new, needle", [
    ('"ttg.num-warps" = 4 : i32', '"ttg.num-warps" = ٤ : i32', "module attribute ttg.num-warps is not an int"),
    ("%t = arith.addi %p, %p : i32", "%t:٢ = arith.addi %p, %p : i32", "the result count: "),
], ids=["module-attribute", "result-count"])
def test_ir_text(old, new, needle):
    """The module's `"ttg.num-warps" = ٤` was 4 warps; `%t:٢ = ...` two results."""
    text = WARP_SPECIALIZED.replace(old, new)
    refused(lambda: parse_module(text).num_warps, needle)


def test_trip_counts_leave_a_bound_in_other_digits_unknown():
    """The trip counts (whose contract is None for a value they cannot read) read a loop bound `arith.constant ٦٤`
    as 64: the body ran 64 times; it now runs an unknown number of times."""
    text = """module {
  tt.func @k() {
    %lo = arith.constant 0 : i32
    %hi = arith.constant 64 : i32
    %st = arith.constant 1 : i32
    scf.for %i = %lo to %hi step %st  : i32 {
      %d = arith.addi %i, %i : i32
    }
    tt.return
  }
}"""

    def body_count(source: str) -> int | None:
        fn = parse_module(source).functions[0]
        counts = op_counts(fn, {}, program_id=(0, 0, 0), num_programs=(1, 1, 1))
        return next(counts[id(op)] for op in fn.walk() if op.name == "arith.addi")

    assert body_count(text) == 64
    assert body_count(text.replace("constant 64", "constant ٦٤")) is None


def test_a_target_s_arch_is_ascii_digits():
    """`Target(arch="sm_٩٠")` passed its check and had the compute capability 90."""
    from dataclasses import replace

    from linear_layouts.target import DEFAULT_TARGET

    assert DEFAULT_TARGET.arch.startswith("sm_")
    with pytest.raises(LayoutError, match="Target: arch must look like sm_90"):
        replace(DEFAULT_TARGET, arch="sm_٩٠")
    assert isinstance(DEFAULT_TARGET, Target)
