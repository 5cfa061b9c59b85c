"""The layout engine (paper §4.4): anchors, a forward pass, conversions, backward rematerialization.

1. *Anchors*: pointer tensors (and so loads / stores) get coalesced blocked layouts, dots an mma
   accumulator and dot-operand layouts; ``arange`` / ``full`` a default blocked layout.
2. *Forward*: in program order each op's result layout follows from its operands' by the transfer
   functions (shape ops and reductions are no-ops, Thm 9.3); an elementwise op whose operands disagree
   takes the candidate with the cheapest total conversion cost (``cost_fn``, by default the analyses'
   ``plan_conversion`` cost); a ``convert_layout`` is inserted for every operand whose layout is not
   the one its op needs.
3. *Backward*: each conversion ``x -> R`` is compared with rematerializing ``x``'s definition chain
   in ``R`` (backward transfer through shape / elementwise ops, reloading in ``R``, recreating
   ``arange`` / ``full`` / pointer tensors for free, or converting earlier, whichever is cheapest per
   node), and for a stored value with re-laying the store's pointer tensor. A conversion between
   equal LinearLayouts is a no-op and disappears, whatever descriptors produced the two layouts.

The result gives every value's LinearLayout, a matching catalog descriptor where one exists
(else a ``DistributedLinearLayout``), and each remaining conversion with its plan and cost.

>>> from linear_layouts.engine.ir import Builder
>>> b = Builder(num_warps=4)
>>> x = b.load(b.pointer("x", [32, 32], "fp16"))
>>> b.store(b.pointer("y", [32, 32], "fp16"), b.trans(x, [1, 0]))  # a real transpose: one conversion
>>> [c.plan.kind.value for c in propagate(b.build()).conversions]
['shared memory']
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from linear_layouts.analysis.conversion import ConversionPlan, plan_conversion
from linear_layouts.layouts import SliceLayout
from linear_layouts.layouts.recognize import recognize
from linear_layouts.engine import anchors as anchor_rules
from linear_layouts.engine.bounds import CONVERT_OVERHEAD, CostBounds, GiveUp, plan_cost_bound
from linear_layouts.engine import transfer
from linear_layouts.engine.ir import SHAPE_OPS, Op, Program, Value, element_bits
from linear_layouts.core.arguments import checked
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout
from linear_layouts.core.limits import MAX_ELEMENTS, check_count, quote
from linear_layouts.target import DEFAULT_TARGET, Target, resolve

__all__ = [
    "CONVERT_OVERHEAD", "ELEMENTWISE_COST", "Conversion", "EngineResult", "CostFunction",
    "plan_cost", "plan_cost_on", "propagate", "propagate_runs", "naive_conversions", "check_consistent", "describe",
]

#: Cost per register per thread of recomputing an elementwise op or a reduction in a clone (model).
ELEMENTWISE_COST = 0.25
FREE_OPS = ("pointer", "arange", "full")
CostFn = Callable[[LinearLayout, LinearLayout, int], float]


@dataclass(frozen=True)
class CostFunction:
    """A conversion cost ``cost(src, dst, bits)`` (called as the value itself) with ``floor``: a lower
    bound of it on two different layouts (``-inf``: none known), and ``bound``: a cheaper function that
    bounds it from below on every pair (``None``: none known; then ``cost`` must also be a pure function:
    ``propagate`` asks it in another order, or not at all, where the bounds settle a choice).
    ``propagate`` does not ask a direct conversion's cost where a rematerialization is already cheaper
    than ``floor``, nor plan a whole rematerialization where the bounds show it costs more than the
    alternative (same choices).

    >>> CostFunction(lambda src, dst, bits: 1.0, floor=0.5).floor
    0.5
    """

    cost: CostFn
    floor: float = -math.inf
    bound: CostFn | None = None

    def __post_init__(self) -> None:
        if not callable(self.cost):
            raise LayoutError(f"cost: must be callable (src, dst, bits) -> float, got {quote(self.cost)}")
        if isinstance(self.floor, bool) or not isinstance(self.floor, (int, float)):
            raise LayoutError(f"floor: must be a number, got {quote(self.floor)}")
        if self.bound is not None and not callable(self.bound):
            raise LayoutError(f"bound: must be None or callable (src, dst, bits) -> float, got {quote(self.bound)}")

    def __call__(self, src: LinearLayout, dst: LinearLayout, bits: int) -> float:
        return self.cost(src, dst, bits)


@functools.lru_cache(maxsize=16384)
def _plan_cost(src: LinearLayout, dst: LinearLayout, bits: int, target: Target | None = None) -> float:
    """``plan_cost`` of checked arguments on ``target``, cached (the engine asks one pair many times)."""
    if src == dst:
        return 0.0
    try:
        return plan_conversion(src, dst, bits, target=target).cost.total + CONVERT_OVERHEAD
    except LayoutError:
        return 1e6


#: Plans cost at least nothing, so two different layouts cost at least the convert op's overhead.
@functools.partial(CostFunction, floor=CONVERT_OVERHEAD, bound=plan_cost_bound)
@checked
def plan_cost(src: LinearLayout, dst: LinearLayout, bits: int) -> float:
    """The analyses' cost of converting ``src -> dst`` plus ``CONVERT_OVERHEAD`` (0 when equal); a
    ``CostFunction`` whose ``floor`` is ``CONVERT_OVERHEAD`` and ``bound`` ``bounds.plan_cost_bound``.
    On the default target (``plan_cost_on``: another)."""
    return _plan_cost(src, dst, bits)


@functools.lru_cache(maxsize=16)
def plan_cost_on(target: Target | None) -> CostFunction:
    """``plan_cost`` on ``target`` (its plans and cost table, its bound); ``plan_cost`` itself for the
    default target."""
    if target is None or resolve(target) is DEFAULT_TARGET:
        return plan_cost
    target = resolve(target)
    return CostFunction(functools.partial(_plan_cost, target=target), floor=CONVERT_OVERHEAD,
                        bound=functools.partial(plan_cost_bound, target=target))


@dataclass(frozen=True)
class Conversion:
    """A ``convert_layout`` left in the program: ``%value`` (in ``src``) to ``%result`` (in ``dst``)."""

    value: int
    result: int
    src: LinearLayout
    dst: LinearLayout
    dtype: str
    plan: ConversionPlan | None
    cost: float


@dataclass(frozen=True)
class EngineResult:
    """The engine's answer: the program with its conversions, each value's layout and descriptor."""

    program: Program
    layouts: Mapping[int, LinearLayout]
    descriptors: Mapping[int, Any]
    conversions: tuple[Conversion, ...]
    #: each live value the backward pass made by recomputing an op in another layout -> the value of
    #: ``program`` (the input's) it recomputes, through clones of clones; that value may be dead now
    #: (``%24 = load %23`` recomputing ``%10`` for its only use: ``%10`` is gone, ``%24`` holds its data)
    recomputes: Mapping[int, int] = field(default_factory=dict)

    @property
    def total_cost(self) -> float:
        return sum(c.cost for c in self.conversions)

    def to_text(self) -> str:
        """The program with each value's layout (descriptor) and the conversions with their plans."""
        def name(layout: LinearLayout) -> str:
            for vid, lay in self.layouts.items():
                if lay == layout:
                    return _descriptor_text(self.descriptors[vid])
            return "?"

        text = self.program.to_text(self.layouts, name)
        lines = [text, f"conversions: {len(self.conversions)}"]
        for c in self.conversions:
            kind = c.plan.kind if c.plan else "?"
            lines.append(f"  %{c.value} -> %{c.result}: {kind}, cost {c.cost:.2f}")
        return "\n".join(lines)


