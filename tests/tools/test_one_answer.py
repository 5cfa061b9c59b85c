"""`swizzle` gives one recommended answer, chosen by one rule, and labels every other candidate as what
it is; an fp8 wgmma operand stored from the wrong register order is told the K-major fix."""

from __future__ import annotations

import json
import re

import pytest

from linear_layouts import LinearLayout
from linear_layouts.analysis.banks import shared_access, wavefronts
from linear_layouts.analysis.shared_advice import Consumer, preference, suggest_shared_layout
from linear_layouts.layouts import BlockedLayout
from linear_layouts.cli import main
from linear_layouts.cute import parse_cute, to_linear

ROW = "BlockedLayout([1,4],[4,8],[4,1],[1,0])"
COLUMN = "BlockedLayout([4,1],[8,4],[1,4],[0,1])"
STORE16 = "BlockedLayout([1,8],[4,8],[4,1],[1,0])"
OPERAND = "DotOperandLayout(0, NVMMADistributedLayout([2,0],[4,1],[16,8]), 2)"
N_MAJOR_FP8 = "BlockedLayout([1,16],[8,4],[4,1],[1,0])"      # B [K, N] loaded with N contiguous
K_MAJOR_FP8 = "BlockedLayout([16,1],[4,8],[1,4],[0,1])"


def _run(capsys, *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def _claims(out: str) -> list[str]:
    """Lines that call a candidate the best / recommended / optimal one (the construction's name aside)."""
    cleaned = out.replace("optimal-swizzle construction", "").replace("optimal swizzle (§5.4)", "")
    return [line for line in cleaned.splitlines() if re.search(r"\b(best|optimal|optimum|recommended)\b", line, re.I)]


def test_one_recommended_layout_and_it_is_the_rules_first(capsys):
    out = _run(capsys, "swizzle", ROW, COLUMN, "--shape", "32,32", "--dtype", "fp32")
    claims = _claims(out)
    assert len(claims) == 1 and claims[0].startswith("Recommended (row 1): gl.SwizzledSharedLayout(vec=4")
    # the construction is labelled with what it is, plain and with its vectors widened (128-bit stores)
    table = {line.split("  ")[0]: line.split()[-6:] for line in out.splitlines() if line.startswith("§5.4")}
    assert table["§5.4 construction"][:2] == ["32", "32"] and table["§5.4 construction"][3] == "32"
    assert table["§5.4 construction, vectors widened"][3] == "128"
    # the bases printed for `show` are the recommended layout's, and it wins by the rule
    chosen = json.loads(out.split("for `linear-layouts show`:")[1])
    chosen = LinearLayout(chosen["bases"], chosen["out_dims"])
    store = BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0]).to_linear([32, 32])
    load = BlockedLayout([4, 1], [8, 4], [1, 4], [0, 1]).to_linear([32, 32])
    advice = suggest_shared_layout(store, load, "fp32")
    assert chosen == advice.best.layout
    keys = [preference(c.total_wavefronts, c.store_vector_bits + c.load_vector_bits, 0) for c in advice.candidates]
    assert keys[0][:2] == min(keys)[:2] == (64, -160)   # 32 + 32 wavefronts, 128 + 32 bits: none does better
    assert wavefronts(chosen, store, 32, op="store") + wavefronts(chosen, load, 32) == 64


def test_cute_recommends_one_layout_by_the_same_rule(capsys):
    out = _run(capsys, "swizzle", STORE16, OPERAND, "--shape", "64,64", "--dtype", "fp16", "--format", "cute")
    claims = _claims(out)
    assert len(claims) == 1 and claims[0].startswith("Recommended (row 1): Sw<3,3,3> o 0 o (64,64):(64,1)")
    assert "128-bit stores" in claims[0]
    rows = [line.split() for line in out.splitlines() if re.match(r"\d+\s", line)]
    assert [r[0] for r in rows] == [str(k) for k in range(1, len(rows) + 1)]
    construction = next(r for r in rows if "§9.2" in r)    # as cheap, but a permuted inner layout
    assert int(construction[-3]) == int(rows[0][-3]) and "((8,8),64)" in " ".join(construction)
    store = BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0]).to_linear([64, 64])
    shared = to_linear(parse_cute("Sw<3,3,3> o (64,64):(64,1)"))
    assert shared_access(shared, store, 16).vector_bits == 128


def test_fp8_wgmma_b_from_n_major_registers_is_told_the_k_major_fix(capsys):
    out = _run(capsys, "swizzle", N_MAJOR_FP8, "wgmma-b", "--shape", "64,128", "--dtype", "fp8")
    flat = " ".join(out.split())
    assert "Recommended (row 1): gl.NVMMASharedLayout(swizzle_byte_width=64, element_bitwidth=8, transposed=True)" in flat
    assert ("Stored from gl.BlockedLayout(size_per_thread=[16, 1], threads_per_warp=[4, 8], warps_per_cta=[1, 4], "
            "order=[0, 1])") in flat
    assert "64 wavefronts when the tile is loaded in that layout" in flat and "(1024 wavefronts)" in flat
    # the numbers are the bank model's: the K-major layout's own ranking, and the conversion's plan
    k_major = BlockedLayout([16, 1], [4, 8], [1, 4], [0, 1]).to_linear([64, 128])
    assert suggest_shared_layout(k_major, Consumer.wgmma(1), "fp8").best.total_wavefronts == 64
    fix = suggest_shared_layout(BlockedLayout([1, 16], [8, 4], [4, 1], [1, 0]).to_linear([64, 128]),
                                Consumer.wgmma(1), "fp8").register_fix
    assert fix.layout == k_major and f"{fix.converted_total} with a convert_layout" in flat
    assert 64 < fix.converted_total < 1024
    # already K-major: nothing to fix
    assert suggest_shared_layout(k_major, Consumer.wgmma(1), "fp8").register_fix is None
    assert "Better:" not in _run(capsys, "swizzle", K_MAJOR_FP8, "wgmma-b", "--shape", "64,128", "--dtype", "fp8")


def test_cute_format_answers_for_a_wgmma_consumer(capsys):
    out = _run(capsys, "swizzle", N_MAJOR_FP8, "wgmma-b", "--shape", "64,128", "--dtype", "fp8", "--format", "cute")
    lines = out.splitlines()
    cute = next(line for line in lines if line.startswith("CuTe: "))
    advice = suggest_shared_layout(BlockedLayout([1, 16], [8, 4], [4, 1], [1, 0]).to_linear([64, 128]),
                                   Consumer.wgmma(1), "fp8")
    assert to_linear(parse_cute(cute[len("CuTe: "):])) == advice.best.layout
    assert any(line.startswith("C++:  ") for line in lines) and "K-major registers" in " ".join(out.split())


@pytest.mark.parametrize("load", ["wgmma-a", "tma"])
def test_16_bit_consumers_get_no_register_fix(capsys, load):
    out = _run(capsys, "swizzle", STORE16, load, "--shape", "128,64", "--dtype", "fp16")
    assert "Better:" not in out and len(_claims(out)) == 1
