"""The seeds' worked examples for the core algebra, with their exact numbers.

* Paper (seed 000), §4.1: Layout A (a 16x16 tensor, 2x2 registers, 4x8 threads, 2x1 warps), the rows
  of Table 1, the worked evaluation (r1, t9, w0) -> (2, 3), and the 8x8 matrix A as printed.
* Blog 001 (Chinese, "Linear Layouts in Triton"): the basis example L(1, 3) = (1, 2), the
  constructor examples (inferred out sizes 8 and 4, and 2 and 16), the explicit-size
  non-surjective example, and its three products of identity1D / zeros1D.
* Blog 002 ("what linear layouts are"): the 3-bit mask example and the 32x32 swizzle (r, r xor c).
"""

from __future__ import annotations

import numpy as np
import pytest

from linear_layouts import LayoutError, LinearLayout

# ----------------------------------------------------------------------------- paper, §4.1
# Layout A, in Triton's form: out dims (dim0 = i, the row; dim1 = j, the column).
LAYOUT_A_BASES = {
    "register": [[0, 1], [1, 0]],
    "lane": [[0, 2], [0, 4], [0, 8], [2, 0], [4, 0]],
    "warp": [[8, 0]],
}

# The matrix A of §4.1 exactly as printed: rows j0..j3 then i0..i3 (j is the fastest-moving
# dimension), columns Reg (2 bits), Thr (5 bits), Wrp (1 bit), least significant bit first.
PAPER_MATRIX_A = np.array(
    [
        [1, 0, 0, 0, 0, 0, 0, 0],
        [0, 0, 1, 0, 0, 0, 0, 0],
        [0, 0, 0, 1, 0, 0, 0, 0],
        [0, 0, 0, 0, 1, 0, 0, 0],
        [0, 1, 0, 0, 0, 0, 0, 0],
        [0, 0, 0, 0, 0, 1, 0, 0],
        [0, 0, 0, 0, 0, 0, 1, 0],
        [0, 0, 0, 0, 0, 0, 0, 1],
    ],
    dtype=np.uint8,
)

# Table 1: location (i, j) -> (register, thread, warp).
TABLE_1 = [
    ((0, 0), (0, 0, 0)),
    ((0, 1), (1, 0, 0)),
    ((0, 2), (0, 1, 0)),
    ((0, 3), (1, 1, 0)),
    ((1, 0), (2, 0, 0)),
    ((1, 1), (3, 0, 0)),
    ((2, 2), (0, 9, 0)),
    ((2, 3), (1, 9, 0)),
    ((3, 2), (2, 9, 0)),
    ((3, 3), (3, 9, 0)),
]


@pytest.fixture(scope="module")
def layout_a() -> LinearLayout:
    return LinearLayout(LAYOUT_A_BASES, ["dim0", "dim1"])


