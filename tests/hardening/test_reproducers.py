"""Issue 13's reproducers, one test each: every bad or huge input now gets a ``LayoutError`` that names the
argument and the rule (or the limit and how to raise it), quotes at most ~80 characters of the input,
and is raised before anything large is allocated.

The CLI reproducers (exit 2 with one line on stderr) are in ``test_cli_reproducers.py``; the kernel
cache in ``tests/codegen/test_kernel_cache.py``; the explorer server in ``tests/tools/test_explorer_server.py``.
"""

from __future__ import annotations

import re
import resource
import time

import numpy as np
import pytest

from linear_layouts import ColumnAction, LayoutError, LinearLayout
from linear_layouts.core.layout import invert_and_compose_block_local
from linear_layouts.core.limits import MAX_ELEMENTS, MAX_PICTURE_ELEMENTS, QUOTE_CHARS

L16x32 = LinearLayout.identity_1d(16, "register", "dim0") * LinearLayout.identity_1d(32, "lane", "dim1")


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def raises_quickly(call, match: str, *, seconds: float = 2.0, mb: float = 200.0) -> LayoutError:
    """Run ``call``; it must raise LayoutError matching ``match``, within ``seconds``, without the peak
    memory of the process growing by more than ``mb`` MB, and with a short message."""
    before, start = _rss_mb(), time.perf_counter()
    with pytest.raises(LayoutError, match=match) as info:
        call()
    assert time.perf_counter() - start < seconds
    assert _rss_mb() - before < mb
    assert len(str(info.value)) < 400, str(info.value)
    return info.value


# --- no size limits anywhere ---------------------------------------------------------------------------

def test_identity_1d_of_a_huge_size_is_refused_at_once():
    """``identity_1d(1 << 300000, ...)`` took 5.9 GB and 11.6 s."""
    raises_quickly(lambda: LinearLayout.identity_1d(1 << 300000, "a", "b"), r"size: 2\*\*300000 is above 2\*\*31")


def test_apply_all_at_30_bits_is_refused_before_allocating():
    """``apply_all`` at 30 bits needed 16 GB."""
    big = LinearLayout.identity_1d(1 << 15, "register", "dim0") * LinearLayout.identity_1d(1 << 15, "lane", "dim1")
    error = raises_quickly(big.apply_all, r"apply_all: 1073741824 elements exceed max_elements=1048576")
    assert "--max-elements" in str(error) and "max_elements=N" in str(error)


def test_apply_all_limit_is_a_keyword():
    small = LinearLayout.identity_1d(1 << 10, "register", "dim0")
    assert small.apply_all().size == 1024
    with pytest.raises(LayoutError, match="max_elements=512"):
        small.apply_all(max_elements=512)
    with pytest.raises(LayoutError, match="max_elements must be a positive int"):
        small.apply_all(max_elements=0)


def test_apply_array_result_size_is_limited():
    L = LinearLayout.identity_1d(1 << 12, "register", "dim0") * LinearLayout.identity_1d(1 << 12, "lane", "dim1")
    a = np.arange(1 << 12)
    raises_quickly(lambda: L.apply_array({"register": a[:, None], "lane": a[None, :]}, max_elements=1 << 20),
                   r"apply_array: 16777216 elements exceed max_elements=1048576")


def test_show_of_22_zero_register_bases_is_refused_without_allocating():
    """A 299-byte JSON spec (64 elements, 22 zero register bases) made ``show`` allocate 4.3 GB."""
    from linear_layouts.spec import parse_spec
    from linear_layouts.present.viz.text import layout_view

    spec = ('{"bases": {"register": [' + ",".join(["[0]"] * 22) + '], "lane": [[1],[2],[4],[8],[16],[32]]}, '
            '"out_dims": {"dim0": 64}}')
    layout = parse_spec(spec).to_linear()
    raises_quickly(lambda: layout_view(layout), r"text view of the distributed layout: 268435456 elements exceed "
                                                r"max_elements=65536 \(linear_layouts.limits.MAX_PICTURE_ELEMENTS\)")
    forty = LinearLayout({"register": [[0]] * 30, "lane": [[0]] * 9 + [[1]]}, ["dim0"])
    raises_quickly(lambda: layout_view(forty), "1099511627776 elements exceed")