def _descriptor_text(desc: Any) -> str:
    text = repr(desc)
    return text.replace("cga_layout=()", "").replace(", )", ")")


# --------------------------------------------------------------------------------------------------
# working state
# --------------------------------------------------------------------------------------------------
class _State:
    def __init__(self, program: Program, cost_fn: CostFn, target: Target | None = None):
        self.program = program
        self.target = target  # the target of the plans and the global-memory costs (None: the default)
        self.ops: list[Op] = []
        self.values: dict[int, Value] = dict(program.values)
        self.layout: dict[int, LinearLayout] = {}
        self.cost_fn = cost_fn
        #: a lower bound of ``cost_fn`` on two different layouts (``-inf`` where unknown)
        self.cost_floor = cost_fn.floor if isinstance(cost_fn, CostFunction) else -math.inf
        #: a lower bound of ``cost_fn`` on every pair (``None``: unknown, every choice by the exhaustive search)
        self.cost_bound = cost_fn.bound if isinstance(cost_fn, CostFunction) else None
        self._cost = _plan_cost if cost_fn is plan_cost else cost_fn  # plan_cost's checks done once, here
        self.descriptors: list[Any] = []
        self.next_id = max(self.values, default=-1) + 1
        self.legacy = False
        #: ``naive_conversions(program)``, counted by a legacy run with ``plan_cost`` after its forward pass
        self.naive_conversions: int | None = None
        self._default: dict[tuple[int, ...], tuple[Any, LinearLayout]] = {}
        self._bits: dict[str, int] = {}  # bits' answers by dtype
        results = [r for op in program.ops for r in op.results]
        self._single_definitions = len(set(results)) == len(results)
        self._def_at: dict[int, int] = {}  # def_index's last answers (single definitions only)
        self._op_at: dict[int, int] = {}  # position's last answers for ops without results, by id
        self._drift = 0  # how far the last op _find looked for had moved
        self.recomputes: dict[int, int] = {}  # a clone's result -> the value its op recomputes
        #: ``_flags``' answers, valid in the forward pass (which only appends ops)
        self.flags: dict[int, tuple[bool, bool]] = {}
        # indexes of ``ops`` that do not depend on positions, kept up to date by every change of ``ops``
        # (``add_op``, ``set_op``, ``replace_uses``, ``remove_ops``, ``remove_dead``): a question about them
        # is no scan of the ops
        self.use_count: dict[int, int] = {}  # value -> its uses as an operand (an op using it twice: 2)
        self.converts: dict[int, dict[int, None]] = {}  # value -> the results of its convert_layout ops
        self.defining: dict[int, Op] = {}  # value -> the op in ``ops`` defining it (single definitions)
        self.users_of: dict[int, dict[int, Op]] = {}  # value -> the ops using it (by id), in no order
        self._unused: set[int] = set()  # values whose uses fell to 0 (or started there): remove_dead's seeds
        self._swept = False  # remove_dead has looked at every op once

    def default_blocked(self, shape: tuple[int, ...]) -> tuple[Any, LinearLayout]:
        """``anchors.default_blocked_layout`` of ``shape`` (this program's warps) and its layout, once per shape."""
        if shape not in self._default:
            self._default[shape] = _default_blocked(shape, self.program.num_warps, self.program.threads_per_warp)
        return self._default[shape]

    def new_value(self, like: int) -> int:
        v = self.values[like]
        vid = self.next_id
        self.next_id += 1
        self.values[vid] = Value(vid, v.shape, v.dtype)
        return vid

    def def_index(self, vid: int) -> int:
        """The index in ``ops`` of the op defining ``vid`` (the first, should a malformed program define
        it twice). Where each value has one definition (the program's results are distinct; the passes
        only add fresh values), the index found last time is the answer while that op is still there:
        the forward pass only appends, and asks for the same definitions again and again (a 900-op
        program asked 470k times, each a scan of the ops); where ops were inserted or removed since, the
        op (``defining``) is looked for outwards from there, not from the start."""
        i = self._def_at.get(vid)
        if i is not None and i < len(self.ops) and vid in self.ops[i].results:
            return i
        op = self.defining.get(vid) if self._single_definitions else None
        if i is not None and op is not None:  # moved by the ops inserted or removed since: look near it
            j = self._find(op, i)
            if j is not None:
                self._def_at[vid] = j
                return j
        for i, op in enumerate(self.ops):
            if vid in op.results:
                if self._single_definitions:
                    self._def_at[vid] = i
                return i
        raise LayoutError(f"value %{vid} has no definition")

    def _find(self, op: Op, i: int) -> int | None:
        """The index of ``op`` (this object) in ``ops``, last seen at ``i``, or None: looked for outwards
        from ``i`` and, alternately, from ``i`` moved as far as the last op found far from its old place
        (``_drift``: ops inserted or removed before a stretch of the program move all of it alike, so the
        next op asked for there has most often moved as much)."""
        ops, n = self.ops, len(self.ops)
        shifted = i + self._drift
        for d in range(n + abs(self._drift)):
            for j in (i + d, i - d, shifted + d, shifted - d):
                if 0 <= j < n and ops[j] is op:
                    if abs(j - i) > 1:
                        self._drift = j - i
                    return j
        return None

    def definition(self, vid: int) -> Op:
        """The op defining ``%vid`` (``ops[def_index(vid)]``; where each value has one definition, read
        from ``defining`` without a look at the ops)."""
        if self._single_definitions:
            op = self.defining.get(vid)
            if op is not None:
                return op
        return self.ops[self.def_index(vid)]

    def users(self, vid: int) -> list[Op]:
        """The op of each use of ``%vid``, in program order (an op using it twice: twice); from
        ``users_of``, the ops put in order by a scan only where there are several."""
        ops = list(self.users_of.get(vid, {}).values())
        if len(ops) > 1:
            where = {id(op): i for i, op in enumerate(self.ops)}
            ops.sort(key=lambda op: where[id(op)])
        return [op for op in ops for o in op.operands if o == vid]

    def position(self, op: Op) -> int:
        """The index of ``op`` (this object) in ``ops``: ``def_index`` of its first result; an op without
        results (a store) where it was last found, else near there (``_find``), else by a scan."""
        if op.results and self._single_definitions:
            return self.def_index(op.results[0])
        i = self._op_at.get(id(op))
        if i is not None:
            j = i if i < len(self.ops) and self.ops[i] is op else self._find(op, i)
            if j is not None:
                self._op_at[id(op)] = j
                return j
        j = next(i for i, other in enumerate(self.ops) if other is op)
        self._op_at[id(op)] = j
        return j

    def _index(self, op: Op, sign: int) -> None:
        """``op`` counted in (``sign`` 1) or out of (-1) ``use_count``, ``users_of``, ``converts`` and ``defining``."""
        for o in op.operands:
            count = self.use_count.get(o, 0) + sign
            self.use_count[o] = count
            if count == 0:
                self._unused.add(o)
            if sign > 0:
                self.users_of.setdefault(o, {})[id(op)] = op
            else:
                self.users_of.get(o, {}).pop(id(op), None)
        if op.kind == "convert_layout":
            if sign > 0:
                self.converts.setdefault(op.operands[0], {})[op.results[0]] = None
            else:
                self.converts.get(op.operands[0], {}).pop(op.results[0], None)
        for r in op.results:
            if sign > 0:
                self.defining[r] = op
                if not self.use_count.get(r):
                    self._unused.add(r)
            elif self.defining.get(r) is op:
                del self.defining[r]

    def add_op(self, op: Op, at: int | None = None) -> None:
        """``op`` inserted at index ``at`` (default: appended)."""
        at = len(self.ops) if at is None else at
        self.ops.insert(at, op)
        self._index(op, 1)
        if self._single_definitions:  # where def_index looks first
            self._def_at.update(dict.fromkeys(op.results, at))

    def set_op(self, index: int, op: Op) -> None:
        """The op at ``index`` replaced by ``op``."""
        self._index(self.ops[index], -1)
        self.ops[index] = op
        self._index(op, 1)

    def pop_op(self, index: int) -> Op:
        """The op at ``index``, removed."""
        op = self.ops.pop(index)
        self._index(op, -1)
        return op

    def remove_ops(self, gone: Callable[[Op], bool]) -> None:
        """The ops for which ``gone(op)`` holds removed."""
        keep = []
        for op in self.ops:
            if gone(op):
                self._index(op, -1)
            else:
                keep.append(op)
        self.ops = keep

    def converted(self, vid: int, target: LinearLayout) -> bool:
        """Whether a ``convert_layout`` of ``%vid`` to ``target`` is in ``ops`` (``converts``)."""
        return any(self.layout[r] == target for r in self.converts.get(vid, ()))

    def bits(self, vid: int) -> int:
        dtype = self.values[vid].dtype
        bits = self._bits.get(dtype)
        if bits is None:
            bits = self._bits[dtype] = element_bits(dtype)
        return bits

    def cost(self, vid: int, target: LinearLayout) -> float:
        return self._cost(self.layout[vid], target, self.bits(vid))

    def direct_bound(self, vid: int, target: LinearLayout) -> float:
        """``cost_bound`` of converting ``%vid`` to ``target`` (requires one)."""
        return self.cost_bound(self.layout[vid], target, self.bits(vid))

    def reused(self, vid: int, target: LinearLayout) -> bool:
        """``%vid`` is in ``target`` already, or converted to it: ``_plan``'s cost 0 without a search."""
        return self.layout[vid] == target or self.converted(vid, target)

    def bounds(self, top: tuple, convert: bool, steps: dict) -> CostBounds:
        """``bounds.CostBounds`` of the plans from ``top`` in this state (``steps``: ``_expand``'s answers)."""
        return CostBounds(top, lambda key: _expand(self, *key), self.reused, self.cost, self.direct_bound, convert,
                          steps)

    def convert(self, vid: int, target: LinearLayout, at: int | None = None) -> int:
        """Insert ``convert_layout %vid -> target`` (after the definition, or at index ``at``)."""
        out = self.new_value(vid)
        self.layout[out] = target
        op = Op("convert_layout", (vid,), (out,), (("target", target),))
        self.add_op(op, self.def_index(vid) + 1 if at is None else at)
        return out

    def replace_uses(self, old: int, new: int) -> None:
        """Every use of ``%old`` made a use of ``%new``: only its users (``users_of``) are looked at and rebuilt
        (the backward pass replaces a use per conversion it removes; rebuilding, then scanning, every op
        made that a quadratic share of a long program's time)."""
        for op in list(self.users_of.get(old, {}).values()):
            self.set_op(self.position(op), Op(op.kind, tuple(new if o == old else o for o in op.operands), op.results,
                                              op.attrs))

    def remove_dead(self) -> None:
        """Every op but a store whose results are all unused removed, to a fixed point (a store and what it
        uses stay). A worklist from the values whose uses fell to 0 since the last call (``_unused``; the
        first call looks at every op): a removed conversion is no pass over the whole program per op it
        makes dead. The same ops go as by removing the dead ones round by round (removing only lowers uses)."""
        if not self._single_definitions:  # a value defined twice: the rule, round by round
            while True:
                used = {o for op in self.ops for o in op.operands}
                before = len(self.ops)
                self.remove_ops(lambda op: op.kind != "store" and not any(r in used for r in op.results))
                if len(self.ops) == before:
                    return
        dead: dict[int, Op] = {}
        if not self._swept:  # every op once, those without results too
            self._swept = True
            for op in self.ops:
                if op.kind != "store" and not op.results:
                    dead[id(op)] = op
                    self._index(op, -1)
        while self._unused:
            op = self.defining.get(self._unused.pop())
            if op is None or op.kind == "store" or any(self.use_count.get(r) for r in op.results):
                continue
            dead[id(op)] = op
            self._index(op, -1)  # its operands' uses fall: their definitions may be dead now
        if len(dead) > 8:
            self.ops = [op for op in self.ops if id(op) not in dead]
        elif dead:  # a few: each popped where it is (found near its last known place), last first
            for index in sorted((self._place(op) for op in dead.values()), reverse=True):
                self.ops.pop(index)

    def _place(self, op: Op) -> int:
        """The index of ``op`` (this object), an op no longer indexed (``_index``), in ``ops``: where
        ``def_index`` or ``position`` last found it, else near there (``_find``), else by a scan."""
        i = self._def_at.get(op.results[0]) if op.results else self._op_at.get(id(op))
        if i is not None:
            j = i if i < len(self.ops) and self.ops[i] is op else self._find(op, i)
            if j is not None:
                return j
        return next(i for i, other in enumerate(self.ops) if other is op)


