"""Global loads and stores: vectors over whichever register bits sit at element offsets 1, 2, 4, ...
(``vector_map``), stores grouped by the 32-byte sectors they write (``store_order``), sub-word stores
as inline PTX in that order; every element lands where the layout says (emulator)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from linear_layouts import LinearLayout
from linear_layouts.layouts.blocked import BlockedLayout
from linear_layouts.codegen.emulate import emulate_check, find_cxx
from linear_layouts.codegen.global_memory import (
    SECTOR_BYTES, emit_global_store_words, global_instruction_count, global_vector_elements, store_order, vector_map,
)
from linear_layouts.codegen.hardware_map import global_map
from linear_layouts.codegen.packing import Packing
from linear_layouts.codegen.plan import conversion_kernel
from linear_layouts.codegen.ptx import compile_ptx, find_nvcc

from ._layouts import random_distributed

needs_cxx = pytest.mark.skipif(find_cxx() is None, reason="no C++20 compiler")


def _blocked(spt, tpw, wpc, order, shape) -> LinearLayout:
    layout = BlockedLayout(spt, tpw, wpc, order).to_linear(shape)
    bases = {d: v for d, v in layout.bases.items() if d != "block"}
    return LinearLayout(bases, dict(layout.out_dims), require_surjective=False)


def _offset(layout: LinearLayout, register: int, lane: int = 0, warp: int = 0) -> int:
    """Row-major element offset of what (register, lane, warp) holds, from the layout itself."""
    out = layout.apply({"register": register, "lane": lane, "warp": warp})
    offset = 0
    for name in layout.out_dim_names:
        offset = offset * layout.out_dim_size(name) + out[name]
    return offset


def test_vector_map_puts_the_unit_offsets_first():
    # order=[0, 1] over a row-major tile: register bit 0 steps a row (8 elements), bit 1 a column
    layout = _blocked([2, 2], [4, 8], [1, 1], [0, 1], [16, 8])
    hmap = global_map(layout)
    assert hmap.register[:2] == (8, 1)
    moved = vector_map(hmap)
    assert moved.register[:2] == (1, 8)
    assert [moved.register_index(r) for r in range(4)] == [0, 2, 1, 3]
    assert global_vector_elements(hmap, 2) == 2  # was 1 while only leading register bits could vector
    leading = global_map(_blocked([2, 2], [4, 8], [1, 1], [1, 0], [16, 8]))
    assert vector_map(leading) is leading  # already first: the very same map (kernel sources unchanged)


def test_random_vectors_are_aligned_runs_of_consecutive_offsets():
    rng = np.random.default_rng(11)
    for _ in range(60):
        shape = [int(rng.integers(2, 6)), int(rng.integers(2, 6))]
        layout = random_distributed(rng, shape, int(rng.integers(0, 3)))
        hmap = vector_map(global_map(layout))
        for w in (1, 2, 4, 8):
            v = global_vector_elements(global_map(layout), w)
            assert v * w <= 16
            for base in range(0, hmap.num_registers, v):
                first = _offset(layout, hmap.register_index(base))
                assert first % v == 0
                assert [_offset(layout, hmap.register_index(base + j)) for j in range(v)] == \
                    list(range(first, first + v))


def test_store_order_groups_stores_by_sector():
    # 16-bit registers at offsets (64, 2): registers 0 and 2 write sectors 0..; 1 and 3 four sectors on
    layout = LinearLayout({"register": [[1, 0], [0, 2]], "lane": [[0, 1], [0, 4], [0, 8], [0, 16], [0, 32]],
                           "warp": []}, {"dim0": 2, "dim1": 64})
    hmap = global_map(layout)
    assert hmap.register == (64, 2)
    assert store_order(hmap, 2, [0, 1, 2, 3]) == [0, 2, 1, 3]
    rng = np.random.default_rng(3)
    for _ in range(40):
        layout = random_distributed(rng, [int(rng.integers(2, 6)), int(rng.integers(2, 6))], 1)
        hmap = vector_map(global_map(layout))
        for w in (1, 2, 4, 8):
            order = store_order(hmap, w, list(range(hmap.num_registers)))
            assert sorted(order) == list(range(hmap.num_registers))
            keys = [hmap.address(r).constant * w // SECTOR_BYTES for r in order]
            assert keys == sorted(keys)  # each sector's stores together, sectors in address order


def test_sub_word_stores_are_inline_ptx_in_sector_order_with_immediate_offsets():
    layout = LinearLayout({"register": [[1, 0], [0, 2]], "lane": [[0, 1], [0, 4], [0, 8], [0, 16], [0, 32]],
                           "warp": []}, {"dim0": 2, "dim1": 64})
    lines = emit_global_store_words(global_map(layout), 2, Packing.natural(2, 2))
    stores = [x.strip() for x in lines if "ll_stg" in x]
    assert len(stores) == 4 and all(x.startswith("ll_stg16") for x in stores)
    # the constant part of each address is the instruction's immediate byte offset, in sector order
    offsets = [int(m.group(1), 16) if (m := re.match(r"ll_stg16<(0x[0-9a-f]+)u>", x)) else 0 for x in stores]
    assert offsets == [0, 4, 128, 132]
    assert all("(dst + thread_offset," in x for x in stores)


def test_order_0_1_blocked_layouts_store_whole_words():
    src = _blocked([1, 4], [8, 4], [1, 1], [1, 0], [32, 16])
    dst = _blocked([2, 2], [4, 8], [1, 1], [0, 1], [32, 16])
    for bits, want in ((8, "ll_stg16("), (16, "ll_stg32(")):
        kernel = conversion_kernel(src, dst, bits)
        body = kernel.source[kernel.source.find('extern "C"'):]
        assert want in body and "reinterpret_cast<unsigned short*>" not in body
        assert global_instruction_count(global_map(dst), bits // 8, store=True) == 8


@needs_cxx
@pytest.mark.parametrize("bits", [8, 16, 32, 64])
def test_permuted_vectors_move_every_element(bits):
    """Loads and stores through permuted register vectors, both directions, on the CPU emulator."""
    a = _blocked([2, 2], [4, 8], [2, 1], [0, 1], [32, 16])
    b = _blocked([1, 4], [8, 4], [1, 2], [1, 0], [32, 16])
    for src, dst in ((a, b), (b, a)):
        kernel = conversion_kernel(src, dst, bits)
        assert emulate_check(kernel, tiles=2, iterations=1, seed=bits) == 0, bits


@pytest.mark.skipif(find_nvcc() is None, reason="nvcc is not installed")
def test_stores_address_one_base_register_with_immediates():
    """nvcc keeps one base address: each store's constant part is its PTX immediate (an address
    computed outside the asm cost two registers per store)."""
    src = _blocked([1, 4], [8, 4], [2, 1], [1, 0], [64, 32])
    dst = _blocked([4, 1], [4, 8], [1, 2], [0, 1], [64, 32])
    ptx = compile_ptx(conversion_kernel(src, dst, 32).source)
    stores = re.findall(r"st\.global\.\S+\s+\[(%rd\d+)(\+\d+)?\]", ptx)
    assert len(stores) >= 8
    assert len({base for base, _ in stores}) == 1
    assert len({imm for _, imm in stores}) == len(stores)  # every store its own immediate
