"""The tile IR: builder checks (shapes and dtypes as Triton's verifiers) and the text form."""

from __future__ import annotations

import pytest

from linear_layouts import LayoutError
from linear_layouts.layouts import BlockedLayout
from linear_layouts.engine import Builder, propagate


def test_builder_shapes_and_text():
    b = Builder(num_warps=2)
    x = b.load(b.pointer("x", [16, 8], "fp32"))
    assert b.build().values[x].shape == (16, 8)
    t = b.trans(x, [1, 0])
    r = b.reshape(t, [4, 32])
    j = b.join(r, r)
    lo, hi = b.split(j)
    e = b.expand_dims(b.reduce(lo, 1, "max"), 1)
    w = b.broadcast(e, [4, 32])
    c = b.convert_layout(w, BlockedLayout([1, 1], [4, 8], [2, 1], [1, 0]))
    b.store(b.pointer("y", [4, 32], "fp32"), b.elementwise("add", c, hi))
    prog = b.build()
    shapes = [prog.values[v].shape for v in (t, r, j, lo, e, w)]
    assert shapes == [(8, 16), (4, 32), (4, 32, 2), (4, 32), (4, 1), (4, 32)]
    text = prog.to_text()
    assert text.startswith("program(num_warps=2, threads_per_warp=32, num_ctas=1) {")
    assert f"%{lo}, %{hi} = split %{j} : tensor<4x32xfp32>, tensor<4x32xfp32>" in text
    assert "layout=BlockedLayout" in text and text.endswith("}")
    result = propagate(prog)
    laid = result.program.to_text(result.layouts)
    assert all("#" in line for line in laid.splitlines()[1:-1] if "=" in line.split(":")[0])


@pytest.mark.parametrize("build, match", [
    (lambda b, x: b.reshape(x, [3, 4]), "shape"),
    (lambda b, x: b.reshape(x, [8, 8]), "elements"),
    (lambda b, x: b.split(x), "last dim"),
    (lambda b, x: b.expand_dims(x, 3), "axis"),
    (lambda b, x: b.broadcast(x, [32, 16]), "size 1"),
    (lambda b, x: b.reduce(x, 2), "axis"),
    (lambda b, x: b.reduce(x, 0, "mul"), "combine"),
    (lambda b, x: b.elementwise("add", x), "arity"),
    (lambda b, x: b.elementwise("add", x, b.trans(x, [1, 0])), "one shape"),
    (lambda b, x: b.dot(x, x), "\\[M, K\\] and \\[K, N\\]"),
    (lambda b, x: b.dot(b.load(b.pointer("s", [8, 16], "fp16")), b.load(b.pointer("t", [16, 8], "fp16"))), "M, N, K"),
    (lambda b, x: b.gather(x, x, 1), "index"),
    (lambda b, x: b.convert_layout(x, "blocked"), "layout"),
    (lambda b, x: b.load(x), "pointer"),
    (lambda b, x: b.store(b.pointer("y", [16, 32], "fp32"), x), "dtype"),
    (lambda b, x: b.pointer("z", [16, 32], "fp32", strides=[1]), "strides"),
    (lambda b, x: b.pointer("x", [16, 32], "fp32"), "already"),
    (lambda b, x: b.trans(99, [1, 0]), "value id"),
    (lambda b, x: b.full([4], 0, "fp13"), "dtype"),
])
def test_builder_rejects_bad_input(build, match):
    b = Builder()
    x = b.load(b.pointer("x", [16, 32], "fp16"))
    with pytest.raises(LayoutError, match=match):
        build(b, x)