def _registers(layout: LinearLayout) -> int:
    return layout.in_dim_size("register")


def _shape(state: _State, vid: int) -> tuple[int, ...]:
    return state.values[vid].shape


# --------------------------------------------------------------------------------------------------
# forward pass
# --------------------------------------------------------------------------------------------------
def _pointer_attrs(state: _State, ptr: int) -> Op:
    op = state.definition(ptr)
    while op.kind != "pointer":  # through clones / conversions of the pointer tensor
        op = state.definition(op.operands[0])
    return op


def _forward(state: _State) -> None:
    program = state.program
    nw, tpw = program.num_warps, program.threads_per_warp
    subst: dict[int, int] = {}
    for op in program.ops:
        op = Op(op.kind, tuple(subst.get(o, o) for o in op.operands), op.results, op.attrs)
        kind, attrs = op.kind, dict(op.attrs)
        required: dict[int, LinearLayout] = {}
        results: list[LinearLayout] = []
        shape = _shape(state, op.results[0]) if op.results else None
        if kind == "pointer" and not state.legacy:
            desc = _coalesced(shape, tuple(attrs["strides"]), attrs["element"], nw, tpw, attrs.get("align", 16))
            state.descriptors.append(desc)
            results = [transfer.descriptor_layout(desc, shape)]
        elif kind in ("arange", "full", "pointer"):
            desc, layout = state.default_blocked(shape)
            state.descriptors.append(desc)
            results = [layout]
        elif kind in ("load", "store"):
            ptr_layout = state.layout[op.operands[0]]
            required = {k: ptr_layout for k in range(1, len(op.operands))}
            results = [ptr_layout] if kind == "load" else []
        elif kind in ("elementwise",):
            target = _merge(state, list(op.operands))
            required = dict.fromkeys(range(len(op.operands)), target)
            results = [target]
        elif kind == "cast":
            results = [state.layout[op.operands[0]]]
        elif kind == "dot":
            results, required = _dot_anchor(state, op)
        elif kind in SHAPE_OPS or kind == "reduce":
            x = op.operands[0]
            if kind == "join":  # both halves in one layout, merged like an elementwise op
                target = _merge(state, list(op.operands))
                required = {0: target, 1: target}
                out = transfer.join_forward(target)
            else:
                out = _forward_transfer(kind, op.attrs, state.layout[x], shape)
            if out is None:  # split of a minor dim that is not in registers: put it there first
                need = transfer.join_forward(transfer.expand_dims_backward(
                    transfer.broadcast_backward(state.layout[x], _shape(state, x)[:-1] + (1,)), len(_shape(state, x)) - 1))
                required = {0: need}
                out = transfer.split_forward(need)
            results = [out] * len(op.results)
        elif kind == "gather":
            results = [state.layout[op.operands[1]]]
        elif kind == "convert_layout":
            target = transfer.standard_outs(attrs["target"])
            if "layout" in attrs and not isinstance(attrs["layout"], LinearLayout):
                state.descriptors.append(attrs["layout"])
            x = op.operands[0]
            if state.layout[x] == target:  # equal layouts: a no-op, whatever the descriptors
                subst[op.results[0]] = x
                continue
            op = Op(kind, op.operands, op.results, (("target", target),))
            results = [target]
        else:
            raise LayoutError(f"program: unknown op kind {quote(kind)}")
        operands = list(op.operands)
        for k, target in required.items():
            if state.layout[operands[k]] != target:
                operands[k] = state.convert(operands[k], target, at=len(state.ops))
        state.add_op(Op(kind, tuple(operands), op.results, op.attrs))
        for r, lay in zip(op.results, results):
            state.layout[r] = lay
            if state.legacy:  # the legacy engine: every value goes back to the default blocked layout
                default = state.default_blocked(_shape(state, r))[1]
                if lay != default:
                    subst[r] = state.convert(r, default, at=len(state.ops))
    state.flags.clear()  # valid while the pass only appends ops


