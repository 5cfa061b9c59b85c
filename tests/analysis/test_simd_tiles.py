"""SIMD tiles (§5.3, Thm 5.1): divide_left decides ld/st.shared vectors and ldmatrix/stmatrix, checked
against a brute-force model of what each instruction moves (PTX semantics) on random layouts."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
from harness.smem_cases import LOAD, STORE, random_distributed, random_shape, unflatten

from linear_layouts import ColumnAction, LayoutError, LinearLayout
from linear_layouts.analysis import conversion_instructions, optimal_swizzle, simd_choices, simulate_wavefronts
from linear_layouts.analysis.bank_simulator import phase_costs
from linear_layouts.analysis.steps import SharedInstruction
from linear_layouts.analysis.simd_tiles import matrix_tile, vector_tile
from linear_layouts.layouts.instruction_tiles import ldmatrix_tile


def offsets_table(shared: LinearLayout, dist: LinearLayout) -> np.ndarray:
    """offset of (register, lane, warp), by evaluating both layouts everywhere: [register, lane, warp]."""
    shared = shared.transpose_outs(list(dist.out_dims))
    n = shared.in_dim_size("offset")
    elems = shared.sublayout(["offset"], shared.out_dim_names).apply_all()
    offset_of = np.empty(n, dtype=np.int64)
    offset_of[elems] = np.arange(n)
    n_reg = dist.in_dim_size("register")
    n_warp = dist.in_dim_size("warp") if dist.has_in_dim("warp") else 1
    flat = dist.apply_all().reshape(n_warp, 32, n_reg).transpose(2, 1, 0)
    return offset_of[flat]


def moves_as_vector(table: np.ndarray, order: list[int], elements: int) -> bool:
    """Each run of ``elements`` registers (packing order) is one aligned contiguous block per lane."""
    regs = table[order]
    for g in range(0, len(order), elements):
        block = regs[g:g + elements]
        base = block[0]
        if np.any(base % elements) or any(np.any(block[i] != base + i) for i in range(elements)):
            return False
    return True


def moves_as_ldmatrix(table: np.ndarray, order: list[int], bitwidth: int, matrices: int, trans: bool) -> bool:
    """PTX ldmatrix/stmatrix .m8n8.x{matrices}[.trans].b16: lane 8j + r gives the 16-byte-aligned address
    of row r of matrix j; lane t's register j holds row t // 4, 4 bytes at 4 (t % 4) (plain), or rows
    2 (t % 4) + {0, 1} at column t // 4 (.trans)."""
    e = 32 // bitwidth  # elements per 32-bit register
    row_elems = 128 // bitwidth  # 16 bytes
    regs = table[order]
    per_instr = e * matrices
    for g in range(0, len(order), per_instr):
        for j in range(matrices):
            block = regs[g + j * e:g + (j + 1) * e]  # [element in register, lane, warp]
            for t in range(32):
                for i in range(e):
                    if trans:
                        r = 2 * (t % 4) + i
                        row_addr = block[r & 1, (r >> 1)]
                        want = row_addr + t // 4
                    else:
                        row_addr = block[0, 4 * (t // 4)]
                        want = row_addr + e * (t % 4) + i
                    if np.any(row_addr % row_elems) or np.any(block[i, t] != want):
                        return False
    return True


def ldmatrix_wavefronts(table: np.ndarray, order: list[int], bitwidth: int, matrices: int, trans: bool) -> int:
    """Brute force: each matrix is a phase whose 8 rows (16 bytes each, addresses as in the PTX model
    above) cost the most distinct words any bank is asked for."""
    e = 32 // bitwidth
    regs = table[order]
    total = 0
    for g in range(0, len(order), e * matrices):
        for j in range(matrices):
            block = regs[g + j * e:g + (j + 1) * e]
            for warp in range(table.shape[2]):
                if trans:
                    addrs = [int(block[r & 1, r >> 1, warp]) for r in range(8)]
                else:
                    addrs = [int(block[0, 4 * r, warp]) for r in range(8)]
                words = [set(range(a * bitwidth // 32, a * bitwidth // 32 + 4)) for a in addrs]
                total += phase_costs(words)
    return total


def shared_for_tile(rng: random.Random, dist: LinearLayout, w: int, trans: bool) -> LinearLayout:
    """A shared layout that often admits ldmatrix: the tile's bases first, then the rest shuffled/swizzled."""
    log2s = [s.bit_length() - 1 for s in dist.out_dims.values()]
    d = sum(log2s)
    regs = [x for x in dist.flat_bases("register") if x]
    lanes = list(dist.flat_bases("lane"))
    e_bits = (32 // w).bit_length() - 1
    first = lanes[2:5] if trans else regs[:e_bits] + lanes[:2]
    cols: list[int] = []
    for x in first:
        if x and x not in cols and rng.random() < 0.9:
            cols.append(x)
    rest = [1 << i for i in range(d) if not any((1 << i) == c for c in cols)]
    rng.shuffle(rest)
    from linear_layouts.core import f2

    for x in rest:
        if f2.rank(cols + [x]) == len(cols) + 1:
            cols.append(x)
    for i in range(len(first), d):  # XOR-swizzle higher bits with other higher bits only
        if i > len(first) and rng.random() < 0.3:
            cols[i] ^= cols[rng.randint(len(first), i - 1)]
    return LinearLayout({"offset": [unflatten(c, log2s) for c in cols]}, dist.out_dims)


def test_an_access_the_vector_tile_does_not_divide_is_a_layout_error(monkeypatch):
    """simd_choices asserted that the ld/st.shared vector shared_access chose divides the access (it does, by
    the same division): an AssertionError, or nothing under ``python -O``. Forcing the division to fail
    must give a LayoutError naming the arguments and the rule."""
    from linear_layouts.analysis import simd_tiles

    dims = {"dim0": 16, "dim1": 16}
    frag = LinearLayout({"register": [[0, 1], [8, 0], [0, 8]], "lane": [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]]}, dims)
    row_major = LinearLayout({"offset": [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0], [2, 0], [4, 0], [8, 0]]}, dims)
    assert simd_choices(row_major, frag, 16)
    monkeypatch.setattr(simd_tiles, "_divide", lambda *args, **kwargs: None)
    with pytest.raises(LayoutError, match=r"^shared_layout, distributed_layout: the 32-bit ld/st.shared tile .* "
                                          r"must divide the access \(Thm 5.1\)"):
        simd_choices(row_major, frag, 16)


def test_dot_operand_fragment_uses_ldmatrix():
    """A 16x16 fp16 mma-operand fragment: ldmatrix.x4 from row-major, ldmatrix.x4.trans from column-major."""
    dims = {"dim0": 16, "dim1": 16}
    frag = LinearLayout({"register": [[0, 1], [8, 0], [0, 8]], "lane": [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]]}, dims)
    row_major = LinearLayout({"offset": [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0], [2, 0], [4, 0], [8, 0]]}, dims)
    col_major = LinearLayout({"offset": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 1], [0, 2], [0, 4], [0, 8]]}, dims)
    best = simd_choices(row_major, frag, 16)[0]
    assert (best.instruction, best.count) == ("ldmatrix.sync.aligned.m8n8.x4.shared.b16", 1)
    names = {c.instruction: c.count for c in simd_choices(row_major, frag, 16)}
    assert names["ld.shared.b32"] == 4 and names["ldmatrix.sync.aligned.m8n8.x1.shared.b16"] == 4
    best = simd_choices(col_major, frag, 16, op="store")[0]
    assert (best.instruction, best.count) == ("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16", 1)
    assert {c.instruction: c.count for c in simd_choices(col_major, frag, 16)}["ld.shared.u16"] == 8