@pytest.mark.parametrize("picture", ["distributed_svg", "distributed_png", "layout_html", "distributed_view"])
def test_pictures_refuse_above_their_readable_size(picture):
    """``show --shape 1024,1024 --format svg`` wrote a 370 MB file in 37 s; 65536x65536 was a MemoryError."""
    from linear_layouts.layouts import BlockedLayout
    from linear_layouts.present.viz import page, png, svg, text

    function = {"distributed_svg": svg.distributed_svg, "distributed_png": png.distributed_png,
                "layout_html": page.layout_html, "distributed_view": text.distributed_view}[picture]
    layout = BlockedLayout([1, 4], [4, 8], [8, 1], [1, 0]).to_linear([1024, 1024])
    raises_quickly(lambda: function(layout), "1048576 elements exceed max_elements=65536")
    huge = BlockedLayout([1, 4], [4, 8], [8, 1], [1, 0]).to_linear([65536, 65536])
    raises_quickly(lambda: function(huge), "4294967296 elements exceed max_elements=65536")


def test_a_256x256_tile_is_pictured_and_the_limit_is_a_keyword():
    from linear_layouts.layouts import BlockedLayout
    from linear_layouts.present.viz.svg import distributed_svg
    from linear_layouts.present.viz.text import distributed_view

    tile = BlockedLayout([1, 4], [4, 8], [8, 1], [1, 0]).to_linear([256, 256])
    assert tile.total_out_dim_size == MAX_PICTURE_ELEMENTS
    assert distributed_view(tile).count("T") == 256 * 256
    small = BlockedLayout([1, 4], [4, 8], [8, 1], [1, 0]).to_linear([64, 64])
    assert distributed_svg(small, max_elements=4096).startswith("<svg")
    with pytest.raises(LayoutError, match="max_elements=2048"):
        distributed_svg(small, max_elements=2048)


def test_shared_pictures_refuse_above_their_readable_size():
    from linear_layouts.present.viz.svg import shared_svg
    from linear_layouts.present.viz.text import shared_view

    shared = LinearLayout.identity_1d(1 << 9, "offset", "dim1") * LinearLayout.identity_1d(1 << 9, "offset", "dim0")
    raises_quickly(lambda: shared_view(shared), "262144 elements exceed max_elements=65536")
    raises_quickly(lambda: shared_svg(shared, 16), "262144 elements exceed max_elements=65536")


def test_matrix_views_are_bounded():
    from linear_layouts.present.viz.svg import matrix_svg
    from linear_layouts.present.viz.text import matrix_text

    wide = LinearLayout([(f"in{i}", [[1 << b] for b in range(31)]) for i in range(100)], {"dim0": 1 << 31},
                        require_surjective=False)
    raises_quickly(lambda: matrix_svg(wide), "to_matrix: 96100 elements exceed max_elements=65536")
    many = LinearLayout.empty()
    for i in range(100):
        many = many * LinearLayout.identity_1d(1 << 31, f"in{i}", f"d{i}")
    raises_quickly(lambda: matrix_text(many), "to_matrix: 9610000 elements exceed max_elements=65536")
    raises_quickly(many.to_matrix, "to_matrix: 9610000 elements exceed max_elements=1048576")


# --- tracebacks instead of LayoutError -------------------------------------------------------------------

def test_apply_all_and_apply_array_of_more_than_63_out_bits():
    """``apply_all`` / ``apply_array`` with a 64-bit basis raised OverflowError."""
    wide = LinearLayout({"register": [[1 << 30, 0, 0]]}, {"a": 1 << 31, "b": 1 << 31, "c": 4}, require_surjective=False)
    with pytest.raises(LayoutError, match="apply_all: the 64 out bits do not fit an int64"):
        wide.apply_all()
    with pytest.raises(LayoutError, match="apply_array: the 64 out bits do not fit an int64"):
        wide.apply_array({"register": np.arange(2)})
    with pytest.raises(LayoutError, match=r"2\*\*64 is above 2\*\*31"):
        LinearLayout({"register": [[1 << 63]]}, {"dim0": 1 << 64}, require_surjective=False)


def test_a_layout_of_15000_bases_is_refused_at_construction():
    """``str`` of a layout with 15000 bases hit Python's int -> str digit limit."""
    raises_quickly(lambda: LinearLayout({"register": [[1 << i] for i in range(15000)]}, ["dim0"]),
                   r"in dim 'register' \(15000 basis vectors\): 2\*\*15000 is above 2\*\*31")
    raises_quickly(lambda: LinearLayout({"register": [[1 << 15000]]}, ["dim0"]), r"2\*\*15001 is above 2\*\*31")


def test_products_cannot_grow_a_dim_past_32_bits():
    half = LinearLayout.identity_1d(1 << 20, "register", "dim0")
    with pytest.raises(LayoutError, match=r"product: out dim 'dim0': 2\*\*40 is above 2\*\*31"):
        half * half
    assert (half * LinearLayout.identity_1d(1 << 11, "register", "dim0")).in_dim_size("register") == 1 << 31