@functools.lru_cache(maxsize=1024)
def _default_blocked(shape: tuple[int, ...], num_warps: int, threads_per_warp: int) -> tuple[Any, LinearLayout]:
    """``anchors.default_blocked_layout`` of ``shape`` and its layout, cached (pure; each run asks it per value)."""
    desc = anchor_rules.default_blocked_layout(shape, num_warps, threads_per_warp)
    return desc, transfer.descriptor_layout(desc, shape)


@functools.lru_cache(maxsize=1024)
def _coalesced(shape: tuple[int, ...], strides: tuple[int, ...], element: str, num_warps: int, threads_per_warp: int,
               align: int) -> Any:
    """``anchors.coalesced_layout``, cached (a pure function of its arguments; a program has few pointer shapes)."""
    return anchor_rules.coalesced_layout(shape, strides, element, num_warps=num_warps,
                                         threads_per_warp=threads_per_warp, align=align)


def _forward_transfer(kind: str, attrs: tuple, layout: LinearLayout, shape: tuple[int, ...]) -> LinearLayout | None:
    """``transfer.forward`` of a shape op or reduction, cached where its attributes are hashable."""
    try:
        return _cached_forward(kind, attrs, layout, shape)
    except TypeError:  # an attribute that is no hashable value
        return transfer.forward(kind, dict(attrs), [layout], shape)


@functools.lru_cache(maxsize=4096)
def _cached_forward(kind: str, attrs: tuple, layout: LinearLayout, shape: tuple[int, ...]) -> LinearLayout | None:
    return transfer.forward(kind, dict(attrs), [layout], shape)


def _with(operands: tuple[int, ...], required: dict[int, LinearLayout], state: _State) -> list[int]:
    operands = list(operands)
    for k, target in required.items():
        if state.layout[operands[k]] != target:
            operands[k] = state.convert(operands[k], target, at=len(state.ops))
    return operands


#: ops whose result is computed from their operands alone: ``_is_free`` and ``_from_load`` look through them
#: (``_flags``)
_THROUGH = ("elementwise", "cast", "convert_layout", *SHAPE_OPS)


def _flags(state: _State, vid: int) -> tuple[bool, bool]:
    """(``_is_free``, ``_from_load``) of ``%vid``, by the rule: an op of ``FREE_OPS`` is free, a load is from a
    load, an op of ``_THROUGH`` is free when all its operands are and from a load when one is; any other op
    is neither. Each value is answered once per forward pass (``state.flags``: the pass only appends ops,
    so a definition never changes there), its operands first, with a stack: a chain of element-wise ops as
    deep as the program is no recursion, and walked once, not once per op that uses it. E.g. ``exp(load)``:
    (False, True); ``arange + full``: (True, False)."""
    known = state.flags
    if vid in known:
        return known[vid]
    expanded: set[int] = set()
    stack = [vid]
    while stack:
        v = stack[-1]
        if v in known:
            stack.pop()
            continue
        op = state.definition(v)
        if op.kind in _THROUGH:
            pending = [o for o in op.operands if o not in known]
            if pending:
                if v in expanded:  # back with an operand still open: it depends on v
                    raise LayoutError(f"program: %{v} depends on itself through {op.kind} ops")
                expanded.add(v)
                stack.extend(reversed(pending))
                continue
            answers = [known[o] for o in op.operands]
            known[v] = (all(free for free, _ in answers), any(load for _, load in answers))
        else:
            known[v] = (op.kind in FREE_OPS, op.kind == "load")
        stack.pop()
    return known[vid]


def _is_free(state: _State, vid: int) -> bool:
    """Whether ``%vid`` is computed from constants alone: every definition it depends on through
    ``_THROUGH`` ops is one of ``FREE_OPS`` (``_flags``)."""
    return _flags(state, vid)[0]


def _from_load(state: _State, vid: int) -> bool:
    """Whether ``%vid`` depends on a load through ``_THROUGH`` ops (``_flags``)."""
    return _flags(state, vid)[1]


def _merge(state: _State, operands: list[int]) -> LinearLayout:
    """The candidate layout of an elementwise op: the operand layout of least total conversion cost
    (operands computed from constants alone are free to recreate and do not vote)."""
    voters = [o for o in operands if not _is_free(state, o)] or operands
    best, best_cost = None, math.inf
    # ties go to layouts loaded from memory (Triton favours blocked layouts for loads / stores)
    ranked = sorted(voters, key=lambda o: not _from_load(state, o))
    candidates = list(dict.fromkeys(state.layout[o] for o in ranked))
    # an operand is converted, or recomputed in the candidate where that needs no conversion (a
    # broadcast of a small load, ...), as the backward pass would; conversions inside a
    # recomputation are left to the backward pass (planning them here doubled the engine's time)
    costs = _merge_costs(state, voters, candidates)
    for candidate, cost in zip(candidates, costs):
        if cost < best_cost - 1e-9:
            best, best_cost = candidate, cost
    return best


