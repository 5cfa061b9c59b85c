"""ElementType: one parser for every ``dtype``; every public entry point reads every spelling the same way.

The oracles: NumPy's ``itemsize`` for the names NumPy knows, Triton's ``primitive_bitwidth`` for
``triton.language`` dtypes, and the integer width itself; then analysis, codegen and the CLI must
report one width for every spelling.
"""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil

import numpy as np
import pytest

import linear_layouts
from linear_layouts.analysis import bank_simulator, banks, conversion, gather, shuffles, simd_tiles, swizzle
from linear_layouts.analysis import shared_advice, vectorization, warp_simulator
from linear_layouts.analysis.steps import ConversionPlan
from linear_layouts.layouts import NVMMASharedLayout, instruction_tiles
from linear_layouts.layouts.blocked import BlockedLayout
from linear_layouts.cli import main
from linear_layouts.codegen import plan as codegen_plan
from linear_layouts.cute.best import best_cute_swizzle
from linear_layouts.cute.layout import Swizzle, element_swizzle
from linear_layouts.layouts.recognize import recognize
from linear_layouts.core.element_type import (
    AMBIGUOUS_NAMES,
    DTYPE_NAMES,
    SUPPORTED_BITWIDTHS,
    ElementKind,
    ElementType,
    bitwidth,
    dtype_argument,
    element_type,
)
from linear_layouts.engine import anchors, ir
from linear_layouts.ops.explain import explain, moved_element
from linear_layouts.core.errors import LayoutError
from linear_layouts.present.reports import banks as banks_report
from linear_layouts.present.reports import conversion as conversion_report
from linear_layouts.present.reports import cute as cute_report
from linear_layouts.present.reports import swizzle as swizzle_report
from linear_layouts.present.viz import algorithm, bank_steps, explorer, grid, model, page, png, scenarios, svg
from linear_layouts.present.viz.scenarios import seed_transpose

SEED = seed_transpose()
SHARED = SEED.shared[2][1]
#: A 64 x 64 16-bit transpose whose load has 4 lanes down its 8-row vectors (``ldmatrix.trans``'s form).
TRANS_PAIR = tuple(layout.sublayout(["register", "lane", "warp"], ["dim0", "dim1"]) for layout in (
    BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0]).to_linear([64, 64]),
    BlockedLayout([8, 1], [4, 8], [1, 4], [0, 1]).to_linear([64, 64])))
#: A shared layout the unswizzled NVMMA class of every element width produces: its dtype picks one.
NVMMA_SHARED = NVMMASharedLayout(0, 16).to_linear([16, 32])


class FakeTorchDtype:
    """What ``torch.float16`` looks like from outside (PyTorch is not installed here): a ``torch`` object
    printing as ``torch.<name>``."""

    __module__ = "torch"

    def __init__(self, name: str) -> None:
        self.name = name

    def __str__(self) -> str:
        return f"torch.{self.name}"


FakeTorchDtype.__module__ = "torch"


def _triton_dtypes() -> list:
    language = pytest.importorskip("triton.language")
    return [getattr(language, n) for n in ("int1", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
                                           "uint64", "float8e4b15", "float8e4nv", "float8e4b8", "float8e5",
                                           "float8e5b16", "float16", "bfloat16", "float32", "float64")]


#: Spellings of a 16-bit element, one of every form the parser accepts.
SIXTEEN_BITS = [16, "16", "fp16", "bf16", "f16", "float16", "half", "bfloat16", "i16", "int16", "u16", "uint16",
                "short", "torch.float16", "torch.bfloat16", "tl.float16", "np.float16", np.float16, np.int16,
                np.dtype("float16"), np.dtype("uint16"), FakeTorchDtype("bfloat16"), FakeTorchDtype("int16"),
                ElementType("fp16", 16, ElementKind.FLOAT), " FP16 "]


