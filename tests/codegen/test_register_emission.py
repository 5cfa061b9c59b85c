"""Register permutations: the plan's emission (byte permutes or renamed words) is the cheaper by the
counts of ``analysis.op_counts.register_permutation_counts``, codegen emits exactly those counts, a
renamed-words kernel moves words only (its round trips fold), and the emulator agrees on every element.

Pairs: seeded random distributed layouts and the same layout with its register bases permuted, some
broadcast (zero register bases added or dropped: then not a bit permutation)."""

from __future__ import annotations

import collections
import importlib.util
import itertools
import re
import subprocess
from pathlib import Path

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
from linear_layouts.codegen.global_memory import global_vector_elements
from linear_layouts.codegen.hardware_map import global_map
from linear_layouts.codegen.kernel import UNPACKED_REGISTER_LIMIT, choose_packings
from linear_layouts.codegen.ptx import compile_cubin, find_cuobjdump, find_nvcc
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

#: regperm_006 of the GPU suite's named register permutations (8-bit, 8x64, one warp): every global access
#: is one byte (no register bit at column offset 1), register bits 0 (row 1) and 4 (column 32) trade places.
_LANES_006 = [[0, 1], [0, 2], [2, 0], [4, 0], [0, 0]]
PAIR_006 = (
    LinearLayout({"register": [[1, 0], [0, 4], [0, 8], [0, 16], [0, 32]], "lane": _LANES_006, "warp": []},
                 {"dim0": 8, "dim1": 64}),
    LinearLayout({"register": [[0, 32], [0, 4], [0, 8], [0, 16], [1, 0]], "lane": _LANES_006, "warp": []},
                 {"dim0": 8, "dim1": 64}),
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


def _single_element_accesses(src: LinearLayout, dst: LinearLayout, w: int) -> bool:
    """Both sides' global loads and stores move one element each (no register run at consecutive offsets)."""
    return global_vector_elements(global_map(src), w) == 1 == global_vector_elements(global_map(dst), w)


def test_single_element_accesses_take_no_byte_permute():
    """A register-only kernel whose global loads and stores are single 8- or 16-bit elements on both sides
    holds them unpacked (one per word, as Triton does) and emits no byte permute at all: packed words
    would pay 1-3 prmt per word to pack the loads and as many to unpack the stores (regperm_006: 48).
    Kernels with wider accesses on either side keep packed words where that is cheaper (random_035)."""
    seen: collections.Counter = collections.Counter()
    for src, dst in [PAIR_006, PAIR_035] + list(random_pairs(120, seed=41)):
        for bits in (8, 16):
            w = bits // 8
            if plan_conversion(src, dst, bits).kind is not ConversionKind.REGISTER_PERMUTATION:
                continue
            if 1 << max(register_bits(src), register_bits(dst)) > UNPACKED_REGISTER_LIMIT:
                continue
            source = conversion_kernel(src, dst, bits).source
            if _single_element_accesses(src, dst, w):
                assert "__byte_perm" not in source, (bits, src, dst)
                seen["single", bits] += 1
            else:
                seen["wider"] += 1
    assert seen["single", 8] >= 5 and seen["single", 16] >= 5 and seen["wider"] > 50, seen


def test_unpacked_only_for_register_only_steps_and_ties_stay_packed():
    """``choose_packings`` offers the unpacked files to register copies alone, and keeps the packed ones on
    a tie: random_035 (16-bit global accesses of 8-bit pairs) stays packed, 8 prmt in all."""
    src, dst = PAIR_006
    step = step_from_plan(plan_conversion(src, dst, 8))
    back = step_from_plan(plan_conversion(dst, src, 8))
    pa, pb = choose_packings(src, dst, 1, step, back)
    assert pa == Packing.unpacked(1, 5) and pb == Packing.unpacked(1, 5) and pa.num_words == 32
    assert not Packing.natural(1, 5).is_unpacked and not Packing.unpacked(4, 5).is_unpacked
    s035, d035 = PAIR_035
    pa, pb = choose_packings(s035, d035, 1, step_from_plan(plan_conversion(s035, d035, 8)))
    assert not pa.is_unpacked and not pb.is_unpacked
    assert renamed(Packing.unpacked(1, 5), step.source) == Packing.unpacked(1, 5)
    with pytest.raises(LayoutError, match="unpacked"):
        Packing(1, 3, (0,))


@pytest.mark.skipif(find_cxx() is None, reason="needs a C++20 compiler for the emulator")
def test_emulated_unpacked_kernels_are_correct():
    """regperm_006 and a 16-bit pair with single-element accesses, unpacked: every element back after
    3 round trips on the CPU emulator."""
    pairs = [(PAIR_006, 8)]
    for src, dst in random_pairs(120, seed=41):
        if (plan_conversion(src, dst, 16).kind is ConversionKind.REGISTER_PERMUTATION
                and _single_element_accesses(src, dst, 2)
                and 1 << max(register_bits(src), register_bits(dst)) <= UNPACKED_REGISTER_LIMIT):
            pairs.append(((src, dst), 16))
            break
    assert len(pairs) == 2
    for (src, dst), bits in pairs:
        kernel = conversion_kernel(src, dst, bits)
        assert f"unsigned a[{1 << register_bits(src)}];" in kernel.source
        assert emulate_check(kernel, tiles=2, iterations=3) == 0, (bits, src, dst)


def _cuobjdump() -> str | None:
    """cuobjdump next to nvcc or on PATH, else the one Triton's wheel ships (found without importing it)."""
    tool = find_cuobjdump()
    if tool is None and importlib.util.find_spec("triton") is not None:
        bundled = Path(importlib.util.find_spec("triton").origin).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
        tool = str(bundled) if bundled.exists() else None
    return tool


@pytest.mark.skipif(find_nvcc() is None or _cuobjdump() is None, reason="needs nvcc and cuobjdump")
def test_regperm_006_sass_is_loads_and_stores():
    """regperm_006's kernel (loop round trips included) compiles to its 32 byte loads and 32 byte stores
    per thread with no PRMT (it had 48: packing the loads into words and unpacking them for the stores)."""
    src, dst = PAIR_006
    cubin = compile_cubin(conversion_kernel(src, dst, 8).source)
    sass = subprocess.run([_cuobjdump(), "-sass", str(cubin)], capture_output=True, text=True, check=True).stdout
    ops = collections.Counter(re.findall(r"^\s+/\*[0-9a-f]{4}\*/\s+(?:@!?P\w+\s+)?([A-Z][A-Z0-9_.]*)", sass, re.M))
    assert ops["LDG.E.U8.CONSTANT"] == 32 and ops["STG.E.U8"] == 32, ops
    assert not any(op.startswith("PRMT") for op in ops), ops