@pytest.mark.parametrize("matrices, trans", [(1, False), (2, False), (4, False), (4, True), (2, True)])
def test_catalog_ldmatrix_fragments(matrices, trans):
    """The catalog's ldmatrix_tile fragment over its own row-major tile lowers to exactly that ldmatrix."""
    frag = ldmatrix_tile(matrices, 16, trans)
    rows, cols = frag.out_dim_size("dim0"), frag.out_dim_size("dim1")
    shared = LinearLayout({"offset": [[0, 1 << i] for i in range(cols.bit_length() - 1)]
                           + [[1 << i, 0] for i in range(rows.bit_length() - 1)]}, {"dim0": rows, "dim1": cols})
    choices = simd_choices(shared, frag, 16)
    name = f"ldmatrix.sync.aligned.m8n8.x{matrices}{'.trans' if trans else ''}.shared.b16"
    match = [c for c in choices if c.instruction == name]
    assert len(match) == 1 and match[0].count == 1 and match[0].tile == matrix_tile(16, trans=trans)
    assert choices[0].count == 1  # x1 ties with one ld.shared.b32; wider fragments need ldmatrix
    if matrices > 1 or trans:
        assert choices[0] is match[0]


def test_choices_match_brute_force_semantics():
    """Every choice divide_left finds really moves the right elements (brute-force PTX model), and when
    no plain ldmatrix is found, no register permutation makes the brute-force model work either."""
    rng = random.Random(21)
    found = {"vector": 0, "matrix": 0, "trans": 0, "no_matrix": 0, "matrix_conflicts": 0}
    for case in range(160):
        w = rng.choice([8, 16, 16, 32])
        warps = rng.choice([0, 1])
        log2s = random_shape(rng, rng.randint(6 + warps, 9))
        dist = random_distributed(rng, log2s, warps, zero_prob=0.05)
        trans = w == 16 and case % 2 == 0
        shared = shared_for_tile(rng, dist, w, trans)
        table = offsets_table(shared, dist)
        n_warp = table.shape[2]
        choices = simd_choices(shared, dist, w)
        n_reg = dist.in_dim_size("register")
        for c in choices:
            order = c.permutation.apply_values(list(range(n_reg)))  # register values in packing order
            if c.family is SharedInstruction.VECTOR:
                elements = c.bits_per_lane // w
                assert moves_as_vector(table, order, elements)
                assert c.count == len(order) // elements * n_warp
                assert c.wavefronts == simulate_wavefronts(shared, dist, w)
                found["vector"] += 1
            else:
                assert moves_as_ldmatrix(table, order, w, c.matrices, c.trans), (c.instruction, shared, dist)
                per_instruction = c.matrices * (2 if c.trans else 32 // w)
                assert c.count == len(order) // per_instruction * n_warp
                assert c.wavefronts == ldmatrix_wavefronts(table, order, w, c.matrices, c.trans), c.instruction
                found["trans" if c.trans else "matrix"] += 1
                found["matrix_conflicts"] += c.wavefronts > c.count * c.matrices
        if not any(c.family is SharedInstruction.MATRIX and not c.trans for c in choices):
            kept = [i for i, x in enumerate(dist.flat_bases("register")) if x]
            e_bits = (32 // w).bit_length() - 1
            if len(kept) <= 5 and len(kept) >= e_bits:
                found["no_matrix"] += 1
                for perm in itertools.permutations(kept, e_bits):
                    action = ColumnAction(list(perm) + [i for i in kept if i not in perm], "register", len(
                        dist.flat_bases("register")))
                    order = action.apply_values(list(range(dist.in_dim_size("register"))))
                    assert not moves_as_ldmatrix(table, order, w, 1, False)
    assert min(found.values()) >= 10, found


def test_conversion_instructions_seed():
    """Seed 004 through the optimal swizzle: st.shared.b32 x16 and ld.shared.b32 x16 (scalar 32-bit)."""
    r = optimal_swizzle(STORE, LOAD, 32)
    store, load = conversion_instructions(r.layout, STORE, LOAD, 32)
    assert (store.instruction, store.count) == ("st.shared.b32", 16)
    assert (load.instruction, load.count) == ("ld.shared.b32", 16)


def test_vector_tiles_and_bad_input():
    assert vector_tile(128, 16).bases["register"] == [[1], [2], [4]]
    assert vector_tile(128, 128).bases["register"] == []
    assert matrix_tile(32).bases == {"register": [], "lane": [[1], [2]]}
    with pytest.raises(LayoutError, match=r"vector_bits must be 8\.\.128 bits and a multiple of bitwidth"):
        vector_tile(96, 32)
    with pytest.raises(LayoutError, match="trans"):
        matrix_tile(8, trans=True)
    with pytest.raises(LayoutError, match="op"):
        simd_choices(LinearLayout({"offset": [[1]]}, {"dim0": 2}), STORE, 32, op="move")