def test_layout_a_is_the_blocked_definition_by_brute_force(layout_a: LinearLayout) -> None:
    """Every (register, lane, warp) holds the element §4.1's blocked layout gives it (2x2 elements per
    thread, 4x8 threads, 2x1 warps, dim1 fastest), computed here without the algebra; 256 distinct
    elements of the 16x16 tile: a bijection."""
    held = set()
    for w in range(2):
        for t in range(32):
            for r in range(4):
                i, j = (r >> 1) + 2 * (t // 8) + 8 * w, (r & 1) + 2 * (t % 8)
                assert layout_a.apply({"register": r, "lane": t, "warp": w}) == {"dim0": i, "dim1": j}
                held.add((i, j))
    assert len(held) == 16 * 16 and layout_a.in_dims == {"register": 4, "lane": 32, "warp": 2}
    assert layout_a.is_invertible()


def test_layout_a_table_1(layout_a: LinearLayout) -> None:
    for (i, j), (r, t, w) in TABLE_1:
        assert layout_a.apply({"register": r, "lane": t, "warp": w}) == {"dim0": i, "dim1": j}
    # and read the other way, through the inverse
    inverse = layout_a.invert()
    for (i, j), (r, t, w) in TABLE_1:
        assert inverse.apply({"dim0": i, "dim1": j}) == {"register": r, "lane": t, "warp": w}


def test_layout_a_r1_t9_w0(layout_a: LinearLayout) -> None:
    # loc(r1) = (0, 1), loc(t9) = (2, 2), loc(w0) = (0, 0); their XOR is (2, 3).
    assert layout_a.apply({"register": 1}) == {"dim0": 0, "dim1": 1}
    assert layout_a.apply({"lane": 9}) == {"dim0": 2, "dim1": 2}
    assert layout_a.apply({"warp": 0}) == {"dim0": 0, "dim1": 0}
    assert layout_a.apply({"register": 1, "lane": 9, "warp": 0}) == {"dim0": 2, "dim1": 3}
    # in matrix form: v = (Reg 0b01, Thr 0b01001, Wrp 0b0) gives w_j = 0b0011 = 3, w_i = 0b0010 = 2.
    v = np.array([1, 0] + [1, 0, 0, 1, 0] + [0], dtype=np.uint8)
    w = PAPER_MATRIX_A.astype(int) @ v % 2
    assert int("".join(map(str, w[3::-1])), 2) == 3 and int("".join(map(str, w[:3:-1])), 2) == 2


def test_layout_a_matrix_as_printed(layout_a: LinearLayout) -> None:
    # The paper lists j (dim1) before i (dim0); our rows follow the out-dim order.
    printed_order = layout_a.transpose_outs(["dim1", "dim0"])
    m = printed_order.to_matrix()
    assert m.dtype == np.uint8 and m.shape == (8, 8)
    np.testing.assert_array_equal(m, PAPER_MATRIX_A)
    # With Triton's (dim0, dim1) order the two row blocks swap.
    np.testing.assert_array_equal(layout_a.to_matrix(), np.vstack([PAPER_MATRIX_A[4:], PAPER_MATRIX_A[:4]]))
    # and back from the printed matrix
    back = LinearLayout.from_matrix(PAPER_MATRIX_A, {"register": 4, "lane": 32, "warp": 2}, {"dim1": 16, "dim0": 16})
    assert back == printed_order


def test_layout_a_is_the_paper_blocked_layout(layout_a: LinearLayout) -> None:
    """Layout A is the product of identities register -> lane -> warp, column (dim1) minor."""
    reg = LinearLayout.identity_1d(2, "register", "dim1") * LinearLayout.identity_1d(2, "register", "dim0")
    lane = LinearLayout.identity_1d(8, "lane", "dim1") * LinearLayout.identity_1d(4, "lane", "dim0")
    warp = LinearLayout.identity_1d(1, "warp", "dim1") * LinearLayout.identity_1d(2, "warp", "dim0")
    product = (reg * lane * warp).transpose_outs(["dim0", "dim1"])
    assert product == layout_a


def test_layout_a_matches_gluon_blocked_layout(layout_a: LinearLayout) -> None:
    pytest.importorskip("triton")
    from triton._C.libtriton import gluon_ir, ir
    from triton.experimental.gluon import language as gl

    ctx = ir.context()
    ir.load_dialects(ctx)
    builder = gluon_ir.GluonOpBuilder(ctx)
    ll = builder.to_linear_layout(gl.BlockedLayout([2, 2], [4, 8], [2, 1], [1, 0])._to_ir(builder), [16, 16])
    assert ll.reg_bases == LAYOUT_A_BASES["register"]
    assert ll.lane_bases == LAYOUT_A_BASES["lane"]
    assert ll.warp_bases == LAYOUT_A_BASES["warp"]


# ----------------------------------------------------------------------------- blog 001
def test_blog_001_basis_example() -> None:
    # L(0,1) = (0,1), L(0,2) = (0,2), L(1,0) = (1,1), L(2,0) = (2,2) for inputs (t, w) in [0, 4).
    layout = LinearLayout({"t": [[1, 1], [2, 2]], "w": [[0, 1], [0, 2]]}, ["o0", "o1"])
    assert layout.apply({"t": 0, "w": 1}) == {"o0": 0, "o1": 1}
    assert layout.apply({"t": 0, "w": 2}) == {"o0": 0, "o1": 2}
    assert layout.apply({"t": 1, "w": 0}) == {"o0": 1, "o1": 1}
    assert layout.apply({"t": 2, "w": 0}) == {"o0": 2, "o1": 2}
    # L(1, 3) = L(1, 0) xor L(0, 1) xor L(0, 2) = (1, 2)
    assert layout.apply({"t": 1, "w": 3}) == {"o0": 1, "o1": 2}


def test_blog_001_inferred_sizes_8_and_4() -> None:
    bases = {"in1": [[1, 0], [5, 1], [2, 2]]}
    # The blog's comment: out1 would be 8 (next power of 2 above 5), out2 would be 4.
    inferred = {d: 1 << max(v[k] for v in bases["in1"]).bit_length() for k, d in enumerate(["out1", "out2"])}
    assert inferred == {"out1": 8, "out2": 4}
    # Three bases reach 2^3 = 8 of the 8 * 4 = 32 points: the names-only constructor (which requires a
    # surjective layout, as Triton's does) infers those sizes and refuses, rather than return a wrong layout.
    with pytest.raises(LayoutError, match=r"not surjective(.|\n)*out1 \(size 8\), out2 \(size 4\)"):
        LinearLayout(bases, ["out1", "out2"])
    explicit = LinearLayout(bases, inferred, require_surjective=False)
    reached = {tuple(explicit.apply({"in1": x}).values()) for x in range(8)}
    assert len(reached) == 8 and not explicit.is_surjective()


def test_blog_001_initializer_list_example() -> None:
    layout = LinearLayout({"in1": [[0, 1], [0, 2]], "in2": [[0, 4], [0, 8], [1, 1]]}, ["out1", "out2"])
    assert layout.out_dims == {"out1": 2, "out2": 16}
    assert layout.in_dims == {"in1": 4, "in2": 8}
    assert layout.is_surjective() and layout.is_invertible()
    assert layout.apply({"in2": 4}) == {"out1": 1, "out2": 1}


def test_blog_001_explicit_size_non_surjective() -> None:
    layout = LinearLayout({"in1": [[1], [4]]}, {"out1": 32}, require_surjective=False)
    assert layout.out_dims == {"out1": 32}
    assert [layout.apply({"in1": x})["out1"] for x in range(4)] == [0, 1, 4, 5]
    assert not layout.is_surjective() and layout.is_injective()


def test_blog_001_product_examples() -> None:
    id1, z1 = LinearLayout.identity_1d, LinearLayout.zeros_1d
    # 1. L(x) = x / 4 for x in [0, 8)
    div4 = z1(4, "i", "o") * id1(2, "i", "o")
    assert div4.bases == {"i": [[0], [0], [1]]} and div4.out_dims == {"o": 2}
    assert [div4.apply({"i": x})["o"] for x in range(8)] == [x // 4 for x in range(8)]
    # 2. L(x) = x % 4 for x in [0, 8)
    mod4 = id1(4, "i", "o") * z1(2, "i", "o")
    assert mod4.bases == {"i": [[1], [2], [0]]} and mod4.out_dims == {"o": 4}
    assert [mod4.apply({"i": x})["o"] for x in range(8)] == [x % 4 for x in range(8)]
    # 3. L(x) = (x % 4, x / 4) for x in [0, 32)
    split = id1(4, "i", "o1") * id1(8, "i", "o2")
    assert split.bases == {"i": [[1, 0], [2, 0], [0, 1], [0, 2], [0, 4]]}
    assert split.out_dims == {"o1": 4, "o2": 8}
    assert [split.apply({"i": x}) for x in range(32)] == [{"o1": x % 4, "o2": x // 4} for x in range(32)]


# ----------------------------------------------------------------------------- blog 002
def test_blog_002_three_bit_masks() -> None:
    # m0 = (1,0,1), m1 = (0,1,1), m2 = (1,1,1) over (b2, b1, b0):
    # o0 = b2 ^ b0, o1 = b1 ^ b0, o2 = b2 ^ b1 ^ b0.  Basis i is the image of b_i alone.
    layout = LinearLayout({"b": [[0b111], [0b110], [0b101]]}, ["o"])
    for b in range(8):
        b0, b1, b2 = b & 1, (b >> 1) & 1, (b >> 2) & 1
        o = (b2 ^ b0) | (b1 ^ b0) << 1 | (b2 ^ b1 ^ b0) << 2
        assert layout.apply({"b": b}) == {"o": o}
    # The printed matrix has rows o0, o1, o2 and columns b2, b1, b0 (most significant first);
    # ours has columns least significant first.
    printed = np.array([[1, 0, 1], [0, 1, 1], [1, 1, 1]], dtype=np.uint8)
    np.testing.assert_array_equal(layout.to_matrix(), printed[:, ::-1])
    assert layout.is_invertible()


def test_blog_002_swizzle_32x32() -> None:
    # ShmemSwizzled(r, c) = (row = r, bank = r xor c) is linear and bijective.
    swizzle = LinearLayout(
        {"r": [[1 << k, 1 << k] for k in range(5)], "c": [[0, 1 << k] for k in range(5)]}, ["row", "bank"]
    )
    assert swizzle.is_invertible()
    out = swizzle.apply_array({"r": np.arange(32)[:, None], "c": np.arange(32)[None, :]})
    np.testing.assert_array_equal(out["row"], np.broadcast_to(np.arange(32)[:, None], (32, 32)))
    np.testing.assert_array_equal(out["bank"], np.arange(32)[:, None] ^ np.arange(32)[None, :])
    # every row and every column touches 32 distinct banks
    assert all(len(set(out["bank"][r])) == 32 for r in range(32))
    assert all(len(set(out["bank"][:, c])) == 32 for c in range(32))