def test_every_name_has_one_width_and_agrees_with_numpy():
    for name, canonical in DTYPE_NAMES.items():
        parsed = element_type(name)
        assert parsed.name == canonical and bitwidth(name) == parsed.bits == element_type(canonical).bits
        try:
            numpy_bits = np.dtype(name).itemsize * 8
        except TypeError:
            continue
        # NumPy's type codes count bytes; i8 / u8 / f16 are this package's (Triton's, MLIR's) bit counts
        if name in ("i8", "u8", "f16"):
            assert numpy_bits == 8 * parsed.bits
        else:
            assert numpy_bits == parsed.bits, name


def test_numpy_dtypes_and_scalar_types():
    for name in ("float16", "float32", "float64", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
                 "uint64", "bool"):
        assert element_type(np.dtype(name)).bits == np.dtype(name).itemsize * 8
        assert element_type(getattr(np, name if name != "bool" else "bool_")).bits == np.dtype(name).itemsize * 8
    assert element_type(np.dtype("f8")) == element_type("fp64")  # a dtype object is never ambiguous
    with pytest.raises(LayoutError, match="not a known element type"):
        element_type(np.dtype("complex64"))


def test_triton_language_dtypes_match_primitive_bitwidth():
    for dtype in _triton_dtypes():
        parsed = element_type(dtype)
        assert parsed.name == DTYPE_NAMES[dtype.name]
        assert parsed.bits == (8 if dtype.name == "int1" else dtype.primitive_bitwidth), dtype
        assert element_type(f"tl.{dtype.name}") == parsed
    language = pytest.importorskip("triton.language")
    with pytest.raises(LayoutError, match="must be an element type.*pointer<fp16>"):
        element_type(language.pointer_type(language.float16))


def test_torch_names_and_dtypes_without_torch():
    table = {"float8_e4m3fn": "fp8e4nv", "float8_e5m2": "fp8e5", "float8_e4m3fnuz": "fp8e4b8",
             "float8_e5m2fnuz": "fp8e5b16", "float8_e8m0fnu": "e8m0", "bfloat16": "bf16", "half": "fp16",
             "float": None, "double": "fp64", "short": "i16", "int": None, "long": "i64", "bool": "i1"}
    for torch_name, ours in table.items():
        if ours is None:  # torch.int is int32, NumPy's int is int64; torch.float is float32, NumPy's float64
            with pytest.raises(LayoutError, match="not a known element type|ambiguous"):
                element_type(FakeTorchDtype(torch_name))
            continue
        assert element_type(f"torch.{torch_name}") == element_type(FakeTorchDtype(torch_name)) == element_type(ours)


@pytest.mark.parametrize("name", sorted(AMBIGUOUS_NAMES))
def test_names_numpy_reads_differently_are_refused(name):
    numpy_reading = np.dtype(name).name  # the reason the message gives is NumPy's own reading
    with pytest.raises(LayoutError, match=f"ambiguous: NumPy (and Python )?reads? it as {numpy_reading}"):
        element_type(name)


@pytest.mark.parametrize("bad, message", [
    (12, "bit width must be one of"), ("12", "bit width must be one of"), (True, "bit width or a type name"),
    ("fp7", "not a known element type"), (float, "no fixed width"), (int, "no fixed width"),
    ([16], "must be an element type"), (None, "must be an element type"),
])
def test_bad_dtypes_are_refused(bad, message):
    with pytest.raises(LayoutError, match=message):
        element_type(bad)


def test_element_type_value():
    fp8 = element_type("float8_e4m3fn")
    assert (fp8.name, fp8.bits, fp8.kind, fp8.bytes, str(fp8)) == ("fp8e4nv", 8, ElementKind.FLOAT, 1, "fp8e4nv")
    assert repr(fp8) == "ElementType('fp8e4nv', 8, float)"
    assert element_type(fp8) is fp8 and ElementType.parse("e4m3") == fp8
    assert [element_type(b).bits for b in SUPPORTED_BITWIDTHS] == list(SUPPORTED_BITWIDTHS)
    with pytest.raises(LayoutError, match="bits: an element is one of"):
        ElementType("fp4", 4, ElementKind.FLOAT)
    with pytest.raises(LayoutError, match="kind: expected an ElementKind"):
        ElementType("fp16", 16, "float")


# --------------------------------------------------------------------------------------------------
# Every public entry point with a ``dtype`` parameter, called with every 16-bit spelling.