def _merge_costs(state: _State, voters: list[int], candidates: list[LinearLayout]) -> list[float]:
    """Each candidate's total ``_converted_or_recomputed`` over ``voters``, in order, with one search memo.

    Where ``state.cost_bound`` is known, a term whose recomputation's lower bound (``bounds.CostBounds``)
    is at least ``floor`` and the conversion's cost is that cost, without the search: a search without
    conversions that finds a finite cost found the one plan with every operand, so it finds either
    infinity (its depth limit cut somewhere) or that plan's cost, at least the bound either way. The
    other terms are searched as ever while every term before them was; a term left to the search after a
    term settled by its bound (the memo then lacks that term's keys, which may have cut its own) starts
    the search of every term over."""
    memo: dict = {}
    if len(candidates) == 1 and state._cost is _plan_cost:  # every voter in it: plan_cost 0 each
        return [0.0]
    if state.cost_bound is None or len(candidates) < 2:
        return [sum(_converted_or_recomputed(state, o, c, memo) for o in voters) for c in candidates]
    steps: dict = {}
    floor = state.cost_floor
    costs, complete = [], True  # complete: memo holds every key the search would have by now
    try:
        for candidate in candidates:
            terms = []
            for o in voters:
                term = None
                if state.reused(o, candidate):  # the search's reuse (or existing conversion), whatever its memo
                    term = (0.0 if 0.0 < floor - 1e-9 and state.layout[o] != candidate
                            else min(state.cost(o, candidate), 0.0))
                else:
                    top = (o, candidate, True)
                    bounds = state.bounds(top, False, steps)
                    if floor == -math.inf or bounds.at_least(top, floor - 1e-9 - bounds.negative + _margin(floor)):
                        direct = state.cost(o, candidate)
                        if bounds.at_least(top, direct - bounds.negative + _margin(direct)):
                            term, complete = direct, False
                if term is None:
                    if not complete:
                        raise GiveUp("a term for the search after one settled by its bound")
                    term = _converted_or_recomputed(state, o, candidate, memo)
                terms.append(term)
            costs.append(sum(terms))
    except GiveUp:
        memo = {}
        return [sum(_converted_or_recomputed(state, o, c, memo) for o in voters) for c in candidates]
    return costs


def _margin(bound: float) -> float:
    """What a bound proof adds to its threshold, so that a sum of the same own costs in another order
    (rounded otherwise) still clears it: 1e-6, relative above 1."""
    return 1e-6 * max(1.0, abs(bound))


def _converted_or_recomputed(state: _State, vid: int, target: LinearLayout, memo: dict) -> float:
    """min(converting ``%vid`` to ``target``, recomputing it there without a conversion): the conversion's
    cost is not asked where the recomputation is cheaper than any conversion (``state.cost_floor``)."""
    recomputed = _plan(state, vid, target, memo, convert=False)[0]
    if recomputed < state.cost_floor - 1e-9 and state.layout[vid] != target:
        return recomputed
    return min(state.cost(vid, target), recomputed)


def _dot_anchor(state: _State, op: Op) -> tuple[list[LinearLayout], dict[int, LinearLayout]]:
    a, b = op.operands[:2]
    version = op.attr("mma_version")
    shape = _shape(state, op.results[0])
    dtype = state.values[a].dtype
    mma = anchor_rules.mma_layout(shape, dtype, version, state.program.num_warps)
    da = anchor_rules.dot_operand_layout(mma, 0, dtype)
    state.descriptors += [mma, da]
    required = {}
    # wgmma reads A from registers in its dot-operand layout, or -- a tile loaded from global memory, as
    # Triton stages it -- from shared memory, where any register layout will do
    if version == 2 or state.definition(a).kind != "load":
        required[0] = transfer.descriptor_layout(da, _shape(state, a))
    if version == 2:  # wgmma reads B from shared memory: any register layout will do
        db = anchor_rules.dot_operand_layout(mma, 1, state.values[b].dtype)
        state.descriptors.append(db)
        required[1] = transfer.descriptor_layout(db, _shape(state, b))
    result = transfer.descriptor_layout(mma, shape)
    if len(op.operands) == 3:
        required[2] = result
    return [result], required


# --------------------------------------------------------------------------------------------------
# backward rematerialization
# --------------------------------------------------------------------------------------------------
_INF = math.inf


def _dag_cost(nodes: tuple) -> float:
    """Total cost of plan nodes, each shared sub-plan counted once (its own cost is its last field)."""
    seen, total, stack = set(), 0.0, list(nodes)
    while stack:
        node = stack.pop()
        if node[:3] in seen:
            continue
        seen.add(node[:3])
        total += node[-1]
        if node[0] in ("remat", "bypass"):
            stack.extend(node[4])
    return total


def _new_conversions(nodes: tuple) -> int:
    """Conversions a plan adds, less those it makes dead (looked through at their only use)."""
    seen, stack, removed = set(), list(nodes), 0
    while stack:
        node = stack.pop()
        if node and node[:3] not in seen:
            seen.add(node[:3])
            if node[0] in ("remat", "bypass"):
                stack.extend(node[4])
            removed += node[0] == "bypass" and node[3]
    return sum(1 for key in seen if key[0] == "convert") - removed


def _plan(state: _State, vid: int, target: LinearLayout, memo: dict, depth: int = 0,
          movable: bool = True, convert: bool = True) -> tuple[float, tuple]:
    """Cheapest way to have ``%vid`` in ``target``: reuse, convert here, or rematerialize its definition
    (``movable``: the user is itself re-laid, so a single-use definition may change in place;
    ``convert=False``: no conversion anywhere in the plan, infinite cost where one would be needed).
    Nodes: ``("reuse", vid, target, 0)``, ``("convert", vid, target, cost)``,
    ``("remat", vid, target, moved, children, own cost)``."""
    key = (vid, target, movable)
    if key in memo:
        return memo[key]
    if state.layout[vid] == target:
        memo[key] = (0.0, ("reuse", vid, target, 0.0))
        return memo[key]
    if state.converted(vid, target):  # an existing conversion of vid to target is shared
        memo[key] = (0.0, ("shared", vid, target, 0.0))
        return memo[key]
    remat = _remat(state, vid, target, memo, depth, movable, convert) if depth < 48 else (_INF, ())
    if not convert:
        best = remat
    elif remat[0] < state.cost_floor - 1e-9:  # cheaper than any conversion: the direct cost is not needed
        best = remat
    else:
        direct = state.cost(vid, target)
        best = remat if remat[0] < direct - 1e-9 else (direct, ("convert", vid, target, direct))
    memo[key] = best
    return best


