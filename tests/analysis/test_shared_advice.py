"""Tests of analysis/shared_advice.py: every shared layout a Gluon author can use, ranked for a consumer.

Each row's wavefronts are the closed form of ``banks`` (padded rows: the simulator); here every row is
also re-counted by the brute-force bank simulator, the consumer rules are checked one by one, and the
Gluon / TTGIR text of every row reads back as the same layout.
"""

from __future__ import annotations

import pytest

import linear_layouts.layouts as C
from linear_layouts import LayoutError
from linear_layouts.analysis.bank_simulator import simulate_wavefronts
from linear_layouts.analysis.shared_advice import Consumer, ConsumerKind, suggest_shared_layout
from linear_layouts.analysis.swizzle import optimal_swizzle
from linear_layouts.spec import parse_spec
from linear_layouts.layouts.ttgir_text import parse_attribute
from linear_layouts.present.reports import advice_report

STORE = C.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])


def test_issue_question_wgmma_operand():
    """128x64 fp16 loaded with BlockedLayout([1,8],[4,8],[4,1],[1,0]) feeding wgmma operand A."""
    advice = suggest_shared_layout(STORE.to_linear([128, 64]), Consumer.wgmma(0), "fp16")
    best = advice.best
    assert best.descriptor == C.NVMMASharedLayout(128, 16) and best.accepted
    assert best.store_wavefronts == 128 and best.load_wavefronts is None  # 32 st.shared.v4 x 4 phases
    assert advice.default is best and "get_default_for" in best.marks
    assert best.gluon == "gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16)"
    assert all(isinstance(c.descriptor, C.NVMMASharedLayout) for c in advice.candidates)  # the rest has no TMA box / is not NVMMA
    text = advice_report(advice, width=None)  # the table and its caption are present's (analysis has no text)
    assert "NVMMA 128B [get_default_for]" in text and "read by wgmma operand A" in text


@pytest.mark.parametrize("dtype", ["fp8", "fp16", "fp32"])
def test_transpose_of_issue_7815(dtype):
    """128x128 transpose: the default NVMMA layout conflicts on the load, the optimal layout does not."""
    bits = {"fp8": 8, "fp16": 16, "fp32": 32}[dtype]
    vec = 128 // bits
    store = C.BlockedLayout([1, vec], [4, 8], [4, 1], [1, 0]).to_linear([128, 128])
    load = C.BlockedLayout([vec, 1], [8, 4], [1, 4], [0, 1]).to_linear([128, 128])
    advice = suggest_shared_layout(store, load, dtype)
    optimal = optimal_swizzle(store, load, bits)
    assert advice.best.total_wavefronts <= optimal.total_wavefronts
    assert advice.best.total_wavefronts < advice.default.total_wavefronts
    assert [c.total_wavefronts for c in advice.candidates] == sorted(c.total_wavefronts for c in advice.candidates)
    for candidate in advice.candidates:  # the closed form is the simulator's count, row by row
        assert candidate.store_wavefronts == simulate_wavefronts(candidate.layout, store, bits, op="store",
                                                                 padding=candidate.padding)
        assert candidate.load_wavefronts == simulate_wavefronts(candidate.layout, load, bits, op="load",
                                                                padding=candidate.padding)
        assert parse_attribute(candidate.ttgir) == candidate.descriptor
        assert parse_spec(candidate.gluon).value == candidate.descriptor
        linear = candidate.descriptor.to_linear([128, 128])
        assert linear == candidate.layout


def test_consumer_rules():
    store = STORE.to_linear([64, 64])
    for kind in (Consumer.tma(), Consumer.wgmma(1)):
        advice = suggest_shared_layout(store, kind, 16)
        accepted = [c for c in advice.candidates if c.accepted]
        assert accepted and all(isinstance(c.descriptor, C.NVMMASharedLayout) for c in accepted)
    fp32 = suggest_shared_layout(C.BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0]).to_linear([64, 64]),
                                 Consumer.wgmma(1), "fp32")
    for c in fp32.candidates:  # tf32 B operands are K-major: K = dim 0 contiguous, i.e. transposed
        assert c.accepted == (isinstance(c.descriptor, C.NVMMASharedLayout) and c.descriptor.transposed)
    operand = C.DotOperandLayout(0, C.NVMMADistributedLayout([2, 0], [4, 1], [16, 8]), 2).to_linear([64, 64])
    ldmatrix = suggest_shared_layout(store, Consumer.ldmatrix(operand), "fp16")
    assert ldmatrix.best.load_instruction.startswith("ldmatrix")
    refused = [c for c in ldmatrix.candidates if not c.accepted]
    assert refused and all("ldmatrix" in c.reason for c in refused)
    plain = suggest_shared_layout(store, operand, "fp16")
    assert all(c.accepted for c in plain.candidates) and plain.consumer.kind == ConsumerKind.LOCAL_LOAD


def test_errors():
    store = STORE.to_linear([64, 64])
    with pytest.raises(LayoutError, match="same tile"):
        suggest_shared_layout(store, STORE.to_linear([64, 32]), "fp16")
    with pytest.raises(LayoutError, match="layout is required"):
        Consumer(ConsumerKind.LDMATRIX)
    with pytest.raises(LayoutError, match="operand_index"):
        Consumer.wgmma(2)
    with pytest.raises(LayoutError, match="Consumer or a distributed"):
        suggest_shared_layout(store, "wgmma", "fp16")


def test_no_ldmatrix_candidate_names_ldmatrix_not_the_tma_box():
    """A LOAD whose lanes each hold 8 elements of a column is no ldmatrix fragment over any shared layout:
    the refusal says so, and names no TMA box (only wgmma / TMA read NVMMA layouts)."""
    columns = C.BlockedLayout([8, 1], [8, 4], [1, 4], [0, 1]).to_linear([32, 64])
    with pytest.raises(LayoutError, match="ldmatrix lowers no load into its layout") as raised:
        suggest_shared_layout(STORE.to_linear([32, 64]), Consumer.ldmatrix(columns), "fp16")
    message = str(raised.value)
    assert message.startswith("consumer: no candidate shared layout is accepted by local_load (ldmatrix) for a "
                              "[32, 64] tile of fp16: ldmatrix lowers no load into its layout")
    assert "TMA" not in message and "4 contiguous bytes" in message
    # the same LOAD without ldmatrix is accepted: it is the ldmatrix rule that refuses it
    assert suggest_shared_layout(STORE.to_linear([32, 64]), Consumer.local_load(columns), "fp16").best.accepted
    pairs = C.BlockedLayout([1, 2], [4, 8], [4, 1], [1, 0]).to_linear([32, 64])
    with pytest.raises(LayoutError, match="ldmatrix moves 8-, 16- or 32-bit elements, not 64-bit ones"):
        suggest_shared_layout(pairs, Consumer.ldmatrix(pairs), "fp64")
