"""Triton's ``AxisInfo`` analysis (``lib/Analysis/AxisInfo.cpp``) on a TTIR / TTGIR function: for every
integer, boolean or pointer value, per dim, its **contiguity** (the longest runs of consecutive
values, 1 step apart), **divisibility** (a power of two every run starts at a multiple of: bytes for a
pointer, the value for an integer) and **constancy** (the longest runs of equal values), and its
value where it is a known constant. The lowering of a global load, store or atomic reads these to
decide its vector width (``global_access``): ``min(contiguity, divisibility / element bytes)``
along the layout's fastest dim, and for a masked access no more than the mask's constancy.

The rules, each Triton's: ``tt.make_range`` from ``s`` to ``e`` is contiguous over ``e - s`` and
divisible by ``s``'s largest power-of-two divisor; ``splat`` is constant over the shape;
``addi`` / ``addptr`` of a contiguous and a constant operand is contiguous as far as both agree and
divisible by the gcd of the two (``addptr`` scales the offsets' by the element bytes); a compare of
a contiguous lhs with a constant rhs (``slt`` / ``sge``) is constant over ``gcd(contiguity, divisibilities)``;
``and`` / ``or`` keep the gcd of the constancies; ``expand_dims`` / ``broadcast`` add a dim (constant
along a broadcast one); ``convert_layout`` and integer casts change nothing; a function argument has
its ``tt.divisibility`` hint; any other op's result is unknown (1, 1, 1). ``scf.for`` carried values
are joined (gcd) with what the body yields until nothing changes; its induction variable is divisible
by ``gcd(lower, step)``.

>>> from linear_layouts.triton_model.ir_text import parse_module
>>> m = parse_module('''module {
...   tt.func public @k(%x: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32 {tt.divisibility = 16 : i32}) {
...     %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
...     %p = tt.splat %x : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
...     %q = tt.addptr %p, %r : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
...     %s = tt.splat %n : i32 -> tensor<128xi32>
...     %m = arith.cmpi slt, %r, %s : tensor<128xi32>
...     tt.return
...   }
... }''')
>>> info = axis_info(m.functions[0])
>>> info["%q"]
AxisInfo(contiguity=(128,), divisibility=(16,), constancy=(1,), constant=None)
>>> info["%m"].constancy
(16,)
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

from linear_layouts.core.arguments import checked
from linear_layouts.core.limits import parse_int
from linear_layouts.core.mlir_text import DIGITS, read_ints
from linear_layouts.triton_model.encodings import parse_type
from linear_layouts.triton_model.ir_text import Function, Op, Region, iter_args, loop_bounds

__all__ = ["AxisInfo", "axis_info", "MAX_DIVISOR", "highest_pow2_divisor"]

#: Triton's ``kMaxDivisor``: the divisibility of 0 (``highestPowOf2Divisor<int64_t>(0)``)
MAX_DIVISOR = 1 << 62
#: ``scf.for`` / ``scf.while`` bodies are re-run until their carried values stop changing, at most this often
_MAX_PASSES = 16
_CASTS = ("arith.extsi", "arith.extui", "arith.trunci", "ttg.convert_layout", "tt.bitcast")
_CONSTANT = re.compile(rf"arith\.constant\s+(?:dense<)?(-?{DIGITS}|true|false)\b")
_PREDICATE = re.compile(r"arith\.cmpi\s+(\w+)\s*,")
_HINT = re.compile(rf"\b(tt\.(?:contiguity|divisibility|constancy)) = (?:dense<\[?([\d, ]+)\]?>|({DIGITS}))")


def highest_pow2_divisor(value: int) -> int:
    """The largest power of two dividing ``value`` (``MAX_DIVISOR`` for 0), as Triton's
    ``highestPowOf2Divisor``: ``highest_pow2_divisor(48) == 16``."""
    value = int(value)
    return MAX_DIVISOR if value == 0 else min(value & -value, MAX_DIVISOR)


def _gcd(*values: int) -> int:
    """Triton's variadic ``gcd`` (``gcd(a, 0) = a``)."""
    out = 0
    for v in values:
        out = math.gcd(out, int(v))
    return out