def _expand(state: _State, vid: int, target: LinearLayout, movable: bool) -> tuple:
    """What recomputing ``%vid``'s defining op with its result in ``target`` takes, before any operand is
    planned: ``("bypass", moved, operand)`` (a ``convert_layout``, looked through), ``("free", moved)``
    (an op of ``FREE_OPS``: no operands, no cost), ``("none",)`` (impossible: a dot, a gather, a shape
    op no operand layout makes a no-op) or ``("op", moved, own cost, ((operand, its target), ...))``.
    ``moved``: ``movable`` and ``%vid`` is the single result and has one use (the op changes in place).
    A function of the state and the key alone (``_remat`` and ``bounds`` read it)."""
    op = state.definition(vid)
    kind = op.kind
    moved = movable and len(op.results) == 1 and state.use_count.get(vid, 0) == 1
    if kind == "convert_layout":
        return ("bypass", moved, op.operands[0])
    if kind in FREE_OPS:
        return ("free", moved)
    op_cost = 0.0
    if kind in ("elementwise", "cast"):
        need = target
        op_cost = 0.0 if moved else _registers(target) * ELEMENTWISE_COST
    elif kind in SHAPE_OPS or kind == "reduce":
        try:
            need = _backward_transfer(kind, op.attrs, target, _shape(state, op.operands[0]))
        except TypeError:  # an attribute that is no hashable value: asked uncached
            need = _backward_transfer.__wrapped__(kind, op.attrs, target, _shape(state, op.operands[0]))
        if need is None:
            return ("none",)
        if kind == "reduce" and not moved:
            op_cost = _registers(need) * ELEMENTWISE_COST
    elif kind == "load":
        ptr = _pointer_attrs(state, op.operands[0])
        strides, element, align = ptr.attr("strides"), ptr.attr("element"), ptr.attr("align", 16)
        op_cost = anchor_rules.global_cost(target, strides, element, align=align, target=state.target)
        if moved:
            op_cost -= anchor_rules.global_cost(state.layout[vid], strides, element, align=align,
                                                target=state.target)
        need = target
    else:  # dot, gather: anchored results
        return ("none",)
    return ("op", moved, op_cost, tuple((o, need) for o in op.operands))


@functools.lru_cache(maxsize=8192)
def _backward_transfer(kind: str, attrs: tuple, target: LinearLayout, shape: tuple[int, ...]) -> LinearLayout | None:
    """``transfer.backward`` of a shape op or reduction (``None`` where it raises or has no answer), cached:
    a pure function of immutable values that the backward search asks again and again."""
    try:
        return transfer.backward(kind, dict(attrs), target, shape)
    except LayoutError:
        return None


def _remat(state: _State, vid: int, target: LinearLayout, memo: dict, depth: int,
           movable: bool = True, convert: bool = True) -> tuple[float, tuple]:
    """Recompute ``%vid``'s defining op with its result in ``target`` (operands planned recursively,
    ``convert`` as in ``_plan``)."""
    step = _expand(state, vid, target, movable)
    if step[0] == "bypass":  # look through it: it goes away when this was its only use
        cost, child = _plan(state, step[2], target, memo, depth + 1, False, convert)
        return (cost, ("bypass", vid, target, step[1], (child,), 0.0)) if cost < _INF else (_INF, ())
    if step[0] == "free":
        return 0.0, ("remat", vid, target, step[1], (), 0.0)
    if step[0] == "none":
        return _INF, ()
    _, moved, op_cost, operands = step
    plans = [_plan(state, o, t, memo, depth + 1, moved, convert) for o, t in operands]
    if any(cost == _INF for cost, _ in plans):  # an operand that cannot be had without a conversion
        return _INF, ()
    children = tuple(node for _, node in plans)
    node = ("remat", vid, target, moved, children, op_cost)
    return _dag_cost((node,)), node


def _apply(state: _State, node: tuple, done: dict) -> int:
    """Carry out a plan node; returns the value id holding the tensor in the node's layout."""
    key = node[:3]
    if key in done:
        return done[key]
    if node[0] == "reuse":
        out = node[1]
    elif node[0] == "bypass":
        out = _apply(state, node[4][0], done)
    elif node[0] == "shared":  # hoist the existing conversion right after the definition, and reuse it
        index = next(i for i, op in enumerate(state.ops) if op.kind == "convert_layout"
                     and op.operands[0] == node[1] and state.layout[op.results[0]] == node[2])
        conv = state.ops.pop(index)
        state.ops.insert(state.def_index(node[1]) + 1, conv)
        out = conv.results[0]
    elif node[0] == "convert":
        out = state.convert(node[1], node[2])
    else:
        _, vid, target, moved, children, _ = node
        operands = tuple(_apply(state, c, done) for c in children)
        index = state.def_index(vid)
        op = state.ops[index]
        attrs = op.attrs
        if op.kind in ("arange", "full", "pointer") and not children:
            operands = ()
        if moved:
            state.set_op(index, Op(op.kind, operands, op.results, attrs))
            state.layout[vid] = target
            out = vid
        else:
            results = tuple(state.new_value(r) for r in op.results)
            for r, original in zip(results, op.results):
                state.layout[r] = target
                state.recomputes[r] = original
            state.add_op(Op(op.kind, operands, results, attrs), index + 1)
            out = results[op.results.index(vid)]
    done[key] = out
    return out


def _store_alternative(state: _State, conv: Op, memo: dict) -> tuple[float, list]:
    """Re-lay the pointer (and mask) of every store of the converted value instead of converting it."""
    x, y = conv.operands[0], conv.results[0]
    users = state.users(y)
    if not users or any(u.kind != "store" or u.operands[1] != y or u.operands[0] == y for u in users):
        return _INF, []
    src = state.layout[x]
    total, plans = 0.0, []
    for u in users:
        ptr = _pointer_attrs(state, u.operands[0])
        strides, element, align = ptr.attr("strides"), ptr.attr("element"), ptr.attr("align", 16)
        total += anchor_rules.global_cost(src, strides, element, store=True, align=align, target=state.target)
        total -= anchor_rules.global_cost(state.layout[u.operands[0]], strides, element, store=True, align=align,
                                          target=state.target)
        nodes = []
        for k in (0, 2):
            if k < len(u.operands):
                nodes.append((k, _plan(state, u.operands[k], src, memo)[1]))
        plans.append((u, nodes))
    total += _dag_cost(tuple(n for _, ns in plans for _, n in ns))
    return total, plans


def _settled(state: _State, conv: Op, steps: dict) -> tuple | None:
    """The backward pass's decision on ``conv`` (``x -> R``) from lower bounds: ``("keep",)`` or
    ``("store", plans)`` (re-lay the stores instead), as the exhaustive search decides it, or None where
    the bounds do not settle it (then the search decides).

    The store alternative is computed as the search does (its pointer and mask tensors are free ops, and
    the search's moved ops, the only keys it shares with them, are above its depth limit). The
    rematerialization needs no plan where its lower bound clears the threshold the decision compares it
    with: the store alternative's cost where that is below ``floor`` or the conversion's cost (the store
    wins), else ``max(floor, cost(x -> R))`` (the conversion stays)."""
    if state.cost_bound is None:
        return None
    x, y = conv.operands[0], conv.results[0]
    top = (x, state.layout[y], True)
    try:
        bounds = state.bounds(top, True, steps)
    except GiveUp:
        return None
    if bounds.deepest >= 47:
        return None
    floor = state.cost_floor
    try:  # a rematerialization that may cost less than floor: the search decides (no store priced first)
        if floor > -math.inf and not bounds.recompute_at_least(top, floor - 1e-9 - bounds.negative + _margin(floor)):
            return None
    except GiveUp:
        return None
    for user in state.users(y):
        for k in (0, 2):
            if user.kind == "store" and k < len(user.operands) and \
                    state.definition(user.operands[k]).kind not in FREE_OPS:
                return None
    store_cost, store_plans = _store_alternative(state, conv, {})
    if _new_conversions(tuple(n for _, ns in store_plans for _, n in ns)) > 1:
        store_cost = _INF
    # below floor the store alternative is applied whatever the rematerialization costs (the conversion's
    # cost is not asked), below the conversion too: the store wins where the rematerialization costs more
    try:
        keep = _INF if store_cost < floor - 1e-9 else max(floor, state.cost(x, state.layout[y])) - 1e-9
        threshold = min(keep, store_cost)
        if not bounds.recompute_at_least(top, threshold - bounds.negative + _margin(threshold)):
            return None
    except GiveUp:
        return None
    return ("keep",) if store_cost >= keep else ("store", store_plans)


