"""The index emitter: IndexExpression equals the layout (or its inverse) on every input, and the emitted
C++ computes the same values when compiled (g++) — seeded random layouts with multi-bit images and zeros."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from linear_layouts import LayoutError, LinearLayout
from linear_layouts.codegen.index import (
    IndexExpression,
    emit_index,
    flat_images,
    index_expression,
    inverse_index_expression,
    row_major_strides,
)


def _random_layout(rng: np.random.Generator) -> LinearLayout:
    shape = [int(x) for x in rng.integers(0, 5, size=int(rng.integers(1, 4)))]
    names = [f"dim{i}" for i in range(len(shape))]
    bases = {}
    for dim, bits in (("register", int(rng.integers(0, 5))), ("lane", 5), ("warp", int(rng.integers(0, 3)))):
        bases[dim] = [[int(rng.integers(0, 1 << s)) if s else 0 for s in shape] for _ in range(bits)]
    return LinearLayout(bases, {n: 1 << s for n, s in zip(names, shape)}, require_surjective=False)


def _flat_reference(layout: LinearLayout, values: dict[str, np.ndarray]) -> np.ndarray:
    out = layout.apply_array(values)
    strides = row_major_strides(layout.out_dims)
    return sum(out[d].astype(np.int64) * strides[d] for d in layout.out_dim_names)


def test_expression_matches_apply_on_every_input():
    rng = np.random.default_rng(1)
    for _ in range(60):
        layout = _random_layout(rng)
        sizes = layout.in_dims
        grid = np.meshgrid(*[np.arange(sizes[d]) for d in sizes], indexing="ij")
        values = {d: g.ravel() for d, g in zip(sizes, grid)}
        expected = _flat_reference(layout, values)
        expr = index_expression(layout, {d: d for d in sizes})
        got = [expr.evaluate({d: int(values[d][i]) for d in sizes}) for i in range(len(expected))]
        assert got == expected.tolist()
        # a compile-time register folds into the constant
        r = int(rng.integers(0, sizes["register"]))
        folded = index_expression(layout, {"register": r, "lane": "lane", "warp": "warp"})
        assert "register" not in folded.variables
        sel = values["register"] == r
        got = [folded.evaluate({"lane": int(a), "warp": int(b)}) for a, b in zip(values["lane"][sel], values["warp"][sel])]
        assert got == expected[sel].tolist()


def test_inverse_expression_inverts():
    rng = np.random.default_rng(2)
    for _ in range(40):
        n = int(rng.integers(1, 9))
        while True:  # a random invertible F2 matrix
            m = rng.integers(0, 2, size=(n, n))
            if round(abs(np.linalg.det(m))) % 2 == 1:
                rank = _f2_rank([int("".join(map(str, col[::-1])), 2) for col in m.T])
                if rank == n:
                    break
        cols = [int("".join(map(str, col[::-1])), 2) for col in m.T]
        split = int(rng.integers(0, n + 1))
        layout = LinearLayout({"offset": [[c & ((1 << split) - 1), c >> split] for c in cols]},
                              {"dim0": 1 << split, "dim1": 1 << (n - split)})
        expr = inverse_index_expression(layout, {"dim0": "d0", "dim1": "d1"})
        for x in range(1 << n):
            y = layout.apply({"offset": x})
            assert expr.evaluate({"d0": y["dim0"], "d1": y["dim1"]}) == x


def _f2_rank(vectors: list[int]) -> int:
    rank, rows = 0, list(vectors)
    for bit in range(64):
        pivot = next((v for v in rows if (v >> bit) & 1), None)
        if pivot is None:
            continue
        rows = [v ^ pivot if (v >> bit) & 1 else v for v in rows if v is not pivot]
        rank += 1
    return rank


def test_seed_style_examples():
    transpose = LinearLayout({"lane": [[1, 0], [2, 0], [0, 1], [0, 2]]}, ["dim0", "dim1"])
    assert emit_index(transpose, {"lane": "lane"}) == "(((lane << 2) & 0xcu) ^ ((lane >> 2) & 0x3u))"
    swizzle = LinearLayout({"offset": [[0, 1], [0, 2], [1, 2], [2, 0]]}, ["dim0", "dim1"])
    # one input bit with a two-bit image becomes a spread term
    assert "0u - ((offset >> 2) & 1u)" in emit_index(swizzle, {"offset": "offset"})
    assert index_expression(swizzle, {"offset": 0}) == IndexExpression(0, ())
    assert index_expression(swizzle, {}).to_cuda() == "0x0u"


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs a host C++ compiler")
def test_emitted_cuda_expression_compiles_and_agrees(tmp_path):
    rng = np.random.default_rng(3)
    layouts = [_random_layout(rng) for _ in range(25)]
    lines = ["#include <cstdio>", "int main() {"]
    for k, layout in enumerate(layouts):
        expr = emit_index(layout, {"register": "register_", "lane": "lane", "warp": "warp"})
        s = layout.in_dims
        lines.append(
            f"for (unsigned warp = 0; warp < {s['warp']}u; ++warp) for (unsigned lane = 0; lane < {s['lane']}u; ++lane)"
            f" for (unsigned register_ = 0; register_ < {s['register']}u; ++register_) std::printf(\"%u\\n\", {expr});"
        )
    lines += ["return 0; }"]
    (tmp_path / "t.cpp").write_text("\n".join(lines))
    subprocess.run(["g++", "-O1", "-o", str(tmp_path / "t"), str(tmp_path / "t.cpp")], check=True)
    printed = subprocess.run([str(tmp_path / "t")], capture_output=True, text=True, check=True).stdout.split()
    expected: list[int] = []
    for layout in layouts:
        s = layout.in_dims
        w, l, r = np.meshgrid(np.arange(s["warp"]), np.arange(s["lane"]), np.arange(s["register"]), indexing="ij")
        expected += _flat_reference(layout, {"register": r.ravel(), "lane": l.ravel(), "warp": w.ravel()}).tolist()
    assert [int(x) for x in printed] == expected


def test_bad_input_raises_layout_error():
    layout = LinearLayout({"lane": [[1], [2]]}, ["dim0"])
    with pytest.raises(LayoutError, match="inputs"):
        index_expression(layout, {"warp": "warp"})
    with pytest.raises(LayoutError, match="identifier"):
        index_expression(layout, {"lane": "lane + 1"})
    with pytest.raises(LayoutError, match="outside"):
        index_expression(layout, {"lane": 4})
    with pytest.raises(LayoutError, match="power of two"):
        flat_images(layout, {"dim0": 3})
    two = LinearLayout({"lane": [[1, 0], [0, 1]]}, ["dim0", "dim1"])
    with pytest.raises(LayoutError, match="overlaps"):
        flat_images(two, {"dim0": 1, "dim1": 1})
    with pytest.raises(LayoutError, match="invertible"):
        inverse_index_expression(LinearLayout({"lane": [[1], [0]]}, ["dim0"]), {"dim0": "x"})
