"""The model of Triton's global-memory lowering (``triton_model.global_access`` on ``axis_info``) against
the PTX Triton 3.9 emits for the corpus (static inventory by bytes per lane,
tests/data/triton_kernels/ir/ptx_global.json, written by tools/compile_triton_kernels.py), and the
AxisInfo rules on hand-checked cases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from linear_layouts.triton_model.axis_info import MAX_DIVISOR, AxisInfo, axis_info, highest_pow2_divisor
from linear_layouts.triton_model.global_access import (contiguous_per_thread, global_accesses, global_inventory,
                                                       ptx_global_inventory, register_order)
from linear_layouts.triton_model.ir_text import parse_module
from linear_layouts.layouts import BlockedLayout

IR = Path(__file__).resolve().parent.parent / "data" / "triton_kernels" / "ir"
PTX = json.loads((IR / "ptx_global.json").read_text())


@pytest.mark.parametrize("target", ["sm_80", "sm_90"])
def test_the_model_emits_the_global_instructions_triton_emits(target):
    """Per corpus kernel, the predicted ld/st.global (bytes per lane), atomics (operation, type, bytes) and
    cp.async (bytes) equal the PTX's, count for count."""
    different = {}
    for name, ptx in sorted(PTX[target].items()):
        predicted = global_inventory(parse_module((IR / target / f"{name}.ttgir").read_text()))
        if predicted != ptx:
            different[name] = (predicted, ptx)
    assert not different
    assert len(PTX[target]) >= 30


def _kernel(body: str, args: str = "%x: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32 {tt.divisibility = 16 : i32}",
            layout: str = "#ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>",
            target: str = "cuda:90"):
    return parse_module(f"""#b = {layout}
module attributes {{"ttg.num-warps" = 4 : i32, ttg.target = "{target}"}} {{
  tt.func public @k({args}) {{
{body}
    tt.return
  }}
}}""")


_STORE = """    %r = tt.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32, #b>
    %p = tt.splat %x : !tt.ptr<f32> -> tensor<512x!tt.ptr<f32>, #b>
    %q = tt.addptr %p, %r : tensor<512x!tt.ptr<f32>, #b>, tensor<512xi32, #b>
    %s = tt.splat %n : i32 -> tensor<512xi32, #b>
    %m = arith.cmpi slt, %r, %s : tensor<512xi32, #b>
    %v = arith.constant dense<1.0> : tensor<512xf32, #b>
    tt.store %q, %v, %m : tensor<512x!tt.ptr<f32>, #b>"""


def test_a_mask_against_a_divisible_bound_keeps_the_vectors():
    """``offs < n`` with ``n`` divisible by 16 is constant over runs of 16: 4 floats per thread go as one
    v4 store; without the hint on ``n`` every element is its own store (Triton's vectorization fails)."""
    assert global_inventory(_kernel(_STORE)) == {"st.global.16B": 1}
    plain = _kernel(_STORE, args="%x: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32")
    assert global_inventory(plain) == {"st.global.4B": 4}
    info = axis_info(plain.functions[0])
    assert info["%m"].constancy == (1,) and info["%q"].contiguity == (512,) and info["%q"].divisibility == (16,)


def test_an_unaligned_base_pointer_limits_the_vectors():
    """A pointer divisible by 8 bytes only: two floats per instruction."""
    kernel = _kernel(_STORE, args="%x: !tt.ptr<f32> {tt.divisibility = 8 : i32}, %n: i32 {tt.divisibility = 16 : i32}")
    assert global_inventory(kernel) == {"st.global.8B": 2}


def test_atomics_vectorize_on_sm_90_and_pack_f16_pairs_before():
    body = """    %r = tt.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32, #b>
    %p = tt.splat %x : !tt.ptr<T> -> tensor<512x!tt.ptr<T>, #b>
    %q = tt.addptr %p, %r : tensor<512x!tt.ptr<T>, #b>, tensor<512xi32, #b>
    %v = arith.constant dense<1.0> : tensor<512xT, #b>
    %o = tt.atomic_rmw fadd, acq_rel, gpu, %q, %v : (tensor<512x!tt.ptr<T>, #b>, tensor<512xT, #b>) -> tensor<512xT, #b>"""
    args = "%x: !tt.ptr<T> {tt.divisibility = 16 : i32}"
    f32 = body.replace("T", "f32"), args.replace("T", "f32")
    f16 = body.replace("T", "f16"), args.replace("T", "f16")
    assert global_inventory(_kernel(*f32)) == {"atom.global.add.f32.16B": 1}
    assert global_inventory(_kernel(*f32, target="cuda:80")) == {"atom.global.add.f32.4B": 4}
    assert global_inventory(_kernel(*f16, target="cuda:80")) == {"atom.global.add.f16.4B": 2}
    used = f32[0].replace("acq_rel", "relaxed") + "\n    tt.store %q, %o : tensor<512x!tt.ptr<f32>, #b>"
    assert global_inventory(_kernel(used, f32[1])) == {"atom.global.add.f32.16B": 1, "st.global.16B": 1}