def _backward(state: _State, max_rounds: int = 4) -> None:
    for _ in range(max_rounds):
        changed = False
        convs = [op.results[0] for op in state.ops if op.kind == "convert_layout"]
        steps: dict = {}  # _expand's answers, valid until the state changes
        for y in reversed(convs):
            conv = state.defining.get(y) if state._single_definitions else next(
                (op for op in state.ops if y in op.results), None)  # the conversion, if it is still there
            if conv is None:
                continue
            x = conv.operands[0]
            target = state.layout[y]
            settled = _settled(state, conv, steps)
            if settled is not None:
                if settled[0] == "keep":
                    continue
                remat_cost, node, store_cost, store_plans = _INF, (), 0.0, settled[1]
            else:
                memo: dict = {}
                remat_cost, node = _remat(state, x, target, memo, 0)
                store_cost, store_plans = _store_alternative(state, conv, memo)
                if _new_conversions((node,)) > 1:  # replace one conversion by at most one
                    remat_cost = _INF
                if _new_conversions(tuple(n for _, ns in store_plans for _, n in ns)) > 1:
                    store_cost = _INF
                best = min(remat_cost, store_cost)
                if best == _INF or (best >= state.cost_floor - 1e-9 and best >= state.cost(x, target) - 1e-9):
                    continue  # the conversion stays (its cost is asked only when an alternative might win)
            changed = True
            steps = {}
            if remat_cost <= store_cost:
                new = _apply(state, node, {})
                state.replace_uses(y, new)
            else:
                done: dict = {}
                for user, nodes in store_plans:
                    operands = list(user.operands)
                    for k, n in nodes:
                        operands[k] = _apply(state, n, done)
                    operands[1] = x
                    state.set_op(state.ops.index(user), Op(user.kind, tuple(operands), user.results, user.attrs))
            if state._single_definitions:
                state.pop_op(state.def_index(y))
            else:
                state.remove_ops(lambda op: y in op.results)
            state.remove_dead()
        if not changed:
            return


# --------------------------------------------------------------------------------------------------
# descriptors, checks, baseline
# --------------------------------------------------------------------------------------------------
def describe(layout: LinearLayout, candidates: list[Any]) -> Any:
    """The first catalog descriptor among ``candidates`` (and their slices) equal to ``layout``, else the
    simplest one that produces it (``catalog.recognize``: blocked, mma, dot operand, slice, ... or the
    ``DistributedLinearLayout`` of its bases)."""
    layout = transfer.standard_outs(layout)
    shape = transfer.shape_of(layout)
    options = list(candidates)
    options += [SliceLayout(d, c) for c in candidates if c.rank >= 2 for d in range(c.rank)]
    for desc in options:
        if desc.rank != len(shape):
            continue
        try:
            if transfer.descriptor_layout(desc, shape) == layout:
                return desc
        except LayoutError:
            continue
    return recognize(layout)


class _Descriptors(Mapping):
    """Value id -> :func:`describe` of its layout among ``candidates``, searched on first access, once
    per distinct layout (recognizing a layout no candidate produces takes milliseconds; a pass that
    needs only the layouts never pays it)."""

    def __init__(self, layouts: Mapping[int, LinearLayout], candidates: tuple[Any, ...]):
        self._layouts, self._candidates = layouts, list(candidates)
        self._found: dict[LinearLayout, Any] = {}

    def __getitem__(self, vid: int) -> Any:
        layout = self._layouts[vid]
        if layout not in self._found:
            self._found[layout] = describe(layout, self._candidates)
        return self._found[layout]

    def __iter__(self):
        return iter(self._layouts)

    def __len__(self) -> int:
        return len(self._layouts)

    def __repr__(self) -> str:
        return repr(dict(self))


@checked
def check_consistent(result: EngineResult) -> list[str]:
    """Every op's operand layouts as its rule demands (empty list: consistent). Shape ops and
    reductions must be no-ops, elementwise ops and memory ops agree on one layout, dots get their
    anchors, every layout is distributed (Def. 4.10), and every value is defined before its uses."""
    from linear_layouts.layouts import is_distributed_layout

    lay, errors = result.layouts, []
    defined: set[int] = set()
    for op in result.program.ops:
        missing = [v for v in op.operands if v not in defined]
        if missing:
            errors.append(f"{op.kind}: operands {missing} used before their definition")
        defined.update(op.results)
        for v in op.operands + op.results:
            if not is_distributed_layout(lay[v]):
                errors.append(f"%{v} is not a distributed layout")
        kind, attrs = op.kind, dict(op.attrs)
        if kind in ("elementwise", "cast", "load", "store"):
            ls = [lay[v] for v in op.operands + op.results]
            if any(x != ls[0] for x in ls):
                errors.append(f"{kind} {op.results or op.operands}: operand layouts differ")
        elif kind in SHAPE_OPS or kind == "reduce":
            for r in op.results:
                if not transfer.is_no_op(kind, attrs, lay[op.operands[0]], lay[r]):
                    errors.append(f"{kind} %{r}: not a no-op")
            if kind == "join" and lay[op.operands[0]] != lay[op.operands[1]]:
                errors.append(f"join %{op.results[0]}: operands differ")
        elif kind == "gather" and lay[op.operands[1]] != lay[op.results[0]]:
            errors.append(f"gather %{op.results[0]}: index and result differ")
        elif kind == "convert_layout" and lay[op.operands[0]] == lay[op.results[0]]:
            errors.append(f"convert %{op.results[0]}: a no-op left in the program")
    return errors


@checked
def naive_conversions(program: Program) -> int:
    """Conversions of the legacy "blocked everywhere" baseline: every value in the default blocked
    layout of its shape, converted back to it after every op (shape op, reduction, dot, ...) whose
    no-op or anchored result layout differs, and to each op's required operand layouts."""
    state = _State(program, plan_cost)
    state.legacy = True
    _forward(state)
    return _conversions_left(state)


def _conversions_left(state: _State) -> int:
    """The conversions of ``state`` between different layouts (a no-op conversion is none)."""
    return sum(op.kind == "convert_layout" and state.layout[op.operands[0]] != state.layout[op.results[0]]
               for op in state.ops)


