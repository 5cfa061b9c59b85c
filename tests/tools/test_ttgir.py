"""Tests of TTGIR text: attributes in and out (src/linear_layouts/layouts/ttgir_text.py, each kind's parse and
print in its descriptor module), types (triton_model/ir_types.py) and whole modules (triton_model/ir_text.py).

Oracles (triton 3.9 on the CPU): Triton's own printer of the attribute built from the same parameters
(``str`` of a tensor / memdesc type), Triton's MLIR parser (``ir.parse_mlir_module`` and Gluon's
``get_gluon_layout_from_tensor`` / ``_memdesc``) and Triton's ``to_linear_layout``; the corpus test reads
every TTGIR of the real-kernel corpus (tests/data/triton_kernels, issue 15).
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

import linear_layouts.layouts as C
from linear_layouts import LayoutError, LinearLayout
from linear_layouts.layouts import remove_broadcast_registers
from linear_layouts.spec import parse_spec
from linear_layouts.layouts.ttgir_text import format_attribute, parse_attribute
from linear_layouts.triton_model.ir_text import parse_module
from linear_layouts.triton_model.ir_types import TensorType
from linear_layouts.triton_model.ir_types import parse_tensor_type as parse_type

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))
from catalog import random_layouts as R  # noqa: E402
from catalog.oracle import build_ours  # noqa: E402
from catalog.test_amd import _random_case as random_amd_case  # noqa: E402
from catalog.test_shared import random_nvmma as random_nvmma_shared  # noqa: E402
from catalog.test_shared import random_padded, random_swizzled  # noqa: E402

CORPUS = TESTS / "data" / "triton_kernels"

BLOCKED = "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"
MMA = "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 128, 16]}>"


# ----------------------------------------------------------------------------- hand-written cases
@pytest.mark.parametrize("text, expected", [
    (BLOCKED, C.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])),
    ("#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0], CGALayout = [[1]]}>",
     C.BlockedLayout([1], [32], [4], [0], [[1]])),
    (f"#ttg.slice<{{dim = 1, parent = {BLOCKED}}}>", C.SliceLayout(1, C.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0]))),
    (MMA, C.NVMMADistributedLayout([3, 0], [4, 1], [16, 128, 16])),
    ("#ttg.dot_op<{opIdx = 0, parent = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [4, 1], "
     "instrShape = [16, 8]}>, kWidth = 2}>",
     C.DotOperandLayout(0, C.NVMMADistributedLayout([2, 0], [4, 1], [16, 8]), 2)),
    (f"#ttg.dot_op<{{opIdx = 1, parent = {BLOCKED}}}>",
     C.DotOperandLayout(1, C.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0]), 0)),
    ("#ttg.linear<{register = [[0, 1]], lane = [[1, 0], [0, 2]], warp = [[0, 0]], block = []}>",
     C.DistributedLinearLayout([[0, 1]], [[1, 0], [0, 2]], [[0, 0]], [], [2, 4])),
    ("#ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true, "
     "tilesPerWarp = [2, 1], elementBitWidth = 64}>",
     C.AMDMFMALayout(3, [32, 32, 8], True, [2, 2], 64, [2, 1])),
    ("#ttg.amd_wmma<{version = 2, isTranspose = false, ctaLayout = {warp = [[0, 1], [1, 0]]}}>",
     C.AMDWMMALayout(2, False, [[0, 1], [1, 0]])),
    ("#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>",
     C.SwizzledSharedLayout(8, 1, 8, [1, 0])),
    ("#ttg.amd_rotating_shared<{vec = 4, perPhase = 2, maxPhase = 4, order = [1, 0]}>",
     C.AMDRotatingSharedLayout(4, 2, 4, [1, 0])),
    ("#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = true, elementBitWidth = 8, fp4Padded = true, rank = 3}>",
     C.NVMMASharedLayout(128, 8, 3, True, True)),
    ("#ttg.shared_linear<{offset = [[0, 1], [1, 1]], block = [[0, 2]]}, alignment = 8>",
     C.SharedLinearLayout([[0, 1], [1, 1]], [[0, 2]], 8)),
    ("#ttg.padded_shared<[64:+8, 128:+4] {order = [1, 0], shape = [16, 16]}>",
     C.PaddedSharedLayout.with_identity_for([[64, 8], [128, 4]], [16, 16], [1, 0])),
    ("#ttg.padded_shared<[8:+8] {offset = [[0, 1], [0, 2], [1, 0]], block = [[2, 0]]}>",
     C.PaddedSharedLayout([[8, 8]], [[0, 1], [0, 2], [1, 0]], [[1, 0]], [4, 4])),
    ("#ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 1, CGALayout = [[1, 0]], twoCTAs = true>",
     C.TensorMemoryLayout((128, 64), 1, [[1, 0]], True)),
    ("#ttng.tensor_memory_scales_encoding<>", C.TensorMemoryScalesLayout()),
])
def test_parse_and_print(text, expected):
    assert parse_attribute(text) == expected
    assert format_attribute(expected) == text


def test_older_dumps_accepted():
    """Triton 3.6's classic CGA keys and WMMA parameters read as 3.9's ``cga_layout`` / ``ctaLayout``."""
    old = ("#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0], "
           "CTAsPerCGA = [2, 1], CTASplitNum = [2, 1], CTAOrder = [1, 0]}>")
    assert parse_attribute(old).cga_layout == ((1, 0),)
    wmma = parse_attribute("#ttg.amd_wmma<{version = 2, isTranspose = false, warpsPerCTA = [2, 4]}>")
    assert wmma == C.AMDWMMALayout.from_warps_per_cta(2, False, [2, 4])
    assert parse_attribute("#ttng.tensor_memory_encoding<blockM = 64, blockN = 32, unpacked = false>").col_stride == 1


@pytest.mark.parametrize("text, message", [
    ("#ttg.blocked<{sizePerThread = [1]}>", "missing key 'threadsPerWarp'"),
    ("#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0], colour = 1}>",
     "unexpected key 'colour'"),
    ("#ttg.blocked<{sizePerThread = [3], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>", "power of two"),
    ("#ttg.generic_linear<{register = []}>", "unsupported attribute"),
    ("#ttg.slice<{dim = 0, parent = #blocked}>", "unknown alias '#blocked'"),
    ("#ttg.slice<{dim = 0, parent = #ttg.shared_memory}>", "must be a layout attribute"),
    ("#ttg.shared_memory", "memory space"),
    ("#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}> trailing", "after the attribute"),
    ("#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]", "found 'the end'"),
    ("#ttg.shared_linear<{offset = [[1]]}>", "alignment"),
    ("#ttng.tensor_memory_encoding<blockM = 128, blockN = 64, unpacked = true>", "column stride"),
    ("blocked", "starts with '#'"),
])
def test_errors(text, message):
    with pytest.raises(LayoutError, match=message):
        parse_attribute(text)


def test_types_and_modules():
    t = parse_type(f"!ttg.memdesc<2x128x64xf16, #ttg.nvmma_shared<{{swizzlingByteWidth = 128, transposed = false, "
                   f"elementBitWidth = 16}}>, #ttg.shared_memory, mutable, 2x128x64>")
    assert (t.kind, t.shape, t.element_type, t.memory_space, t.mutable, t.alloc_shape) == \
        ("memdesc", (2, 128, 64), "f16", "ttg.shared_memory", True, (2, 128, 64))
    assert t.layout_shape == (128, 64) and t.bitwidth == 16
    assert t.linear_layout() == C.NVMMASharedLayout(128, 16).to_linear([128, 64])
    ptr = parse_type(f"tensor<128x1x!tt.ptr<f16>, {BLOCKED}>")
    assert ptr.element_type == "!tt.ptr<f16>" and ptr.shape == (128, 1) and ptr.bitwidth == 64
    assert parse_type("tensor<64xf8E4M3FN>").layout is None and parse_type("tensor<64xf8E4M3FN>").bitwidth == 8
    # one vocabulary (element_type.ir_element_bits): i1 is stored in a byte, as the kernel report counts it
    from linear_layouts.triton_model.encodings import parse_type as type_info
    for element in ("i1", "i8", "bf16", "f16", "f8E5M2", "f32", "i64", "!tt.ptr<f32>", "index"):
        assert parse_type(f"tensor<4x{element}>").bitwidth == type_info(f"tensor<4x{element}>").bitwidth
    assert parse_type("tensor<64xi1>").bitwidth == 8 and parse_type("tensor<4xindex>").bitwidth is None
    text = (f"#mma = {MMA}\n#blocked1 = #ttg.blocked<{{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4],"
            f" order = [0]}}>\n#smem = #ttg.shared_memory\n#loc = loc(unknown)\n"
            f"#shared = #ttg.swizzled_shared<{{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}}>\n"
            'module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", '
            '"ttg.threads-per-warp" = 32 : i32} {\n  tt.func @k() {\n'
            "    %0 = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32, #ttg.slice<{dim = 0, "
            "parent = #mma}>>\n    %1 = arith.addi %0, %0 : tensor<128xi32, #ttg.slice<{dim = 0, parent = #mma}>>\n"
            "    %2 = ttg.local_alloc : () -> !ttg.memdesc<128xi32, #shared, #smem, mutable>\n    tt.return\n  }\n}\n")
    module = parse_module(text)
    assert [name for name, _ in module.layout_aliases] == ["#mma", "#blocked1", "#shared"]
    assert len(module.types) == 2 and module.types[0].layout == C.SliceLayout(0, dict(module.layout_aliases)["#mma"])
    assert module.types[1].memory_space == "ttg.shared_memory" and module.types[1].mutable
    assert (module.num_warps, module.threads_per_warp, module.num_ctas, module.target) == (4, 32, 1, "cuda:90")
    assert len(module.layouts) == 4
    looped = parse_module("#a = #ttg.slice<{dim = 0, parent = #a}>\nmodule {\n  tt.func @k() {\n    tt.return\n  }\n}")
    with pytest.raises(LayoutError, match="a cycle"):
        looped.layout_aliases  # noqa: B018
    with pytest.raises(LayoutError, match="must start with"):
        parse_type("vector<4xf32>")
    # the documented old names answer with the one reader
    from linear_layouts.ttgir import TTGIRModule, parse_module as old_parse_module, parse_type as old_parse_type

    assert old_parse_module is parse_module and TTGIRModule is type(module) and old_parse_type is parse_type


def test_spec_dispatch():
    """The spec parser reads TTGIR attributes (need a shape) and types (carry theirs)."""
    assert parse_spec(BLOCKED).to_linear([32, 64]) == C.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0]).to_linear([32, 64])
    spec = parse_spec(f"tensor<128x128xf32, {MMA}>")
    assert spec.is_linear and isinstance(spec.value, TensorType)
    assert spec.to_linear() == C.NVMMADistributedLayout([3, 0], [4, 1], [16, 128, 16]).to_linear([128, 128])
    with pytest.raises(LayoutError, match="shape"):
        spec.to_linear([64, 64])


# ----------------------------------------------------------------------------- Triton 3.9 as the oracle
@pytest.fixture(scope="module")
def triton_ir():
    pytest.importorskip("triton")
    from triton._C.libtriton import amd, gluon_ir, ir, nvidia

    context = ir.context()
    ir.load_dialects(context)
    amd.load_dialects(context)
    nvidia.load_dialects(context)
    return ir, context, gluon_ir.GluonOpBuilder(context)


def _random_layouts(seed: int) -> list[tuple[object, list[int]]]:
    rng = random.Random(seed)
    generators = [R.random_blocked, R.random_nvmma, R.random_dot_operand, R.random_slice, R.random_distributed_linear]
    cases = []
    for k in range(100):
        params = generators[k % len(generators)](rng)
        layout = build_ours(params)
        shape = list(layout.shape) if isinstance(layout, C.DistributedLinearLayout) else \
            R.random_shape(rng, R.rank_of(params))
        cases.append((layout, shape))
    for _ in range(25):
        params, shape = R.random_shared_linear(rng)
        cases.append((build_ours(params), shape))
        params, shape = R.random_tensor_memory(rng)
        cases.append((build_ours(params), shape))
        cases += [random_swizzled(rng), random_nvmma_shared(rng)]
        padded = random_padded(rng)
        cases.append((padded, list(padded.shape)))
        layout, shape, _ = random_amd_case(rng)
        cases.append((layout, shape))
    return cases


def _triton_type_text(builder, layout, shape) -> str:
    from linear_layouts.triton_model.interop import to_gluon

    attribute = to_gluon(layout)._to_ir(builder)
    name = type(layout).__name__
    if name.startswith("TensorMemory"):
        element = builder.get_int8_ty() if "Scales" in name else builder.get_half_ty()
        return str(builder.get_tensor_mem_desc_ty(element, shape, attribute, shape))
    if "Shared" in name:
        return str(builder.get_shared_mem_desc_ty(builder.get_half_ty(), shape, attribute, shape))
    return str(builder.get_distributed_ty(builder.get_half_ty(), shape, attribute))


def test_printer_equals_triton_printer(triton_ir):
    """``format_attribute`` is Triton's printer, ``parse_attribute`` inverts it, on every kind."""
    _, _, builder = triton_ir
    checked = set()
    count = 0
    for layout, shape in _random_layouts(20261123):
        try:
            theirs = _triton_type_text(builder, layout, shape)
        except (RuntimeError, LayoutError):
            continue  # a shape Triton rejects for this layout (the generators draw freely)
        dims = "x".join(map(str, shape))
        name = type(layout).__name__
        element = "i8" if "Scales" in name else "f16"
        if name.startswith("TensorMemory"):
            expected = f"!ttg.memdesc<{dims}x{element}, {format_attribute(layout)}, #ttng.tensor_memory, mutable>"
        elif "Shared" in name:
            expected = f"!ttg.memdesc<{dims}x{element}, {format_attribute(layout)}, #ttg.shared_memory, mutable>"
        else:
            expected = f"tensor<{dims}x{element}, {format_attribute(layout)}>"
        assert theirs == expected
        assert parse_type(theirs).layout == layout
        checked.add(type(layout).__name__)
        count += 1
    assert count >= 240
    assert checked >= {"BlockedLayout", "SliceLayout", "NVMMADistributedLayout", "DotOperandLayout",
                       "DistributedLinearLayout", "AMDMFMALayout", "AMDWMMALayout", "SwizzledSharedLayout",
                       "NVMMASharedLayout", "SharedLinearLayout", "PaddedSharedLayout", "TensorMemoryLayout"}


