"""Lower bounds for the engine's search (``propagate``): enough to settle most of its choices without
planning every conversion, or walking every recomputation, that the exhaustive search prices.

The backward pass and the merge of the forward pass compare the cost ``V`` of having a value in a layout
(converting it, or recomputing its definition there with its operands planned in turn, the cheapest)
with a threshold (a direct conversion's cost, a store alternative's). Where a lower bound of ``V`` is
already at least the threshold, the choice is the one the exact ``V`` would give, and ``V`` is not needed.

* ``plan_cost_bound(src, dst, bits)``: a lower bound of ``propagate.plan_cost`` from the bytes the
  conversion moves and the cost model's cheapest wavefront, shuffle and latency: ``0.5`` (the convert
  op's overhead) for a register permutation, else the cheaper of shared memory (every byte stored and
  loaded once, 128 bytes a wavefront) and, within a warp, one shuffle, plus ``0.5``.
* ``CostBounds.at_least(key, bound)``: whether ``V(key) >= bound`` follows from lower bounds. A plan's
  cost is the sum of its nodes' own costs (a shared node once), so it is at least its own node's cost plus
  any one operand's plan (its non-negative part; a moved load may cost less than nothing, the caller adds
  those: ``moved_region``); the cost of having a value is the least of converting it (``plan_cost_bound``,
  else its exact cost) and recomputing it.

>>> from linear_layouts import LinearLayout
>>> a = LinearLayout({"register": [[1]], "lane": [[2], [4], [8], [16], [32]]}, ["dim0"])
>>> b = LinearLayout({"register": [[32]], "lane": [[1], [2], [4], [8], [16]]}, ["dim0"])
>>> plan_cost_bound(a, a, 32), plan_cost_bound(a, b, 32) > 0.5
(0.0, True)
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout
from linear_layouts.target import Target, resolve

__all__ = ["CONVERT_OVERHEAD", "plan_cost_bound", "CostBounds", "GiveUp"]

#: Fixed cost of a convert op on top of its plan (model): equal-cost choices prefer no conversion
#: (``propagate.plan_cost`` adds it).
CONVERT_OVERHEAD = 0.5


@functools.lru_cache(maxsize=8192)
def plan_cost_bound(src: LinearLayout, dst: LinearLayout, bits: int, target: Target | None = None) -> float:
    """A lower bound of ``plan_cost(src, dst, bits)``: 0 for equal layouts; ``CONVERT_OVERHEAD`` plus, where
    data crosses lanes or warps (``conversion_dims``), the least of

    * shared memory: ``max(S * t_wavefront + L * min(t_wavefront, t_copied), latency_shared / C)`` with
      ``S = L = bytes / 128`` (every byte is stored once and loaded at least once);
    * a warp shuffle (only where no data crosses warps): ``max(W * t_shfl, (latency_shuffle +
      latency_per_instruction) / C)`` (at least one ``shfl.sync`` per thread).

    The constants are ``target``'s cost table (None: the default target's); a wavefront moves at most its
    shared memory's ``phase_bytes``. Any layout pair the analyses refuse costs ``plan_cost``'s 1e6, above
    every bound.

    >>> from linear_layouts import LinearLayout
    >>> a = LinearLayout({"register": [[1]], "lane": [[2], [4], [8], [16], [32]], "warp": [[64]]}, ["dim0"])
    >>> b = LinearLayout({"register": [[64]], "lane": [[2], [4], [8], [16], [32]], "warp": [[1]]}, ["dim0"])
    >>> round(plan_cost_bound(a, b, 32), 3)  # 512 bytes: 4 + 4 wavefronts, or the latency floor
    5.5
    """
    if src == dst:
        return 0.0
    try:
        return CONVERT_OVERHEAD + _moving_bound(src, dst, bits, resolve(target))
    except (LayoutError, KeyError, ValueError, ZeroDivisionError):
        return CONVERT_OVERHEAD


def _moving_bound(src: LinearLayout, dst: LinearLayout, bits: int, target: Target) -> float:
    from linear_layouts.analysis import cost_model
    from linear_layouts.analysis.conversion import conversion_dims
    from linear_layouts.analysis.shuffles import same_warp_data

    dims = conversion_dims(src, dst)
    if dims in ((), ("register",)):
        return 0.0
    d = cost_model.device_costs(target)
    warps = 1
    for name in ("warp", "block"):
        if src.has_in_dim(name):
            warps *= src.in_dim_size(name)
    wavefronts = math.ceil(src.total_out_dim_size * bits / 8 / target.shared.phase_bytes)
    t_wavefront = d.at(d.wavefront, warps)
    t_load = min(t_wavefront, d.at(d.copied_wavefront, warps))
    shared = max(wavefronts * t_wavefront + wavefronts * t_load, d.latency_shared / d.concurrent_ctas)
    if "warp" in dims or "block" in dims or not same_warp_data(src, dst):
        return shared
    w = src.in_dim_size("warp") if src.has_in_dim("warp") else 1
    shuffle = max(w * d.at(d.shfl, w), (d.latency_shuffle + d.latency_per_instruction) / d.concurrent_ctas)
    return min(shared, shuffle)


class GiveUp(Exception):
    """The bound search ran past its limits: the caller decides by the exhaustive search."""


class CostBounds:
    """Lower bounds of the cost ``V(key)`` of having ``%vid`` in ``target`` (``key = (vid, target,
    movable)``), as ``propagate._plan`` defines it, in the plans reachable from ``top``, for one state of
    the program (module doc).

    ``expand(key)``: ``propagate._expand`` of the key (``steps``: a cache of its answers, shareable between
    instances on the same state); ``reused(vid, target)``: the value is there already (its layout, or an
    existing conversion: cost 0); ``direct(vid, target)``: the exact conversion cost; ``direct_bound(vid,
    target)``: a lower bound of it; ``convert``: conversions are allowed (else ``V`` is the recomputation's
    cost alone). At construction the moved region of ``top`` is walked (``negative``: the sum of its
    negative own costs, ``deepest``: its greatest depth below ``top``); a plan from ``top`` costs at least
    ``negative`` plus what ``at_least`` proves. ``max_steps`` expansions, ``max_depth`` nested keys and
    ``max_region`` moved keys at most, else ``GiveUp``.
    """

    def __init__(self, top: tuple, expand: Callable[[tuple], tuple], reused: Callable[[int, LinearLayout], bool],
                 direct: Callable[[int, LinearLayout], float], direct_bound: Callable[[int, LinearLayout], float],
                 convert: bool, steps: dict | None = None, max_steps: int = 20000, max_depth: int = 200,
                 max_region: int = 400):
        self.expand, self.reused, self.direct, self.direct_bound = expand, reused, direct, direct_bound
        self.convert = convert
        self.max_steps, self.max_depth = max_steps, max_depth
        self.steps = 0
        self._steps: dict[tuple, tuple] = {} if steps is None else steps
        self._known: dict[tuple, tuple[float, float]] = {}  # key -> (largest bound proven, least bound refuted)
        self.moved: dict[tuple, float] = {}  # (vid, target) of each moved op of the region -> its own cost
        self.negative, self.deepest = self._moved_region(top, max_region)

    def step(self, key: tuple) -> tuple:
        """``expand(key)``, once per key."""
        found = self._steps.get(key)
        if found is None:
            self.steps += 1
            if self.steps > self.max_steps:
                raise GiveUp(f"more than {self.max_steps} keys")
            found = self._steps[key] = self.expand(key)
        return found

    def _moved_region(self, top: tuple, limit: int) -> tuple[float, int]:
        """The keys the search reaches with ``movable`` from ``top`` (through moved ops only: a tree of
        single-use values, each reached once): the sum of their negative own costs (moved loads re-laid
        for less than they cost now; only there is an own cost negative) and their greatest depth."""
        negative, deepest, stack, seen = 0.0, 0, [(top, 0)], set()
        while stack:
            key, depth = stack.pop()
            if key in seen:
                continue
            seen.add(key)
            if len(seen) > limit:
                raise GiveUp(f"a moved region of more than {limit} keys")
            deepest = max(deepest, depth)
            if depth > 0 and self.reused(key[0], key[1]):
                continue
            step = self.step(key)
            if step[0] != "op" or not step[1]:
                continue
            self.moved[key[:2]] = step[2]
            negative += min(step[2], 0.0)
            stack.extend(((o, t, True), depth + 1) for o, t in step[3])
        return negative, deepest

    def at_least(self, key: tuple, bound: float, depth: int = 0) -> bool:
        """Whether ``V(key) >= bound`` is proven for the non-negative parts of the own costs (add
        ``negative`` for ``V`` itself). False: not proven (``V`` may still be that much)."""
        if bound <= 0.0:
            return True
        proven, refuted = self._known.get(key, (-math.inf, math.inf))
        if bound <= proven:
            return True
        if bound >= refuted:
            return False
        vid, target, _ = key
        if self.reused(vid, target):
            ok = False
        elif self.convert and not (self.direct_bound(vid, target) >= bound or self.direct(vid, target) >= bound):
            ok = False
        else:
            ok = self.recompute_at_least(key, bound, depth)
        proven, refuted = self._known.get(key, (-math.inf, math.inf))
        self._known[key] = (max(proven, bound), refuted) if ok else (proven, min(refuted, bound))
        return ok

    def recompute_at_least(self, key: tuple, bound: float, depth: int = 0) -> bool:
        """Whether recomputing ``key``'s definition (its own cost and its operands' plans) costs at least
        ``bound`` (non-negative parts), proven; an impossible recomputation costs infinitely much. A node
        counted once in a plan is counted at the least own cost of its moved and unmoved forms."""
        if bound <= 0.0:
            return True
        if depth > self.max_depth:
            raise GiveUp(f"deeper than {self.max_depth} keys")
        step = self.step(key)
        kind = step[0]
        if kind == "none":
            return True
        if kind == "free":
            return False
        if kind == "bypass":
            return self.at_least((step[2], key[1], False), bound, depth + 1)
        _, moved, own, operands = step
        own = min(own, self.moved.get(key[:2], own))
        need = bound - max(own, 0.0)
        if need <= 0.0:
            return True
        return any(self.at_least((o, t, moved), need, depth + 1) for o, t in operands)