# --------------------------------------------------------------------------------------------------
def _run(program: Program, cost_fn: CostFn, rematerialize: bool, legacy: bool = False,
         target: Target | None = None) -> _State:
    state = _State(program, cost_fn, target)
    state.legacy = legacy
    _forward(state)
    if legacy and cost_fn is plan_cost_on(target):  # the forward pass naive_conversions makes: its count, without a third pass
        state.naive_conversions = _conversions_left(state)
    if rematerialize:
        _backward(state)
    for op in list(state.ops):  # equal layouts: no-op conversions disappear
        if op.kind == "convert_layout" and state.layout[op.operands[0]] == state.layout[op.results[0]]:
            state.replace_uses(op.results[0], op.operands[0])
            state.pop_op(state.ops.index(op))
    state.remove_dead()
    return state


def _count(state: _State) -> int:
    return sum(op.kind == "convert_layout" for op in state.ops)


def _score(state: _State) -> tuple[int, float]:
    """(conversions, their total cost + the global memory ops' cost), the cost in SM-ns per CTA."""
    count, cost = 0, 0.0
    for op in state.ops:
        if op.kind == "convert_layout":
            count += 1
            cost += state.cost(op.operands[0], state.layout[op.results[0]])
        elif op.kind in ("load", "store"):
            ptr = _pointer_attrs(state, op.operands[0])
            cost += anchor_rules.global_cost(state.layout[op.operands[0]], ptr.attr("strides"), ptr.attr("element"),
                                             target=state.target,
                                             store=op.kind == "store", align=ptr.attr("align", 16))
    return count, cost


def propagate(program: Program, *, cost_fn: CostFn = plan_cost, rematerialize: bool = True,
              max_elements: int = MAX_ELEMENTS, start: str = "both", target: Target | str | None = None) -> EngineResult:
    """Assign a layout to every value of ``program`` and insert the fewest, cheapest conversions (module doc).

    A second run starts from the legacy solution (every value in the default blocked layout, as
    :func:`naive_conversions` counts) and improves it by the same backward pass; of the runs that leave
    no more conversions than the legacy baseline, the one of least predicted time (its conversions'
    cost plus its global memory ops', ``anchors.global_cost``: one unit, SM-ns per CTA) wins. The
    backward pass never adds conversions, so the engine never leaves more than the legacy baseline.
    A direct conversion's cost is asked only where a rematerialization is not already cheaper than
    ``cost_fn.floor`` (a ``CostFunction``'s lower bound on different layouts; ``plan_cost``'s is
    ``CONVERT_OVERHEAD``; a plain callable has none: every cost is asked), and where ``cost_fn.bound``
    is known (``plan_cost``'s: ``bounds.plan_cost_bound``) a merge's term or a backward choice that lower
    bounds settle is not searched (``bounds.CostBounds``): the same choices, fewer plans. The result's
    ``descriptors`` are found on first access.
    ``start``: ``"anchored"`` or ``"legacy"`` keeps only that run (a caller that judges the candidates
    with a fuller model, as ``kernels.rewrite`` does, asks for each).
    ``target``: the target the plans and the global-memory costs are for (a ``Target`` or a name, ``"H200"``,
    ``"gfx942"``; default: the default target); ``plan_cost`` then plans on it (``plan_cost_on``).
    Requires: every value a tile of at most ``max_elements`` elements (``limits.MAX_ELEMENTS``).
    """
    return propagate_runs(program, cost_fn=cost_fn, rematerialize=rematerialize, max_elements=max_elements,
                          starts=(start,), target=target)[start]


_STARTS = ("both", "anchored", "legacy")


def propagate_runs(program: Program, *, cost_fn: CostFn = plan_cost, rematerialize: bool = True,
                   max_elements: int = MAX_ELEMENTS, starts: tuple[str, ...] = _STARTS,
                   target: Target | str | None = None) -> dict[str, EngineResult]:
    """``{start: propagate(program, start=start)}`` for each of ``starts``, each run made once: the
    choice of ``"both"`` is one of the ``"anchored"`` and ``"legacy"`` runs, not a third (a caller that
    judges every candidate, as ``kernels.rewrite`` does, needs all three).

    >>> from linear_layouts.engine import examples
    >>> runs = propagate_runs(examples.row_softmax())
    >>> sorted(runs), runs["both"].conversions
    (['anchored', 'both', 'legacy'], ())
    """
    if not isinstance(program, Program):
        raise LayoutError(f"program must be an engine.ir.Program, got {type(program).__name__}")
    for vid, value in program.values.items():
        check_count(math.prod(value.shape), max_elements, f"propagate: value %{vid} {value.type_str()}")
    for start in starts:
        if start not in _STARTS:
            raise LayoutError(f"start must be 'both', 'anchored' or 'legacy', got {quote(start)}")
    if "legacy" in starts and not rematerialize:
        raise LayoutError("start: the 'legacy' run improves the legacy solution by rematerialization; "
                          "it needs rematerialize=True")
    if target is not None:
        target = resolve(target)  # a Target, or a device or architecture name
    if cost_fn is plan_cost:
        cost_fn = plan_cost_on(target)
    anchored = _run(program, cost_fn, rematerialize, target=target) if set(starts) - {"legacy"} else None
    legacy = _run(program, cost_fn, True, legacy=True, target=target) \
        if rematerialize and set(starts) - {"anchored"} else None
    states = {"anchored": anchored, "legacy": legacy}
    if "both" in starts:
        runs = [run for run in (anchored, legacy) if run is not None]
        if len(runs) > 1:  # the cheapest run that leaves no more conversions than the legacy baseline
            limit = legacy.naive_conversions if legacy.naive_conversions is not None else naive_conversions(program)
            eligible = [run for run in runs if _count(run) <= limit] or [min(runs, key=_count)]
            states["both"] = min(eligible, key=lambda run: _score(run)[1])
        else:
            states["both"] = runs[0]
    results: dict[int, EngineResult] = {}  # one result per run, the same object for "both" and its run
    for start in starts:
        state = states[start]
        if id(state) not in results:
            results[id(state)] = _result(program, state, target)
    return {start: results[id(states[start])] for start in starts}


def _result(program: Program, state: _State, target: Target | None = None) -> EngineResult:
    """The ``EngineResult`` of a finished run: its live values, their layouts, its conversions planned."""
    live = {v for op in state.ops for v in op.operands + op.results}
    values = {v: state.values[v] for v in sorted(live)}
    out = Program(tuple(state.ops), values, program.num_warps, program.threads_per_warp, program.num_ctas, program.args)
    layouts = {v: state.layout[v] for v in values}
    descriptors = _Descriptors(dict(layouts), tuple(dict.fromkeys(state.descriptors)))
    conversions = []
    for op in state.ops:
        if op.kind == "convert_layout":
            x, y = op.operands[0], op.results[0]
            bits = state.bits(x)
            try:
                plan = plan_conversion(layouts[x], layouts[y], bits, target=target)
            except LayoutError:
                plan = None
            conversions.append(Conversion(x, y, layouts[x], layouts[y], state.values[x].dtype, plan,
                                          plan.cost.total if plan else _INF))
    recomputes = {}
    for v in values:
        origin = v
        while origin in state.recomputes:
            origin = state.recomputes[origin]
        if origin != v:
            recomputes[v] = origin
    return EngineResult(out, layouts, descriptors, tuple(conversions), recomputes)