def _corpus_files() -> list[Path]:
    return sorted(p for pattern in ("*.ttgir", "*.ttgir.mlir") for p in CORPUS.rglob(pattern))


def _triton_linear(result, shape) -> LinearLayout:
    kind = type(result).__name__
    if kind == "DistributedLinearLayout":
        bases = [("register", result.reg_bases), ("lane", result.lane_bases), ("warp", result.warp_bases),
                 ("block", result.block_bases)]
    elif kind == "SharedLinearLayout":
        bases = [("offset", result.offset_bases), ("block", result.block_bases)]
    else:
        bases = [("row", result.rows), ("col", result.cols)]
    return LinearLayout([(n, [list(map(int, v)) for v in vs]) for n, vs in bases],
                        [(f"dim{i}", int(s)) for i, s in enumerate(shape)], require_surjective=False)


def test_corpus_ttgir(triton_ir):
    """Every layout of every TTGIR of the real-kernel corpus (sm_80, sm_90, gfx942): our module scan finds
    it, prints it as Triton does, parses it as Triton's parser does, and its LinearLayout is Triton's."""
    from linear_layouts.triton_model.interop import from_gluon, to_gluon

    files = _corpus_files()
    if not files:
        pytest.skip("the real-kernel corpus (tests/data/triton_kernels, issue 15) has no TTGIR dumps yet")
    ir, context, builder = triton_ir
    counts = {"types": 0, "parsed by Triton": 0, "linear layouts": 0}
    for path in files:
        module = parse_module(path.read_text())
        values = []
        ir.parse_mlir_module(str(path), context).walk(
            lambda op: values.extend(op.get_result(i) for i in range(op.get_num_results())))
        seen = set()
        for value in values:
            text = str(value.get_type())
            if not text.startswith(("tensor<", "!ttg.memdesc<")) or text in seen:
                continue
            seen.add(text)
            ours = parse_type(text)
            if ours.layout is None:
                continue
            counts["types"] += 1
            assert ours.layout in module.layouts, (path.name, text)
            assert format_attribute(ours.layout) in text, (path.name, text)
            getter = builder.get_gluon_layout_from_tensor if ours.kind == "tensor" else builder.get_gluon_layout_from_memdesc
            if not isinstance(ours.layout, C.AMDRotatingSharedLayout):  # Gluon has no class for it
                assert from_gluon(getter(value)) == ours.layout, (path.name, text)
                counts["parsed by Triton"] += 1
            shape = list(ours.layout_shape)
            if isinstance(ours.layout, C.AMDRotatingSharedLayout) or all(s == 1 for s in shape):
                continue  # no Gluon class / Gluon cannot hold a layout without bases
            theirs = _triton_linear(builder.to_linear_layout(to_gluon(ours.layout)._to_ir(builder), shape), shape)
            mine = ours.linear_layout()
            if mine.has_in_dim("row"):
                mine = mine.sublayout(["row", "col"], list(mine.out_dim_names))
            assert remove_broadcast_registers(mine) == remove_broadcast_registers(theirs), (path.name, text)
            counts["linear layouts"] += 1
    print(f"TTGIR corpus: {len(files)} files, {counts}")
    assert len(files) >= 20 and counts["linear layouts"] >= 20 * len(files) // 2, counts