@pytest.mark.parametrize("call, match", [
    (lambda: L16x32.concat_ins(None), "concat_ins: other must be a LinearLayout, got NoneType"),
    (lambda: L16x32.concat_outs(None), "concat_outs: other must be a LinearLayout, got NoneType"),
    (lambda: L16x32.equal_ignoring_out_dim_sizes(None), "other must be a LinearLayout, got NoneType"),
    (lambda: ColumnAction(None, "r", 0), "action must be a list of basis indices, got None"),
    (lambda: ColumnAction([0], "r", 1).apply(None), "ColumnAction.apply: layout must be a LinearLayout"),
    (lambda: ColumnAction([0], "r", 1).compose(None), "ColumnAction.compose: then must be a ColumnAction"),
    (lambda: ColumnAction([0], "r", 1).apply_values(None), "values must be a list"),
    (lambda: invert_and_compose_block_local(None, None), "mem must be a LinearLayout, got NoneType"),
    (lambda: invert_and_compose_block_local(L16x32, None), "reg must be a LinearLayout, got NoneType"),
], ids=["concat_ins", "concat_outs", "equal_ignoring_out_dim_sizes", "ColumnAction", "ColumnAction.apply",
        "ColumnAction.compose", "ColumnAction.apply_values", "block_local mem", "block_local reg"])
def test_none_where_a_layout_is_expected(call, match):
    """These raised AttributeError / TypeError."""
    with pytest.raises(LayoutError, match=match):
        call()


# --- silently accepted junk ----------------------------------------------------------------------------

def test_identity_1d_of_false_and_none_names():
    """``identity_1d(False, None, None)`` returned the empty layout."""
    with pytest.raises(LayoutError, match="in_dim must be a non-empty string, got None"):
        LinearLayout.identity_1d(False, None, None)
    with pytest.raises(LayoutError, match="size must be a positive power of two, got False"):
        LinearLayout.identity_1d(False, "a", "b")
    with pytest.raises(LayoutError, match="size must be a positive power of two, got 0.0"):
        LinearLayout.zeros_1d(0.0, "a", "b")
    assert LinearLayout.identity_1d(0, "a", "b") == LinearLayout.empty()  # Triton's rule for 0


@pytest.mark.parametrize("vector", [{0: 1}, {1, 2}, "1"], ids=["dict", "set", "str"])
def test_a_dict_or_set_as_a_basis_vector(vector):
    """A dict as a basis vector was read as its keys."""
    with pytest.raises(LayoutError, match=r"bases\['register'\]\[0\] must be a list of 1 ints"):
        LinearLayout({"register": [vector]}, ["dim0"])
    with pytest.raises(LayoutError, match=r"bases\['register'\]\[0\] must be a list of 2 ints"):
        LinearLayout({"register": [vector]}, {"dim0": 4, "dim1": 4})


def test_a_dict_as_the_list_of_basis_vectors():
    with pytest.raises(LayoutError, match=r"bases\['register'\] must be a list of basis vectors"):
        LinearLayout({"register": {"a": [1]}}, ["dim0"])


@pytest.mark.parametrize("flag", ["false", 0, 1, None, [False]])
def test_require_surjective_must_be_a_bool(flag):
    """``require_surjective="false"`` was truthy."""
    with pytest.raises(LayoutError, match="require_surjective must be True or False"):
        LinearLayout({"register": [[1]]}, {"dim0": 4}, require_surjective=flag)
    assert not LinearLayout({"register": [[1]]}, {"dim0": 4}, require_surjective=np.bool_(False)).is_surjective()


# --- error echo ----------------------------------------------------------------------------------------

def test_errors_quote_at_most_about_80_characters_of_the_input():
    junk = "x" * 1_000_000
    quoted = r"'x{50}'\.\.\. \(1000000 characters\)"
    for call, rule in ((lambda: LinearLayout({junk: "y"}, ["dim0"]), rf"^bases\[{quoted}\] must be a list of basis"),
                       (lambda: LinearLayout({"a": [[1]]}, [junk, 3]), rf"^out_dims must be a mapping .* got item {quoted}$"),
                       (lambda: L16x32.apply({junk: 1}), rf"^apply: input dim {quoted} is not an in dim"),
                       (lambda: LinearLayout.identity_1d(3, junk, "b"), r"^size must be a positive power of two, got 3$"),
                       (lambda: LinearLayout.identity_1d(junk, "a", "b"), rf"^size must be a positive power of two, got {quoted}$"),
                       (lambda: L16x32.sublayout([junk], []), rf"^sublayout: in dim {quoted} is not an in dim"),
                       (lambda: LinearLayout({"a": [[1, 2, 3] * 100000]}, ["dim0"]),
                        r"^bases\['a'\]\[0\] has 300000 coordinates but there are 1 out dim")):
        with pytest.raises(LayoutError, match=rule) as info:
            call()
        assert len(str(info.value)) < 200 + QUOTE_CHARS, str(info.value)[:300]


