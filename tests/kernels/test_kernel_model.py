"""The whole-kernel model (``pipeline.kernel_model``), its table of global instruction costs
(``analysis.global_costs``, here a hand-made table of the measured one's shape) and the gates that refuse a
rewrite narrowing global accesses: the model's (``rewrite._model_refusal``) and the compiled artifact's
(``pipeline.artifact_check``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from linear_layouts.analysis.global_costs import GlobalCostTable, load_global_table, table_op
from linear_layouts.core.errors import LayoutError
from linear_layouts.pipeline.engine_compare import global_pointers
from linear_layouts.pipeline.kernel_model import KernelTime, kernel_time, narrowed_accesses, predicted_gain
from linear_layouts.pipeline.rewrite import _model_refusal
from linear_layouts.pipeline.ttir_import import import_ttir
from linear_layouts.triton_model.global_access import global_inventory
from linear_layouts.triton_model.ir_text import parse_module

DATA = Path(__file__).resolve().parent.parent / "data"
IR = DATA / "triton_kernels" / "ir" / "sm_90"
TABLE = load_global_table(DATA / "global_costs" / "small.json")
TABLE_JSON = __import__("json").loads((DATA / "global_costs" / "small.json").read_text())


def _vector_add() -> tuple[str, str, dict]:
    """vector_add's TTGIR (two v4 loads and a v4 store per 1024 elements), the same with 2 floats per
    thread and repetition (v2: twice the instructions, the same data, no conversion), and the pointers."""
    ttgir = (IR / "vector_add.ttgir").read_text()
    assert "sizePerThread = [4]" in ttgir
    narrow = ttgir.replace("sizePerThread = [4]", "sizePerThread = [2]")
    ttir = parse_module((IR / "vector_add.ttir").read_text())
    pointers = global_pointers(ttir, import_ttir(ttir, num_warps=parse_module(ttgir).num_warps))
    return ttgir, narrow, pointers


def test_the_inventory_of_the_narrowed_rewrite():
    ttgir, narrow, _ = _vector_add()
    assert global_inventory(parse_module(ttgir)) == {"ld.global.16B": 4, "st.global.16B": 2}
    assert global_inventory(parse_module(narrow)) == {"ld.global.8B": 8, "st.global.8B": 4}


def test_without_a_table_the_model_refuses_narrower_accesses():
    """The legacy sector model sees the same sectors either way; the gate says why it will not choose it."""
    ttgir, narrow, pointers = _vector_add()
    own, costs = kernel_time(ttgir, pointers, table=None), kernel_time(narrow, pointers, table=None)
    assert narrowed_accesses(own, costs) == ["ld.global.16B x2 -> ld.global.8B x4", "ld.global.16B x2 -> ld.global.8B x4",
                                             "st.global.16B x2 -> st.global.8B x4"]
    refusal = _model_refusal("both", own, costs)
    assert refusal.startswith("both: narrower global accesses") and "no measured table" in refusal
    assert _model_refusal("both", costs, own) is None  # wider is fine


def test_with_a_table_the_model_prices_the_instructions():
    """At the table's costs, a warp's two v2 stores (2 x 4.8 ns) cost more than one v4 store (8.0 ns) of the
    same 512 bytes: the narrowed rewrite is predicted slower, the widened one faster."""
    ttgir, narrow, pointers = _vector_add()
    own, costs = kernel_time(ttgir, pointers, table=TABLE), kernel_time(narrow, pointers, table=TABLE)
    stores = [g for g in own.global_ops if g.key.startswith("st")]
    assert [(g.key, g.per_thread, g.warps, g.sectors) for g in stores] == [("st.global.16B", 2, 4, 16.0)]
    assert stores[0].ns == pytest.approx(2 * 4 * 8.0)
    assert own.global_ns == pytest.approx(4 * 2 * (2 * 8.5 + 8.0))
    assert costs.global_ns == pytest.approx(4 * 4 * (2 * 4.5 + 4.8))
    assert predicted_gain(own, costs) == pytest.approx(1 - 220.8 / 200.0)
    assert predicted_gain(costs, own) > 0
    assert own.table == "small-test-table"
    assert _model_refusal("both", own, costs, narrowing=True) is None  # priced, not refused, for a measured choice
    assert "the model alone does not act on them" in _model_refusal("both", own, costs)  # model-only refuses


def test_time_per_cta_adds_shared_and_global_time():
    assert KernelTime(100.0, 300.0, concurrent=1).cta_ns == KernelTime(100.0, 300.0, concurrent=4).cta_ns == 400.0


def _atomic_add(sem: str) -> tuple[str, dict]:
    """vector_add with its store made ``tl.atomic_add(out + offsets, x + y, mask, sem=sem)``: TTGIR, pointers."""
    import re

    ttgir, ttir = (IR / "vector_add.ttgir").read_text(), (IR / "vector_add.ttir").read_text()

    def swap(text: str, encoding: str) -> str:
        m = re.search(r"tt\.store (%\w+), (%\w+), (%\w+) : tensor<1024x!tt\.ptr<f32>(.*?)>", text)
        assert m, "vector_add's store"
        t = f"tensor<1024x{{}}{encoding}>"
        atomic = (f"%atom = tt.atomic_rmw fadd, {sem}, gpu, {m.group(1)}, {m.group(2)}, {m.group(3)} : "
                  f"({t.format('!tt.ptr<f32>')}, {t.format('f32')}, {t.format('i1')}) -> {t.format('f32')}")
        return text[:m.start()] + atomic + text[m.end():]

    ttgir, ttir = swap(ttgir, ", #blocked"), swap(ttir, "")
    module = parse_module(ttir)
    return ttgir, global_pointers(module, import_ttir(module, num_warps=parse_module(ttgir).num_warps))


def test_a_fenced_atomic_waits_for_the_one_before():
    """vector_add's store made an ``atom.add.f32`` ordered acq_rel: each of a thread's atomics waits for the
    one before (the table's one-warp latency, shared by the CTAs an SM overlaps); relaxed, only the
    throughput counts."""
    dram = {**TABLE_JSON["ns"]["full"]["dram"], "red.relaxed": {"f32": {"16": {"dense/32": 20.0}}}}
    table = GlobalCostTable.from_json({**TABLE_JSON, "ns": {"full": {**TABLE_JSON["ns"]["full"], "dram": dram},
                                                            "small": {"l2": {"atom.acq_rel": {"f32": {"16": {
                                                                "dense/32": 500.0}}}}}}})
    fenced = kernel_time(*_atomic_add("acq_rel"), table=table, grid=(1,))
    relaxed = kernel_time(*_atomic_add("relaxed"), table=table, grid=(1,))
    [a] = [g for g in fenced.global_ops if g.key.startswith("atom")]
    [r] = [g for g in relaxed.global_ops if g.key.startswith("red")]  # its result unused: a red
    assert (a.key, r.key, fenced.concurrent) == ("atom.global.add.f32.16B", "red.global.add.f32.16B", 1)
    assert a.ns == pytest.approx(2 * 500.0) and r.ns == pytest.approx(4 * 2 * 20.0)
    assert 4 * 2 * 21.0 < a.ns  # the throughput alone: less than the chain


def test_an_unknown_trip_count_takes_the_less_favourable_scenario():
    """The rewrite saves 100 ns outside a loop of unknown trip count and costs 1 ns per iteration inside it:
    once through the loop it gains 99/1000, but the loop may dominate: predicted -10%."""
    triton = KernelTime(0.0, 1000.0, 0.0, 10.0, unknown_trips=True, concurrent=8)
    ours = KernelTime(0.0, 901.0, 0.0, 11.0, unknown_trips=True, concurrent=8)
    assert predicted_gain(triton, ours) == pytest.approx(-0.1)
    known = KernelTime(0.0, 1000.0, 0.0, 10.0, concurrent=8), KernelTime(0.0, 901.0, 0.0, 11.0, concurrent=8)
    assert predicted_gain(*known) == pytest.approx(0.099)


def test_trip_counts_come_from_the_scalar_arguments():
    """layer_norm_bwd_dwdb loops over the rows of its block: with ``M`` known each load in the loop counts
    ``M / (BLOCK_M * grid)`` times, not once."""
    ttir = parse_module((IR / "layer_norm_bwd_dwdb.ttir").read_text())
    ttgir = (IR / "layer_norm_bwd_dwdb.ttgir").read_text()
    pointers = global_pointers(ttir, import_ttir(ttir, num_warps=parse_module(ttgir).num_warps))
    once = kernel_time(ttgir, pointers, table=None)
    known = kernel_time(ttgir, pointers, table=None, scalars={"%M": 4096, "%N": 8192})
    assert once.unknown_trips and not known.unknown_trips
    assert known.global_ns > 10 * once.global_ns


def test_the_table_interpolates_between_measured_patterns():
    """Keyed by lanes per contiguous run, linear in its log2: runs of 8 lie a third of the way from dense/4 to
    dense/32 (log2 3 between 2 and 5)."""
    assert TABLE.instruction_ns("st", "b", 4, lanes_per_segment=32) == 2.6
    assert TABLE.instruction_ns("st", "b", 4, lanes_per_segment=8) == pytest.approx(4.2 + (2.6 - 4.2) / 3)
    assert TABLE.instruction_ns("st", "b", 4, lanes_per_segment=0.5) == 10.5  # beyond the last: the last
    assert TABLE.instruction_ns("ld", "b", 8, lanes_per_segment=32, footprint="l2") == 1.6
    with pytest.raises(LayoutError, match="no measured cell"):
        TABLE.instruction_ns("st", "b", 2, lanes_per_segment=32)
    with pytest.raises(LayoutError, match="sectors_per_request"):
        GlobalCostTable.from_json({"ns": {}})
    assert [table_op(k, s) for k, s in (("cp.async", ""), ("atom", "acq_rel"), ("atom", "relaxed"), ("red", "relaxed"),
                                        ("atom", "release"))] == \
        ["ld", "atom.acq_rel", "atom.relaxed", "red.relaxed", "atom.acq_rel"]


def test_the_compiled_check_refuses_narrower_accesses_and_passes_its_own():
    """Compiled on the CPU, the v2 rewrite has twice Triton's global instructions for the same bytes: refused
    where no table priced it; refused too where its compiled instructions are not the ones predicted."""
    pytest.importorskip("triton")
    from linear_layouts.pipeline.artifact_check import check_compiled

    ttgir, narrow, _ = _vector_add()
    check = check_compiled(ttgir, narrow, predicted=global_inventory(parse_module(narrow)), priced_widths=False)
    assert check.ours.inventory == {"ld.global.8B": 8, "st.global.8B": 4}
    assert check.refusal.startswith("narrower global ld instructions than Triton's (4 -> 8")
    priced = check_compiled(ttgir, narrow, predicted=global_inventory(parse_module(narrow)), priced_widths=True)
    assert priced.refusal is None
    wrong = check_compiled(ttgir, narrow, predicted={"st.global.16B": 2})
    assert "not the" in wrong.refusal
    same = check_compiled(ttgir, ttgir, subprocess=True)
    assert same.refusal is None and same.triton.registers == same.ours.registers > 0


def test_rewrite_kernel_verifies_the_compiled_choice(monkeypatch):
    """The model made to prefer tf32_matmul_bias_relu's rewrite and its narrowing let through: compiled on
    the CPU, the rewrite stores the accumulator in 8-byte vectors where Triton's stores 16, no table priced
    that, and Triton's TTGIR is kept with the reason."""
    pytest.importorskip("triton")
    import linear_layouts.pipeline.kernel_model as kernel_model
    import linear_layouts.pipeline.rewrite as rewrite_module

    monkeypatch.setattr(kernel_model, "predicted_gain", lambda triton, ours: 0.5)
    monkeypatch.setattr(rewrite_module, "_model_refusal", lambda start, own, costs, narrowing=False: None)
    monkeypatch.setattr(kernel_model, "global_table_for", lambda target=None: None)
    ttir, ttgir = (IR / "tf32_matmul_bias_relu.ttir").read_text(), (IR / "tf32_matmul_bias_relu.ttgir").read_text()
    assert rewrite_module.rewrite_kernel(ttir, ttgir)[0].text != ttgir
    kept, _ = rewrite_module.rewrite_kernel(ttir, ttgir, verify="process")
    assert kept.text == ttgir and kept.gain == 0.0
    assert any(r.startswith("compiled check: narrower global st instructions than Triton's (16 -> 32")
               for r in kept.rejected), kept.rejected
    with pytest.raises(LayoutError, match="verify must be"):
        rewrite_module.rewrite_kernel(ttir, ttgir, verify="yes")


def test_a_form_the_table_lacks_is_priced_by_the_sector_model():
    """A table with only 16-byte stores and loads: the v2 rewrite's 8-byte accesses fall back to
    ``global_cost`` (as with no table at all), op by op; nothing raises."""
    ttgir, narrow, pointers = _vector_add()
    only16 = GlobalCostTable.from_json({"name": "only16", "sectors_per_request": {"16": {"dense/32": 16}},
                                        "ns": {"full": {"dram": {"ld": {"b": {"16": {"dense/32": 8.5}}},
                                                                 "st": {"b": {"16": {"dense/32": 8.0}}}}}}})
    assert kernel_time(narrow, pointers, table=only16).global_ns == pytest.approx(
        kernel_time(narrow, pointers, table=None).global_ns)
    assert kernel_time(ttgir, pointers, table=only16).global_ns == pytest.approx(4 * 2 * (2 * 8.5 + 8.0))
