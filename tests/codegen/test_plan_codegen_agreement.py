"""Plans and codegen agree: ``plan_conversion`` returns a plan only where codegen runs it on its target.

The rule (``analysis.conversion``'s module doc): a plan that moves data between lanes (warp shuffle,
shared memory) runs on the target's warps, so it needs layouts of exactly ``target.lanes`` lanes (32 on
NVIDIA, 64 on AMD CDNA); a no-op or a register permutation moves nothing between lanes and is planned for
any lane count. Seeded random distributed pairs (``analysis.warp_simulator``'s layouts, as the other
codegen and analysis tests draw them) of 16-, 32- and 64-lane warps, planned for sm_90, sm_80 and gfx942:

* either ``plan_conversion`` raises ``LayoutError``, only where data crosses lanes and the lane counts
  differ, naming both; or
* its plan's steps are emitted (``step_from_plan``, ``emit_words``) and, for layouts of an NVIDIA warp, the
  whole kernel (``conversion_kernel``: this plan and the backward one); an AMD target is refused as such by
  the kernel emitter (codegen emits CUDA), its register plans' steps still emit.

A sample of the kernels runs on the CPU emulator (``codegen.emulate``) with every element checked.
"""

from __future__ import annotations

import collections
import re
from collections.abc import Iterator

import numpy as np
import pytest

from linear_layouts import LayoutError, LinearLayout
from linear_layouts.analysis import conversion as cv
from linear_layouts.analysis.steps import ConversionKind, ConversionPlan
from linear_layouts.analysis.warp_simulator import random_distributed_layout, random_within_warp_partner
from linear_layouts.codegen.emulate import emulate_check, find_cxx
from linear_layouts.codegen.packing import Emission, Packing
from linear_layouts.codegen.plan import conversion_kernel, step_from_plan
from linear_layouts.target import Target, named_target

TARGETS = (named_target("sm_90"), named_target("sm_80"), named_target("gfx942"))
LANE_BITS = (4, 5, 6)  # 16, 32 and 64 lanes a warp
WIDTHS = (8, 16, 32, 64)
#: how ``dst`` is drawn from ``src``: its registers permuted (register-only), redistributed inside each
#: warp (shuffle or shared memory), one register basis swapped with a lane basis (§5.4's exchange), or
#: drawn afresh with as many warps (shared memory)
DRAWS = ("registers", "in warp", "swap", "fresh")
REGISTER_ONLY = (ConversionKind.NO_OP, ConversionKind.REGISTER_PERMUTATION)


def _registers_permuted(rng: np.random.Generator, src: LinearLayout) -> LinearLayout:
    bases = src.bases
    order = [int(x) for x in rng.permutation(len(bases["register"]))]
    bases["register"] = [bases["register"][i] for i in order]
    return LinearLayout(bases, src.out_dims)


def _register_lane_swap(rng: np.random.Generator, src: LinearLayout) -> LinearLayout:
    """``src`` with one non-zero register basis traded for a lane basis (``src`` itself without one)."""
    bases = src.bases
    registers = [j for j, v in enumerate(bases["register"]) if any(v)]
    if not registers:
        return src
    r, lane = int(rng.choice(registers)), int(rng.integers(len(bases["lane"])))
    bases["register"][r], bases["lane"][lane] = bases["lane"][lane], bases["register"][r]
    return LinearLayout(bases, src.out_dims)