@dataclass(frozen=True)
class AxisInfo:
    """Per dim: ``contiguity``, ``divisibility``, ``constancy`` (module doc); ``constant``: the value, where
    every element is one known integer."""

    contiguity: tuple[int, ...]
    divisibility: tuple[int, ...]
    constancy: tuple[int, ...]
    constant: int | None = None

    @property
    def rank(self) -> int:
        return len(self.contiguity)

    @staticmethod
    def unknown(rank: int) -> "AxisInfo":
        """What Triton assumes of a value it knows nothing about: runs of 1, divisible by 1."""
        return AxisInfo((1,) * rank, (1,) * rank, (1,) * rank)

    def join(self, other: "AxisInfo") -> "AxisInfo":
        """The facts true of both (Triton's ``AxisInfo::join``)."""
        return AxisInfo(tuple(_gcd(a, b) for a, b in zip(self.contiguity, other.contiguity)),
                        tuple(_divisibility_of_join(self, other, d) for d in range(self.rank)),
                        tuple(_gcd(a, b) for a, b in zip(self.constancy, other.constancy)),
                        self.constant if self.constant is not None and self.constant == other.constant else None)


def _divisibility_of_join(a: AxisInfo, b: AxisInfo, d: int) -> int:
    """Triton's ``getDivisibilityFromContiguity``: where the runs differ in length, a run may start
    inside the other's, so its divisibility is bounded by the contiguities too."""
    ca, cb = a.contiguity[d], b.contiguity[d]
    if ca == cb or MAX_DIVISOR in (ca, cb):
        return _gcd(a.divisibility[d], b.divisibility[d])
    return _gcd(a.divisibility[d], b.divisibility[d], ca, cb)


def _shape(type_text: str) -> tuple[int, ...] | None:
    """The shape of a tensor type; ``None`` for a scalar (rank 1 to AxisInfo)."""
    t = parse_type(type_text)
    return t.shape if t.kind == "tensor" else None


def _rank(type_text: str) -> int:
    shape = _shape(type_text)
    return len(shape) if shape else 1


