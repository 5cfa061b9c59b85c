"""Register permutations: the plan's emission (byte permutes or renamed words) is the cheaper by the
counts of ``analysis.op_counts.register_permutation_counts``, codegen emits exactly those counts, a
renamed-words kernel moves words only (its round trips fold), and the emulator agrees on every element.

Pairs: seeded random distributed layouts and the same layout with its register bases permuted, some
broadcast (zero register bases added or dropped: then not a bit permutation)."""

from __future__ import annotations

import collections
import itertools

import numpy as np
import pytest

from linear_layouts import LayoutError, LinearLayout
from linear_layouts.analysis.conversion import plan_conversion
from linear_layouts.analysis.op_counts import register_permutation_counts
from linear_layouts.analysis.steps import ConversionKind, RegisterEmission, RegisterPermutation
from linear_layouts.analysis.warp_simulator import random_distributed_layout
from linear_layouts.codegen.conversion import RegisterCopy
from linear_layouts.codegen.cost import step_counts
from linear_layouts.codegen.emulate import emulate_check, find_cxx
from linear_layouts.codegen.packing import Emission
from linear_layouts.codegen.plan import conversion_kernel, step_from_plan
from linear_layouts.core.word_packing import Packing, renamed, renaming_packing

BYTES = RegisterEmission.BYTE_PERMUTES
RENAMED = RegisterEmission.RENAMED_WORDS

#: The GPU suite's random_035 pair (8-bit, 32x16, one warp): register bits 1 and 2 trade places.
PAIR_035 = (
    LinearLayout({"register": [[0, 1], [0, 8], [8, 0], [16, 0]], "lane": [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]],
                  "warp": []}, ["dim0", "dim1"]),
    LinearLayout({"register": [[0, 1], [8, 0], [0, 8], [16, 0]], "lane": [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]],
                  "warp": []}, ["dim0", "dim1"]),
)


def register_partner(rng: np.random.Generator, src: LinearLayout) -> LinearLayout:
    """``src`` with its non-zero register bases permuted and 0-2 zero register bases at random places
    (lanes and warps unchanged)."""
    bases = src.bases
    regs = [list(v) for v in bases["register"] if any(v)]
    regs = [regs[i] for i in rng.permutation(len(regs))]
    for _ in range(int(rng.integers(0, 3))):
        regs.insert(int(rng.integers(0, len(regs) + 1)), [0] * src.num_out_dims)
    bases["register"] = regs
    return LinearLayout(bases, src.out_dims)


def random_pairs(n: int, seed: int):
    """``n`` seeded (src, dst) pairs whose conversion moves no data between threads."""
    rng = np.random.default_rng(seed)
    for i in range(n):
        shape = [int(x) for x in rng.integers(1, 4, size=2)]
        while sum(shape) < 6:
            shape[int(rng.integers(2))] += 1
        src = random_distributed_layout(rng, shape, warp_bits=i % 3, extra_register_zeros=int(rng.integers(0, 2)))
        yield src, register_partner(rng, src)


def register_bits(layout: LinearLayout) -> int:
    return layout.in_dim_size_log2("register", missing_ok=True)