def _gather_pair():
    return SEED.store, SEED.store, 0


#: qualified name -> function of dtype returning what the dtype decides (a width, a count, a layout).
ENTRY_POINTS = {
    "analysis.banks.shared_access": lambda d: banks.shared_access(SHARED, SEED.load, d),
    "analysis.banks.wavefronts": lambda d: banks.wavefronts(SHARED, SEED.load, d),
    "analysis.banks.bank_conflicts": lambda d: banks.bank_conflicts(SEED.shared[0][1], SEED.load, d),
    "analysis.bank_simulator.lane_addresses": lambda d: bank_simulator.lane_addresses(SHARED, SEED.load, d)[0].tolist(),
    "analysis.bank_simulator.simulate_wavefronts": lambda d: bank_simulator.simulate_wavefronts(SHARED, SEED.load, d),
    "analysis.swizzle.optimal_swizzle": lambda d: swizzle.optimal_swizzle(SEED.store, SEED.load, d),
    "analysis.swizzle.padded_baseline": lambda d: swizzle.padded_baseline(SEED.store, SEED.load, d),
    "analysis.swizzle.legacy_swizzle_params": lambda d: swizzle.legacy_swizzle_params([64, 64], [1, 0], d, op_idx=0),
    "analysis.swizzle.legacy_swizzle_baseline": lambda d: swizzle.legacy_swizzle_baseline(
        SEED.store, SEED.load, d, vec=8, per_phase=1, max_phase=8),
    "analysis.simd_tiles.vector_tile": lambda d: simd_tiles.vector_tile(64, d),
    "analysis.simd_tiles.matrix_tile": lambda d: simd_tiles.matrix_tile(d, trans=False),
    "analysis.simd_tiles.simd_choices": lambda d: simd_tiles.simd_choices(SHARED, SEED.load, d),
    "analysis.simd_tiles.best_instruction": lambda d: simd_tiles.best_instruction(SHARED, SEED.load, d),
    "analysis.simd_tiles.conversion_instructions": lambda d: simd_tiles.conversion_instructions(
        SHARED, SEED.store, SEED.load, d),
    "analysis.conversion.plan_conversion": lambda d: conversion.plan_conversion(SEED.store, SEED.load, d),
    "analysis.shared_advice.suggest_shared_layout": lambda d: [
        (c.name, c.store_wavefronts, c.load_wavefronts)
        for c in shared_advice.suggest_shared_layout(SEED.store, SEED.load, d).candidates],
    "analysis.conversion.plan_through": lambda d: conversion.plan_through(SEED.store, SEED.load, SHARED, d),
    "analysis.conversion.plan_shared_memory": lambda d: conversion.plan_shared_memory(SEED.store, SEED.load, d),
    "analysis.shuffles.plan_shuffle": lambda d: shuffles.plan_shuffle(SEED.store, SEED.load, d),
    "analysis.gather.plan_gather": lambda d: gather.plan_gather(*_gather_pair(), d),
    "analysis.vectorization.global_access": lambda d: vectorization.global_access(SEED.load, d),
    "analysis.warp_simulator.pack": lambda d: warp_simulator.pack([1, 2], d),
    "analysis.warp_simulator.unpack": lambda d: warp_simulator.unpack([0x20001], d, 2),
    "analysis.warp_simulator.pack_words": lambda d: warp_simulator.pack_words(np.array([[1, 2]]), d).tolist(),
    "analysis.warp_simulator.unpack_words": lambda d: warp_simulator.unpack_words(np.array([[0x20001]]), d, 2).tolist(),
    "layouts.instruction_tiles.vectorized_shared_tile": lambda d: instruction_tiles.vectorized_shared_tile(64, d),
    "layouts.instruction_tiles.ldmatrix_row_tile": lambda d: instruction_tiles.ldmatrix_row_tile(d),
    "layouts.instruction_tiles.ldmatrix_tile": lambda d: instruction_tiles.ldmatrix_tile(4, d),
    "layouts.instruction_tiles.ldmatrix_offset_tile": lambda d: instruction_tiles.ldmatrix_offset_tile(2, d),
    "layouts.instruction_tiles.stmatrix_tile": lambda d: instruction_tiles.stmatrix_tile(4, d),
    "layouts.instruction_tiles.stmatrix_offset_tile": lambda d: instruction_tiles.stmatrix_offset_tile(2, d),
    "layouts.shared.NVMMASharedLayout.get_default_for": lambda d: NVMMASharedLayout.get_default_for([64, 32], d),
    "cute.best.best_cute_swizzle": lambda d: best_cute_swizzle(SEED.store, SEED.load, d),
    "codegen.plan.conversion_step": lambda d: codegen_plan.conversion_step(SEED.store, SEED.load, d),
    "codegen.plan.conversion_kernel": lambda d: codegen_plan.conversion_kernel(SEED.store, SEED.load, d).source,
    "codegen.plan.baseline_step": lambda d: codegen_plan.baseline_step(SEED.store, SEED.load, d, padded=True),
    "codegen.plan.baseline_kernel": lambda d: codegen_plan.baseline_kernel(SEED.store, SEED.load, d, padded=True).source,
    "codegen.plan.shared_step": lambda d: codegen_plan.shared_step(SEED.store, SEED.load, SHARED, d),
    "engine.ir.element_bits": lambda d: ir.element_bits(d),
    "engine.anchors.coalesced_layout": lambda d: anchors.coalesced_layout([64, 64], [64, 1], d, num_warps=4),
    "engine.anchors.mma_layout": lambda d: anchors.mma_layout([64, 64], d, 2, 4),
    "engine.anchors.dot_operand_layout": lambda d: anchors.dot_operand_layout(anchors.mma_layout([64, 64], "fp16", 2, 4), 0, d),
    "engine.anchors.global_cost": lambda d: anchors.global_cost(SEED.load, [32, 1], d),
    "present.reports.banks.access_summary": lambda d: banks_report.access_summary(SHARED, SEED.load, d, "load"),
    "present.reports.banks.banks_report": lambda d: banks_report.banks_report(SHARED, SEED.load, d),
    "present.reports.swizzle.swizzle_report": lambda d: swizzle_report.swizzle_report(SEED.store, SEED.load, d),
    "present.reports.conversion.plan_report": lambda d: conversion_report.plan_report(SEED.store, SEED.load, d),
    "present.reports.cute.cute_swizzle_report": lambda d: cute_report.cute_swizzle_report(SEED.store, SEED.load, d),
    "present.viz.algorithm.swizzle_steps": lambda d: algorithm.swizzle_steps(SEED.store, SEED.load, d),
    "present.viz.bank_steps.bank_steps": lambda d: bank_steps.bank_steps(SHARED, SEED.load, d),
    "present.viz.explorer.swizzle_steps_json": lambda d: explorer.swizzle_steps_json(SEED.store, SEED.load, d),
    "present.viz.model.placement": lambda d: model.placement(SHARED, d).bank.tolist(),
    "present.viz.page.layout_html": lambda d: page.layout_html(SHARED, dtype=d),
    "present.viz.svg.shared_svg": lambda d: svg.shared_svg(SHARED, d),
    "present.viz.png.shared_png": lambda d: png.shared_png(SHARED, d),
    "present.viz.grid.shared_grid": lambda d: (lambda g: (g.subtitle, g.labels, g.fills))(grid.shared_grid(SHARED, d)),
    "present.viz.scenarios.pair_scenario": lambda d: scenarios.pair_scenario(SEED.store, SEED.load, d),
    "present.viz.scenarios.layout_scenario": lambda d: scenarios.layout_scenario(SEED.load, d, "B"),
    "present.viz.scenarios.segment_bits": lambda d: scenarios.segment_bits(SHARED, d),
    "present.viz.scenarios.toggle_swizzle": lambda d: scenarios.toggle_swizzle(SEED.shared[0][1], [(0, 0)], d),
    "layouts.recognize.recognize": lambda d: recognize(NVMMA_SHARED, dtype=d),
    "cute.layout.element_swizzle": lambda d: str(element_swizzle(Swizzle(3, 4, 3), d)),
    "ops.explain.explain": lambda d: (lambda s: (s.problem, s.rows, s.cols, s.batch, s.nbytes, s.launches))(
        explain((4, 640, 480), (0, 2, 1), d)),
    "ops.explain.moved_element": lambda d: moved_element(d)[1],
    "analysis.banks.access_from_columns": lambda d: banks.access_from_columns(
        tuple(SHARED.flat_bases("offset")), SEED.load, d),
    "analysis.shared_advice.k_major_store_layout": lambda d: shared_advice.k_major_store_layout([64, 128], 1, d, 4),
    "analysis.swizzle.matrix_trans_swizzle": lambda d: swizzle.matrix_trans_swizzle(*TRANS_PAIR, d),
    "analysis.conversion.plan_through_matrix_trans": lambda d: conversion.plan_through_matrix_trans(*TRANS_PAIR, d),
    "triton_model.interop.triton_bank_conflicts": lambda d: pytest.importorskip("triton") and __import__(
        "linear_layouts.triton_model.interop", fromlist=["x"]).triton_bank_conflicts(SEED.shared[0][1], SEED.load, d),
}