def test_no_message_is_ever_longer_than_the_cap():
    """The last guard: a message built from a huge input is cut at MAX_MESSAGE_CHARS (and says so)."""
    from linear_layouts.core.errors import MAX_MESSAGE_CHARS

    error = LayoutError("shape " + "(8, " * 100_000)
    assert len(str(error)) == MAX_MESSAGE_CHARS and str(error).endswith("(a message of 400006 characters, cut)")
    # a run without spaces (a number, a shape formatted whole) is cut to 80 characters first (issue 33)
    error = LayoutError("shape " + "(8," * 100_000)
    assert str(error) == "shape " + ("(8," * 27)[:80] + "... (300000 characters)"
    assert str(LayoutError("short")) == "short" and LayoutError("a", "b").args == ("a", "b")


def test_huge_ints_in_errors_are_described_not_printed():
    with pytest.raises(LayoutError, match="got an int of 60002 bits"):
        LinearLayout.identity_1d(3 << 60000, "a", "b")
    with pytest.raises(LayoutError, match="must be an int in \\[0, 16\\), got an int of 60001 bits"):
        L16x32.apply({"register": 1 << 60000})


def test_limits_default_passes_the_largest_real_layouts():
    """256x256 tiles, 8 warps, a CGA of 16: every operation of the library stays under the defaults."""
    from linear_layouts.layouts import BlockedLayout

    cga = BlockedLayout([1, 8], [4, 8], [8, 1], [1, 0], cga_layout=[[0, 1], [0, 2], [1, 0], [2, 0]])
    layout = cga.to_linear([1024, 1024])
    assert layout.in_dims == {"register": 256, "lane": 32, "warp": 8, "block": 16}
    assert layout.total_in_dim_size <= MAX_ELEMENTS
    assert layout.apply_all().size == 1 << 20


@pytest.mark.parametrize("call, match", [
    (lambda: __import__("linear_layouts.analysis", fromlist=["x"]).plan_shared_memory(L16x32, None, 16),
     "plan_shared_memory: dst must be a LinearLayout, got NoneType"),
    (lambda: __import__("linear_layouts.codegen", fromlist=["x"]).conversion_kernel(L16x32, None, 16),
     "conversion_kernel: dst must be a LinearLayout, got NoneType"),
    (lambda: __import__("linear_layouts.present.viz", fromlist=["x"]).matrix_svg(None),
     "matrix_svg: layout must be a LinearLayout, got NoneType"),
], ids=["plan_shared_memory", "conversion_kernel", "matrix_svg"])
def test_none_where_the_analyses_want_a_layout(call, match):
    """These raised AttributeError."""
    with pytest.raises(LayoutError, match=match):
        call()


def test_zero_sizes_no_longer_divide_by_zero():
    """``vector_tile(128, 0)`` and ``legacy_swizzle_params([0, 0], ...)`` raised ZeroDivisionError."""
    from linear_layouts.analysis import legacy_swizzle_params, vector_tile

    with pytest.raises(LayoutError, match="0"):
        vector_tile(128, 0)
    with pytest.raises(LayoutError, match=r"shape\[0\] must be a power of two, got 0"):
        legacy_swizzle_params([0, 0], [1, 0], 16, op_idx=0)
    assert legacy_swizzle_params([64, 64], [1, 0], 16, op_idx=0) == (8, 1, 8)


@pytest.mark.parametrize("scalar", [np.int64(4), np.float32(2.0), np.array(4)])
def test_a_numpy_scalar_where_a_catalog_class_wants_a_list(scalar):
    """A NumPy scalar where a catalog class wants a list raised TypeError."""
    from linear_layouts.layouts import BlockedLayout

    with pytest.raises(LayoutError, match="size_per_thread must be a list of integers"):
        BlockedLayout(scalar, [4, 8], [4, 1], [1, 0])
    assert BlockedLayout(np.array([1, 4]), [4, 8], [4, 1], [1, 0]).size_per_thread == (1, 4)


