"""from_linear: the simplest CuTe form, round trips, and the explanations when there is none."""

from __future__ import annotations

import random

import pytest

from linear_layouts.core import f2
from linear_layouts.layouts import BlockedLayout, DotOperandLayout, NVMMADistributedLayout, NVMMASharedLayout, SwizzledSharedLayout
from linear_layouts.cute.from_linear import from_linear, permutation_layout, swizzles_on
from linear_layouts.cute.algebra import composition
from linear_layouts.cute.layout import ComposedLayout, Layout, Swizzle, TVLayout
from linear_layouts.cute.linear import to_linear
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout

from . import random_cute as R


def _swizzle_count(x) -> int:
    n = 0
    while isinstance(x, ComposedLayout):
        n += not x.outer.is_identity
        x = x.inner
    return n


def test_round_trip_of_random_swizzled_cute_layouts_uses_no_more_swizzles():
    rng = random.Random(11)
    swizzles = set()
    for _ in range(400):
        layout = R.random_swizzled_layout(rng, 10, broadcast=False, holes=False, max_swizzles=2)
        shared = to_linear(layout)
        form = from_linear(shared)
        assert form.exists and form.minimal
        assert to_linear(form.layout) == shared
        assert len(form.swizzles) <= _swizzle_count(layout)
        swizzles.add((_swizzle_count(layout), len(form.swizzles)))
    assert {given for given, _ in swizzles} == {0, 1, 2} and (2, 1) in swizzles  # some fold into one


def test_one_swizzle_is_found_exactly():
    rng = random.Random(12)
    for _ in range(200):
        layout, nbits = R.random_linear_layout(rng, 10, broadcast=False, holes=False)
        if nbits < 2:
            continue
        sw = R.random_swizzle(rng, nbits)
        form = from_linear(to_linear(composition(sw, layout)))
        assert len(form.swizzles) == (0 if sw.is_identity else 1)
        assert to_linear(form.layout) == to_linear(composition(sw, layout))


def test_every_invertible_shared_layout_has_a_cute_form():
    rng = random.Random(13)
    for _ in range(150):
        n = rng.randint(1, 9)
        while True:
            cols = [rng.randrange(1, 1 << n) for _ in range(n)]
            if f2.rank(cols) == n:
                break
        shared = LinearLayout({"offset": [[c] for c in cols], "block": []}, {"dim0": 1 << n})
        form = from_linear(shared)
        assert form.exists and to_linear(form.layout) == shared
        assert form.minimal == (len(form.swizzles) <= 3)


@pytest.mark.parametrize("width, bits, shape, expected", [
    (128, 16, [64, 64], "Sw<3,3,3> o 0 o (64,64):(64,1)"),
    (64, 16, [64, 64], "Sw<2,3,3> o 0 o (64,(32,2)):(32,(1,2048))"),
    (32, 32, [128, 128], "Sw<1,2,3> o 0 o (128,(8,16)):(8,(1,1024))"),
    (128, 8, [32, 256], "Sw<3,4,3> o 0 o (32,(128,2)):(128,(1,4096))"),
])
def test_nvmma_shared_layouts_are_cutlass_gmma_atoms(width, bits, shape, expected):
    """Triton's NVMMA shared layouts are CUTLASS's K-major GMMA swizzle atoms (Layout_K_SW{32,64,128}):
    one swizzle Sw<log2(width/16), log2(16 bytes / element), 3> on 8 rows of ``width`` bytes, tiled."""
    form = from_linear(NVMMASharedLayout(swizzle_byte_width=width, element_bitwidth=bits).to_linear(shape))
    assert str(form.layout) == expected and form.minimal


def test_swizzled_shared_layout_is_one_swizzle():
    form = from_linear(SwizzledSharedLayout(8, 1, 8, [1, 0]).to_linear([64, 64]))
    assert str(form.layout) == "Sw<3,3,3> o 0 o (64,64):(64,1)"
    plain = from_linear(SwizzledSharedLayout(1, 1, 1, [0, 1]).to_linear([16, 32]))
    assert str(plain.layout) == "(16,32):(1,16)" and plain.swizzles == ()


def test_distributed_layouts_become_tv_layouts():
    for layout in (NVMMADistributedLayout([2, 0], [4, 2], [16, 8]).to_linear([64, 64]),
                   DotOperandLayout(0, NVMMADistributedLayout([2, 0], [1, 1], [16, 8]), 2).to_linear([16, 16]),
                   BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0]).to_linear([32, 64]),
                   BlockedLayout([2, 2], [8, 4], [1, 2], [0, 1]).to_linear([8, 8])):
        form = from_linear(layout)
        assert isinstance(form.layout, TVLayout)
        back = to_linear(form.layout)
        assert back.bases["register"] == layout.bases["register"]
        assert back.bases["lane"] == layout.bases["lane"] and back.bases["warp"] == layout.bases["warp"]
    c = from_linear(NVMMADistributedLayout([2, 0], [1, 1], [16, 8]).to_linear([16, 8]))
    assert str(c.layout) == "TV(16,8) ((4,8),(2,2)):((32,1),(16,8))"


def test_explanations_when_there_is_no_cute_form():
    xor = LinearLayout({"register": [[1, 1]], "lane": [[0, 1], [0, 2], [0, 4], [1, 0], [2, 0]]}, {"dim0": 4, "dim1": 8})
    assert "cannot XOR" in from_linear(xor).reason and not from_linear(xor).exists
    twice = LinearLayout({"register": [[1]], "lane": [[1], [2], [4], [8], [16]]}, {"dim0": 32})
    assert "same element bit" in from_linear(twice).reason
    short = LinearLayout({"register": [[1]], "lane": [[2], [4]], "warp": [[8]]}, {"dim0": 16})
    assert "need 32 lanes" in from_linear(short).reason
    tmem = LinearLayout({"row": [[1]], "col": [[2]]}, {"dim0": 4})
    assert "nothing for these" in from_linear(tmem).reason
    dup = LinearLayout({"offset": [[1], [1]]}, {"dim0": 2}, require_surjective=False)
    assert not from_linear(dup).exists
    with pytest.raises(LayoutError, match="must be a LinearLayout"):
        from_linear("(8,8):(8,1)")


def test_helpers():
    assert str(permutation_layout([3, 4, 0, 1, 2], (4, 8))) == "(4,8):(8,1)"
    assert str(permutation_layout([1, 2, 0], (8,))) == "((4,2)):((2,1))"
    assert len(swizzles_on(4)) == 2 * (3 + 2 + 1 + 1)  # B=1: S 1..3; B=2: S=2
    assert all(sw.size <= 1 << 10 for sw in swizzles_on(10))
    assert Swizzle(3, 3, 3) in swizzles_on(9) and Swizzle(3, 3, 4) not in swizzles_on(9)