def test_codegen_emits_the_counted_ops_and_the_plan_takes_the_cheaper():
    """250 pairs x 4 widths: for each emission, the emitter's byte permutes equal the count (an emission
    the count refuses, the emitter refuses too); the plan says renamed words exactly where that count
    is below the byte permutes' (ties: byte permutes)."""
    seen: collections.Counter = collections.Counter()
    for src, dst in random_pairs(250, seed=29):
        for bits in (8, 16, 32, 64):
            plan = plan_conversion(src, dst, bits)
            assert plan.kind in (ConversionKind.NO_OP, ConversionKind.REGISTER_PERMUTATION)
            if plan.kind is ConversionKind.NO_OP:
                continue
            permutation = plan.steps[0]
            counts = {e: register_permutation_counts(permutation.source, bits, register_bits(src), e is RENAMED)
                      for e in RegisterEmission}
            for emission, count in counts.items():
                if count is None:
                    with pytest.raises(LayoutError, match="renamed words"):
                        RegisterCopy(src, dst, permutation.source, emission, bits // 8)
                    seen["refused"] += 1
                    continue
                step = RegisterCopy(src, dst, permutation.source, emission, bits // 8)
                assert step_counts(step).alu == count.alu, (bits, emission, src, dst)
                seen[emission, bits, count.alu > 0] += 1
            cheaper = counts[RENAMED] is not None and counts[RENAMED].alu < counts[BYTES].alu
            assert permutation.emission is (RENAMED if cheaper else BYTES)
            assert step_from_plan(plan).emission is permutation.emission
            seen["plan", permutation.emission] += 1
    # the set exercises both emissions, priced byte permutes and refusals
    assert seen[BYTES, 8, True] > 50 and seen[BYTES, 16, True] > 50
    assert seen["plan", RENAMED] > 50 and seen["plan", BYTES] > 50 and seen["refused"] > 20
    assert seen[RENAMED, 32, True] == seen[BYTES, 32, True] == seen[BYTES, 64, True] == 0


def _renames(pa: Packing, pb: Packing, source: tuple[int, ...]) -> bool:
    """Every word of ``b`` (packed ``pb``, ``b[r] = a[source[r]]``) is a word of ``a`` (packed ``pa``),
    element for element: brute force over the words."""
    words_a = {tuple(pa.register(v, p) for p in range(pa.elements_per_word)) for v in range(pa.num_words)}
    return all(tuple(source[pb.register(u, p)] for p in range(pb.elements_per_word)) in words_a
               and pb.elements_per_word == pa.elements_per_word for u in range(pb.num_words))


def test_renamed_packing_against_brute_force():
    """``word_packing.renamed`` finds a packing of ``b`` whose words are ``a``'s exactly when one exists
    among all packings of ``b`` (every choice of in-word bits), for every packing of ``a``."""
    found = collections.Counter()
    for src, dst in random_pairs(50, seed=7):
        plan = plan_conversion(src, dst, 8)
        if plan.kind is not ConversionKind.REGISTER_PERMUTATION:
            continue
        source = plan.steps[0].source
        ra, rb = register_bits(src), register_bits(dst)
        for w in (1, 2):
            k = min(2 // w, ra)
            for in_word in itertools.permutations(range(ra), k):
                pa = Packing(w, ra, in_word)
                got = renamed(pa, source)
                exists = any(_renames(pa, Packing(w, rb, bits), source)
                             for bits in itertools.permutations(range(rb), min(2 // w, rb)))
                assert (got is not None) == exists, (pa, source)
                if got is not None:
                    assert _renames(pa, got, source)
                found[exists] += 1
    assert found[True] > 100 and found[False] > 100


def test_the_suite_pair_035_moves_words_only():
    """random_035 (8-bit, one warp, register bits 1 and 2 swapped): renamed words; the kernel's
    conversions are word moves (no prmt between its global load and store: 4 on each side, as the
    16-bit accesses need), byte permutes would have cost 4 per conversion."""
    src, dst = PAIR_035
    plan = plan_conversion(src, dst, 8)
    permutation = plan.steps[0]
    assert permutation.emission is RENAMED
    assert register_permutation_counts(permutation.source, 8, 4).alu == 4
    assert "words are the source's, renamed (no instruction)" in str(plan)
    source = conversion_kernel(src, dst, 8).source
    loop = source[source.index("for (int it"):source.index("ll_stg16")]
    assert "__byte_perm" not in loop and source.count("__byte_perm") == 8


@pytest.mark.skipif(find_cxx() is None, reason="needs a C++20 compiler for the emulator")
def test_emulated_kernels_are_correct():
    """Kernels of random_035 and of random register-permutation pairs (one per width, emission and, for
    renamed words, source packing: natural, or with duplicated registers out of the words) give every
    element back after 3 round trips on the CPU emulator."""
    kinds = collections.Counter()
    pairs = [PAIR_035] + list(random_pairs(80, seed=3))
    for src, dst in pairs:
        for bits in (8, 16):
            plan = plan_conversion(src, dst, bits)
            if plan.kind is not ConversionKind.REGISTER_PERMUTATION:
                continue
            emission = plan.steps[0].emission
            natural = renaming_packing(bits // 8, register_bits(src), plan.steps[0].source) == Packing.natural(
                bits // 8, register_bits(src))
            key = (bits, emission, natural or emission is BYTES)
            if kinds[key]:
                continue
            kinds[key] += 1
            assert emulate_check(conversion_kernel(src, dst, bits), tiles=2, iterations=3) == 0, (bits, src, dst)
    assert len(kinds) == 6, kinds


def test_refusals_name_the_argument():
    src, dst = PAIR_035
    plan = plan_conversion(src, dst, 8)
    source = plan.steps[0].source
    with pytest.raises(LayoutError, match="emission"):
        RegisterPermutation(source, "renamed words")
    with pytest.raises(LayoutError, match="RegisterEmission"):
        RegisterEmission("unpacked")
    with pytest.raises(LayoutError, match="element size"):
        RegisterCopy(src, dst, source, RENAMED)  # no element size: no packing to rename
    step = RegisterCopy(src, dst, source, RENAMED, 1)
    natural = Packing.natural(1, 4)
    with pytest.raises(LayoutError, match="pout"):
        step.emit_words("a", "b", natural, natural, Emission())
    with pytest.raises(LayoutError, match="register_permutation_counts"):
        register_permutation_counts(source, 12, 4)
    with pytest.raises(LayoutError, match="source"):
        renamed(natural, (0, 1, 2))