def test_plan_conversion_on_24_input_bits_is_refused_at_once():
    """``plan_conversion`` on 24 input bits took 68 s / 1.1 GB and died at 28."""
    from linear_layouts.analysis import plan_conversion
    from linear_layouts.layouts import BlockedLayout

    a = BlockedLayout([1, 4], [4, 8], [8, 1], [1, 0]).to_linear([4096, 4096])
    b = BlockedLayout([4, 1], [8, 4], [1, 8], [0, 1]).to_linear([4096, 4096])
    raises_quickly(lambda: plan_conversion(a, b, "fp16"), "plan_conversion: src: 16777216 elements exceed "
                                                           "max_elements=1048576")
    c = BlockedLayout([1, 4], [4, 8], [8, 1], [1, 0]).to_linear([1 << 14, 1 << 14])
    raises_quickly(lambda: plan_conversion(c, c, "fp16"), "268435456 elements exceed")


@pytest.mark.parametrize("m", [1 << 40, 1 << 16])
def test_the_engine_on_huge_tiles_is_refused_at_once(m):
    """The engine on m = 2**40 did not finish."""
    from linear_layouts.engine import propagate
    from linear_layouts.engine.examples import dot_trans_store

    raises_quickly(lambda: propagate(dot_trans_store(m=m)), r"2\*\*\d+ is above 2\*\*31|elements exceed "
                                                            r"max_elements=1048576")


@pytest.mark.parametrize("call, match", [
    (lambda: __import__("linear_layouts.cute", fromlist=["x"]).Layout((8, 64), (64, 1)).mode(None),
     r"mode: i must be an int in \[0, 2\), got None"),
    (lambda: __import__("linear_layouts.cute", fromlist=["x"]).Layout((8, 64), (64, 1)).mode(3), r"got 3"),
    (lambda: __import__("linear_layouts.cute", fromlist=["x"]).Swizzle(3, 4, 3)(None), "offset must be an int"),
    (lambda: __import__("linear_layouts.cute", fromlist=["x"]).sm80_16x8x16(np.array([1, 2])),
     "operand must be 'A', 'B' or 'C', got ndarray"),
    (lambda: ColumnAction.identity("register", L16x32), "in_size_log2 must be an int >= 0"),
    (lambda: __import__("linear_layouts.layouts", fromlist=["x"]).NVMMASharedLayout(128, 16).tma_block_shape(None),
     "cta_shape must be a list"),
    (lambda: __import__("linear_layouts.layouts", fromlist=["x"]).row_major_shared([2, 4], L16x32),
     "order must be a list of integers"),
    (lambda: __import__("linear_layouts.analysis", fromlist=["x"]).Cost(1 << 2000),
     "a cost is a finite number >= 0, got an int of 2001 bits"),
    (lambda: __import__("linear_layouts.codegen", fromlist=["x"]).emit_index(L16x32, {"register": [[1]]}),
     "the value for 'register' must be a C\\+\\+ identifier or an int"),
    (lambda: __import__("linear_layouts.layouts.ttgir", fromlist=["x"]).parse_type(None), "text must be a str"),
    (lambda: __import__("linear_layouts.engine", fromlist=["x"]).naive_conversions({}), "program must be a Program"),
    (lambda: __import__("linear_layouts.present.reports", fromlist=["x"]).demo_report(0),
     "width must be a positive number of columns"),
], ids=["cute-mode-None", "cute-mode-3", "swizzle-None", "sm80-array", "column-identity", "tma-block-None",
        "row-major-order", "cost-huge-int", "emit-index-list", "parse-type-None", "engine-dict", "demo-width-0"])
def test_found_by_the_fuzz_over_the_whole_api(call, match):
    """TypeError / IndexError / ValueError / OverflowError from deep inside before (the extended fuzz)."""
    with pytest.raises(LayoutError, match=match):
        call()


def test_predicates_of_junk_are_false():
    from linear_layouts.cute import looks_like_cute

    assert not looks_like_cute(None) and not L16x32.has_in_dim(np.array([1, 2])) and not L16x32.has_out_dim(None)
    assert L16x32.has_in_dim("register") and looks_like_cute("(8,64):(64,1)")


# --- the MLIR text readers (the corpus fuzz of 2026-11-27: mutated TTIR / TTGIR texts) ------------------

@pytest.mark.parametrize("call, match", [
    (lambda: __import__("linear_layouts.core.mlir_text", fromlist=["x"]).closing("tensor<4xf16>", 20),
     r"closing: start must index text \(0 <= start < len\(text\) = 13\), got 20"),
    (lambda: __import__("linear_layouts.core.mlir_text", fromlist=["x"]).closing("", 0), r"len\(text\) = 0\), got 0"),
    (lambda: __import__("linear_layouts.core.mlir_text", fromlist=["x"]).closing("<a>", -1), "got -1"),
    (lambda: __import__("linear_layouts.core.mlir_text", fromlist=["x"]).find_top("a, b", ",", start=-9),
     r"find_top: start must be in 0..len\(text\) = 4, got -9"),
    (lambda: __import__("linear_layouts.core.mlir_text", fromlist=["x"]).find_top("a, b", None), "needle must be a str"),
], ids=["closing-past-the-end", "closing-of-empty", "closing-negative", "find-top-negative", "find-top-None"])
def test_mlir_text_scans_check_their_start(call, match):
    """``closing`` past the end of its text (or before it) was an IndexError; ``find_top`` with a start
    far below 0 an IndexError, a little below 0 a scan from the text's end (a silently wrong index)."""
    with pytest.raises(LayoutError, match=match):
        call()