#: Public functions taking ``dtype`` that are not swept, and why.
NOT_SWEPT = {
    "core.element_type.element_type": "the parser itself (swept above)",
    "core.element_type.bitwidth": "the parser itself (swept above)",
    "core.element_type.ElementType.parse": "the parser itself (swept above)",
    "core.element_type.dtype_argument": "the parser of renamed dtype arguments (test_old_keywords_still_work)",
    "codegen.verify.verify_conversion": "runs on a GPU; its dtype goes to codegen.plan.conversion_kernel (swept)",
    "engine.ir.Builder.pointer": "the IR keeps its type names as text (checked by engine.ir.element_bits, swept)",
    "engine.ir.Builder.full": "the IR keeps its type names as text (checked by engine.ir.element_bits, swept)",
    "engine.ir.Builder.elementwise": "the IR keeps its type names as text (checked by engine.ir.element_bits, swept)",
    "engine.ir.Builder.cast": "the IR keeps its type names as text (checked by engine.ir.element_bits, swept)",
    "ops.api.cast_transpose": "runs on a GPU and takes fp8 types only, read by element_type (tests/ops/test_arguments.py)",
}


def _public_dtype_functions() -> set[str]:
    found = set()
    for info in pkgutil.walk_packages(linear_layouts.__path__, "linear_layouts."):
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
                continue
            members = [(name, obj)] if inspect.isfunction(obj) else []
            if inspect.isclass(obj):
                members = [(f"{name}.{k}", getattr(v, "__func__", v)) for k, v in vars(obj).items()
                           if not k.startswith("_") and inspect.isfunction(getattr(v, "__func__", v))]
            for qualified, function in members:
                if "dtype" in inspect.signature(function).parameters:
                    found.add(f"{module.__name__.removeprefix('linear_layouts.')}.{qualified}")
    return found


