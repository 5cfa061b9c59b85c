"""When each shared-memory buffer of a TTGIR function is live, as Triton 3.9's ``AllocateSharedMemory``
pass sees it (``Allocation.cpp``): on the function after ``scf-to-cf``, with MLIR's ``Liveness`` and
Triton's ``SharedMemoryAliasAnalysis``.

The rules, each Triton's:

* ``scf-to-cf`` turns the structured ops into blocks and branches (MLIR's ``SCFToControlFlow``): an
  ``scf.for`` becomes a header block whose arguments are the induction variable and the iter_args (the
  loop's results are those arguments), its body, and a back branch carrying the ``scf.yield``'s values;
  an ``scf.if`` becomes then / else blocks branching to a block whose arguments are its results; an
  ``scf.while`` becomes its before region (``scf.condition`` branches to the after region with its
  values, which are also the loop's results) and its after region (branching back with the yield's;
  an after region that only forwards its arguments is dropped, MLIR's do-while lowering). Other ops
  keep their regions (``tt.reduce``'s combiner, ``ttg.warp_specialize``'s partitions).
* Ops are numbered in post-order (an op after the ops of its regions).
* A value's liveness (``Liveness::resolveLiveness``) is the hull of the ops where it is live: from its
  definition (a block's first op for a block argument, or where it is live-in) to its last use in each
  block, or the block's end where it is live-out; a use inside a region counts at the op holding it.
* The buffers a memdesc value may be (the alias analysis): a ``ttg.local_alloc`` of shared memory is a
  new one; a view (``ttg.memdesc_index`` / ``_subslice`` / ``_trans`` / ...) is its operand's; an
  ``arith.select`` either operand's; a block argument any of the values branched to it; a
  ``ttg.warp_specialize``'s result what its default region's ``ttg.warp_yield`` passes.
* A buffer is live over the hull of its alloc's liveness and that of every value used or defined by an
  op that may be it (so a buffer yielded into a loop is live wherever the loop's iter_arg is).

>>> from linear_layouts.triton_model.ir_text import parse_module
>>> text = '''#s = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
... #smem = #ttg.shared_memory
... module {
...   tt.func public @k(%c: i1) {
...     %a = ttg.local_alloc : () -> !ttg.memdesc<16xf32, #s, #smem, mutable>
...     %b = ttg.local_alloc : () -> !ttg.memdesc<16xf32, #s, #smem, mutable>
...     %m = arith.select %c, %a, %b : !ttg.memdesc<16xf32, #s, #smem, mutable>
...     ttg.local_dealloc %m : !ttg.memdesc<16xf32, #s, #smem, mutable>
...     tt.return
...   }
... }'''
>>> lowered = lower_function(parse_module(text).functions[0])
>>> [lowered.ops[i].name for i in buffer_live_ranges(lowered, {0: 64, 1: 64})[0]]
['ttg.local_alloc', 'ttg.local_dealloc']
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from linear_layouts.core.errors import LayoutError
from linear_layouts.triton_model.ir_text import Function, Op, block_arguments, iter_args, loop_bounds
from linear_layouts.core.limits import parse_int
from linear_layouts.core.mlir_text import DIGITS, split_top

__all__ = ["LoweredOp", "LoweredFunction", "lower_function", "buffer_live_ranges", "value_live_ranges", "VIEWS"]

#: ops whose result is a view of their memdesc operand (Triton's ``MemDescViewTrait``: the same buffer)
VIEWS = ("ttg.memdesc_index", "ttg.memdesc_subslice", "ttg.memdesc_subview", "ttg.memdesc_trans",
         "ttg.memdesc_reshape", "ttg.memdesc_reinterpret")
#: the region-holding pseudo-ops the text parser reads after a ``ttg.warp_specialize`` line
_WS_REGION = re.compile(r"^(default|partition[0-9]+)$")


@dataclass
class LoweredOp:
    """One op of the function after ``scf-to-cf``: ``index``, its walk index in the TTGIR function
    (``Function.walk``'s order; -1 for a branch or compare the lowering adds, whose ``origin`` is the
    walk index of the scf op it comes from), the values it ``uses`` (successor operands included), its
    ``results``, its ``successors`` (block number, values passed), the ``regions`` it keeps (lists of
    block numbers), ``ws_region``: the (walk index, region number) of the ``ttg.warp_specialize``
    region around it, if any; ``block``: the block holding it; ``id``: its post-order number."""

    index: int
    name: str
    uses: tuple[str, ...] = ()
    origin: int = -1
    results: tuple[str, ...] = ()
    successors: list[tuple[int, tuple[str, ...]]] = field(default_factory=list)
    regions: list[list[int]] = field(default_factory=list)
    ws_region: tuple[int, int] | None = None
    block: int = -1
    id: int = -1


@dataclass
class _Block:
    args: tuple[str, ...]
    ops: list[LoweredOp] = field(default_factory=list)
    region: int = 0  # which region (number) it belongs to
    parent: LoweredOp | None = None  # the op whose region holds it (None: the function's)


@dataclass
class LoweredFunction:
    """The function after ``scf-to-cf``: ``blocks`` (each a list of ops and its arguments), ``ops`` in
    post-order (an op's ``id`` is its position), ``allocs`` (walk index of each shared ``local_alloc``
    -> its result)."""

    blocks: list[_Block]
    ops: list[LoweredOp]
    allocs: dict[int, str]
    #: walk index of each ``ttg.warp_specialize`` -> its captures' types and its partitions' warps
    warp_specialize: dict[int, tuple[tuple[str, ...], tuple[int, ...]]]
    #: (result, value): a ``ttg.warp_specialize``'s result is what its default region yields
    joins: list[tuple[str, str]] = field(default_factory=list)


class _Lowering:
    """``scf-to-cf`` on a parsed function (module doc): blocks, their ops, the allocs it meets."""

    def __init__(self, is_alloc):
        self.blocks: list[_Block] = []
        self.same: dict[str, str] = {}  # an scf result -> the block argument / value it becomes
        self.is_alloc = is_alloc
        self.allocs: dict[int, str] = {}
        self.index = 0
        self.ws_info: dict[int, tuple[tuple[str, ...], tuple[int, ...]]] = {}
        self.joins: list[tuple[str, str]] = []  # (a value, a value it may be): a region's yield to its op
        self.region_count = 0

    def name(self, value: str) -> str:
        while value in self.same:
            value = self.same[value]
        return value

    def names(self, values) -> tuple[str, ...]:
        return tuple(self.name(v) for v in values)

    def new_block(self, args: tuple[str, ...], region: int, parent: LoweredOp | None) -> int:
        self.blocks.append(_Block(args, [], region, parent))
        return len(self.blocks) - 1

    def add(self, block: int, op: LoweredOp, ws: tuple[int, int] | None) -> None:
        op.block = block
        op.ws_region = ws
        self.blocks[block].ops.append(op)

    def region(self, ops: tuple[Op, ...], args: tuple[str, ...], parent: LoweredOp | None,
               ws: tuple[int, int] | None) -> list[int]:
        """Lowers a region an op keeps into blocks of a new region; returns their numbers in order."""
        number = self.region_count
        self.region_count += 1
        blocks = [self.new_block(args, number, parent)]
        self.lower_ops(ops, blocks[0], blocks, number, parent, ws)
        return blocks

    def lower_ops(self, ops: tuple[Op, ...], current: int, blocks: list[int], number: int,
                  parent: LoweredOp | None, ws: tuple[int, int] | None) -> int:
        """Lowers ``ops`` from the block ``current`` on, appending the blocks the scf ops make to
        ``blocks`` (their region's, in order); returns the block the last op ends in."""
        ops = list(ops)
        i = 0
        while i < len(ops):
            op = ops[i]
            index = self.index
            self.index += 1
            if op.name == "ttg.warp_specialize":
                parts = []
                while i + 1 < len(ops) and _WS_REGION.match(ops[i + 1].name):
                    i += 1
                    parts.append(ops[i])
                self.warp_specialize(op, index, parts, current, ws)
            elif op.name == "scf.for":
                current = self.scf_for(op, index, current, blocks, number, parent, ws)
            elif op.name == "scf.if":
                current = self.scf_if(op, index, current, blocks, number, parent, ws)
            elif op.name == "scf.while":
                current = self.scf_while(op, index, current, blocks, number, parent, ws)
            elif op.name.startswith("scf.") and op.regions and _makes_buffers(op):
                raise LayoutError(f"module: {op.name} at {op.loc}: a shared-memory buffer (!ttg.memdesc) made "
                                  "in or passed out of an scf op other than scf.for / scf.if / scf.while (its "
                                  "lowering to blocks is not modelled)")
            else:
                lowered = LoweredOp(index, op.name, self.names(op.operands), results=op.results)
                if op.name == "ttg.local_alloc" and op.results and self.is_alloc(op):
                    self.allocs[index] = op.results[0]
                for region in op.regions:
                    lowered.regions.append(self.region(region.ops, tuple(n for n, _ in region.args), lowered, ws))
                self.add(current, lowered, ws)
            i += 1
        return current

    def _body(self, ops: tuple[Op, ...], args, number, parent, ws, blocks) -> tuple[int, int, tuple[str, ...]]:
        """Inlines an scf region's ops as blocks of the enclosing region (appended to ``blocks``): returns
        its entry block, the block it ends in and the operands of its terminator (``scf.yield`` /
        ``scf.condition``; none where the printer leaves out an empty ``scf.yield``)."""
        entry = self.new_block(args, number, parent)
        blocks.append(entry)
        terminator = ops[-1] if ops and ops[-1].name in ("scf.yield", "scf.condition") else None
        last = self.lower_ops(ops[:-1] if terminator else ops, entry, blocks, number, parent, ws)
        if terminator is None:
            return entry, last, ()
        self.index += 1  # the terminator's walk index
        return entry, last, self.names(terminator.operands)

    def scf_for(self, op: Op, index: int, current: int, blocks: list[int], number, parent, ws) -> int:
        region = op.regions[0]
        iv = loop_bounds(op.text).induction
        pairs = iter_args(op.text)
        header_args = (iv,) + tuple(arg for arg, _ in pairs)
        inits = self.names(init for _, init in pairs)
        header = self.new_block(header_args, number, parent)
        self.add(current, LoweredOp(-1, "cf.br", inits, origin=index, successors=[(header, ("",) + inits)]), ws)
        blocks.append(header)
        for result, (arg, _) in zip(op.results, pairs):
            self.same[result] = arg
        self.add(header, LoweredOp(-1, "arith.cmpi", (iv,), origin=index), ws)
        cond = LoweredOp(-1, "cf.cond_br", origin=index)
        self.add(header, cond, ws)
        entry, last, values = self._body(region.ops, (), number, parent, ws, blocks)
        self.add(last, LoweredOp(-1, "arith.addi", (iv,), origin=index), ws)
        self.add(last, LoweredOp(-1, "cf.br", values, origin=index, successors=[(header, ("",) + values)]), ws)
        end = self.new_block((), number, parent)
        blocks.append(end)
        cond.successors = [(entry, ()), (end, ())]
        return end

    def scf_if(self, op: Op, index: int, current: int, blocks: list[int], number, parent, ws) -> int:
        cond = LoweredOp(-1, "cf.cond_br", self.names(op.operands[:1]), origin=index)
        self.add(current, cond, ws)
        ends: list[tuple[int, tuple[str, ...]]] = []
        entries: list[int] = []
        for region in op.regions:
            entry, last, values = self._body(region.ops, (), number, parent, ws, blocks)
            entries.append(entry)
            ends.append((last, values))
        rest = self.new_block((), number, parent)
        if op.results:
            join = self.new_block(tuple(op.results), number, parent)
            blocks.append(join)
            self.add(join, LoweredOp(-1, "cf.br", origin=index, successors=[(rest, ())]), ws)
        else:
            join = rest
        blocks.append(rest)
        for last, values in ends:
            self.add(last, LoweredOp(-1, "cf.br", values, origin=index, successors=[(join, values)]), ws)
        cond.successors = [(entries[0], ()), (entries[1] if len(entries) > 1 else join, ())]
        return rest

    def scf_while(self, op: Op, index: int, current: int, blocks: list[int], number, parent, ws) -> int:
        head = op.text[op.text.find("scf.while"):]
        open_at = head.find("(")
        pairs = []
        if open_at >= 0:
            inner = head[open_at + 1:]
            depth, end = 1, 0
            for end, ch in enumerate(inner):
                depth += ch == "("
                depth -= ch == ")"
                if depth == 0:
                    break
            for item in split_top(inner[:end]):
                arg, eq, init = item.partition("=")
                if eq:
                    pairs.append((arg.strip(), init.strip()))
        before_region, after_region = op.regions[0], op.regions[1]
        inits = self.names(init for _, init in pairs)
        before_args = tuple(arg for arg, _ in pairs)
        after_args = tuple(n for n, _ in after_region.args)
        do_while = (len(after_region.ops) == 1 and after_region.ops[0].name == "scf.yield"
                    and tuple(after_region.ops[0].operands) == after_args)
        jump = LoweredOp(-1, "cf.br", inits, origin=index)
        self.add(current, jump, ws)
        entry, last, condition = self._body(before_region.ops, before_args, number, parent, ws, blocks)
        jump.successors = [(entry, inits)]
        values = condition[1:]
        branch = LoweredOp(-1, "cf.cond_br", condition, origin=index)
        self.add(last, branch, ws)
        for result, value in zip(op.results, values):
            self.same[result] = value
        if not do_while and len(after_args) != len(values):
            raise LayoutError(f"module: scf.while at {op.loc}: its after region takes {len(after_args)} "
                              f"arguments, its scf.condition passes {len(values)} (they must match)")
        if do_while:
            self.index += 1  # the after region's yield
            rest = self.new_block((), number, parent)
            blocks.append(rest)
            branch.successors = [(entry, values), (rest, ())]
            return rest
        after, after_last, back = self._body(after_region.ops, after_args, number, parent, ws, blocks)
        self.add(after_last, LoweredOp(-1, "cf.br", back, origin=index, successors=[(entry, back)]), ws)
        rest = self.new_block((), number, parent)
        blocks.append(rest)
        branch.successors = [(after, values), (rest, ())]
        return rest

    def warp_specialize(self, op: Op, index: int, parts: list[Op], current: int, ws) -> None:
        """A ``ttg.warp_specialize`` and the ``default`` / ``partitionN`` regions the text parser reads
        after it: one op keeping them as its regions (so numbered after their ops)."""
        if ws is not None:
            raise LayoutError(f"module: ttg.warp_specialize at {op.loc}: inside another one (Triton does not "
                              "nest them)")
        lowered = LoweredOp(index, op.name, self.names(op.operands), results=op.results)
        captures: tuple[str, ...] = ()
        warps: list[int] = []
        for k, part in enumerate(parts):
            self.index += 1  # the region's pseudo-op
            args: tuple[str, ...] = ()
            if part.name == "default" and part.regions and part.regions[0].ops:
                last = part.regions[0].ops[-1]  # ttg.warp_yield: the op's results are its operands
                if last.name == "ttg.warp_yield":
                    self.joins += list(zip(op.results, last.operands))
            if part.name != "default":
                m = re.search(rf"num_warps\(({DIGITS})\)", part.text)
                warps.append(parse_int(m.group(1), f"ir text: {part.name}'s num_warps") if m else 0)
                args, captures = tuple(part.operands), _partition_types(part.text)
            lowered.regions.append(self.region(part.regions[0].ops if part.regions else (), args, lowered,
                                               (index, k)))
        self.ws_info[index] = (captures, tuple(warps))
        self.add(current, lowered, ws)


def _makes_buffers(op: Op) -> bool:
    """Whether ``op`` or an op in its regions has a memdesc result."""
    return any(t.startswith("!ttg.memdesc") for t in op.result_types) or any(
        _makes_buffers(inner) for region in op.regions for inner in region.ops)


def _partition_types(text: str) -> tuple[str, ...]:
    """The argument types of a ``partitionN(%a: T loc(..), ...) num_warps(N) {`` line (the captures'), read
    as ``ir_text`` reads a block's arguments."""
    return tuple(ty for _, ty in block_arguments(text))


def lower_function(fn: Function, is_alloc=lambda op: True) -> LoweredFunction:
    """``fn`` after ``scf-to-cf`` (module doc); ``is_alloc(op)``: whether a ``ttg.local_alloc`` makes a
    shared-memory buffer (its walk index then keys ``allocs``)."""
    lowering = _Lowering(is_alloc)
    body = lowering.region(fn.body.ops, tuple(n for n, _ in fn.args), None, None)
    ops: list[LoweredOp] = []

    def post_order(blocks: list[int]) -> None:
        for block in blocks:
            for op in lowering.blocks[block].ops:
                for region in op.regions:
                    post_order(region)
                op.id = len(ops)
                ops.append(op)

    post_order(body)
    return LoweredFunction(lowering.blocks, ops, lowering.allocs, lowering.ws_info, lowering.joins)


def _aliases(fn: LoweredFunction) -> dict[str, frozenset[int]]:
    """Each value -> the allocs (walk indices) it may be (Triton's ``SharedMemoryAliasAnalysis``)."""
    alias: dict[str, frozenset[int]] = {value: frozenset((index,)) for index, value in fn.allocs.items()}
    changed = True
    while changed:
        changed = False

        def join(value: str, allocs: frozenset[int]) -> None:
            nonlocal changed
            if allocs and not allocs <= alias.get(value, frozenset()):
                alias[value] = alias.get(value, frozenset()) | allocs
                changed = True

        for op in fn.ops:
            if op.name in VIEWS and op.uses and op.results:
                join(op.results[0], alias.get(op.uses[0], frozenset()))
            elif op.name == "arith.select" and len(op.uses) == 3 and op.results:
                join(op.results[0], alias.get(op.uses[1], frozenset()) | alias.get(op.uses[2], frozenset()))
            for block, values in op.successors:
                for arg, value in zip(fn.blocks[block].args, values):
                    join(arg, alias.get(value, frozenset()))
        for result, value in fn.joins:
            join(result, alias.get(value, frozenset()))
    return alias


def _liveness(fn: LoweredFunction, tracked: set[str]):
    """MLIR's block liveness for the ``tracked`` values: (live-in, live-out, defining block, users)."""
    blocks = fn.blocks
    nested_uses: list[set[str]] = []
    defs: list[set[str]] = []
    user_blocks: dict[str, set[int]] = {v: set() for v in tracked}

    def walk(op: LoweredOp, uses: set[str], defined: set[str]) -> None:
        uses.update(v for v in op.uses if v in tracked)
        defined.update(op.results)
        for region in op.regions:
            for b in region:
                defined.update(blocks[b].args)
                for inner in blocks[b].ops:
                    walk(inner, uses, defined)

    def_block: dict[str, int] = {}
    for number, block in enumerate(blocks):
        uses: set[str] = set()
        defined: set[str] = set(block.args)
        for arg in block.args:
            def_block.setdefault(arg, number)
        for op in block.ops:
            walk(op, uses, defined)
            for r in op.results:
                def_block.setdefault(r, number)
            for v in op.uses:
                if v in tracked:
                    user_blocks[v].add(number)
        nested_uses.append(uses - defined)
        defs.append(defined)
    # a value defined in a block and used in another block of its region is live-out of it

    def region_ancestor(block: int, region: int) -> int | None:
        while blocks[block].region != region:
            parent = blocks[block].parent
            if parent is None:
                return None
            block = parent.block
        return block

    live_out: list[set[str]] = [set() for _ in blocks]
    for value in tracked:
        home = def_block.get(value)
        if home is None:
            continue
        for user in user_blocks[value]:
            owner = region_ancestor(user, blocks[home].region)
            if owner is not None and owner != home:
                live_out[home].add(value)
    live_in = [nested_uses[b] | (live_out[b] - defs[b]) for b in range(len(blocks))]
    preds: dict[int, set[int]] = {b: set() for b in range(len(blocks))}
    for number, block in enumerate(blocks):
        for op in block.ops:
            for succ, _ in op.successors:
                preds[succ].add(number)
    work = list(range(len(blocks)))
    while work:
        b = work.pop()
        out = set(live_out[b])
        for op in blocks[b].ops:
            for succ, _ in op.successors:
                out |= live_in[succ]
        live_out[b] = out
        new_in = nested_uses[b] | (out - defs[b])
        if new_in != live_in[b]:
            live_in[b] = new_in
            work.extend(preds[b])
    return live_in, live_out, def_block, user_blocks, region_ancestor


def _nested_uses(fn: LoweredFunction) -> Callable[[LoweredOp], frozenset[str]]:
    """The values an op uses, itself or an op nested in its regions (each op's set made once, when asked)."""
    blocks = fn.blocks
    memo: dict[int, frozenset[str]] = {}

    def uses(op: LoweredOp) -> frozenset[str]:
        found = memo.get(id(op))
        if found is None:
            found = frozenset(op.uses).union(*(uses(inner) for region in op.regions for b in region
                                               for inner in blocks[b].ops))
            memo[id(op)] = found
        return found

    return uses


def _hull(fn: LoweredFunction, value: str, liveness,
          nested: Callable[[LoweredOp], frozenset[str]] | None = None) -> tuple[int, int] | None:
    """The first and last op ``id`` where ``value`` is live (``liveness``: ``_liveness``'s result;
    ``nested``: ``_nested_uses(fn)``, shared by the values asked about)."""
    live_in, live_out, def_block, user_blocks, _ = liveness
    blocks = fn.blocks
    nested = nested or _nested_uses(fn)

    def uses_in(op: LoweredOp) -> bool:
        return value in nested(op)

    todo = [def_block[value]] if value in def_block else []
    todo += sorted(user_blocks[value] - set(todo))
    seen = set(todo)
    low, high = None, None
    while todo:
        b = todo.pop()
        ops = blocks[b].ops
        if not ops:
            continue
        if value in live_in[b] or value in blocks[b].args:
            start = 0
        else:
            start = next((k for k, op in enumerate(ops) if value in op.results), 0)
        if value in live_out[b]:
            end = len(ops) - 1
        else:
            end = start
            for k in range(start, len(ops)):
                if uses_in(ops[k]):
                    end = k
        first = min(op.id for op in ops[start:end + 1])
        last = max(op.id for op in ops[start:end + 1])
        low = first if low is None else min(low, first)
        high = last if high is None else max(high, last)
        for op in ops:
            for succ, _ in op.successors:
                if value in live_in[succ] and succ not in seen:
                    seen.add(succ)
                    todo.append(succ)
    return None if low is None else (low, high)


def value_live_ranges(fn: LoweredFunction, values: set[str]) -> dict[str, tuple[int, int]]:
    """Each of ``values`` -> the first and last op ``id`` (post-order) where it is live, by MLIR's liveness
    on the function after ``scf-to-cf`` (module doc); a value never live is left out."""
    liveness = _liveness(fn, set(values))
    nested = _nested_uses(fn)
    ranges = {}
    for value in sorted(values):
        r = _hull(fn, value, liveness, nested)
        if r is not None:
            ranges[value] = r
    return ranges


def buffer_live_ranges(fn: LoweredFunction, sizes: dict[int, int]) -> dict[int, tuple[int, int]]:
    """Each alloc of ``sizes`` (walk index) -> the first and last op ``id`` where its buffer is live
    (module doc)."""
    alias = _aliases(fn)
    tracked = {v for v, allocs in alias.items() if allocs & sizes.keys()}
    liveness = _liveness(fn, tracked)
    # the values an op uses or defines (block arguments count only as operands)
    mentioned = {v for op in fn.ops for v in op.uses + op.results}
    nested = _nested_uses(fn)
    ranges: dict[int, tuple[int, int]] = {}
    for index, value in fn.allocs.items():
        if index in sizes:
            r = _hull(fn, value, liveness, nested)
            if r is not None:
                ranges[index] = r
    for value in sorted(tracked & mentioned):
        r = _hull(fn, value, liveness, nested)
        if r is None:
            continue
        for index in alias[value] & sizes.keys():
            low, high = ranges.get(index, r)
            ranges[index] = (min(low, r[0]), max(high, r[1]))
    return ranges