def test_an_if_whose_results_the_engine_did_not_lay_out_keeps_triton_s_layouts():
    """``rewrite_ttgir`` of a TTGIR with an ``scf.if`` yielding tensors, without the engine's layouts for
    them (a TTIR of another kernel ties nothing), was a NameError (``group_layout`` read an undefined
    ``result``)."""
    from pathlib import Path

    from linear_layouts.pipeline.rewrite import rewrite_ttgir

    ir = Path(__file__).resolve().parents[1] / "data" / "triton_kernels" / "ir" / "sm_90"
    text = (ir / "layer_norm_bwd_dx.ttgir").read_text()
    assert "= scf.if" in text
    rewrite = rewrite_ttgir(text, {})
    assert rewrite.same_layouts and rewrite.conversions == rewrite.triton_conversions


SM90 = __import__("pathlib").Path(__file__).resolve().parents[1] / "data" / "triton_kernels" / "ir" / "sm_90"


def _pair(kernel: str, side: str, old: str, new: str) -> tuple[str, str]:
    """``kernel``'s (TTIR, TTGIR) with ``old`` replaced by ``new`` (once, and it must occur) on ``side``."""
    texts = {s: (SM90 / f"{kernel}.{s}").read_text() for s in ("ttir", "ttgir")}
    assert old in texts[side], old
    texts[side] = texts[side].replace(old, new, 1)
    return texts["ttir"], texts["ttgir"]


@pytest.mark.parametrize("pair, match", [
    (_pair("vector_add", "ttgir", "    %mask_3 = arith.cmpi slt, %offsets_2, %mask : tensor<1024xi32, #blocked> loc(#loc20)\n", ""),
     r"ttgir: tt.load at vector_add.py:\d+ \(x\) uses '%mask_3', which is not defined before it"),
    (_pair("vector_add", "ttir", "%mask_4 = arith.cmpi slt, %offsets_3, %mask : tensor<1024xi32>",
           "%mask_4 = arith.cmpi slt, %offsets_3, %mask"), r"ttir: arith.cmpi at .* without a type"),
    (_pair("vector_add", "ttgir", "%mask_3 = arith.cmpi slt, %offsets_2, %mask : tensor<1024xi32, #blocked>",
           "%mask_3 = arith.cmpi slt, %offsets_2, %mask"), r"ttgir: arith.cmpi at .* without a type"),
    (_pair("vector_add", "ttir", "%x_5 = tt.addptr %x, %offsets_3", "%x_5 = tt.addptr %x"),
     r"ttir: tt.addptr at .*: 1 operands, 2 operand types \(tt.addptr has at least 2 operands and their types\)"),
    (_pair("vector_add", "ttgir", "tt.store %1, %2, %mask_3 : tensor<1024x!tt.ptr<f32>, #blocked>",
           "tt.store %1, %2, %mask_3"), r"ttgir: tt.store at .*: 3 operands, 0 operand types"),
    (_pair("row_sum", "ttgir", "iter_args(%acc_17 = %cst) -> (tensor<16x256xf32, #blocked>)  : i32 {",
           "iter_args(%acc_17 = %cst) -> (tensor<16x256xf32, #blocked>)  : i32"),
     "ttgir: scf.for at .* has no region"),
    (_pair("linear_recurrence_scan", "ttir", "}) : (tensor<4x1024xf32>, tensor<4x1024xf32>) ->",
           "}) : (tensor<4x1024xf32>?xsor<4x1024xf32>) ->"),
     r"ttir: tt.scan at .*: 2 operands and 2 results, but 1 and 2 types \(tt.scan gives each its type\)"),
    (_pair("moe_router", "ttgir", "tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked}>>) loc(#loc61)",
           "tensor<64xi32, [, parent = #blocked}>>) loc(#loc61)"),
     r"ttgir: tt.reduce at .*: 2 operands and 2 results, but 2 and 1 types"),
], ids=["ttgir-use-before-def", "ttir-untyped-result", "ttgir-untyped-result", "ttir-addptr-one-operand",
        "ttgir-store-untyped", "ttgir-for-without-body", "ttir-scan-types-merged", "ttgir-reduce-type-broken"])
