"""Round three: the analyses against brute force written from the hardware rule, on inputs the other
tests do not cover (8..128-bit elements, broadcast and non-surjective layouts, 64-lane AMD warps,
padding, skipped duplicates), and the regressions found that way."""

from __future__ import annotations

import itertools
import random

import pytest

from linear_layouts import LayoutError, LinearLayout
from linear_layouts.analysis import optimal_swizzle, plan_shuffle, shared_access, simulate_wavefronts, wavefronts
from linear_layouts.analysis.conversion import plan_conversion
from linear_layouts.analysis.bank_simulator import duplicate_masks
from linear_layouts.analysis.vectorization import contiguous_elements, global_access, vector_permutation
from linear_layouts.core import f2
from linear_layouts.layouts.shared import SwizzledSharedLayout
from linear_layouts.target.amd import MI300X

from harness.smem_cases import unflatten


def _xor(bases: list[int], index: int) -> int:
    x = 0
    for i, b in enumerate(bases):
        if index >> i & 1:
            x ^= b
    return x


def _phases(lanes: int, unit: int, op: str, paired: bool, amd: bool) -> list[list[int]]:
    """The hardware's phases: NVIDIA 128 bytes of consecutive lanes (twice as many paired); CDNA3's
    ds_read_b128 lanes 0-3 + 20-23, 4-7 + 16-19, 8-11 + 28-31, 12-15 + 24-27 (and 32 up)."""
    if amd and unit == 16 and op == "load":
        return [[hi + a + i for i in range(4)] + [hi + b + i for i in range(4)]
                for hi in (0, 32) for a, b in ((0, 20), (4, 16), (8, 28), (12, 24))]
    per = 128 // unit * (2 if paired and not amd else 1)
    return [list(range(s, s + per)) for s in range(0, lanes, per)]


