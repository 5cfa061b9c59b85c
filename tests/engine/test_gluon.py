"""Gluon emission: Triton 3.9 compiles the emitted kernels for sm_90 on the CPU, with every layout pin
``assert_trivial`` — so Triton itself confirms that each shape op, reduction and elementwise op is a
no-op under the engine's layouts, and that the only real conversions are the engine's."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

from linear_layouts import LayoutError
from linear_layouts.engine import examples, propagate
from linear_layouts.engine.gluon import gluon_source, reference

SIGNATURE = {"fp16": "*fp16", "bf16": "*bf16", "fp32": "*fp32", "i32": "*i32", "u8": "*u8"}


def compile_ttgir(result, name):
    pytest.importorskip("triton")
    import triton
    from triton.backends.compiler import GPUTarget

    try:
        from triton.experimental.gluon._runtime import GluonASTSource
    except ImportError:  # pragma: no cover - older Triton
        pytest.skip("this Triton has no GluonASTSource")
    from linear_layouts.engine.gluon import gluon_kernel

    kernel = gluon_kernel(result, name=name)
    sig = {arg: SIGNATURE[dtype] for arg, dtype in result.program.args}
    attrs = {(i,): [["tt.divisibility", 16]] for i in range(len(sig))}
    src = GluonASTSource(kernel, sig, {}, attrs)
    options = {"num_warps": result.program.num_warps}
    return triton.compile(src, target=GPUTarget("cuda", 90, 32), options=options).asm["ttgir"]


def untrivial_converts(source: str) -> int:
    return sum(line.count("gl.convert_layout(") - line.count("assert_trivial") for line in source.splitlines())


@pytest.mark.parametrize("name", sorted(examples.EXAMPLES))
def test_examples_compile_with_trivial_pins(name):
    pytest.importorskip("triton")
    result = propagate(examples.EXAMPLES[name]())
    source = gluon_source(result)
    assert untrivial_converts(source) == len(result.conversions)
    ttgir = compile_ttgir(result, name)
    assert "ttg.convert_layout" in ttgir or not result.conversions
    assert len(re.findall(r"= ttg.convert_layout ", ttgir)) >= len(result.conversions)


def test_random_programs_compile_with_trivial_pins():
    pytest.importorskip("triton")
    from harness.random_programs import random_program

    done = 0
    for seed in range(40):
        program = random_program(seed)
        if any(op.kind == "dot" and op.attr("mma_version") == 3 for op in program.ops):
            continue
        result = propagate(program)
        assert untrivial_converts(gluon_source(result)) == len(result.conversions)
        compile_ttgir(result, f"random{seed}")
        done += 1
        if done == 6:
            break
    assert done == 6


def test_a_wrong_layout_is_caught_by_triton():
    """The check can fail: give a reshape the layout of a transposed operand, and Triton refuses it as trivial."""
    pytest.importorskip("triton")
    result = propagate(examples.split_join())
    prog = result.program
    reshape = next(op for op in prog.ops if op.kind == "reshape")
    src_layout = result.layouts[reshape.operands[0]]
    from linear_layouts.engine import transfer

    wrong = transfer.reshape_forward(transfer.trans_forward(src_layout, [1, 0]), [64, 32, 2])
    layouts = dict(result.layouts)
    layouts[reshape.results[0]] = wrong
    descriptors = dict(result.descriptors)
    from linear_layouts.engine.propagate import describe

    descriptors[reshape.results[0]] = describe(wrong, [])
    bad = dataclasses.replace(result, layouts=layouts, descriptors=descriptors)
    with pytest.raises(Exception, match="trivial"):
        compile_ttgir(bad, "bad_split_join")


def test_wgmma_programs_are_not_emitted():
    pytest.importorskip("triton")
    with pytest.raises(LayoutError, match="mma_version 2"):
        gluon_source(propagate(examples.dot_trans_store(mma_version=3)))
    with pytest.raises(LayoutError, match="EngineResult"):
        gluon_source("program")


def test_reference_semantics():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(64 * 128).astype(np.float32)
    out = reference(examples.row_softmax(), {"x": x})["out"].reshape(64, 128)
    assert np.allclose(out.sum(1), 1, atol=1e-5)
    x16 = np.arange(64 * 64).astype(np.float16)
    sj = reference(examples.split_join(), {"x": x16})["out"].reshape(64, 64)
    assert np.array_equal(sj[:, 0::2], x16.reshape(64, 64)[:, 1::2])
    a = rng.standard_normal(64 * 32).astype(np.float16)
    b = rng.standard_normal(32 * 64).astype(np.float16)
    c = reference(examples.dot_trans_store(), {"a": a, "b": b})["out"].reshape(64, 64)
    assert np.allclose(c, (a.reshape(64, 32).astype(np.float32) @ b.reshape(32, 64).astype(np.float32)).T, atol=1e-3)
    packed = rng.integers(0, 256, 64 * 64, dtype=np.uint8)
    scale = np.full(64 * 4, 127, np.uint8)  # 2**0
    eye = np.eye(64, 128, dtype=np.float32)
    got = reference(examples.mxfp4_matmul(), {"a": eye.ravel(), "b_packed": packed, "b_scale": scale})["out"]
    table = np.array([0, .5, 1, 1.5, 2, 3, 4, 6, -0., -.5, -1, -1.5, -2, -3, -4, -6], np.float32)
    p = packed.reshape(64, 64)
    b_full = np.empty((128, 64), np.float32)
    b_full[0::2], b_full[1::2] = table[p & 15], table[p >> 4]
    assert np.array_equal(got.reshape(64, 64), b_full[:64])
