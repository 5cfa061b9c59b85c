"""Our engine's layout assignment written back into a kernel's TTGIR, so Triton's backend compiles it
(issue 15, item 6): ``triton.compile("k.ttgir")`` starts at the TTGIR stage, so the layouts written here
are the ones lowered to LLVM.

Inputs: Triton's TTGIR of a kernel and the TTIR of the same compile. The TTIR is imported into the
engine's tile IR (``ttir_import``) and propagated (``engine.propagate``); each engine value is tied to
its TTGIR ops by (op name, source location) -- the TTIR and the TTGIR come from one compile, so the
locations agree -- and, where one location makes several ops, by their shapes and operands (``_ties``).
Then, in one pass over Triton's TTGIR:

* every ``ttg.convert_layout`` is removed (its result is its operand);
* a data op the engine laid out gets the engine's layout (loads, element-wise ops, casts); a store the
  engine's store layout; a reduction ``slice(axis, operand)``, ``expand_dims`` / ``broadcast`` /
  ``trans`` the layout their operand implies (Triton's verifiers demand exactly that);
* index math (ranges, splats, constants, pointer arithmetic, masks, their reshapes) is recomputed in
  whatever layout its user needs, as Triton itself does, and costs no conversion;
* a data value its user needs in another layout gets a ``ttg.convert_layout`` right after its
  definition: the conversions of the result are the ones the assignment implies, counted in
  ``Rewrite.conversions``;
* ops the engine does not model (dots, shared-memory and asynchronous copies, histograms, ...) keep
  Triton's layouts, and their operands are converted to them where needed (``Rewrite.kept`` says which).

A loop-carried value keeps one layout across the loop: its init and its yield are put in the layout
the engine gives the loop's result.

``rewrite_kernel`` judges the rewrites of the engine's candidates against Triton's own TTGIR with the
whole-kernel model (``kernel_model.kernel_time``) and keeps Triton's TTGIR unless one is predicted
faster by ``MIN_GAIN``.

>>> from linear_layouts.triton_model.ir_text import parse_module
>>> ttgir = '''#b = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
... #c = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
... module attributes {"ttg.num-warps" = 4 : i32} {
...   tt.func public @k(%x: !tt.ptr<f32>) {
...     %r = tt.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32, #b>
...     %p = tt.splat %x : !tt.ptr<f32> -> tensor<512x!tt.ptr<f32>, #b>
...     %q = tt.addptr %p, %r : tensor<512x!tt.ptr<f32>, #b>, tensor<512xi32, #b>
...     %v = tt.load %q : tensor<512x!tt.ptr<f32>, #b>
...     %w = ttg.convert_layout %v : tensor<512xf32, #b> -> tensor<512xf32, #c>
...     %e = math.exp %w : tensor<512xf32, #c>
...     %f = ttg.convert_layout %e : tensor<512xf32, #c> -> tensor<512xf32, #b>
...     tt.store %q, %f : tensor<512x!tt.ptr<f32>, #b>
...     tt.return
...   }
... }'''
>>> from linear_layouts.layouts import BlockedLayout
>>> want = BlockedLayout([4], [32], [4], [0])
>>> new = rewrite_ttgir(ttgir, {"%v": want, "%e": want}, {0: want})
>>> new.conversions, new.triton_conversions
(0, 2)
>>> "ttg.convert_layout" in new.text, new.layouts["%e"] == want.to_linear([512])
(False, True)
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from linear_layouts.core.arguments import checked
from linear_layouts.layouts import BlockedLayout, DotOperandLayout, SliceLayout, remove_broadcast_registers
from linear_layouts.layouts.recognize import recognize
from linear_layouts.engine import transfer
from linear_layouts.core.errors import LayoutError
from linear_layouts.triton_model.ir_text import (Module, Op, Region, check_same_kernel, check_well_formed, iter_args,
                                            op_key, parse_module, unique_value_names)
from linear_layouts.triton_model.encodings import Layouts, TypeInfo, check_layouts_fit, parse_type
from linear_layouts.core.layout import LinearLayout
from linear_layouts.core.mlir_text import I32_ARRAY, NAME_END, RESULT_LIST, VALUE_NAME, closing, pointee, read_ints
from linear_layouts.layouts.ttgir_text import format_attribute
from linear_layouts.target import DEFAULT_TARGET, Target, named_target, target_for_module

if TYPE_CHECKING:
    from linear_layouts.engine import EngineResult
    from linear_layouts.pipeline.ttir_import import ImportedProgram

__all__ = ["Rewrite", "rewrite_ttgir", "engine_assignment", "rewrite_kernel", "EngineAssignment", "MIN_GAIN"]

#: ops recomputed in any layout for free (no tensor operands, or only free ones)
_SOURCES = ("arith.constant", "tt.make_range", "tt.splat", "tt.get_program_id", "tt.get_num_programs")
#: ops whose result is laid out like their operands, element by element (and every operand alike)
_UNIFORM_PREFIX = ("arith.", "math.")
_UNIFORM = ("tt.addptr", "tt.load", "tt.fp_to_fp", "tt.bitcast", "tt.int_to_ptr", "tt.ptr_to_int", "tt.mulhiui",
            "tt.precise_sqrt", "tt.precise_divf", "tt.clampf", "tt.extern_elementwise", "tt.broadcast")
_STORES = ("tt.store", "tt.atomic_rmw", "tt.atomic_cas")
#: shape ops: free when their operand is (their result layout follows the operand's)
_SHAPE = ("tt.expand_dims", "tt.broadcast")
#: shape ops that are index math when their operand is (as ``ttir_import`` folds them), recomputed in
#: any layout: the operand's is the one the result's implies (``_Rewriter.operand_layout``)
_INDEX_SHAPE = _SHAPE + ("tt.reshape",)
_TENSOR = re.compile(r"tensor<")
_REGION_OPS = ("scf.for", "scf.if", "scf.while")


@dataclass(frozen=True)
class Rewrite:
    """A TTGIR with our layouts: ``text``; ``layouts``: each original TTGIR value's layout in it
    (LinearLayout on the value's shape); ``engine``: the values the engine laid out and its layout for
    each; ``conversions`` / ``triton_conversions``: ``convert_layout`` ops between different LinearLayouts
    in the new text / in Triton's;
    ``kept``: ops left in Triton's layout (not modeled by the engine), one line each."""

    text: str
    layouts: Mapping[str, LinearLayout]
    engine: Mapping[str, LinearLayout]
    conversions: int
    triton_conversions: int
    kept: tuple[str, ...] = ()
    #: data values (not index math, not expand_dims / broadcast, whose free bases Triton and the engine
    #: spell differently) whose layout here is not the engine's
    differs: tuple[str, ...] = ()
    #: every value of Triton's TTGIR has the LinearLayout it has there (conversions may have moved)
    same_layouts: bool = False
    #: ``rewrite_kernel``'s candidates it did not judge, one line each: the run and why (not well-formed,
    #: more conversions than Triton's, or more shared memory than a CTA can have); with ``choose=False``,
    #: the gate's verdict on the one text returned (empty: it passed)
    rejected: tuple[str, ...] = ()
    #: ``choose``: the predicted gain of the text returned over Triton's (``kernel_model.predicted_gain``;
    #: 0.0 for Triton's own); ``None`` where nothing was judged (``choose=False``)
    gain: float | None = None


@dataclass(frozen=True)
class EngineAssignment:
    """The engine's layouts for a TTGIR: ``values`` (TTGIR value name -> descriptor), ``stores`` (the
    index of each ``tt.store`` / atomic in walk order -> its layout), the engine's conversions and its
    unmodeled ops."""

    values: Mapping[str, Any]
    stores: Mapping[int, Any]
    engine_conversions: int
    unmodeled: tuple[tuple[str, str, str], ...] = ()
    program_text: str = field(default="", repr=False)


@checked
def engine_assignment(ttir: Module, ttgir: Module, *, num_warps: int | None = None,
                      scalars: Mapping[str, int] | None = None, cc: int | None = None,
                      max_ops: int | None = None, start: str = "both",
                      target: Target | None = None) -> EngineAssignment:
    """Propagate ``ttir`` with our engine (``start``: which of its runs, ``engine.propagate``) and tie its
    layouts to ``ttgir``'s values by (op name, source location); stores are tied in the same way, in order.
    ``target``: default ``ttgir``'s (``kernel_target``)."""
    from linear_layouts.engine import propagate

    target = kernel_target(ttgir, cc=cc, target=target)
    imported = _imported(ttir, ttgir, num_warps=num_warps, scalars=scalars, max_ops=max_ops, target=target)
    return _tied(ttir, ttgir, imported, propagate(imported.program, start=start, target=target))


def kernel_target(ttgir: Module, *, cc: int | None = None, target: Target | None = None) -> Target:
    """The target a rewrite of ``ttgir`` is for: ``target``, else compute capability ``cc``, else the one its
    ``ttg.target`` names (``cuda:80``: an sm_80 kernel's dots are mma v2, not wgmma). The engine lays out
    for NVIDIA targets only: another is a LayoutError (an AMD kernel rewritten for an NVIDIA ``target``
    given explicitly gets 32-lane candidates, which the gate refuses against its 64-lane module)."""
    if target is None:
        target = named_target(f"sm_{cc}") if cc is not None else target_for_module(ttgir.target)
    if target.backend != "cuda":
        raise LayoutError(f"target: {target.arch}: the engine lays out for NVIDIA targets only (AMD's MFMA "
                          "anchors and Triton's AMD lowering through LDS are not modelled)")
    return target


def _imported(ttir: Module, ttgir: Module, *, num_warps: int | None, scalars: Mapping[str, int] | None,
              cc: int | None = None, max_ops: int | None = None, target: Target | None = None) -> ImportedProgram:
    """``ttir`` imported into the engine's tile IR, at most ``max_ops``
    ops (default ``engine_compare.MAX_ENGINE_OPS``), ``ttgir``'s warps unless ``num_warps`` is given,
    for ``kernel_target(ttgir, cc=cc, target=target)``."""
    from linear_layouts.pipeline.engine_compare import MAX_ENGINE_OPS
    from linear_layouts.pipeline.ttir_import import import_ttir

    max_ops = MAX_ENGINE_OPS if max_ops is None else max_ops
    if max_ops < 1:
        raise LayoutError(f"max_ops must be a positive number of ops, got {max_ops}")
    check_same_kernel(ttir, ttgir)
    check_well_formed(ttgir, "ttgir")
    target = kernel_target(ttgir, cc=cc, target=target)  # the TTGIR's (a TTIR names none)
    imported = import_ttir(ttir, scalars=dict(scalars or {}), num_warps=num_warps or ttgir.num_warps, target=target)
    n = len(imported.program.ops)
    if n > max_ops:
        raise LayoutError(f"ttir: {n} ops, above the {max_ops}-op limit of the engine's run here "
                          f"(engine_compare.MAX_ENGINE_OPS = {MAX_ENGINE_OPS}; the engine's time grows about as the "
                          f"square of the ops): pass max_ops={n} or more to run it anyway")
    return imported


def _shapes(op: Op, module: Module) -> tuple[tuple[int, ...], ...]:
    """The shapes of ``op``'s result types (``()`` for a scalar)."""
    return tuple(parse_type(t, module).shape for t in op.result_types)


def _ties(ttir: Module, ttgir: Module) -> dict[int, Op]:
    """``id`` of each TTGIR op -> the TTIR op it computes, for the ops that have one.

    The rule: a TTGIR op is tied to a TTIR op of the same key (``ir_text.op_key``: op name and source
    location; the TTIR and the TTGIR come from one compile) with the same result shapes whose operands are the
    ties of its own operands (a ``ttg.convert_layout``'s result is its operand; an operand not tied --
    an op Triton added, a block argument -- matches any). One source line can make many ops (``tl.sort``'s
    network runs the same lines once per stage, on other shapes) and Triton can compute one TTIR op
    several times (a value rematerialized in another layout), so the first fit not tied yet is taken,
    else the first fit; with no fit, the first op of the key not tied yet, else its last (a TTGIR op
    standing for a TTIR op of another form: a pipelined load's ``ttg.local_load``).
    Function arguments are tied by position, as are a region op's results and block arguments where the
    counts agree. E.g. ``tt.reshape %ar -> tensor<1x2x1xi32>`` and ``tt.reshape %ar -> tensor<2x1x1xi32>``
    at one location are told apart by their shapes."""
    by_key: dict[tuple, list[Op]] = {}
    for op in ttir.functions[0].walk():
        by_key.setdefault(op_key(op), []).append(op)
    # every op of an unrolled loop can share one key: the options of a key are indexed by result shapes and
    # operand count (``same_form``), and by those and the operands (``same_operands``), in walk order, when a
    # TTGIR op first asks for the key; the first not tied yet of a list is found from where the last search
    # stopped (``first``: what is tied stays tied), so a kernel's ties are no scan of a key's ops per op
    same_form: dict[tuple, list[Op]] = {}
    same_operands: dict[tuple, list[Op]] = {}
    indexed: set[tuple] = set()
    cursor: dict[tuple, int] = {}

    def first(name: tuple, pool: list[Op]) -> Op | None:
        """The first op of ``pool`` (the index list ``name``) not tied yet, or ``None``."""
        k = cursor.get(name, 0)
        while k < len(pool) and id(pool[k]) in taken:
            k += 1
        cursor[name] = k
        return pool[k] if k < len(pool) else None

    value: dict[str, str] = {g: t for (g, _), (t, _) in zip(ttgir.functions[0].args, ttir.functions[0].args)}
    ties: dict[int, Op] = {}
    taken: set[int] = set()
    for op in ttgir.functions[0].walk():
        if op.name == "ttg.convert_layout":
            if op.operands[0] in value:
                value[op.results[0]] = value[op.operands[0]]
            continue
        key = op_key(op)
        options = by_key.get(key)
        if not options:
            continue
        shapes = _shapes(op, ttgir)
        if key not in indexed:
            indexed.add(key)
            for t in options:
                form = (key, _shapes(t, ttir), len(t.operands))
                same_form.setdefault(form, []).append(t)
                same_operands.setdefault((*form, tuple(t.operands)), []).append(t)
        operands = [value.get(o) for o in op.operands]
        form = (key, shapes, len(operands))
        if None in operands:  # an operand not tied matches any
            fits = [t for t in same_form.get(form, ())
                    if all(o is None or o == u for o, u in zip(operands, t.operands))]
            chosen = next((t for t in fits if id(t) not in taken), None)
        else:
            name = (*form, tuple(operands))
            fits = same_operands.get(name, [])
            chosen = first(("operands", name), fits)
        if fits:
            chosen = fits[0] if chosen is None else chosen
        else:
            chosen = first(("key", key), options)
            chosen = options[-1] if chosen is None else chosen
        taken.add(id(chosen))
        ties[id(op)] = chosen
        pairs = list(zip(op.results, chosen.results))
        if len(op.regions) == len(chosen.regions):
            for mine, theirs in zip(op.regions, chosen.regions):
                if len(mine.args) == len(theirs.args):
                    pairs += [(g, t) for (g, _), (t, _) in zip(mine.args, theirs.args)]
        if len(op.results) == len(chosen.results):
            value.update(pairs)
    return ties


def _holder(vid: int | None, result: EngineResult) -> int | None:
    """The value of ``result``'s program holding the data of the engine value ``vid`` (an imported
    TTIR value): ``vid`` while it lives; else the backward pass's recomputation of it
    (``EngineResult.recomputes``), the first made where there are several in one layout; ``None`` where
    there is none, or several in different layouts (no one layout is the engine's for it). E.g.
    int8_matmul's ``tt.load`` of ``sb_ptr``: the engine's ``%10``, dead once ``%24 = load %23``
    reloaded it in the mma accumulator's slice for its only use."""
    if vid is None or vid in result.layouts:
        return vid
    clones = [v for v, origin in result.recomputes.items() if origin == vid]
    if not clones or len({result.layouts[v] for v in clones}) > 1:
        return None
    return min(clones)


def _tied(ttir: Module, ttgir: Module, imported: ImportedProgram, result: EngineResult) -> EngineAssignment:
    """The engine's ``result`` on ``imported`` (``ttir``'s import) tied to ``ttgir``'s values and stores
    (``_ties``)."""
    ties = _ties(ttir, ttgir)
    values: dict[str, Any] = {}
    for op in ttgir.functions[0].walk():
        ttir_op = ties.get(id(op))
        if ttir_op is None or not op.results or op.name in _REGION_OPS:  # loop results: through their yields
            continue
        for r, t, ty in zip(op.results, ttir_op.results, op.result_types):
            vid = _holder(imported.names.get(t), result)
            if vid is not None and t not in imported.keep:
                d = result.descriptors[vid]
                if getattr(d, "rank", None) == len(parse_type(ty, ttgir).shape):
                    values[r] = d
    engine_stores = [op for op in result.program.ops if op.kind == "store"]
    store_of = {id(ttir_op): result.descriptors[eop.operands[0]] for ttir_op, eop in zip(imported.stores, engine_stores)}
    stores: dict[int, Any] = {}
    index = 0
    for op in ttgir.functions[0].walk():
        if op.name in _STORES:
            ttir_op = ties.get(id(op))
            if ttir_op is not None and id(ttir_op) in store_of:
                stores[index] = store_of[id(ttir_op)]
            index += 1
    return EngineAssignment(values, stores, len(result.conversions), imported.unmodeled, result.to_text())


# --------------------------------------------------------------------------------------------------
class _Rewriter:
    def __init__(self, module: Module, text: str, values: Mapping[str, Any], stores: Mapping[int, Any],
                 unmapped: str = "follow", broadcast_registers: bool = False):
        self.module = module
        self.unmapped = unmapped
        self.broadcast_registers = broadcast_registers
        self.text = text
        self.lay = Layouts(module)
        self.engine_values = values
        self.engine_stores = stores
        self.types: dict[str, TypeInfo] = {}
        self.defs: dict[str, Op] = {}
        self.layout: dict[str, Any] = {}       # value -> descriptor in the new program
        self.alias: dict[str, str] = {}        # removed convert_layout result -> its operand
        self.variants: dict[str, dict[tuple, tuple[str, Any, Any]]] = {}  # value -> (LL, text) -> (name, desc, how)
        self.order: dict[str, list[tuple]] = {}
        self.variant_desc: dict[str, Any] = {}  # a variant's name -> its layout
        self.uses: dict[int, dict[int, str]] = {}   # id(op) -> operand position -> name to use
        self.result_desc: dict[int, list[Any]] = {}  # id(op) -> result descriptors
        self.operand_desc: dict[int, dict[int, Any]] = {}
        self.block_variants: dict[int, list[str]] = {}  # id(op) -> region block args to emit variants of
        self.kept: list[str] = []
        self.free_memo: dict[str, bool] = {}  # free's answers, valid for free_epoch
        self.free_epoch: tuple[int, int] = (0, 0)
        self.free_aliases = 0  # len(alias) when free_provisional was last cleared
        self.free_provisional: set[str] = set()  # free's False answers a removed conversion may turn True
        self.names = set(_NAME.findall(text))
        self.counter = 0
        self.store_index = 0
        self.alias_names: list[tuple[str, str]] = []  # (attribute text as we print it, "#alias")
        for alias, body in module.aliases.items():
            if body.startswith("#ttg.") and not body.startswith(("#ttg.shared", "#ttg.swizzled", "#ttg.nvmma_sh")):
                try:
                    self.alias_names.append((format_attribute(self.lay.descriptor(module.expand(body))), "#" + alias))
                except LayoutError:
                    continue
        self.alias_names.sort(key=lambda pair: -len(pair[0]))
        self.attributes: dict[Any, str] = {}  # attribute's answers

    def attribute(self, desc: Any) -> str:
        """``desc`` in TTGIR syntax, the module's aliases used where they fit."""
        text = self.attributes.get(desc)
        if text is None:
            text = format_attribute(desc)
            for body, alias in self.alias_names:
                text = text.replace(body, alias)
            self.attributes[desc] = text
        return text

    # -- layouts ---------------------------------------------------------------------------------
    def original(self, name: str) -> Any:
        return self.lay.descriptor(self.types[name].encoding)

    def ll(self, desc: Any, shape: tuple[int, ...]) -> LinearLayout:
        return transfer.descriptor_layout(desc, shape)

    def shape(self, name: str) -> tuple[int, ...]:
        return self.types[name].shape

    def is_tensor(self, name: str) -> bool:
        t = self.types.get(name)
        return t is not None and t.kind == "tensor" and bool(t.encoding)

    def resolve(self, name: str) -> str:
        while name in self.alias:
            name = self.alias[name]
        return name

    def free(self, name: str) -> bool:
        """Whether ``name`` is index math: every definition its tensor operands come from, through
        element-wise and shape ops (not loads), is a ``_SOURCES`` op. Each definition is visited once,
        with a stack: a chain of element-wise data ops as long as the kernel is no recursion. The
        answers are kept while the values and their types stay the same: every op asks about its
        operands, which in a chain of data ops is a walk down the chain each time. A conversion
        ``assign`` removes (``alias``) can change only a False that came from reaching that conversion
        (``free_provisional``): those are asked again, the others stay (a walk that reaches no
        conversion left in the TTGIR does not pass one that goes later)."""
        epoch = (len(self.types), len(self.defs))
        if epoch != self.free_epoch:
            self.free_memo.clear()
            self.free_provisional.clear()
            self.free_epoch = epoch
        if len(self.alias) != self.free_aliases:
            for root in self.free_provisional:
                del self.free_memo[root]
            self.free_provisional.clear()
            self.free_aliases = len(self.alias)
        if name not in self.free_memo:
            answer, provisional = self._free(name)
            self.free_memo[name] = answer
            if provisional:
                self.free_provisional.add(name)
        return self.free_memo[name]

    def _free(self, name: str) -> tuple[bool, bool]:
        """``free`` of ``name``, walked (the answers ``free`` keeps are used on the way), and whether a
        False came from a ``ttg.convert_layout`` not removed yet (the walk stops there; removed, it looks
        through it)."""
        stack, seen = [name], set()
        while stack:
            name = self.resolve(stack.pop())
            if name in seen:
                continue
            seen.add(name)
            known = self.free_memo.get(name)
            if known is not None:
                if known:
                    continue
                return False, name in self.free_provisional
            op = self.defs.get(name)
            if op is None:
                return False, False
            if op.name in _SOURCES:
                continue
            uniform = op.name.startswith(_UNIFORM_PREFIX) or op.name in _UNIFORM or op.name in _INDEX_SHAPE
            if not uniform or op.name == "tt.load":
                return False, op.name == "ttg.convert_layout"
            stack.extend(o for o in reversed(op.operands) if self.is_tensor(o))
        return True, False

    def fresh(self, name: str) -> str:
        base = re.sub(r"\W", "_", name.lstrip("%"))
        while True:
            self.counter += 1
            new = f"%ll{self.counter}_{base}"
            if new not in self.names:
                self.names.add(new)
                return new

    def need(self, name: str, desc: Any) -> str:
        """The name holding ``name`` in layout ``desc`` (a recomputation of index math, else a conversion).

        A recomputation needs its operands in their layouts first, and index math can be a chain as long
        as the kernel (an unrolled loop of ``arith`` ops on a range): each step is a generator
        (``_need``) that yields the operands it needs, run from a stack here, not a recursion, in the
        order a recursion would take (a name is made on the way down, a variant recorded on the way up).
        """
        stack = [self._need(name, desc)]
        answer: str | None = None
        while stack:
            try:
                request = stack[-1].send(answer)
            except StopIteration as done:
                stack.pop()
                answer = done.value
                continue
            stack.append(self._need(*request))
            answer = None
        return answer

    def _need(self, name: str, desc: Any) -> Generator[tuple[str, Any], str, str]:
        """``need`` of ``name`` in ``desc``, one step: yields ``(operand, layout)`` for each operand a
        recomputation needs and is sent the name holding it; returns the name holding ``name``."""
        name = self.resolve(name)
        shape = self.shape(name)
        if self.attribute(self.layout[name]) == self.attribute(desc):
            return name  # Triton's verifiers compare attributes, not the layouts they denote
        target = (self.ll(desc, shape), self.attribute(desc))
        known = self.variants.setdefault(name, {})
        if target in known:
            return known[target][0]
        new = self.fresh(name)
        op = self.defs.get(name)
        if op is not None and (self.free(name) or (op.name in _SHAPE and len(op.results) == 1)):
            # index math is recomputed; a broadcast / expand_dims of data too, its (smaller) operand
            # converted instead, as the engine's backward pass does
            operands = {}
            for k, o in enumerate(op.operands):
                if self.is_tensor(o):
                    operands[k] = yield o, self.operand_layout(op, o, desc)
            known[target] = (new, desc, ("clone", op, operands))
        else:
            known[target] = (new, desc, ("convert", name))
        self.variant_desc[new] = desc
        self.order.setdefault(name, []).append(target)
        return new

    def operand_layout(self, op: Op, operand: str, result: Any) -> Any:
        """The layout ``operand`` must have for ``op`` to produce ``result``: a reshape's is the result's
        reshaped back (``transfer.reshape_backward``; a 2-element range under ``tensor<1x2xi32, L>``:
        ``L`` on ``[1, 2]`` read as ``[2]``). Triton verifies a reshape by LinearLayout equality, and
        whether its LinearLayout of a blocked layout keeps the zero (broadcast) register bases depends on
        its version (``broadcast_registers``: Triton 3.6 keeps them, 3.9 drops them, as Gluon's
        ``to_linear_layout`` shows): where dropped, a blocked result's are dropped here too (a range under
        ``sizePerThread = [2, 1]`` on ``[1, 2]`` then has none); where kept, the operand keeps them (then a
        ``#ttg.linear`` with zero register bases: no operand layout passes both versions)."""
        if op.name == "tt.expand_dims":
            axis = op.attr_int("axis") or 0
            return SliceLayout(axis, result)
        if op.name == "tt.reshape":
            out = self.ll(result, self.shape(op.results[0]))
            if isinstance(result, BlockedLayout) and not self.broadcast_registers:
                out = remove_broadcast_registers(out)
            return recognize(transfer.reshape_backward(out, self.shape(operand)))
        return result

    def data_operands(self, op: Op) -> list[str]:
        return [o for o in op.operands if self.is_tensor(o) and not self.free(o)]

    def prefer(self, desc: Any, op: Op, shape: tuple[int, ...]) -> Any:
        """``desc``, or the layout of a data operand of ``op`` that is the same LinearLayout (no
        conversion between two spellings of one layout)."""
        target = self.ll(desc, shape)
        for o in self.data_operands(op):
            have = self.layout[self.resolve(o)]
            if self.shape(o) == shape and self.ll(have, shape) == target:
                return have
        return desc

    def engine(self, name: str) -> Any | None:
        return self.engine_values.get(name)

    # -- pass 1: assign ---------------------------------------------------------------------------
    def collect(self, region: Region) -> None:
        for name, ty in region.args:
            self.types[name] = parse_type(ty, self.module)
        for op in region.ops:
            result_types = op.result_types
            if len(result_types) == 1 < len(op.results):  # "%a, %b = tt.split %x : T -> T'"
                result_types = result_types * len(op.results)
            for r, t in zip(op.results, result_types):
                self.types[r] = parse_type(t, self.module)
                self.defs[r] = op
            if op.name in ("arith.cmpi", "arith.cmpf") and op.results:
                t = self.types[op.results[0]]
                self.types[op.results[0]] = TypeInfo(t.kind, t.shape, "i1", t.encoding, t.alloc_shape, t.text)
            elif op.name == "tt.load" and op.results and self.types[op.results[0]].kind == "tensor":
                t = self.types[op.results[0]]
                element = pointee(t.element) or t.element
                self.types[op.results[0]] = TypeInfo(t.kind, t.shape, element, t.encoding, t.alloc_shape, t.text)
            elif op.name == "arith.select" and op.results and op.operand_types:
                self.types[op.results[0]] = parse_type(op.operand_types[-1], self.module)
            for sub in op.regions:
                self.collect(sub)
        for op in region.ops:
            if op.name == "scf.for":
                self.for_args(op)

    def for_args(self, op: Op) -> None:
        for (arg, init), result in zip(iter_args(op.text), op.results):
            if result in self.types:
                self.types[arg] = self.types[result]

    def assign(self, region: Region) -> None:
        for op in region.ops:
            self.assign_op(op)

    def set_result(self, op: Op, descs: list[Any]) -> None:
        self.result_desc[id(op)] = descs
        for r, d in zip(op.results, descs):
            if d is not None:
                self.layout[r] = d

    def demand(self, op: Op, k: int, desc: Any) -> None:
        self.uses.setdefault(id(op), {})[k] = self.need(op.operands[k], desc)
        self.operand_desc.setdefault(id(op), {})[k] = desc

    def assign_op(self, op: Op) -> None:
        name = op.name
        tensors = [k for k, o in enumerate(op.operands) if self.is_tensor(o)]
        results = [r for r in op.results if self.is_tensor(r)]
        if name == "ttg.convert_layout":
            self.alias[op.results[0]] = op.operands[0]
            self.layout[op.results[0]] = self.layout[self.resolve(op.operands[0])]
            return
        if name == "scf.for":
            self.assign_for(op)
            return
        if name == "scf.if":
            self.assign_if(op)
            return
        if name in ("scf.yield", "tt.reduce.return", "tt.scan.return", "tt.return"):
            return
        if not results and not tensors:
            for sub in op.regions:
                self.assign(sub)
            return
        if results and self.free(op.results[0]):
            self.set_result(op, [self.original(r) for r in op.results])
            return
        if name == "tt.reduce":
            data = self.data_operands(op) or [op.operands[0]]
            src = self.layout[self.resolve(data[0])]
            for k in tensors:
                self.demand(op, k, src)
            axis = op.attr_int("axis") or 0
            self.set_result(op, [SliceLayout(axis, src) if self.is_tensor(r) else None for r in op.results])
            return
        if name in _STORES:
            desc = self.engine_stores.get(self.store_index)
            self.store_index += 1
            value = self.resolve(op.operands[1]) if len(op.operands) > 1 else None
            if desc is None:
                desc = self.layout[value] if value is not None and self.is_tensor(value) else self.original(op.operands[0])
                self.kept.append(f"{name} at {op.loc}: not imported by the engine, stored in its value's layout")
            desc = self.prefer(desc, op, self.shape(op.operands[0]))
            for k in tensors:
                self.demand(op, k, desc)
            self.set_result(op, [desc if self.is_tensor(r) else None for r in op.results])
            return
        if name in ("tt.expand_dims", "tt.broadcast", "tt.trans"):
            self.assign_shape(op)
            return
        if name in ("tt.join", "tt.split", "tt.reshape") and self.assign_inferred(op):
            return
        if name.startswith(_UNIFORM_PREFIX) or name in _UNIFORM or name == "tt.scan":
            desc = self.engine(op.results[0]) if op.results else None
            if desc is None:
                data = self.data_operands(op)
                follow = data and self.unmapped == "follow"
                desc = self.layout[self.resolve(data[0])] if follow else self.original(op.results[0])
            desc = self.prefer(desc, op, self.shape(op.results[0]))
            if name == "tt.scan" and not isinstance(desc, BlockedLayout):
                desc = self.original(op.results[0])  # Triton lowers a scan of a blocked layout only
            for k in tensors:
                self.demand(op, k, desc)
            self.set_result(op, [desc] * len(op.results))
            for sub in op.regions:
                self.assign(sub)
            return
        if name == "ttg.local_alloc" or name == "ttg.local_store":
            return  # any register layout may be written to shared memory
        if name == "ttg.async_copy_global_to_local":
            ptr = self.resolve(op.operands[0])
            for k in tensors[1:]:
                self.demand(op, k, self.layout[ptr])
            return
        if name == "ttg.local_load" and results:
            desc = self.engine(op.results[0])
            original = self.original(op.results[0])
            if desc is None or isinstance(original, DotOperandLayout):
                desc = original
            self.set_result(op, [desc])
            return
        # not modeled: Triton's layouts, operands converted back to them where needed
        for k in tensors:
            self.demand(op, k, self.original(op.operands[k]))
        self.set_result(op, [self.original(r) if self.is_tensor(r) else None for r in op.results])
        for sub in op.regions:
            self.assign(sub)
        if any(self.engine(r) is not None for r in op.results):
            self.kept.append(f"{name} at {op.loc}: keeps Triton's layout")

    def assign_shape(self, op: Op) -> None:
        """expand_dims / broadcast / trans of data: the result layout their operand's implies, spelled as
        Triton's verifiers want it (expand_dims: a slice operand, its parent the result)."""
        src = self.resolve(op.operands[0])
        desc = self.layout[src]
        shape = self.shape(src)
        before = self.original(op.operands[0])  # Triton's operand (a conversion's result, maybe)
        as_triton = self.ll(desc, shape) == self.ll(before, shape)
        if op.name == "tt.broadcast":
            self.set_result(op, [desc])
        elif op.name == "tt.expand_dims":
            axis = op.attr_int("axis") or 0
            if isinstance(desc, SliceLayout) and desc.dim == axis:
                parent = desc.parent
            elif as_triton:
                parent = self.original(op.results[0])
            else:
                parent = recognize(transfer.expand_dims_forward(self.ll(desc, shape), axis))
            self.demand(op, 0, SliceLayout(axis, parent))
            self.set_result(op, [parent])
        elif as_triton:
            self.demand(op, 0, before)
            self.set_result(op, [self.original(op.results[0])])
        else:
            m = re.search(rf"order = {I32_ARRAY}", op.text)
            perm = list(read_ints(m.group(1), f"ir text: {op.name}'s order")) if m else [1, 0]
            self.set_result(op, [recognize(transfer.trans_forward(self.ll(desc, shape), perm))])

    def assign_inferred(self, op: Op) -> bool:
        """join / split / reshape: the result layout the engine's transfer function gives (Triton checks
        these as LinearLayouts); False where it has none (the op keeps Triton's layouts)."""
        src = self.resolve(op.operands[0])
        desc, shape = self.layout[src], self.shape(src)
        if self.ll(desc, shape) == self.ll(self.original(op.operands[0]), shape):
            for k, o in enumerate(op.operands):
                self.demand(op, k, self.original(o))
            self.set_result(op, [self.original(r) for r in op.results])
            return True
        layout = self.ll(desc, shape)
        if op.name == "tt.join":
            out = transfer.join_forward(layout)
        elif op.name == "tt.split":
            out = transfer.split_forward(layout)
        else:
            out = transfer.reshape_forward(layout, self.shape(op.results[0]))
        if out is None:
            return False
        for k in range(len(op.operands)):
            self.demand(op, k, desc)
        result = recognize(out)
        self.set_result(op, [result] * len(op.results))
        return True

    def group_layout(self, result: str, yielded: str | None, init: str | None) -> Any:
        """The layout of a loop's or an if's ``result``: the engine's for the value ``yielded`` into it, else
        its ``init``'s (a loop's), else Triton's."""
        desc = self.engine(self.resolve(yielded)) if yielded is not None else None
        if desc is None and init is not None and self.is_tensor(init):
            desc = self.layout.get(self.resolve(init))
        return desc if desc is not None else self.original(result)

    def assign_for(self, op: Op) -> None:
        pairs = iter_args(op.text)
        groups: list[Any] = []
        body = op.regions[0].ops
        yields = body[-1].operands if body and body[-1].name == "scf.yield" else ()
        for k, ((arg, init), result) in enumerate(zip(pairs, op.results)):
            if not self.is_tensor(result):
                groups.append(None)
                continue
            desc = self.group_layout(result, yields[k] if k < len(yields) else None, init)
            groups.append(desc)
            self.layout[arg] = desc
            k = op.operands.index(init)
            self.demand(op, k, desc)
        self.block_variants[id(op)] = [a for a, _ in pairs]
        self.assign(op.regions[0])
        self.assign_yield(op.regions[0], groups)
        self.set_result(op, groups)

    def assign_if(self, op: Op) -> None:
        for sub in op.regions:
            self.assign(sub)
        groups = []
        for k, r in enumerate(op.results):
            if not self.is_tensor(r):
                groups.append(None)
                continue
            yielded = op.regions[0].ops[-1].operands[k] if op.regions and op.regions[0].ops else None
            groups.append(self.group_layout(r, yielded, None))
        for sub in op.regions:
            self.assign_yield(sub, groups)
        self.set_result(op, groups)

    def assign_yield(self, region: Region, groups: list[Any]) -> None:
        if not region.ops or region.ops[-1].name != "scf.yield":
            return
        y = region.ops[-1]
        for k, desc in enumerate(groups):
            if desc is not None and k < len(y.operands):
                self.demand(y, k, desc)

    # -- pass 2: emit -----------------------------------------------------------------------------
    def enc_text(self, desc: Any, old: TypeInfo, old_text: str) -> str:
        if self.attribute(desc) == self.attribute(self.lay.descriptor(old.encoding)):
            return old_text  # the same attribute: Triton's own text
        return _tensor_text(old, self.attribute(desc))

    def retype(self, line: str, slots: list[tuple[tuple, Any]]) -> str:
        """Every ``tensor<...>`` in ``line`` re-laid: the first unused slot (type key, new descriptor)
        of that type (shape, element, encoding), else the last one of that type used."""
        out, i, used, last = [], 0, set(), {}
        for m in _TENSOR.finditer(line):
            if m.start() < i:
                continue
            end = closing(line, m.end() - 1)
            if end < 0:
                raise LayoutError(f"rewrite: unbalanced type in {line[:120]!r}")
            text = line[m.start():end + 1]
            t = parse_type(text, self.module)
            key = _type_key(t)
            choice = next((j for j, (k, _) in enumerate(slots) if j not in used and k == key), last.get(key))
            out.append(line[i:m.start()])
            if choice is None or slots[choice][1] is None:
                out.append(text)
            else:
                used.add(choice)
                last[key] = choice
                out.append(self.enc_text(slots[choice][1], t, text))
            i = end + 1
        out.append(line[i:])
        return "".join(out)

    def op_slots(self, op: Op, operand_descs: Mapping[int, Any], result_descs: list[Any]) -> list[tuple[str, Any]]:
        """(type key, new descriptor) of each tensor type ``op``'s line spells, in order: its operands', then
        its results' (an ``scf.for`` head spells its results' only: ``-> (T0, T1)``)."""
        slots = []
        for k, o in enumerate(op.operands if op.name != "scf.for" else ()):
            if self.is_tensor(o):
                desc = operand_descs.get(k)
                if desc is None:
                    desc = self.layout.get(self.resolve(o))
                slots.append((_type_key(self.types[o]), desc))
        for r, d in zip(op.results, result_descs):
            if self.is_tensor(r):
                slots.append((_type_key(self.types[r]), d))
        return slots

    def rename(self, line: str, op: Op, uses: Mapping[int, str]) -> str:
        head, sep, rest = _split_results(line, op)
        for k, new in uses.items():
            old = op.operands[k]
            if new != old:
                rest = re.sub(re.escape(old) + NAME_END, new, rest)
        for k, o in enumerate(op.operands):  # removed conversions: their operand directly
            if k not in uses and o in self.alias:
                rest = re.sub(re.escape(o) + NAME_END, self.resolve(o), rest)
        return head + sep + rest

    def emit_variants(self, name: str, indent: str, out: list[str]) -> None:
        """The lines of ``name``'s variants (``need``: conversions, recomputations), each followed by its
        own variants' (a variant's name has none as ``need`` makes them; walked with a stack all the same,
        in the order a recursion would take)."""
        stack = [(name, iter(self.order.get(name, ())))]
        while stack:
            name, targets = stack[-1]
            target = next(targets, None)
            if target is None:
                stack.pop()
                continue
            new, desc, how = self.variants[name][target]
            if how[0] == "convert":
                t = self.types[name]
                src = _tensor_text(t, self.attribute(self.layout[name]))
                dst = _tensor_text(t, self.attribute(desc))
                out.append(f"{indent}{new} = ttg.convert_layout {name} : {src} -> {dst}")
            else:
                op, operands = how[1], how[2]
                line = self.rename(op.text, op, operands)
                line = line.replace(op.results[0], new, 1)
                descs = {k: self.layout_of_use(operands[k]) for k in operands}
                out.append(indent + self.retype(line, self.op_slots(op, descs, [desc])))
            stack.append((new, iter(self.order.get(new, ()))))

    def layout_of_use(self, name: str) -> Any:
        """The layout of ``name`` as an operand: a variant's (``need``), else the value's."""
        if name in self.variant_desc:
            return self.variant_desc[name]
        return self.layout[self.resolve(name)]

    def emit(self) -> str:
        lines = self.text.splitlines()
        ops = list(self.module.functions[0].walk())
        cursor = 0
        stack: list[Op] = []
        out: list[str] = []
        in_func = False
        for raw in lines:
            stripped = raw.strip()
            indent = raw[:len(raw) - len(raw.lstrip())]
            if not in_func:
                out.append(raw)
                if stripped.startswith("tt.func"):
                    in_func = True
                    fn = self.module.functions[0]
                    for arg, _ in fn.args:
                        self.emit_variants(arg, indent + "  ", out)
                continue
            if cursor < len(ops) and stripped == ops[cursor].text:
                op = ops[cursor]
                cursor += 1
                if op.name == "ttg.convert_layout":
                    continue
                out.append(indent + self.op_line(op, stripped))
                if op.regions:
                    stack.append(op)
                    for arg in self.block_variants.get(id(op), []):
                        self.emit_variants(arg, indent + "  ", out)
                else:
                    for r in op.results:
                        self.emit_variants(r, indent, out)
                continue
            if stripped.startswith("}") and stack:
                op = stack[-1]
                if stripped.startswith(("} else {", "} do {", "}, {")):
                    out.append(raw)
                    continue
                stack.pop()
                slots = self.op_slots(op, self.operand_desc.get(id(op), {}), self.result_desc.get(id(op), []))
                out.append(self.retype(raw, slots))
                for r in op.results:
                    self.emit_variants(r, indent, out)
                continue
            if stripped.startswith("}") and not stack:
                in_func = False
            out.append(raw)
        return "\n".join(_dead_code_removed(out)) + "\n"

    def op_line(self, op: Op, stripped: str) -> str:
        uses = self.uses.get(id(op), {})
        line = self.rename(stripped, op, uses)
        descs = dict(self.operand_desc.get(id(op), {}))
        return self.retype(line, self.op_slots(op, descs, self.result_desc.get(id(op), [])))


#: ops without side effects: removed when nothing uses their result (Triton's and ours alike)
_PURE = re.compile(rf"^\s*({VALUE_NAME}) = (?:arith\.|math\.|tt\.(?:splat|make_range|expand_dims|broadcast|addptr|"
                   r"trans|reshape|join|bitcast|fp_to_fp|int_to_ptr|ptr_to_int)\b|"
                   r"ttg\.convert_layout\b|ttg\.local_load\b)")
_NAME = re.compile(VALUE_NAME)


def _dead_code_removed(lines: list[str]) -> list[str]:
    """``lines`` without the pure one-line ops whose result nothing uses (to a fixed point): the values
    recomputed in another layout leave their originals unused, and a conversion of a dead value would
    still cost shared memory and barriers. A worklist: a removed line's names are counted down once and
    only their definitions looked at again (a dead chain of index math as long as the kernel is one
    pass, not one pass per link), the same lines removed as by removing the dead ones round by round.

    >>> _dead_code_removed(["%a = arith.addi %x, %x", "%b = arith.muli %a, %a", "tt.store %p, %x"])
    ['tt.store %p, %x']
    """
    names = [_NAME.findall(line.split(" loc(")[0]) for line in lines]
    uses: dict[str, int] = {}
    for found in names:
        for name in found:
            uses[name] = uses.get(name, 0) + 1
    defines: dict[str, list[int]] = {}  # a pure one-line op's result -> the lines defining it
    for i, line in enumerate(lines):
        m = _PURE.match(line)
        if m and not line.rstrip().endswith("{"):
            defines.setdefault(m.group(1), []).append(i)
    removed = [False] * len(lines)
    work = list(reversed(range(len(lines))))
    while work:
        i = work.pop()
        if removed[i]:
            continue
        m = _PURE.match(lines[i])
        if not m or uses.get(m.group(1), 0) > 1 or lines[i].rstrip().endswith("{"):
            continue
        removed[i] = True
        for name in names[i]:
            uses[name] -= 1
            if uses[name] <= 1:
                work.extend(j for j in defines.get(name, ()) if not removed[j])
    return [line for line, gone in zip(lines, removed) if not gone]


def _split_results(line: str, op: Op) -> tuple[str, str, str]:
    if op.results:
        m = re.match(rf"^(\s*{RESULT_LIST})(\s*=\s*)(.*)$", line, re.S)
        if m:
            return m.group(1), m.group(2), m.group(3)
    return "", "", line


def _type_key(t: TypeInfo) -> tuple:
    return (t.shape, t.element, re.sub(r"\s+", "", t.encoding))


def _tensor_text(t: TypeInfo, encoding: str) -> str:
    """``tensor<4x8xf32, ENCODING>`` for a tensor type ``t``."""
    return f"tensor<{'x'.join(map(str, t.shape))}x{t.element}, {encoding}>"


def _cost(rewrite: Rewrite) -> tuple[int, int]:
    """(conversions, the report's predicted shared wavefronts per CTA of conversions and stagings)."""
    from linear_layouts.pipeline.engine_compare import cost_report, triton_side

    try:
        wavefronts = triton_side(cost_report(rewrite.text))[2]
    except LayoutError:
        wavefronts = 0
    return rewrite.conversions, wavefronts


def _count_converts(module: Module) -> int:
    """``convert_layout`` ops between different LinearLayouts (a change of spelling moves nothing)."""
    lay = Layouts(module)
    return sum(op.name == "ttg.convert_layout"
               and lay.linear(parse_type(op.operand_types[0], module)) != lay.linear(parse_type(op.result_types[0], module))
               for op in module.functions[0].walk())


@checked
def rewrite_ttgir(ttgir: str, values: Mapping[str, Any], stores: Mapping[int, Any] | None = None, *,
                  unmapped: str = "best", broadcast_registers: bool = False) -> Rewrite:
    """``ttgir`` with ``values`` (TTGIR value name -> catalog descriptor) and ``stores`` (index of a
    store / atomic in walk order -> descriptor) as the layouts of those values (module doc). Value names
    are ``parse_module``'s (``ir_text.unique_value_names``: a name Triton reused in a sibling region is
    renamed there, in the result's text too).

    ``unmapped``: the layout of an element-wise data op the engine did not lay out (one Triton added, or
    one of an op the engine does not import, such as ``tt.dot_scaled``'s upcast): ``"follow"`` its first
    data operand's, ``"triton"`` Triton's, ``"best"`` whichever of the two needs fewer conversions
    (``"follow"`` on a tie), then fewer predicted shared-memory wavefronts (the report's model).
    ``broadcast_registers``: ``rewrite_kernel``'s (the Triton version whose reshape verifier to pass)."""
    if unmapped not in ("follow", "triton", "best"):
        raise LayoutError(f"unmapped must be 'follow', 'triton' or 'best', got {unmapped!r}")
    module = parse_module(ttgir)
    check_well_formed(module, "ttgir")
    return _rewritten(module, unique_value_names(ttgir), values, stores, unmapped, broadcast_registers)[0]


def _rewritten(module: Module, ttgir: str, values: Mapping[str, Any], stores: Mapping[int, Any] | None,
               unmapped: str, broadcast_registers: bool = False) -> tuple[Rewrite, Module]:
    """``rewrite_ttgir`` of Triton's well-formed TTGIR, parsed (``module``) and with its parser's value names
    (``ttgir``: ``unique_value_names`` of the text), and the parse of the result's text: ``rewrite_kernel``
    parses Triton's TTGIR once for all its candidates and judges each in that parse. ``broadcast_registers``:
    ``rewrite_kernel``'s."""
    if unmapped == "best":
        first = _rewritten(module, ttgir, values, stores, "follow", broadcast_registers)
        second = _rewritten(module, ttgir, values, stores, "triton", broadcast_registers)
        return second if _cost(second[0]) < _cost(first[0]) else first
    rw = _Rewriter(module, ttgir, values, dict(stores or {}), unmapped, broadcast_registers)
    fn = module.functions[0]
    for arg, ty in fn.args:
        rw.types[arg] = parse_type(ty, module)
    rw.collect(fn.body)
    for name, t in list(rw.types.items()):
        if rw.is_tensor(name):
            rw.layout.setdefault(name, rw.lay.descriptor(t.encoding))
    rw.assign(fn.body)
    text = rw.emit()
    new = parse_module(text)
    layouts: dict[str, LinearLayout] = {}
    for name in rw.types:
        if rw.is_tensor(name) and name not in rw.alias and name in rw.layout:
            layouts[name] = rw.ll(rw.layout[name], rw.shape(name))
    engine = {n: rw.ll(d, rw.shape(n)) for n, d in values.items() if n in rw.types and rw.is_tensor(n)}
    differs = tuple(n for n in engine if n in layouts and layouts[n] != engine[n] and not rw.free(n)
                    and rw.defs[n].name not in _SHAPE)
    same = all(layouts[n] == rw.ll(rw.original(n), rw.shape(n)) for n in layouts) and all(
        rw.ll(rw.operand_desc[id(op)][0], rw.shape(op.operands[0])) == rw.ll(rw.original(op.operands[0]),
                                                                             rw.shape(op.operands[0]))
        for op in fn.walk() if op.name in _STORES and 0 in rw.operand_desc.get(id(op), {}))
    return Rewrite(text, layouts, engine, _count_converts(new), _count_converts(module), tuple(rw.kept),
                   differs, same), new


#: a rewrite must be predicted this much faster than Triton's TTGIR to be chosen: a smaller gain is
#: below the run-to-run spread of the device's timings (benchmarks/results/gpu_engine_kernels*.md), so
#: Triton's layouts are kept.
MIN_GAIN = 0.02


def _not_well_formed(start: str, candidate: Module) -> str | None:
    """Why the candidate of the run ``start`` (the parse of its text) is no kernel Triton would parse
    (``ir_text.check_well_formed``'s rules, ``layouts.check_layouts_fit``'s), as a ``Rewrite.rejected``
    line, or ``None``: ``"both: not well-formed: ttgir: ..."``."""
    try:
        check_well_formed(candidate, "ttgir")
        check_layouts_fit(candidate, "ttgir")
    except LayoutError as error:
        return f"{start}: not well-formed: {error}"
    return None


def _too_big(start: str, shared_bytes: int, target: Target) -> str | None:
    """Why a candidate of the run ``start`` needing ``shared_bytes`` of shared memory cannot launch (more
    than the target's ``cta_shared_bytes``), as a ``Rewrite.rejected`` line, or ``None``."""
    if shared_bytes > target.cta_shared_bytes:
        limit = "cost_model.CTA_SHARED_BYTES" if target == DEFAULT_TARGET else f"{target.name}: Target.cta_shared_bytes"
        return (f"{start}: needs {shared_bytes} bytes of shared memory, more than a CTA can have "
                f"({target.cta_shared_bytes}, {limit})")
    return None


def _model_refusal(start: str, own, costs, narrowing: bool = False) -> str | None:
    """Why the whole-kernel model refuses a candidate of the run ``start`` (``kernel_model.KernelTime`` of
    Triton's TTGIR ``own`` and of the candidate ``costs``), as a ``Rewrite.rejected`` line, or ``None``:
    it makes global accesses narrower and either no measured table (``target/devices/global``) priced that
    or ``narrowing`` is off (the model alone does not act on narrower accesses: the table prices them from a
    streaming loop at full occupancy, and on kernels it had not seen such rewrites ran slower than
    predicted; a measured choice times them), or it is estimated to keep more registers live than ptxas
    may give a thread, and more than Triton's by an allocation unit (``registers.REGISTER_UNIT``; the
    estimate is no finer)."""
    from linear_layouts.pipeline.kernel_model import narrowed_accesses
    from linear_layouts.triton_model.registers import REGISTER_UNIT

    narrowed = narrowed_accesses(own, costs)
    if narrowed and not costs.table:
        return (f"{start}: narrower global accesses ({'; '.join(narrowed)}) and no measured table of global "
                "instruction costs (target/devices/global) to price them")
    if narrowed and not narrowing:
        return (f"{start}: narrower global accesses ({'; '.join(narrowed)}): the model alone does not act on "
                "them (a measured choice times them)")
    if costs.spills and costs.registers > own.registers + REGISTER_UNIT:
        return (f"{start}: an estimated {costs.registers} registers live per thread (Triton's: {own.registers}), "
                "above the 255 ptxas may give: it would spill")
    return None


@checked
def rewrite_kernel(ttir: str, ttgir: str, *, num_warps: int | None = None,
                   scalars: Mapping[str, int] | None = None,
                   choose: bool = True, max_ops: int | None = None, verify: str = "off",
                   grid: tuple[int, ...] | None = None, target: Target | None = None,
                   broadcast_registers: bool = False, min_gain: float = MIN_GAIN,
                   narrowing: bool = False) -> tuple[Rewrite, EngineAssignment]:
    """Our engine's assignment for a kernel's TTIR written into its TTGIR (same compile).

    ``choose`` (default): the candidates -- the engine's choice and each of its two runs
    (``engine.propagate``'s ``start``) -- are judged against Triton's own TTGIR with the whole-kernel model
    (``kernel_model.kernel_time``: conversions and stagings through shared memory, including those of wgmma
    operands, which the engine does not see; global loads, stores and atomics as Triton lowers them, priced
    by the device's measured table where there is one; registers and occupancy; each op times its
    executions, from ``scalars`` and ``grid`` where given). A candidate is well-formed
    (``ir_text.check_well_formed``: values defined before use, one type per value, ...; its layouts have
    the module's lanes, warps and CTAs, ``layouts.check_layouts_fit``), has no more
    conversions than Triton's, fits a CTA's shared memory (``shared_memory.shared_memory_need`` at
    most the target's ``cta_shared_bytes``) and passes the model's gate (``_model_refusal``: no narrower global
    accesses it cannot price, no spills it predicts); the one of the largest ``kernel_model.predicted_gain``
    is chosen if that is at least ``min_gain`` (default ``MIN_GAIN``; the hook's measured mode asks for any
    candidate not predicted much slower, since it times the two before keeping ours), else Triton's TTGIR.
    ``narrowing``: a candidate with narrower global accesses than Triton's may be chosen (the hook's
    measured mode; the model alone refuses them, ``_model_refusal``). ``verify`` (``"process"``: in this
    process; ``"child"``: in a child Python, for a caller inside a Triton compile; ``"off"``): the chosen
    candidate and Triton's TTGIR are compiled on the CPU first (``artifact_check.check_compiled``, about a
    second each) and Triton's is kept where the compiled candidate is not what the model priced, or spills
    or drops occupancy. ``Rewrite.rejected`` names the candidates left out and why; ``Rewrite.gain`` is the
    predicted gain. The TTIR is imported and each run propagated once. ``choose=False``: the engine's
    choice, as written, through the same launch gate (``_not_well_formed``, ``_too_big``): a choice that
    fails it is still returned, with the rule it breaks in ``Rewrite.rejected`` (as the one line
    ``choose`` would give it), so the caller sees it is no kernel to compile. ``max_ops``: the largest
    imported TTIR propagated (default ``engine_compare.MAX_ENGINE_OPS``); a larger one is a LayoutError
    naming the limit. ``target``: the target the kernel is rewritten for (default: the one its TTGIR names,
    ``kernel_target``): its plans, its ISA, its shared memory and its device's tables.
    ``broadcast_registers``: the TTGIR is for a Triton whose reshape verifier counts a blocked layout's
    zero register bases (Triton 3.6; default: 3.9's, which drops them; ``triton_hook.stage`` asks the
    installed Triton): a reshape of index math recomputed in a blocked layout is written to pass it."""
    from linear_layouts.engine import propagate, propagate_runs
    from linear_layouts.pipeline.engine_compare import global_pointers, ttgir_costs
    from linear_layouts.pipeline.kernel_model import kernel_time, predicted_gain

    if verify not in ("off", "process", "child"):
        raise LayoutError(f"verify must be 'off', 'process' or 'child', got {verify!r}")
    if not -1.0 < min_gain < 1.0:
        raise LayoutError(f"min_gain must lie in (-1, 1), got {min_gain!r}")
    ttgir_module, ttir_module = parse_module(ttgir), parse_module(ttir)
    target = kernel_target(ttgir_module, target=target)
    imported = _imported(ttir_module, ttgir_module, num_warps=num_warps, scalars=scalars, max_ops=max_ops,
                         target=target)
    if not choose:
        first = _tied(ttir_module, ttgir_module, imported, propagate(imported.program, target=target))
        rewrite, candidate = _rewritten(ttgir_module, unique_value_names(ttgir), first.values, first.stores, "best",
                                        broadcast_registers)
        refusal = _not_well_formed("both", candidate)
        if refusal is None:
            costs = ttgir_costs(global_pointers(ttir_module, imported), rewrite.text, target=target)
            refusal = _too_big("both", costs.shared_bytes, target)
        return dataclasses.replace(rewrite, rejected=() if refusal is None else (refusal,)), first
    runs = propagate_runs(imported.program, target=target)  # each run once; "both" is one of the other two
    assignments: dict[int, EngineAssignment] = {}
    for run in runs.values():
        if id(run) not in assignments:
            assignments[id(run)] = _tied(ttir_module, ttgir_module, imported, run)
    first = assignments[id(runs["both"])]
    pointers = global_pointers(ttir_module, imported)  # the TTIR's global accesses, for every candidate
    triton_count = _count_converts(ttgir_module)
    unique_ttgir = unique_value_names(ttgir)  # the names of ttgir_module's values (the assignments' keys)
    rewrites: dict[int, tuple[Rewrite, Module]] = {}  # by run: "both" is one of the other two
    model = dict(scalars=scalars, grid=grid, target=target)
    own = kernel_time(ttgir, pointers, **model)
    best, texts, rejected = None, set(), []
    for start in ("both", "anchored", "legacy"):
        assignment = assignments[id(runs[start])]
        if id(runs[start]) not in rewrites:
            rewrites[id(runs[start])] = _rewritten(ttgir_module, unique_ttgir, assignment.values, assignment.stores,
                                                   "best", broadcast_registers)
        rewrite, candidate = rewrites[id(runs[start])]
        if rewrite.text in texts:
            continue
        texts.add(rewrite.text)
        refusal = _not_well_formed(start, candidate)
        if refusal is not None:
            rejected.append(refusal)
            continue
        if rewrite.conversions > triton_count:
            rejected.append(f"{start}: {rewrite.conversions} conversions, more than Triton's {triton_count}")
            continue
        costs = kernel_time(rewrite.text, pointers, **model)
        refusal = _too_big(start, costs.shared_bytes, target) or _model_refusal(start, own, costs, narrowing)
        if refusal is not None:
            rejected.append(refusal)
            continue
        gain = predicted_gain(own, costs)
        if best is None or gain > best[0] + 1e-9:
            best = (gain, rewrite, assignment)
    if best is not None and best[0] >= min_gain and verify != "off":
        refusal = _compiled_refusal(ttgir, best[1].text, priced_widths=bool(own.table), child=verify == "child")
        if refusal is not None:
            rejected.append(refusal)
            best = None
    if best is None or best[0] < min_gain:
        found = "" if best is None else f"; the best is predicted {100 * best[0]:.1f}% faster"
        bar = f"faster by {min_gain:.0%}" if min_gain >= 0 else f"less than {-min_gain:.0%} slower"
        note = f"every op: Triton's layouts (no candidate of the engine is predicted {bar}{found})"
        return Rewrite(ttgir, {}, {}, triton_count, triton_count, (note,), (), True, tuple(rejected), 0.0), first
    return dataclasses.replace(best[1], rejected=tuple(rejected), gain=best[0]), best[2]


def _compiled_refusal(ttgir: str, candidate: str, *, priced_widths: bool, child: bool = False) -> str | None:
    """``artifact_check.check_compiled``'s verdict on the chosen candidate as a ``Rewrite.rejected`` line
    (``None``: it passes); a compile that fails refuses it too."""
    from linear_layouts.pipeline.artifact_check import check_compiled
    from linear_layouts.triton_model.global_access import global_inventory

    try:
        check = check_compiled(ttgir, candidate, predicted=global_inventory(parse_module(candidate)),
                               priced_widths=priced_widths, subprocess=child)
    except LayoutError as error:
        return f"compiled check: {error}"
    return None if check.refusal is None else f"compiled check: {check.refusal}"