def random_pairs(n: int, seed: int) -> Iterator[tuple[LinearLayout, LinearLayout, int]]:
    """``n`` seeded (src, dst, bits): lane counts, draws and widths in turn, 1 to 4 warps, 2**6 to 2**9
    elements, broadcast (zero bases) on either side."""
    rng = np.random.default_rng(seed)
    for i in range(n):
        lane_bits, draw = LANE_BITS[i % 3], DRAWS[i // 3 % 4]
        shape = [int(x) for x in rng.integers(1, 4, size=2)]
        while sum(shape) < 6 + i % 4:
            shape[int(rng.integers(2))] += 1
        warp_bits = int(rng.integers(0, 3))
        src = random_distributed_layout(rng, shape, lane_bits=lane_bits, warp_bits=warp_bits,
                                        extra_register_zeros=int(rng.integers(0, 2)))
        if draw == "registers":
            dst = _registers_permuted(rng, src)
        elif draw == "in warp":
            dst = random_within_warp_partner(rng, src)
        elif draw == "swap":
            dst = _register_lane_swap(rng, src)
        else:
            dst = random_distributed_layout(rng, shape, lane_bits=lane_bits, warp_bits=warp_bits)
        yield src, dst, WIDTHS[i // 12 % 4]


def _emit_step(plan: ConversionPlan) -> list[str]:
    """The lines codegen emits for ``plan``'s step, between the packings the step asks for (natural
    where it has no preference)."""
    step = step_from_plan(plan)
    w = plan.bitwidth // 8
    fin, fout = step.packings()
    pin = fin[0] if fin else Packing.natural(w, plan.src.in_dim_size_log2("register"))
    pout = fout[0] if fout else Packing.natural(w, plan.dst.in_dim_size_log2("register"))
    return step.emit_words("a", "b", pin, pout, Emission("t"))


def agree(src: LinearLayout, dst: LinearLayout, bits: int, target: Target) -> tuple[str, object]:
    """Check the rule on one request: ``("refused", None)``, ``(plan kind, None)`` or, where a kernel was
    emitted, ``(plan kind, KernelSource)``."""
    lanes = src.in_dim_size("lane")
    crosses = cv.conversion_dims(src, dst) not in ((), ("register",))
    try:
        plan = cv.plan_conversion(src, dst, bits, target=target)
    except LayoutError as error:
        assert crosses and lanes != target.lanes, (str(error), target.arch, src, dst, bits)
        assert re.match(rf"src: needs a 'lane' in dim of size {target.lanes} \(one {target.arch} "
                        rf"(warp|wavefront)\) to move data between lanes; src and dst have {lanes} lanes", str(error))
        return "refused", None
    kind = plan.kind
    assert (kind in REGISTER_ONLY) == (not crosses), (kind, target.arch, src, dst)
    assert kind in REGISTER_ONLY or plan.src.in_dim_size("lane") == target.lanes, (kind, lanes, target.arch, src, dst)
    if target.backend != "cuda":
        with pytest.raises(LayoutError, match=f"^target: codegen emits CUDA; {target.arch} is an AMD target"):
            conversion_kernel(src, dst, bits, target=target)
        if kind in REGISTER_ONLY:
            assert _emit_step(plan) is not None
        return kind.value, None
    assert _emit_step(plan) is not None
    if lanes != 32:  # register-only (asserted above): the step runs, the kernel's global accesses need a warp
        return kind.value, None
    return kind.value, conversion_kernel(src, dst, bits, target=target)


def _outcomes(n: int, seed: int) -> collections.Counter:
    seen: collections.Counter = collections.Counter()
    for src, dst, bits in random_pairs(n, seed):
        for target in TARGETS:
            kind, _ = agree(src, dst, bits, target)
            seen[target.arch, src.in_dim_size("lane"), kind] += 1
    return seen


def test_random_pairs_are_refused_or_emitted():
    """120 pairs x 3 targets: every plan returned is emitted; the set has refusals (16 and 64 lanes on
    NVIDIA, 16 and 32 on gfx942), register plans of every lane count on every target, and shuffles and
    shared-memory plans of 32 lanes on NVIDIA and of 64 on gfx942."""
    seen = _outcomes(120, seed=20261201)
    for arch, lanes in (("sm_90", 16), ("sm_90", 64), ("sm_80", 16), ("gfx942", 16), ("gfx942", 32)):
        assert seen[arch, lanes, "refused"] >= 5, (arch, lanes, seen)
    for arch in ("sm_90", "sm_80", "gfx942"):
        for lanes in (16, 32, 64):
            assert seen[arch, lanes, "register permutation"] >= 3, (arch, lanes, seen)
    assert seen["sm_90", 32, "warp shuffle"] >= 1 and seen["sm_80", 32, "warp shuffle"] >= 1, seen
    for arch, lanes in (("sm_90", 32), ("sm_80", 32), ("gfx942", 64)):
        assert seen[arch, lanes, "shared memory"] >= 5, (arch, lanes, seen)
    assert not any(kind in ("warp shuffle", "shared memory") and lanes != {"gfx942": 64}.get(arch, 32)
                   for arch, lanes, kind in seen), seen


def test_the_register_lane_exchange_of_other_warps_has_no_plan():
    """§5.4's register <-> lane swap on 64-lane (and 16-lane) layouts: sm_90 has no plan for it (a shuffle of
    64 lanes would name lanes its warps lack) and says so; gfx942 plans the 64-lane one through LDS."""
    for lane_bits in (4, 6):
        src = LinearLayout({"register": [[1], [2]], "lane": [[4 << i] for i in range(lane_bits)]}, ["dim0"])
        bases = src.bases
        bases["register"][0], bases["lane"][0] = bases["lane"][0], bases["register"][0]
        dst = LinearLayout(bases, src.out_dims)
        lanes = 1 << lane_bits
        hint = " (pass an AMD target for 64-lane layouts)" if lanes == 64 else ""
        with pytest.raises(LayoutError, match="needs a 'lane' in dim of size 32") as refused:
            cv.plan_conversion(src, dst, 32)
        assert str(refused.value) == ("src: needs a 'lane' in dim of size 32 (one sm_90 warp) to move data between "
                                      f"lanes; src and dst have {lanes} lanes a warp{hint}")
    assert cv.plan_conversion(src, dst, 32, target=named_target("gfx942")).kind is ConversionKind.SHARED_MEMORY


def test_a_sample_of_the_kernels_is_correct_on_the_emulator():
    """The first kernels of each plan kind (32 lanes, NVIDIA) run on the CPU: every element arrives."""
    if find_cxx() is None:
        pytest.skip("no C++20 compiler")
    sample: dict[str, list] = collections.defaultdict(list)
    for src, dst, bits in random_pairs(48, seed=7):
        if src.in_dim_size("lane") != 32:
            continue
        kind, kernel = agree(src, dst, bits, TARGETS[0])
        if kernel is not None and len(sample[kind]) < 2:
            sample[kind].append(kernel)
    assert {"register permutation", "warp shuffle", "shared memory"} <= set(sample), sorted(sample)
    for kind, kernels in sample.items():
        for kernel in kernels:
            assert emulate_check(kernel, tiles=1, iterations=1, seed=kernel.element_bytes) == 0, (kind, kernel.name)