@pytest.mark.parametrize("entry", ["rewrite_kernel", "kernel_costs"])
def test_mutated_ttir_ttgir_pairs(pair, match, entry):
    """The corpus fuzz of ``rewrite_kernel`` and ``kernel_costs`` over mutated pairs: a value used but not
    defined (a deleted line) was a KeyError in ``rewrite`` or ``ttir_import``; a result without its type a
    KeyError; ``tt.addptr`` of one operand a ValueError (unpacking); a ``tt.store`` without types an
    IndexError in ``engine_compare``; an ``scf.for`` without its body an IndexError in ``rewrite``; a
    ``tt.scan`` / ``tt.reduce`` whose signature lost a type an IndexError in ``ttir_import``, a KeyError in ``rewrite``.
    ``kernels.ir_text.check_well_formed`` now refuses them where the TTIR / TTGIR is read."""
    from linear_layouts.pipeline import engine_compare, rewrite

    call = rewrite.rewrite_kernel if entry == "rewrite_kernel" else engine_compare.kernel_costs
    raises_quickly(lambda: call(*pair), match, seconds=10)


_ALLOC = ('#s = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>\n'
          '#smem = #ttg.shared_memory\nmodule attributes {"ttg.num-warps" = 4 : i32} {\n  tt.func public @k() {\n'
          '    %a = ttg.local_alloc : () -> !ttg.memdesc<SHAPE, #s, #smem, mutable>\n    tt.return\n  }\n}')


@pytest.mark.parametrize("shape, match", [
    ("128x64xfoo", r"ttg.local_alloc at \?: the element type 'foo' has no known width"),
    ("128x64x", "the element type '' has no known width"),
    ("0x128xf16", r"the buffer '!ttg.memdesc<0x128xf16, .*' has no static shape of sizes >= 1"),
    ("?x128xf16", "has no static shape of sizes >= 1"),
    ("", "has no static shape of sizes >= 1"),
], ids=["unknown-element", "no-element", "zero-size", "dynamic-size", "no-shape"])
def test_shared_memory_need_of_odd_buffers(shape, match):
    """``shared_memory_need`` counted an element of unknown width as 32 bits (``128x64xfoo``: 32768 bytes),
    and a buffer of no readable shape as one element (``?x128xf16``: 4 bytes, ``0x128xf16``: 0): silently
    wrong answers, which ``rewrite_kernel``'s fit check trusts."""
    from linear_layouts.triton_model.ir_text import parse_module
    from linear_layouts.pipeline.shared_memory import shared_memory_need

    assert shared_memory_need(parse_module(_ALLOC.replace("SHAPE", "3x128x64xf16"))).bytes == 49152
    raises_quickly(lambda: shared_memory_need(parse_module(_ALLOC.replace("SHAPE", shape))), "module: .*" + match)


def test_shared_memory_need_of_a_module_without_functions():
    """A ``Module`` built without functions was an IndexError."""
    from linear_layouts.triton_model.ir_text import Module
    from linear_layouts.pipeline.shared_memory import shared_memory_need

    raises_quickly(lambda: shared_memory_need(Module({}, {}, ())), r"module: has no function \(tt.func\)")


@pytest.mark.parametrize("entry", ["rewrite_kernel", "kernel_costs", "engine_assignment", "compare_with_engine"])
def test_a_ttir_of_another_kernel(entry):
    """A TTIR and a TTGIR of two kernels ties no op (they are tied by source location): ``kernel_costs``
    gave the TTGIR no global-memory time at all and ``compare_with_engine`` compared two kernels, silently;
    ``rewrite_kernel`` was a NameError (see above). The first functions' names must now agree."""
    from linear_layouts.pipeline import engine_compare, rewrite
    from linear_layouts.triton_model.ir_text import parse_module
    from linear_layouts.pipeline.report import analyze_ttgir

    ttir, ttgir = (SM90 / "nchw_to_nhwc.ttir").read_text(), (SM90 / "layer_norm_bwd_dx.ttgir").read_text()
    match = "ttgir: its function '@layer_norm_bwd_dx_kernel' is not the TTIR's '@nchw_to_nhwc_kernel'"
    if entry == "compare_with_engine":
        comparison = engine_compare.compare_with_engine(analyze_ttgir(ttgir, with_triton_estimate=False),
                                                        parse_module(ttir))
        assert not comparison.ran and comparison.error.startswith(match)
    elif entry == "engine_assignment":
        raises_quickly(lambda: rewrite.engine_assignment(parse_module(ttir), parse_module(ttgir)), match)
    else:
        raises_quickly(lambda: getattr(rewrite if entry == "rewrite_kernel" else engine_compare, entry)(ttir, ttgir),
                       match)