def test_every_public_dtype_function_is_swept():
    assert _public_dtype_functions() == set(ENTRY_POINTS) | set(NOT_SWEPT)


def _canonical(value):
    """Comparable form of an entry point's answer: a plan keeps the element type it was given (fp16 or
    bf16 or b16), so plans compare by what the width decides; layouts compare as values already."""
    if isinstance(value, ConversionPlan):
        return value.kind, value.steps, value.cost, value.alternatives, value.bitwidth
    return value if not isinstance(value, (list, tuple)) else json.dumps(value, default=repr)


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_entry_point_reads_every_spelling_alike(entry):
    """Every 16-bit spelling gives what the plain width 16 gives, and junk is refused with the parser's rule."""
    call = ENTRY_POINTS[entry]
    expected = _canonical(call(16))
    for spelling in SIXTEEN_BITS:
        assert _canonical(call(spelling)) == expected, (entry, spelling)
    with pytest.raises(LayoutError, match="ambiguous"):
        call("f2")
    with pytest.raises(LayoutError, match="not a known element type"):
        call("fp7")


@pytest.mark.parametrize("spelling", ["fp8", "e5m2", "float8_e4m3fn", "u8", "i1", "bf16", "half", "i16", "tf32",
                                      "fp32", "single", "i32", "u32", "fp64", "double", "torch.int64"])