def test_an_unused_relaxed_atomic_is_a_red():
    body = """    %r = tt.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32, #b>
    %p = tt.splat %x : !tt.ptr<f32> -> tensor<512x!tt.ptr<f32>, #b>
    %q = tt.addptr %p, %r : tensor<512x!tt.ptr<f32>, #b>, tensor<512xi32, #b>
    %v = arith.constant dense<1.0> : tensor<512xf32, #b>
    %o = tt.atomic_rmw fadd, relaxed, gpu, %q, %v : (tensor<512x!tt.ptr<f32>, #b>, tensor<512xf32, #b>) -> tensor<512xf32, #b>"""
    assert global_inventory(_kernel(body, "%x: !tt.ptr<f32> {tt.divisibility = 16 : i32}")) == {
        "red.global.add.f32.16B": 1}


def test_a_loop_carried_pointer_keeps_its_contiguity_and_the_gcd_of_its_alignments():
    """``p += 64`` each iteration: still contiguous over 512, divisible by gcd(16, 64 * 4) bytes."""
    body = """    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c8 = arith.constant 8 : i32
    %step = arith.constant dense<64> : tensor<512xi32, #b>
    %r = tt.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32, #b>
    %p = tt.splat %x : !tt.ptr<f32> -> tensor<512x!tt.ptr<f32>, #b>
    %q = tt.addptr %p, %r : tensor<512x!tt.ptr<f32>, #b>, tensor<512xi32, #b>
    %out = scf.for %i = %c0 to %c8 step %c1 iter_args(%a = %q) -> (tensor<512x!tt.ptr<f32>, #b>)  : i32 {
      %v = tt.load %a : tensor<512x!tt.ptr<f32>, #b>
      %next = tt.addptr %a, %step : tensor<512x!tt.ptr<f32>, #b>, tensor<512xi32, #b>
      scf.yield %next : tensor<512x!tt.ptr<f32>, #b>
    }"""
    kernel = _kernel(body)
    info = axis_info(kernel.functions[0])
    assert info["%a"] == AxisInfo((512,), (16,), (1,)) and info["%i"].divisibility == (1,)
    assert global_inventory(kernel) == {"ld.global.16B": 1}


def test_reshape_keeps_the_contiguity_of_a_split_dim():
    """``tt.reshape`` 128 -> 128x1 (as Triton lowers a descriptor store on sm_80): dim 0 keeps the run."""
    layout = "#ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 4], order = [0, 1]}>"
    body = """    %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32, #ttg.slice<{dim = 1, parent = #b}>>
    %t = tt.reshape %r : tensor<128xi32, #ttg.slice<{dim = 1, parent = #b}>> -> tensor<128x1xi32, #b>"""
    info = axis_info(_kernel(body, layout=layout).functions[0])
    assert info["%t"] == AxisInfo((128, 1), (MAX_DIVISOR, 1), (1, 1))  # a run cut to 1: no alignment left


def test_the_order_and_contiguity_triton_reads_from_a_layout():
    """``getOrder`` reads the register bases only; ``getContigPerThread`` the leading run along it."""
    a = BlockedLayout([2, 4], [8, 4], [4, 1], [1, 0]).to_linear([64, 64])
    assert register_order(a) == (1, 0) and contiguous_per_thread(a) == (2, 4)
    one = BlockedLayout([1, 1], [8, 4], [4, 1], [0, 1]).to_linear([32, 4])
    assert register_order(one) == (1, 0) and contiguous_per_thread(one) == (1, 1)


def test_highest_power_of_two_divisor():
    assert [highest_pow2_divisor(v) for v in (48, -12, 1, 0)] == [16, 4, 1, MAX_DIVISOR]


def test_the_ptx_reader_normalizes_every_spelling():
    ptx = """
    @%p1 ld.global.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ];
    ld.global.b16 %rs1, [ %rd2 + 0 ];
    st.global.v2.b32 [ %rd3 + 0 ], { %r5, %r6 };
    atom.global.gpu.acq_rel.add.noftz.f16x2 %r7, [ %rd4 + 0 ], %r8;
    @%p2 atom.global.acq_rel.gpu.cas.b32 %r9, [ %rd5 + 0 ], %r10, %r11;
    red.global.gpu.relaxed.add.v2.f32 [ %rd6 + 0 ], { %r12, %r13 };
    cp.async.cg.shared.global [ %r14 + 0 ], [ %rd7 + 0 ], 0x10, %r15;
    cp.async.ca.shared.global [ %r16 + 0 ], [ %rd8 + 0 ], 0x4, %r17;
    ld.shared.v4.b32 { %r1, %r2, %r3, %r4 }, [ %r18 + 0 ];
    """
    assert ptx_global_inventory(ptx) == {
        "atom.global.add.f16.4B": 1, "atom.global.cas.b32.4B": 1, "cp.async.16B": 1, "cp.async.4B": 1,
        "ld.global.16B": 1, "ld.global.2B": 1, "red.global.add.f32.8B": 1, "st.global.8B": 1}