def test_ttgir_parse_module_of_deeply_nested_types_is_linear():
    """``ttgir.parse_module`` scanned every ``tensor<`` again inside the type it had just read: 4000 nested
    ``tensor<`` (48 KB) took 19 s, quadratic in the depth. The one reader (``ir_text.parse_module``, whose
    ``types`` the old name now gives) reads each type of a module once."""
    from linear_layouts.layouts import ttgir

    def module(type_text: str) -> str:
        return f"module {{\n  tt.func @k(%a: {type_text}) {{\n    tt.return\n  }}\n}}\n"

    raises_quickly(lambda: ttgir.parse_type("tensor<" * 20000 + "4xf16" + ">" * 20000),
                   "has the element type 'tensor<tensor<")  # a tensor of tensors, refused at the outer type
    start = time.perf_counter()
    parsed = ttgir.parse_module(module("tensor<2x!tt.ptr<" * 20000 + "f16" + ">" * 40000))
    assert len(parsed.types) == 1 and parsed.types[0].shape == (2,)
    parsed = ttgir.parse_module(module("tensor<" * 20000 + "4xf16" + ">" * 20000))
    assert len(parsed.types) == 1 and time.perf_counter() - start < 2


@pytest.mark.parametrize("text, element", [("tensor<?x4xf16>", "?x4xf16"), ("tensor<4x-1xf16>", "-1xf16"),
                                           ("tensor<4x 4xf16>", "4xf16"), ("tensor<4xtensor<4xf16>>", "tensor<4xf16>")])
def test_ttgir_parse_type_of_no_static_shape(text, element):
    """``ttgir.parse_type`` read ``tensor<?x4xf16>`` as a rank-0 tensor of the element type ``?x4xf16``
    (and a negative or spaced size, a tensor of tensors, alike): a silently wrong type."""
    from linear_layouts.layouts import ttgir

    raises_quickly(lambda: ttgir.parse_type(text), f"has the element type '{re.escape(element)}': a static shape")
    assert ttgir.parse_type("tensor<4x!tt.ptr<f16>>").element_type == "!tt.ptr<f16>"


_IR = ('#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>\n'
       'module attributes {"ttg.num-warps" = 4 : i32} {\n  tt.func @k\u00e9(%a: tensor<32x64xf16, #blocked>) {\n'
       '    tt.return\n  }\n}\n')


@pytest.mark.parametrize("parser", ["ttgir", "ir_text"])
def test_ir_parsers_refuse_a_text_above_max_ir_bytes(parser):
    """Only ``report``'s file reader applied ``limits.MAX_IR_BYTES``: ``ttgir.parse_module`` and
    ``kernels.ir_text.parse_module`` read a text of any size. Now a text of more UTF-8 bytes than ``max_bytes``
    is refused before it is parsed, and the message says how to raise the limit."""
    from linear_layouts.layouts import ttgir
    from linear_layouts.triton_model import ir_text
    from linear_layouts.core.limits import MAX_IR_BYTES

    parse = ttgir.parse_module if parser == "ttgir" else ir_text.parse_module
    size = len(_IR.encode("utf-8"))
    assert size == len(_IR) + 1  # one 2-byte character: bytes are counted, not characters
    parse(_IR)
    parse(_IR, max_bytes=size)
    raises_quickly(lambda: parse(_IR, max_bytes=size - 1),
                   f"^text has {size} bytes, above the {size - 1} of an IR text or dump: keep the last module, "
                   "or pass max_bytes=N to raise it$")
    raises_quickly(lambda: parse(_IR + " " * MAX_IR_BYTES), r"above the 16777216 of an IR text or dump "
                   r"\(linear_layouts.limits.MAX_IR_BYTES\).*pass max_bytes=N", mb=400)
    raises_quickly(lambda: parse(_IR, max_bytes=0), "max_bytes must be a positive int, got 0")


def test_a_kernel_file_without_a_loader_is_a_layout_error(tmp_path, monkeypatch):
    """``kernels.spec.load_kernel_file`` asserted that Python finds a loader for the file (it always does for
    a ``.py`` file): an AssertionError, or an AttributeError under ``python -O``. Without one it must be a
    LayoutError naming the argument and the rule."""
    import importlib.util

    from linear_layouts.triton_model.kernel_file import load_kernel_file

    kernel = tmp_path / "k.py"
    kernel.write_text("x = 1\n")
    monkeypatch.setattr(importlib.util, "spec_from_file_location", lambda *args, **kwargs: None)
    raises_quickly(lambda: load_kernel_file(kernel), r"^path: Python must have a loader for the kernel file '.*k\.py'")