def test_analysis_codegen_and_cli_agree_on_the_width(spelling, capsys):
    """One width per spelling: element_type, the conversion plan, the kernel and the CLI's report."""
    bits = element_type(spelling).bits
    plan = conversion.plan_conversion(SEED.store, SEED.load, spelling)
    kernel = codegen_plan.conversion_kernel(SEED.store, SEED.load, spelling)
    spec = lambda layout: json.dumps({"bases": layout.bases, "out_dims": layout.out_dims})  # noqa: E731
    assert main(["convert", spec(SEED.store), spec(SEED.load), "--dtype", spelling]) == 0
    out = capsys.readouterr().out
    assert plan.bitwidth == kernel.element_bytes * 8 == bits
    assert f"tensor of {bits}-bit elements" in out
    assert main(["banks", spec(SHARED), spec(SEED.load), "--dtype", spelling]) == 0
    assert capsys.readouterr().out.startswith(banks_report.banks_report(SHARED, SEED.load, bits).splitlines()[0])


def test_cli_refuses_ambiguous_dtypes(capsys):
    spec = json.dumps({"bases": SEED.store.bases, "out_dims": SEED.store.out_dims})
    assert main(["convert", spec, spec, "--dtype", "f8"]) == 2
    assert "--dtype: dtype 'f8' is ambiguous: NumPy reads it as float64" in capsys.readouterr().err


#: Public functions whose ``dtype`` had another name, which still works: (old keyword, call taking keywords).
RENAMED = {
    "layouts.recognize.recognize": ("bitwidth", lambda **k: recognize(NVMMA_SHARED, **k)),
    "cute.layout.element_swizzle": ("bitwidth", lambda **k: str(element_swizzle(Swizzle(3, 4, 3), **k))),
    "analysis.banks.access_from_columns": ("bitwidth", lambda **k: banks.access_from_columns(
        tuple(SHARED.flat_bases("offset")), SEED.load, **k)),
    "analysis.shared_advice.k_major_store_layout": ("bits", lambda **k: shared_advice.k_major_store_layout(
        [64, 128], 1, num_warps=4, **k)),
}


@pytest.mark.parametrize("entry", sorted(RENAMED))
@pytest.mark.parametrize("bits", [8, 32])
def test_old_keywords_still_work(entry, bits):
    """The old keyword reads a width in bits as dtype= does; both at once, or neither, is refused by name."""
    old, call = RENAMED[entry]
    assert entry in ENTRY_POINTS
    assert _canonical(call(**{old: bits})) == _canonical(call(dtype=bits)) == _canonical(ENTRY_POINTS[entry](bits))
    with pytest.raises(LayoutError, match=f"dtype and {old}: give the element type once"):
        call(dtype=bits, **{old: bits})
    with pytest.raises(LayoutError, match=f"{old} \\(the old name of dtype\\): dtype as a bit width must be one of"):
        call(**{old: 12})


def test_recognize_reads_the_width_of_its_dtype():
    """The element type decides which NVMMA class an unswizzled shared layout is (every width produces it);
    elements wider than 64 bits are refused."""
    assert [recognize(NVMMA_SHARED, dtype=d) for d in ("u8", "bf16", "fp32", "double")] == [
        NVMMASharedLayout(0, bits) for bits in (8, 16, 32, 64)]
    with pytest.raises(LayoutError, match="dtype: the element must be 8, 16, 32 or 64 bits wide, got b128"):
        recognize(NVMMA_SHARED, dtype=128)


def test_dtype_argument():
    assert dtype_argument(None, required=False, bitwidth=None) is None
    assert dtype_argument("e5m2", bits=None) == element_type("fp8e5")
    with pytest.raises(LayoutError, match="^dtype: required"):
        dtype_argument(None, bitwidth=None)
    with pytest.raises(LayoutError, match="^bits and bitwidth: give the element type once"):
        dtype_argument(None, bits=8, bitwidth=8)