def _instruction(starts: list[int], vbytes: int, active: list[bool], op: str, amd: bool) -> int:
    unit = max(vbytes, 4)
    paired = op == "load" and unit >= 8 and all(active) and any(
        all(starts[lane] == starts[lane ^ m] for lane in range(len(starts))) for m in (1, 2))
    total = 0
    for phase in _phases(len(starts), unit, op, paired, amd):
        words = {w for lane in phase if active[lane]
                 for w in range(starts[lane] // 4, (starts[lane] + vbytes - 1) // 4 + 1)}
        per_bank: dict[int, int] = {}
        for w in words:
            per_bank[w % 32] = per_bank.get(w % 32, 0) + 1
        total += max(per_bank.values(), default=0)
    return total


def _brute_vector(offset_of: dict[int, int], reg: list[int], others: list[int], bits: int) -> int:
    """The widest 2**v: v registers at offsets 1, 2, .., 2**(v-1), every other basis zero in the low v bits."""
    kept = [offset_of[r] for r in reg if r]
    rest_all = [offset_of[x] for x in others]
    best = 0
    for v in range(1, min(128 // bits, 1 << len(kept)).bit_length()):
        for pick in itertools.permutations(range(len(kept)), v):
            if [kept[j] for j in pick] == [1 << i for i in range(v)]:
                rest = [kept[j] for j in range(len(kept)) if j not in pick] + rest_all
                if not any(o & ((1 << v) - 1) for o in rest):
                    best = v
                    break
    return best


def _brute_wavefronts(shared: LinearLayout, dist: LinearLayout, bits: int, op: str, *, amd: bool = False,
                      padding: tuple[tuple[int, int], ...] = (), skip: bool = False) -> tuple[int, int]:
    """(wavefronts, vector log2) by evaluating every lane of every instruction of every warp."""
    shared = shared.transpose_outs(list(dist.out_dims))
    columns = list(shared.flat_bases("offset", missing_ok=True))
    offset_of = {_xor(columns, o): o for o in range(1 << len(columns))}
    reg, lane, warp = (list(dist.flat_bases(d, missing_ok=True)) for d in ("register", "lane", "warp"))
    v = _brute_vector(offset_of, reg, lane + warp, bits)
    kept = [i for i, r in enumerate(reg) if r]
    vec = [next(i for i in kept if offset_of[reg[i]] == 1 << j) for j in range(v)]
    others = [i for i in kept if i not in vec]
    free_reg, free_lane, free_warp = duplicate_masks(dist) if skip else (0, 0, 0)
    width = bits // 8
    vbytes = width << v

    def address(o: int) -> int:
        return (o + sum((o // interval) * pad for interval, pad in padding)) * width

    active = [not lane_ & free_lane for lane_ in range(1 << len(lane))]
    total = 0
    for w in range(1 << len(warp)):
        if w & free_warp:
            continue
        for ins in range(1 << len(others)):
            r = sum(1 << others[j] for j in range(len(others)) if ins >> j & 1)
            if r & free_reg:
                continue
            starts = []
            for t in range(1 << len(lane)):
                x = _xor(warp, w) ^ _xor(lane, t) ^ _xor(reg, r)
                got = sorted(address(offset_of[x ^ _xor([reg[i] for i in vec], k)]) for k in range(1 << v))
                assert got == list(range(got[0], got[0] + vbytes, width)) and got[0] % vbytes == 0
                starts.append(got[0])
            total += _instruction(starts, vbytes, active, op, amd)
    return total, v


def _random_case(rng: random.Random, amd: bool) -> tuple[LinearLayout, LinearLayout]:
    """An invertible shared layout (plain, XOR-swizzled or random) and a distributed layout with
    broadcast (zero) and repeated bases anywhere, not necessarily surjective."""
    lane_bits, warp_bits = (6 if amd else 5), rng.choice([0, 0, 1, 2])
    d = rng.randint(3, lane_bits + warp_bits + 4)
    cut = rng.randint(1, d - 1)
    log2s = [cut, d - cut] if rng.random() < 0.8 else [d]
    names = {f"dim{i}": 1 << k for i, k in enumerate(log2s)}
    cols = [1 << i for i in range(d)]
    kind = rng.choice(["plain", "swizzle", "random"])
    if kind == "plain":
        rng.shuffle(cols)
    elif kind == "swizzle":
        for i in range(cut, d):
            if rng.random() < 0.6:
                cols[i] ^= 1 << rng.randint(0, cut - 1)
    else:
        while f2.rank(cols := [rng.getrandbits(d) for _ in range(d)]) != d:
            pass
    shared = LinearLayout({"offset": [unflatten(c, log2s) for c in cols]}, names)
    pool = [1 << i for i in range(d)]
    rng.shuffle(pool)

    def pick() -> int:
        p = rng.random()
        return 0 if p < 0.15 else rng.getrandbits(d) if p < 0.25 or not pool else pool.pop()

    reg = [pick() for _ in range(rng.randint(0, 5))]
    lane = [pick() for _ in range(lane_bits)]
    warp = [pick() for _ in range(warp_bits)]
    reg += [x for x in list(pool) if rng.random() < 0.7]
    ins = {"register": [unflatten(x, log2s) for x in reg], "lane": [unflatten(x, log2s) for x in lane]}
    if warp_bits:
        ins["warp"] = [unflatten(x, log2s) for x in warp]
    return shared, LinearLayout(ins, names, require_surjective=False)


def test_wavefronts_equal_hardware_rule_brute_force():
    """Closed form, simulator and a brute force from the phase rule agree (NVIDIA and MI300X, 8..128-bit
    elements, broadcast/non-surjective layouts, loads and stores, skipped duplicates), and the vector
    is the widest the registers allow."""
    rng = random.Random(3)
    seen = set()
    for _ in range(150):
        amd = rng.random() < 0.35
        target = MI300X if amd else None
        shared, dist = _random_case(rng, amd)
        bits, op = rng.choice([8, 16, 32, 64, 128]), rng.choice(["load", "store"])
        skip = op == "store" and rng.random() < 0.4
        brute, v = _brute_wavefronts(shared, dist, bits, op, amd=amd, skip=skip)
        assert shared_access(shared, dist, bits, target=target).vector_log2 == v
        assert wavefronts(shared, dist, bits, op=op, skip_duplicates=skip, target=target) == brute
        assert simulate_wavefronts(shared, dist, bits, op=op, skip_duplicates=skip, target=target) == brute
        seen.add((amd, (bits << v) // 8))
    assert {(a, b) for a in (False, True) for b in (1, 2, 4, 8, 16)} <= seen


def test_padded_simulation_equals_brute_force():
    rng = random.Random(7)
    compared = 0
    for _ in range(80):
        amd = rng.random() < 0.35
        target = MI300X if amd else None
        shared, dist = _random_case(rng, amd)
        bits, op = rng.choice([8, 16, 32, 64, 128]), rng.choice(["load", "store"])
        size = shared.in_dim_size("offset")
        padding = tuple((1 << rng.randint(0, size.bit_length() - 1), rng.choice([0, 1, 2, 4, 8]))
                        for _ in range(rng.randint(1, 2)))
        try:
            sim = simulate_wavefronts(shared, dist, bits, op=op, padding=padding, target=target)
        except LayoutError:
            vector = shared_access(shared, dist, bits, target=target).vector_elements
            assert any(i % vector or p % vector for i, p in padding)
            continue
        assert sim == _brute_wavefronts(shared, dist, bits, op, amd=amd, padding=padding)[0]
        compared += 1
    assert compared > 60


def _brute_contiguous(reg: list[tuple[int, ...]], others: list[tuple[int, ...]], log2s: list[int],
                      order: list[int]) -> int:
    def at(r: int, t: int) -> int:
        c = [0] * len(log2s)
        for bases, index in ((reg, r), (others, t)):
            for i, b in enumerate(bases):
                if index >> i & 1:
                    c = [x ^ y for x, y in zip(c, b)]
        off, shift = 0, 0
        for o in order:
            off, shift = off + (c[o] << shift), shift + log2s[o]
        return off

    best, u = 1, 2
    while u <= 1 << len(reg) and all(at(r + v, t) == at(r, t) + v for t in range(1 << len(others))
                                      for r in range(0, 1 << len(reg), u) for v in range(u)):
        best, u = u, 2 * u
    return best


def test_contiguity_and_vector_permutation_equal_brute_force():
    """contiguous_elements is L(r + v) = L(r) + v over every thread; vector_permutation reaches the best
    of every register permutation; global_access(permute=True) takes it (up to 128 bits)."""
    rng = random.Random(11)
    for _ in range(150):
        log2s = [rng.randint(0, 4) for _ in range(rng.choice([1, 2, 3]))]
        d = sum(log2s)
        pick = lambda: 0 if d == 0 or rng.random() < 0.2 else rng.getrandbits(d) if rng.random() < 0.2 \
            else 1 << rng.randrange(d)  # noqa: E731
        reg = [pick() for _ in range(rng.randint(0, 5))]
        for i in range(min(len(reg), d, rng.randint(0, 3))):
            reg[i] = 1 << i
        rng.shuffle(reg) if rng.random() < 0.3 else None
        oth = [pick() for _ in range(rng.randint(0, 3))]
        names = {f"dim{i}": 1 << k for i, k in enumerate(log2s)}
        layout = LinearLayout({"register": [unflatten(x, log2s) for x in reg],
                               "lane": [unflatten(x, log2s) for x in oth]}, names, require_surjective=False)
        order = list(range(len(log2s)))
        rng.shuffle(order)
        rb, ob = [tuple(unflatten(x, log2s)) for x in reg], [tuple(unflatten(x, log2s)) for x in oth]
        assert contiguous_elements(layout, order) == _brute_contiguous(rb, ob, log2s, order)
        best = max(_brute_contiguous([rb[i] for i in p], ob, log2s, order) for p in itertools.permutations(range(len(rb))))
        assert contiguous_elements(vector_permutation(layout, order).apply(layout), order) == best
        assert global_access(layout, 16, order, permute=True).elements == min(8, best)


#: a store of one 16-bit register per lane and a load of three registers with lanes 0 and 1 broadcast
_PAIRED_STORE = LinearLayout({"register": [[4, 0]], "lane": [[0, 2], [0, 1], [2, 0], [1, 0], [0, 4]]},
                             ["dim0", "dim1"])
_PAIRED_LOAD = LinearLayout({"register": [[1, 0], [2, 0], [0, 1]], "lane": [[0, 0], [0, 0], [4, 0], [0, 2], [0, 4]]},
                            {"dim0": 8, "dim1": 8})


def test_the_planner_takes_the_paired_load_the_papers_swizzle_leaves():
    """The §9.2 swizzle (V-wide vectors, the paper's algorithm) gives 2 + 4 wavefronts (a 4-byte load) where the
    plain column-major layout gives 2 + 2 (an 8-byte load whose broadcast lanes 0, 1 pair: one wavefront for
    each of 2 instructions). The widened vectors (``extend_vectors``), which the conversion planner weighs, find
    the 2 + 2; the brute force agrees with every count."""
    column_major = SwizzledSharedLayout(1, 1, 1, [0, 1]).to_linear([8, 8]).sublayout(["offset"], ["dim0", "dim1"])
    assert (wavefronts(column_major, _PAIRED_STORE, 16, op="store"), wavefronts(column_major, _PAIRED_LOAD, 16)) == (2, 2)
    paper = optimal_swizzle(_PAIRED_STORE, _PAIRED_LOAD, 16)
    assert (paper.store_wavefronts, paper.load_wavefronts) == (2, 4)
    r = optimal_swizzle(_PAIRED_STORE, _PAIRED_LOAD, 16, extend_vectors=True)
    assert (r.store_wavefronts, r.load_wavefronts) == (2, 2)
    assert (_brute_wavefronts(r.layout, _PAIRED_STORE, 16, "store")[0], _brute_wavefronts(r.layout, _PAIRED_LOAD, 16, "load")[0]) == (2, 2)
    plan = plan_conversion(_PAIRED_STORE, _PAIRED_LOAD, "fp16")
    assert (plan.store.wavefronts, plan.load.wavefronts) == (2, 2)


def test_optimal_swizzle_at_most_every_swizzled_shared_layout():
    """The swizzle with widened vectors (what the conversion planner weighs) against every
    SwizzledSharedLayout(vec, per_phase, max_phase, order) on small pairs (NVIDIA and MI300X)."""
    rng = random.Random(5)
    for _ in range(12):
        amd = rng.random() < 0.3
        lane_bits, warp_bits = (6 if amd else 5), rng.choice([0, 1])
        log2s = [rng.randint(1, 4), rng.randint(1, 4)]
        d = sum(log2s)
        names = {"dim0": 1 << log2s[0], "dim1": 1 << log2s[1]}

        def dist() -> LinearLayout:
            vecs = [1 << i for i in range(d)]
            rng.shuffle(vecs)
            n_reg = max(0, d - lane_bits - warp_bits) + rng.randint(0, min(2, d))
            reg, rest = sorted(vecs[:n_reg]) if rng.random() < 0.5 else vecs[:n_reg], vecs[n_reg:]
            rest += [0] * (lane_bits + warp_bits - len(rest))
            reg, rest = reg + rest[lane_bits + warp_bits:], rest[:lane_bits + warp_bits]
            rng.shuffle(rest)
            ins = {"register": [unflatten(x, log2s) for x in reg], "lane": [unflatten(x, log2s) for x in rest[:lane_bits]]}
            if warp_bits:
                ins["warp"] = [unflatten(x, log2s) for x in rest[lane_bits:]]
            return LinearLayout(ins, names)

        a, b, bits = dist(), dist(), rng.choice([8, 16, 32, 64, 128])
        r = optimal_swizzle(a, b, bits, target=MI300X if amd else None, extend_vectors=True)
        for vec, per_phase, max_phase, order in itertools.product((1, 2, 4, 8), (1, 2, 4), (1, 2, 4, 8), ([1, 0], [0, 1])):
            s = SwizzledSharedLayout(vec, per_phase, max_phase, order).to_linear([1 << k for k in log2s])
            s = s.sublayout(["offset"], ["dim0", "dim1"])
            total = _brute_wavefronts(s, a, bits, "store", amd=amd)[0] + _brute_wavefronts(s, b, bits, "load", amd=amd)[0]
            assert r.total_wavefronts <= total, (vec, per_phase, max_phase, order)


def test_plan_shuffle_refuses_oversize_layouts_before_building_rounds():
    """Regression: plan_shuffle listed every lane's registers of every round (2**24 elements: ~40 s and
    gigabytes) without the MAX_ELEMENTS check every enumerating operation makes."""
    units = [[1 << i, 0] for i in range(12)] + [[0, 1 << i] for i in range(12)]
    src = LinearLayout({"register": units[:19], "lane": units[19:]}, ["dim0", "dim1"])
    dst = LinearLayout({"register": units[1:19] + units[:1], "lane": units[19:]}, ["dim0", "dim1"])
    with pytest.raises(LayoutError, match="plan_shuffle: src.*max_elements"):
        plan_shuffle(src, dst, 32)
    small = LinearLayout({"register": units[:3], "lane": units[12:17]}, {"dim0": 8, "dim1": 32})
    other = LinearLayout({"register": [units[1], units[0], units[2]], "lane": units[12:17]}, {"dim0": 8, "dim1": 32})
    assert plan_shuffle(small, other, 32).num_rounds >= 1
    with pytest.raises(LayoutError, match="max_elements=128"):
        plan_shuffle(small, other, 32, max_elements=128)
