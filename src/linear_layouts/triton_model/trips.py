"""How many times each op of a TTIR / TTGIR function runs per CTA: a small interpreter of the
function's *scalar* integer arithmetic (``arith`` on ``i32`` / ``i64`` / ``index``, program ids,
constants and the kernel's integer arguments) that evaluates ``scf.for`` bounds and ``scf.if``
conditions. Tensor values and loads are unknown; an op under a condition or a ``scf.while`` that
depends on them has an unknown count (``None``).

>>> from linear_layouts.triton_model.ir_text import parse_module
>>> m = parse_module('''module {
...   tt.func public @k(%n: i32) {
...     %c0 = arith.constant 0 : i32
...     %c4 = arith.constant 4 : i32
...     %0 = scf.for %i = %c0 to %n step %c4 iter_args(%a = %c0) -> (i32) : i32 {
...       %1 = arith.addi %a, %i : i32
...       scf.yield %1 : i32
...     }
...     tt.return
...   }
... }''')
>>> counts = op_counts(m.functions[0], {"%n": 64}, program_id=(0, 0, 0), num_programs=(1, 1, 1))
>>> [counts[id(op)] for op in m.functions[0].walk() if op.name == "arith.addi"]
[16]
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from linear_layouts.core.arguments import checked
from linear_layouts.triton_model.ir_text import Function, Op, Region, loop_bounds
from linear_layouts.core.limits import parse_int
from linear_layouts.core.mlir_text import DIGITS, INTEGER_TYPE

__all__ = ["op_counts", "grid_op_counts"]

_MAX_ITERATIONS = 1 << 16

_CMP = {
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b,
    "slt": lambda a, b: a < b, "sle": lambda a, b: a <= b, "sgt": lambda a, b: a > b, "sge": lambda a, b: a >= b,
    "ult": lambda a, b: a < b, "ule": lambda a, b: a <= b, "ugt": lambda a, b: a > b, "uge": lambda a, b: a >= b,
}


def _div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


_BINARY = {
    "arith.addi": lambda a, b: a + b, "arith.subi": lambda a, b: a - b, "arith.muli": lambda a, b: a * b,
    "arith.divsi": _div, "arith.divui": lambda a, b: a // b,
    "arith.remsi": lambda a, b: a - _div(a, b) * b, "arith.remui": lambda a, b: a % b,
    "arith.minsi": min, "arith.maxsi": max, "arith.minui": min, "arith.maxui": max,
    "arith.andi": lambda a, b: a & b, "arith.ori": lambda a, b: a | b, "arith.xori": lambda a, b: a ^ b,
    "arith.shli": lambda a, b: a << b, "arith.shrsi": lambda a, b: a >> b, "arith.shrui": lambda a, b: a >> b,
    "arith.ceildivsi": lambda a, b: -_div(-a, b), "arith.floordivsi": lambda a, b: a // b,
}
_UNARY = ("arith.extsi", "arith.extui", "arith.trunci", "arith.index_cast", "arith.index_castui")
_SCALAR = re.compile(rf"^(?:{INTEGER_TYPE})$")


class _Interpreter:
    def __init__(self, env: dict[str, Any], program_id: tuple, num_programs: tuple, free_locks: bool = False):
        self.env = env
        self.pid = program_id
        self.npid = num_programs
        self.free_locks = free_locks
        self.counts: dict[int, int | None] = {}
        self.budget = _MAX_ITERATIONS

    def value(self, name: str) -> Any:
        return self.env.get(name.split("#")[0] if "#" in name and name not in self.env else name)

    def add(self, op: Op, n: int | None) -> None:
        prev = self.counts.get(id(op), 0)
        self.counts[id(op)] = None if prev is None or n is None else prev + n

    def region(self, region: Region, times: int | None) -> None:
        for op in region.ops:
            self.op(op, times)

    def mark_unknown(self, region: Region) -> None:
        for op in region.ops:
            self.counts[id(op)] = None
            for r in op.regions:
                self.mark_unknown(r)

    def op(self, op: Op, times: int | None) -> None:
        self.add(op, times)
        name = op.name
        if name == "scf.for":
            self.loop(op, times)
            return
        if name == "scf.if":
            cond = self.value(op.operands[0]) if op.operands else None
            if cond is None or times is None:
                for r in op.regions:
                    self.mark_unknown(r)
            else:
                branch = 0 if cond else 1
                for k, r in enumerate(op.regions):
                    if k == branch:
                        self.region(r, times)
                    else:
                        self.add_zero(r)
            return
        if name == "scf.while" and self.free_locks and len(op.regions) == 2 and _is_spin_lock(op):
            self.region(op.regions[0], times)  # the lock is free: the first compare-and-swap takes it
            self.add_zero(op.regions[1])
            return
        if op.regions:  # scf.while, tt.reduce / tt.scan combiners: bodies not interpreted
            if name in ("scf.while",):
                for r in op.regions:
                    self.mark_unknown(r)
            else:
                for r in op.regions:
                    self.add_zero(r)
            return
        if times is not None and op.results and all(_SCALAR.match(t) for t in op.result_types[:1]):
            self.evaluate(op)

    def add_zero(self, region: Region) -> None:
        for op in region.ops:
            self.counts.setdefault(id(op), 0)
            for r in op.regions:
                self.add_zero(r)

    def evaluate(self, op: Op) -> None:
        name, result = op.name, op.results[0]
        args = [self.value(o) for o in op.operands]
        out: Any = None
        try:
            if name == "arith.constant":
                m = re.match(rf".*?arith\.constant\s+(-?{DIGITS}|true|false)\s*:", op.text)
                if m:
                    out = {"true": 1, "false": 0}.get(m.group(1), None)
                    out = parse_int(m.group(1), "arith.constant", signed=True) if out is None else out  # else None
            elif name in ("tt.get_program_id", "tt.get_num_programs"):
                axis = "xyz".index(re.search(r"\b([xyz])\b", op.text).group(1))  # type: ignore[union-attr]
                out = (self.pid if name == "tt.get_program_id" else self.npid)[axis]
            elif name in _BINARY and None not in args and len(args) == 2:
                out = _BINARY[name](*args)
            elif name in _UNARY and args and args[0] is not None:
                out = args[0]
            elif name == "arith.cmpi" and None not in args:
                pred = re.search(r"arith\.cmpi\s+(\w+)", op.text).group(1)  # type: ignore[union-attr]
                out = int(_CMP[pred](*args))
            elif name == "arith.select" and None not in args:
                out = args[1] if args[0] else args[2]
        except (ZeroDivisionError, KeyError, AttributeError, ValueError):
            out = None
        self.env[result] = out

    def loop(self, op: Op, times: int | None) -> None:
        bounds = loop_bounds(op.text)
        iv, lb, ub, step = bounds.induction, *(self.value(o) for o in (bounds.lower, bounds.upper, bounds.step))
        body = op.regions[0]
        if times is None or None in (lb, ub, step) or step == 0:
            self.mark_unknown(body)
            return
        trips = max(0, -(-(ub - lb) // step)) if step > 0 else max(0, -(-(lb - ub) // -step))
        # iteration-invariant body: evaluate once with the induction variable unknown
        probe = _Interpreter(dict(self.env), self.pid, self.npid, self.free_locks)
        probe.env[iv] = None
        probe.region(body, trips * times)
        if all(v is not None for v in probe.counts.values()):
            for k, v in probe.counts.items():
                prev = self.counts.get(k, 0)
                self.counts[k] = None if prev is None else prev + v
            return
        if trips * times > self.budget:
            self.mark_unknown(body)
            return
        self.budget -= trips * times
        for it in range(trips):
            self.env[iv] = lb + it * step
            self.region(body, times)


def _is_spin_lock(op: Op) -> bool:
    """A ``scf.while`` whose condition region does nothing but a ``tt.atomic_cas`` and its compare:
    ``while atomic_cas(lock, 0, 1) == 1: pass``."""
    before, after = op.regions
    names = {o.name for o in before.ops}
    return "tt.atomic_cas" in names and names <= {"tt.atomic_cas", "arith.cmpi", "arith.constant", "scf.condition"} \
        and all(o.name == "scf.yield" for o in after.ops)


@checked
def op_counts(fn: Function, scalars: Mapping[str, Any], *, program_id: tuple, num_programs: tuple,
              free_locks: bool = False) -> dict[int, int | None]:
    """``id(op) -> executions`` in one CTA with ``program_id`` (x, y, z) of a grid of ``num_programs``;
    ``scalars`` maps argument names (``%n``) to values. ``None``: unknown (data-dependent).

    ``free_locks``: a spin lock (``while tl.atomic_cas(lock, 0, 1) == 1: pass``) is taken at the first try
    -- true for a launch of one CTA whose locks start at zero (nobody else holds them), so its loop
    condition runs once and its empty body never."""
    env = dict(scalars)
    interp = _Interpreter(env, tuple(program_id), tuple(num_programs), free_locks)
    interp.region(fn.body, 1)
    return interp.counts


@checked
def grid_op_counts(fn: Function, scalars: Mapping[str, Any], grid: tuple[int, ...]) -> dict[int, int | None]:
    """``id(op) -> executions`` summed over every CTA of ``grid`` (unknown when any CTA's is unknown).
    A grid of one CTA takes its spin locks at the first try (``op_counts``'s ``free_locks``)."""
    grid = tuple(grid) + (1,) * (3 - len(grid))
    total: dict[int, int | None] = {}
    if grid == (1, 1, 1):
        return op_counts(fn, scalars, program_id=(0, 0, 0), num_programs=grid, free_locks=True)
    generic = op_counts(fn, scalars, program_id=(None, None, None), num_programs=grid)
    if all(v is not None for v in generic.values()):  # no count depends on the program id
        n = grid[0] * grid[1] * grid[2]
        return {k: v * n for k, v in generic.items()}  # type: ignore[operator]
    for z in range(grid[2]):
        for y in range(grid[1]):
            for x in range(grid[0]):
                counts = op_counts(fn, scalars, program_id=(x, y, z), num_programs=grid)
                for k, v in counts.items():
                    prev = total.get(k, 0)
                    total[k] = None if prev is None or v is None else prev + v
    return total