def _pointee_bytes(type_text: str) -> int:
    """Bytes of the element a (tensor of) pointer(s) points to (at least 1)."""
    m = re.search(r"!tt\.ptr<([^,>]+)", type_text)
    if not m:
        return 1
    bits = parse_type(m.group(1).strip()).bitwidth or 8
    return max(1, bits // 8)


def _hints(attrs: str, info: AxisInfo) -> AxisInfo:
    """``info`` with the ``tt.contiguity`` / ``tt.divisibility`` / ``tt.constancy`` hints of ``attrs``."""
    found = {}
    for name, dense, single in _HINT.findall(attrs):
        values = tuple(parse_int(v, f"ir text: {name}") for v in (dense or single).replace(" ", "").split(",") if v)
        if len(values) == 1 and info.rank > 1 and dense and "[" not in attrs.split(name, 1)[1][:12]:
            values = values * info.rank  # dense<16> splat over the rank
        found[name] = values if len(values) == info.rank else (values * info.rank)[:info.rank]
    if not found:
        return info
    return AxisInfo(found.get("tt.contiguity", info.contiguity), found.get("tt.divisibility", info.divisibility),
                    found.get("tt.constancy", info.constancy), info.constant)


class _Analysis:
    def __init__(self, fn: Function):
        self.info: dict[str, AxisInfo] = {}
        self.types: dict[str, str] = {}
        for (name, ty), (_, attrs) in zip(fn.args, fn.arg_attrs or [(n, "") for n, _ in fn.args]):
            self.types[name] = ty
            self.info[name] = _hints(attrs, AxisInfo.unknown(_rank(ty)))

    def get(self, name: str) -> AxisInfo:
        found = self.info.get(name)
        if found is None and "#" in name:
            found = self.info.get(name.split("#")[0])
        if found is None:
            return AxisInfo.unknown(_rank(self.types.get(name, "i32")))
        return found

    def set(self, name: str, info: AxisInfo, type_text: str) -> None:
        self.types[name] = type_text
        self.info[name] = info

    def region(self, region: Region) -> None:
        for op in region.ops:
            self.op(op)

    def op(self, op: Op) -> None:
        name = op.name
        if name == "scf.for":
            self.scf_for(op)
            return
        if name == "scf.if":
            self.scf_if(op)
            return
        if name == "scf.while":
            self.scf_while(op)
            return
        for region in op.regions:  # combiners, partitions: their values are Triton's entry state
            self.unknown_region(region)
        for k, (result, ty) in enumerate(zip(op.results, op.result_types)):
            info = self.transferred(op, ty) if k == 0 else None
            if info is None:
                info = AxisInfo.unknown(_rank(ty))
            self.set(result, _hints(op.attrs, info), ty)

    def unknown_region(self, region: Region) -> None:
        for arg, ty in region.args:
            self.set(arg, AxisInfo.unknown(_rank(ty)), ty)
        self.region(region)

    # -- the visitors ------------------------------------------------------------------------------
    def transferred(self, op: Op, ty: str) -> AxisInfo | None:
        """``transfer``'s facts of the op's result of type ``ty``; None (nothing known) where they or its
        operands' facts have other ranks than its types say (a malformed text: ``tt.make_range`` to a 2-D
        tensor, ``tt.broadcast`` from a higher rank)."""
        try:
            info = self.transfer(op, ty)
        except IndexError:  # an operand's facts of fewer dims than the op reads
            return None
        return info if info is not None and info.rank == _rank(ty) else None

    def transfer(self, op: Op, ty: str) -> AxisInfo | None:
        name = op.name
        shape = _shape(ty)
        rank = len(shape) if shape else 1
        args = [self.get(o) for o in op.operands]
        if name == "arith.constant":
            m = _CONSTANT.search(op.text)
            if m is None or parse_type(ty).element.startswith(("f", "bf")):
                return None
            value = {"true": 1, "false": 0}.get(m.group(1))
            if value is None:
                value = parse_int(m.group(1), f"ir text: {op.results[0]}'s arith.constant", signed=True)
            return AxisInfo((1,) * rank, (highest_pow2_divisor(value),) * rank, tuple(shape) if shape else (1,), value)
        if name == "tt.make_range":
            start, end = op.attr_int("start") or 0, op.attr_int("end") or 0
            return AxisInfo((end - start,), (highest_pow2_divisor(start),), (1,))
        if name in _CASTS:
            return args[0] if args and args[0].rank == rank else None
        if name == "tt.splat":
            return AxisInfo((1,) * rank, (args[0].divisibility[0],) * rank, tuple(shape or (1,)), args[0].constant)
        if name == "tt.expand_dims":
            return _expand_dims(args[0], op.attr_int("axis") or 0)
        if name == "tt.broadcast":
            return _broadcast(args[0], _shape(op.operand_types[0]) or (1,), shape or (1,))
        if name == "tt.reshape" and shape:
            return _reshape(args[0], _shape(op.operand_types[0]) or (1,), shape)
        if name == "tt.trans":
            m = re.search(r"order = array<i32:\s*([\d, ]+)>", op.text)
            order = list(read_ints(m.group(1), f"ir text: {name}'s order")) if m else list(reversed(range(rank)))
            a = args[0]
            if a.rank != rank:
                return None
            return AxisInfo(tuple(a.contiguity[d] for d in order), tuple(a.divisibility[d] for d in order),
                            tuple(a.constancy[d] for d in order), a.constant)
        if name == "tt.load":
            ptr, mask = args[0], (args[1] if len(args) > 1 else None)
            return AxisInfo((1,) * rank, (1,) * rank,
                            tuple(_gcd(ptr.constancy[d], mask.constancy[d] if mask else 0) for d in range(rank)))
        if name == "arith.select":
            return _select(args, self.types.get(op.operands[0], ""), shape)
        if name in ("arith.maxsi", "arith.maxui", "arith.minsi", "arith.minui"):
            return _max_min(name, args[0], args[1])
        if name == "arith.cmpi":
            m = _PREDICATE.search(op.text)
            return _compare(m.group(1) if m else "", args[0], args[1], shape or (1,))
        if len(args) == 2 and name in _BINARY:
            return _binary(name, args[0], args[1], shape or (1,),
                           _pointee_bytes(op.operand_types[0]) if name == "tt.addptr" else 1)
        return None

    # -- control flow ------------------------------------------------------------------------------
    def scf_for(self, op: Op) -> None:
        bounds = loop_bounds(op.text)
        lower, step = self.get(bounds.lower), self.get(bounds.step)
        body = op.regions[0]
        self.set(bounds.induction, AxisInfo((1,), (_gcd(lower.divisibility[0], step.divisibility[0]),), (1,)), "i32")
        pairs = iter_args(op.text)
        carried = {arg: self.get(init) for arg, init in pairs}
        types = dict(zip([a for a, _ in pairs], op.result_types))
        yield_op = body.ops[-1] if body.ops and body.ops[-1].name == "scf.yield" else None
        for _ in range(_MAX_PASSES):
            for arg, info in carried.items():
                self.set(arg, info, types.get(arg, "i32"))
            self.region(body)
            if yield_op is None:
                break
            joined = {arg: info.join(self.get(v)) for (arg, info), v in zip(carried.items(), yield_op.operands)}
            if joined == carried:
                break
            carried = joined
        for result, ty, info in zip(op.results, op.result_types, carried.values()):
            self.set(result, info, ty)

    def scf_if(self, op: Op) -> None:
        joined: list[AxisInfo] | None = None
        for region in op.regions:
            self.region(region)
            last = region.ops[-1] if region.ops else None
            if last is None or last.name != "scf.yield":
                continue
            infos = [self.get(v) for v in last.operands]
            joined = infos if joined is None else [a.join(b) for a, b in zip(joined, infos)]
        for k, (result, ty) in enumerate(zip(op.results, op.result_types)):
            info = joined[k] if joined is not None and k < len(joined) and len(op.regions) == 2 else None
            self.set(result, info if info is not None else AxisInfo.unknown(_rank(ty)), ty)

    def scf_while(self, op: Op) -> None:
        before, after = (op.regions + (Region(()), Region(())))[:2]
        carried = [self.get(v) for v in op.operands]
        for _ in range(_MAX_PASSES):
            for (arg, ty), info in zip(before.args, carried):
                self.set(arg, info, ty)
            self.region(before)
            condition = before.ops[-1] if before.ops and before.ops[-1].name == "scf.condition" else None
            forwarded = [self.get(v) for v in (condition.operands[1:] if condition else ())]
            for (arg, ty), info in zip(after.args, forwarded):
                self.set(arg, info, ty)
            self.region(after)
            back = after.ops[-1] if after.ops and after.ops[-1].name == "scf.yield" else None
            joined = [a.join(self.get(v)) for a, v in zip(carried, back.operands if back else ())]
            if not back or joined == carried:
                break
            carried = joined
        condition = before.ops[-1] if before.ops and before.ops[-1].name == "scf.condition" else None
        outs = [self.get(v) for v in (condition.operands[1:] if condition else ())]
        for k, (result, ty) in enumerate(zip(op.results, op.result_types)):
            self.set(result, outs[k] if k < len(outs) else AxisInfo.unknown(_rank(ty)), ty)


def _expand_dims(a: AxisInfo, axis: int) -> AxisInfo:
    if a.constant is not None:
        new = highest_pow2_divisor(a.constant)
    else:
        new = 0
        for d in range(a.rank):
            new = _gcd(new, 1 if a.contiguity[d] > 1 else a.divisibility[d])
        new = new or 1
    ins = lambda t, v: t[:axis] + (v,) + t[axis:]  # noqa: E731
    return AxisInfo(ins(a.contiguity, 1), ins(a.divisibility, new), ins(a.constancy, 1), a.constant)


def _broadcast(a: AxisInfo, operand: tuple[int, ...], result: tuple[int, ...]) -> AxisInfo:
    return AxisInfo(tuple(1 if operand[d] == 1 else a.contiguity[d] for d in range(len(result))),
                    a.divisibility,
                    tuple(result[d] if operand[d] == 1 else a.constancy[d] for d in range(len(result))),
                    a.constant)


def _reshape(a: AxisInfo, src: tuple[int, ...], dst: tuple[int, ...]) -> AxisInfo:
    """Triton's ``ReshapeOpAxisInfoVisitor`` (row-major): a destination dim that splits a source dim at its
    low end keeps its contiguity; one inside a constant run keeps the constancy that fits."""
    rank = len(dst)
    if a.constant is not None:
        return AxisInfo((1,) * rank, (highest_pow2_divisor(a.constant),) * rank, dst, a.constant)

    def suffix(shape: tuple[int, ...]) -> list[int]:
        out = [1] * (len(shape) + 1)
        for d in range(len(shape) - 1, -1, -1):
            out[d] = out[d + 1] * shape[d]
        return out

    src_suffix, dst_suffix = suffix(src), suffix(dst)
    whole = max([a.divisibility[d] for d in range(a.rank) if a.contiguity[d] == 1] or [1])
    contiguity, divisibility, constancy = [1] * rank, [whole] * rank, [1] * rank
    for d in range(rank):
        stride = dst_suffix[d + 1]
        s = next((k for k in range(len(src)) if src_suffix[k + 1] <= stride < src_suffix[k]), 0)
        s_stride = src_suffix[s + 1]
        c, v, k = a.contiguity[s], a.divisibility[s], a.constancy[s]
        if c > 1:
            if stride == s_stride:
                contiguity[d] = min(c, dst[d])
                divisibility[d] = max(whole, v if contiguity[d] == c else min(v, contiguity[d]))
            continue
        end = s_stride * k
        if stride <= end:
            const = min(dst[d], end // stride)
            remaining = dst[d] // const
            dim = s - 1
            while k == src[s] and dim >= 0 and remaining > 1:
                piece = min(src[dim], remaining)
                piece_constancy = min(a.constancy[dim], piece)
                const *= piece_constancy
                if piece_constancy < piece:
                    break
                remaining //= piece
                dim -= 1
            constancy[d] = const
    return AxisInfo(tuple(contiguity), tuple(divisibility), tuple(constancy))


def _constant_dim(a: AxisInfo, shape: tuple[int, ...], d: int) -> bool:
    return a.constancy[d] == shape[d]


def _contiguous_dim(a: AxisInfo, shape: tuple[int, ...], d: int) -> bool:
    return a.contiguity[d] == shape[d]


_BINARY = ("tt.addptr", "arith.addi", "arith.subi", "arith.muli", "arith.divsi", "arith.divui", "arith.remsi",
           "arith.remui", "arith.andi", "arith.ori", "arith.xori", "arith.shli", "arith.shrui", "arith.shrsi")


def _binary_constant(name: str, a: int, b: int, element_bytes: int) -> int | None:
    try:
        return {"tt.addptr": lambda: a + b * element_bytes, "arith.addi": lambda: a + b, "arith.subi": lambda: a - b,
                "arith.muli": lambda: a * b, "arith.divsi": lambda: int(a / b), "arith.divui": lambda: a // b,
                "arith.remsi": lambda: int(math.fmod(a, b)), "arith.remui": lambda: a % b,
                "arith.andi": lambda: a & b, "arith.ori": lambda: a | b, "arith.xori": lambda: a ^ b,
                "arith.shli": lambda: a << b, "arith.shrui": lambda: a >> b, "arith.shrsi": lambda: a >> b}[name]()
    except (ZeroDivisionError, ValueError):
        return None


def _binary(name: str, lhs: AxisInfo, rhs: AxisInfo, shape: tuple[int, ...], element_bytes: int) -> AxisInfo:
    """Triton's ``BinaryOpVisitorImpl`` subclasses (add / sub / addptr, mul, div, rem, logic, shifts)."""
    rank = len(shape)
    constant = None
    if lhs.constant is not None and rhs.constant is not None:
        constant = _binary_constant(name, lhs.constant, rhs.constant, element_bytes)
    elif name in ("arith.remsi", "arith.remui") and rhs.constant == 1:
        constant = 0
    if constant is not None:
        return AxisInfo((1,) * rank, (highest_pow2_divisor(constant),) * rank,
                        tuple(max(lhs.constancy[d], rhs.constancy[d]) for d in range(rank)), constant)
    contiguity, divisibility, constancy = [], [], []
    for d in range(rank):
        lc, rc, ld, rd, lk, rk = (lhs.contiguity[d], rhs.contiguity[d], lhs.divisibility[d], rhs.divisibility[d],
                                  lhs.constancy[d], rhs.constancy[d])
        if name in ("tt.addptr", "arith.addi", "arith.subi"):
            cont = _gcd(lc, rk) if name == "arith.subi" else max(_gcd(lk, rc), _gcd(lc, rk))
            scaled = min(rd * element_bytes, MAX_DIVISOR) if name == "tt.addptr" else rd
            div, const = _gcd(ld, scaled), _gcd(lk, rk)
        elif name == "arith.muli":
            cont = max(lc if rhs.constant == 1 else 1, rc if lhs.constant == 1 else 1)
            a = 1 if lc > 1 and rhs.constant != 1 else ld
            b = 1 if rc > 1 and lhs.constant != 1 else rd
            div, const = min(a * b, MAX_DIVISOR), _gcd(lk, rk)
        elif name in ("arith.divsi", "arith.divui"):
            cont = lc if rhs.constant == 1 else 1
            const = _gcd(lk, rk)
            if _contiguous_dim(lhs, shape, d) and _constant_dim(rhs, shape, d):
                const = max(const, _gcd(lc, ld, rd))
            if lhs.constant == 0 or rhs.constant == 1:
                div = ld
            elif rhs.constant is not None and rhs.constant != 0 and abs(rhs.constant) & (abs(rhs.constant) - 1) == 0 \
                    and lc == 1:
                div = max(1, ld // abs(rhs.constant))
            else:
                div = 1
        elif name in ("arith.remsi", "arith.remui"):
            cont = _gcd(lc, ld, rd) if _contiguous_dim(lhs, shape, d) and _constant_dim(rhs, shape, d) else 1
            div = _gcd(ld, rd) if rk > 1 else 1
            const = shape[d] if rhs.constant == 1 else _gcd(lk, rk)
        elif name in ("arith.andi", "arith.ori", "arith.xori"):
            cont, div, const = 1, 1, _gcd(lk, rk)
        elif name == "arith.shli":
            shift = rhs.constant or 0
            cont = lc if rhs.constant == 0 else 1
            base = 1 if lc > 1 and shift else ld
            div, const = min(base << shift, MAX_DIVISOR) if shift < 62 else MAX_DIVISOR, _gcd(lk, rk)
        else:  # arith.shrui, arith.shrsi
            cont = lc if rhs.constant == 0 else 1
            if rhs.constant is None:
                div = 1
            else:
                base = 1 if lc > 1 and rhs.constant else ld
                div = max(1, base >> rhs.constant) if rhs.constant < 63 else 1
            const = _gcd(lk, rk)
        contiguity.append(cont)
        divisibility.append(div)
        constancy.append(const)
    return AxisInfo(tuple(contiguity), tuple(divisibility), tuple(constancy))


def _compare(predicate: str, lhs: AxisInfo, rhs: AxisInfo, shape: tuple[int, ...]) -> AxisInfo:
    """Triton's ``CmpOpAxisInfoVisitor``: the runs over which a comparison cannot change."""
    rank = len(shape)
    constancy = []
    constant = None
    for d in range(rank):
        if lhs.constant is not None and rhs.constant is not None:
            hint = lhs.constancy[d]
            constant = int(_compare_values(predicate, lhs.constant, rhs.constant))
        else:
            hint = _gcd(lhs.constancy[d], rhs.constancy[d])
            if predicate in ("sgt", "ugt", "sle", "ule") and _constant_dim(lhs, shape, d):
                hint = max(hint, _gcd(rhs.contiguity[d], lhs.divisibility[d], rhs.divisibility[d]))
            elif predicate in ("slt", "ult", "sge", "uge") and _constant_dim(rhs, shape, d):
                hint = max(hint, _gcd(lhs.contiguity[d], lhs.divisibility[d], rhs.divisibility[d]))
        constancy.append(hint)
    return AxisInfo((1,) * rank, (1,) * rank, tuple(constancy), constant)


def _compare_values(predicate: str, a: int, b: int) -> bool:
    if predicate.startswith("u"):
        a, b = a % (1 << 64), b % (1 << 64)
    return {"eq": a == b, "ne": a != b, "slt": a < b, "sle": a <= b, "sgt": a > b, "sge": a >= b,
            "ult": a < b, "ule": a <= b, "ugt": a > b, "uge": a >= b}.get(predicate, False)


def _select(args: list[AxisInfo], condition_type: str, shape: tuple[int, ...] | None) -> AxisInfo:
    condition, lhs, rhs = args[0], args[1], args[2]
    if condition.constant is not None:
        return rhs if condition.constant == 0 else lhs
    scalar_condition = _shape(condition_type) is None if condition_type else shape is None
    rank = lhs.rank
    contiguity, divisibility, constancy = [], [], []
    for d in range(rank):
        if scalar_condition:
            constancy.append(_gcd(lhs.constancy[d], rhs.constancy[d]))
            contiguity.append(_gcd(lhs.contiguity[d], rhs.contiguity[d]))
        else:
            constancy.append(_gcd(lhs.constancy[d], rhs.constancy[d], condition.constancy[d]))
            contiguity.append(_gcd(lhs.contiguity[d], rhs.contiguity[d], condition.constancy[d]))
        divisibility.append(_divisibility_of_join(lhs, rhs, d))
    constant = lhs.constant if lhs.constant is not None and lhs.constant == rhs.constant else None
    return AxisInfo(tuple(contiguity), tuple(divisibility), tuple(constancy), constant)


def _max_min(name: str, lhs: AxisInfo, rhs: AxisInfo) -> AxisInfo:
    rank = lhs.rank
    if lhs.constant is not None and rhs.constant is not None:
        value = max(lhs.constant, rhs.constant) if "max" in name else min(lhs.constant, rhs.constant)
        return AxisInfo((1,) * rank, (1,) * rank, (1,) * rank, value)
    return AxisInfo(tuple(_gcd(a, b) for a, b in zip(lhs.contiguity, rhs.contiguity)),
                    tuple(_divisibility_of_join(lhs, rhs, d) for d in range(rank)),
                    tuple(_gcd(a, b) for a, b in zip(lhs.constancy, rhs.constancy)))


@checked
def axis_info(fn: Function) -> Mapping[str, AxisInfo]:
    """Each value of ``fn`` (arguments, op results, block arguments) -> its ``AxisInfo`` (module doc);
    a value of a multi-result op is named ``%x#k``."""
    analysis = _Analysis(fn)
    analysis.region(fn.body)
    return analysis.info
