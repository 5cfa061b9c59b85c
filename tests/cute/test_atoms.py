"""CuTe's MMA atoms equal the catalog's layouts; tensor-layouts' atom definitions are the oracle."""

from __future__ import annotations

import pytest

from linear_layouts.layouts import DotOperandLayout, NVMMADistributedLayout
from linear_layouts.cute.atoms import sm80_16x8x16, sm90_64xN_c
from linear_layouts.cute.linear import to_linear
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout

atoms_nv = pytest.importorskip("tensor_layouts.atoms_nv")

AMPERE = NVMMADistributedLayout([2, 0], [1, 1], [16, 8])


def _same(ours, theirs) -> bool:
    return ours.layout.shape == theirs.shape and ours.layout.stride == theirs.stride


@pytest.mark.parametrize("name", ["SM80_16x8x16_F16F16F16F16_TN", "SM80_16x8x16_F32F16F16F32_TN",
                                  "SM80_16x8x16_F32BF16BF16F32_TN"])
def test_sm80_atoms_are_tensor_layouts_atoms(name):
    atom = getattr(atoms_nv, name)
    assert atom.shape_mnk == (16, 8, 16)
    assert _same(sm80_16x8x16("A"), atom.a_layout)
    assert _same(sm80_16x8x16("B"), atom.b_layout)
    assert _same(sm80_16x8x16("C"), atom.c_layout)


@pytest.mark.parametrize("n", [8, 16, 32, 64, 128, 256])
def test_sm90_accumulators_are_tensor_layouts_atoms(n):
    assert _same(sm90_64xN_c(n), getattr(atoms_nv, f"SM90_64x{n}x16_F16F16F16_SS").c_layout)
    assert _same(sm90_64xN_c(n), atoms_nv.gmma_c_layout(n))


def _swap_dims(layout: LinearLayout) -> LinearLayout:
    swapped = layout.rename_out_dim("dim0", "tmp").rename_out_dim("dim1", "dim0").rename_out_dim("tmp", "dim1")
    return swapped.transpose_outs(["dim0", "dim1"])


def test_sm80_m16n8k16_equals_triton_mma_v2():
    assert to_linear(sm80_16x8x16("C")) == AMPERE.to_linear([16, 8])
    assert to_linear(sm80_16x8x16("A")) == DotOperandLayout(0, AMPERE, 2).to_linear([16, 16])
    # CuTe's B tile is (N, K); Triton's operand B is (K, N)
    assert _swap_dims(to_linear(sm80_16x8x16("B"))) == DotOperandLayout(1, AMPERE, 2).to_linear([16, 8])


@pytest.mark.parametrize("n", [8, 16, 32, 64, 128, 256])
def test_sm90_wgmma_accumulator_equals_triton_mma_v3(n):
    expected = NVMMADistributedLayout([3, 0], [4, 1], [16, n, 16]).to_linear([64, n])
    assert to_linear(sm90_64xN_c(n)) == expected


def test_non_power_of_two_wgmma_n_is_not_linear():
    with pytest.raises(LayoutError, match=r"mode \(1,2\) = 3:512 .* not a power of two"):
        to_linear(sm90_64xN_c(24))
    with pytest.raises(LayoutError, match="multiple of 8"):
        sm90_64xN_c(12)
    with pytest.raises(LayoutError, match="operand must be"):
        sm80_16x8x16("D")
