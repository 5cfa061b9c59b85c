"""Emit an engine result as a Gluon kernel (source text), each layout through ``linear_layouts.triton_model.interop.to_gluon``.

Every value is pinned to the engine's layout: after each op the emitted code converts the result to
our layout, so Triton runs exactly the engine's choices. Where Triton infers the result layout itself
(trans, reshape, join, split, reduce, elementwise, cast) the pin is ``assert_trivial`` (with
``check_trivial=True``): compiling the kernel then proves that Triton's layout inference and our transfer
functions agree, and ``convert_layout`` ops left in Triton's TTGIR are exactly the engine's conversions.

The kernel computes one tile; its arguments are the program's pointer arguments in order.
``reference(program, inputs)`` is the program's meaning in NumPy, for checking the kernel on a device.

>>> from linear_layouts.engine import examples, propagate
>>> src = gluon_source(propagate(examples.row_softmax()))  # doctest: +REQUIRES_TRITON
>>> "@gluon.jit" in src and "gl.convert_layout" in src
True
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from linear_layouts.engine.ir import Program
from linear_layouts.engine.propagate import EngineResult
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import quote

__all__ = ["gluon_source", "gluon_kernel", "reference", "GLUON_DTYPES", "NUMPY_DTYPES"]

GLUON_DTYPES = {"fp16": "gl.float16", "bf16": "gl.bfloat16", "fp32": "gl.float32", "i32": "gl.int32",
                "u8": "gl.uint8", "i8": "gl.int8", "i1": "gl.int1", "fp64": "gl.float64", "i64": "gl.int64"}
NUMPY_DTYPES = {"fp16": np.float16, "bf16": np.float32, "fp32": np.float32, "i32": np.int32, "u8": np.uint8,
                "i8": np.int8, "i1": np.bool_, "fp64": np.float64, "i64": np.int64}
_BINARY = {"add": "+", "sub": "-", "mul": "*", "div": "/", "and": "&", "shr": ">>", "lt": "<", "le": "<=", "eq": "=="}
_TRIVIAL_PINS = ("dot", "trans", "reshape", "join", "split", "reduce", "elementwise", "cast", "load", "gather", "expand_dims", "broadcast")

_HELPERS = '''
@gluon.jit
def _fp4_to_fp(x):
    e = ((x >> 1) & 3).to(gl.float32)
    m = (x & 1).to(gl.float32)
    mag = gl.where(e == 0, m * 0.5, (1.0 + m * 0.5) * gl.exp2(e - 1.0))
    return gl.where((x >> 3) != 0, -mag, mag).to(gl.bfloat16)


@gluon.jit
def _e8m0_to_fp(x):
    return gl.exp2(x.to(gl.float32) - 127.0).to(gl.bfloat16)
'''


def _linear(layout: Any) -> Any:
    """The ``DistributedLinearLayout`` descriptor with ``layout``'s bases."""
    from linear_layouts.layouts import DistributedLinearLayout
    from linear_layouts.engine.transfer import shape_of, standard_outs

    b = standard_outs(layout).bases
    return DistributedLinearLayout(b["register"], b["lane"], b["warp"], b["block"], shape_of(layout))


def _layout_source(desc: Any) -> str:
    """Python source of the Gluon layout object equal to our catalog ``desc``."""
    from linear_layouts.triton_model.interop import to_gluon

    def src(obj: Any) -> str:
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            args = ", ".join(f"{f.name}={src(getattr(obj, f.name))}" for f in dataclasses.fields(obj))
            return f"gl.{type(obj).__name__}({args})"
        if isinstance(obj, (list, tuple)):
            return "[" + ", ".join(src(x) for x in obj) + "]"
        return repr(getattr(obj, "value", obj))

    return src(to_gluon(desc))


def gluon_source(result: EngineResult, *, name: str = "kernel", check_trivial: bool = True) -> str:
    """The Gluon kernel of ``result`` as Python source (module doc)."""
    if not isinstance(result, EngineResult):
        raise LayoutError(f"result must be an EngineResult, got {type(result).__name__}")
    program, desc = result.program, result.descriptors
    layouts: dict[str, str] = {}

    def lay(vid: int) -> str:
        text = _layout_source(desc[vid])
        return layouts.setdefault(text, f"L{len(layouts)}")

    body: list[str] = []

    def as_layout(vid: int, target: Any) -> str:
        """``v{vid}`` converted to the descriptor ``target`` (asserted trivial when the LinearLayouts agree)."""
        from linear_layouts.engine.transfer import standard_outs

        name_t = layouts.setdefault(_layout_source(target), f"L{len(layouts)}")
        equal = standard_outs(target.to_linear(list(program.values[vid].shape))) == result.layouts[vid]
        flag = ", assert_trivial=True" if equal and check_trivial else ""
        return f"gl.convert_layout(v{vid}, {name_t}{flag})"

    def pin(vid: int, trivial: bool) -> None:
        flag = ", assert_trivial=True" if trivial and check_trivial else ""
        body.append(f"    v{vid} = gl.convert_layout(v{vid}, {lay(vid)}{flag})")

    for op in program.ops:
        k, a = op.kind, dict(op.attrs)
        o = [f"v{x}" for x in op.operands]
        r = op.results[0] if op.results else None
        if k == "pointer":
            shape, strides = program.values[r].shape, a["strides"]
            rank = len(shape)
            from linear_layouts.layouts import SliceLayout

            terms = []
            for d in range(rank):
                sliced = desc[r]
                for other in reversed(range(rank)):
                    if other != d:
                        sliced = SliceLayout(other, sliced)
                name_d = layouts.setdefault(_layout_source(sliced), f"L{len(layouts)}")
                expr = f"gl.arange(0, {shape[d]}, layout={name_d})"
                for other in range(rank):
                    if other != d:
                        expr = f"gl.expand_dims({expr}, {other})"
                terms.append(f"{expr} * {strides[d]}")
            body.append(f"    v{r} = {a['arg']} + ({' + '.join(terms)})")
            if rank > 1:
                flag = ", assert_trivial=True" if check_trivial else ""
                body.append(f"    v{r} = gl.convert_layout(v{r}.broadcast_to({list(shape)}), {lay(r)}{flag})")
            continue
        if k == "load":
            mask = f", mask={o[1]}" if len(o) > 1 else ""
            body.append(f"    v{r} = gl.load({o[0]}{mask})")
        elif k == "store":
            mask = f", mask={o[2]}" if len(o) > 2 else ""
            body.append(f"    gl.store({o[0]}, {o[1]}{mask})")
            continue
        elif k == "arange":
            body.append(f"    v{r} = gl.arange(0, {a['n']}, layout={lay(r)})")
            continue
        elif k == "full":
            dtype = GLUON_DTYPES[program.values[r].dtype]
            body.append(f"    v{r} = gl.full({list(program.values[r].shape)}, {a['value']!r}, {dtype}, layout={lay(r)})")
            continue
        elif k == "elementwise":
            fn = a["fn"]
            if fn in _BINARY:
                expr = f"{o[0]} {_BINARY[fn]} {o[1]}"
            elif fn in ("max", "min"):
                expr = f"gl.{'maximum' if fn == 'max' else 'minimum'}({o[0]}, {o[1]})"
            elif fn == "where":
                expr = f"gl.where({o[0]}, {o[1]}, {o[2]})"
            elif fn == "neg":
                expr = f"-{o[0]}"
            elif fn in ("exp2", "abs"):
                expr = f"gl.{fn}({o[0]})"
            else:
                expr = f"_{fn}({o[0]})"
            body.append(f"    v{r} = {expr}")
        elif k == "cast":
            body.append(f"    v{r} = {o[0]}.to({GLUON_DTYPES[program.values[r].dtype]})")
        elif k == "dot":
            if a["mma_version"] != 2:
                raise LayoutError("result: Gluon emission supports mma_version 2 dots (mma.sync) only")
            from linear_layouts.engine.anchors import dot_operand_layout, mma_layout

            shape = list(program.values[r].shape)
            mma = mma_layout(shape, program.values[op.operands[0]].dtype, 2, program.num_warps)
            a_op, b_op = (as_layout(op.operands[i], dot_operand_layout(mma, i, program.values[op.operands[i]].dtype))
                          for i in (0, 1))
            mma_name = layouts.setdefault(_layout_source(mma), f"L{len(layouts)}")
            acc = as_layout(op.operands[2], mma) if len(o) > 2 else f"gl.full({shape}, 0.0, gl.float32, layout={mma_name})"
            body.append(f"    v{r} = mma_v2({a_op}, {b_op}, {acc})")
        elif k == "reduce":
            body.append(f"    v{r} = gl.{ {'add': 'sum', 'max': 'max', 'min': 'min'}[a['combine']] }({o[0]}, {a['axis']})")
        elif k == "trans":
            body.append(f"    v{r} = gl.permute({o[0]}, {list(a['perm'])})")
        elif k == "reshape":
            body.append(f"    v{r} = gl.reshape({o[0]}, {list(program.values[r].shape)})")
        elif k == "join":
            body.append(f"    v{r} = gl.join({o[0]}, {o[1]})")
        elif k == "split":
            body.append(f"    v{op.results[0]}, v{op.results[1]} = gl.split({o[0]})")
            pin(op.results[0], True)
            pin(op.results[1], True)
            continue
        elif k == "expand_dims":  # Gluon infers the result from a SliceLayout operand: present it as one
            from linear_layouts.layouts import SliceLayout

            body.append(f"    v{r} = gl.expand_dims({as_layout(op.operands[0], SliceLayout(a['axis'], desc[r]))}, {a['axis']})")
        elif k == "broadcast":  # Gluon keeps the operand's layout object: present it as the result's
            body.append(f"    v{r} = {as_layout(op.operands[0], _linear(result.layouts[r]))}.broadcast_to({list(program.values[r].shape)})")
        elif k == "gather":
            body.append(f"    v{r} = gl.gather({o[0]}, {o[1]}, {a['axis']})")
        elif k == "convert_layout":
            body.append(f"    v{r} = gl.convert_layout({o[0]}, {lay(r)})")
            continue
        else:
            raise LayoutError(f"result: no Gluon emission for op kind {quote(k)}")
        pin(r, k in _TRIVIAL_PINS)
    args = ", ".join(name for name, _ in program.args)
    consts = [f"    {n}: gl.constexpr = {text}" for text, n in layouts.items()]
    lines = [
        "from triton.experimental import gluon",
        "from triton.experimental.gluon import language as gl",
        "from triton.experimental.gluon.language.nvidia.ampere import mma_v2",
        _HELPERS,
        "",
        "@gluon.jit",
        f"def {name}({args}):",
        *consts,
        *body,
        "",
    ]
    return "\n".join(lines)


def gluon_kernel(result: EngineResult, *, name: str = "kernel", check_trivial: bool = True) -> Any:
    """The Gluon ``JITFunction`` of :func:`gluon_source` (written to a temporary module, as Gluon reads
    the source of the functions it compiles)."""
    import importlib.util
    import tempfile

    source = gluon_source(result, name=name, check_trivial=check_trivial)
    with tempfile.NamedTemporaryFile("w", suffix=f"_{name}.py", delete=False) as f:
        f.write(source)
        path = f.name
    spec = importlib.util.spec_from_file_location(f"ll_engine_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


# --------------------------------------------------------------------------------------------------
def _fp4(x: np.ndarray) -> np.ndarray:
    e = ((x >> 1) & 3).astype(np.float32)
    m = (x & 1).astype(np.float32)
    mag = np.where(e == 0, m * 0.5, (1.0 + m * 0.5) * np.exp2(e - 1.0))
    return np.where((x >> 3) != 0, -mag, mag).astype(np.float32)


def reference(program: Program, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The program's meaning in NumPy: ``inputs`` maps pointer arguments to flat arrays (loaded with the
    pointer's strides); returns each stored argument's flat array (bf16 is computed in fp32)."""
    env: dict[int, np.ndarray] = {}
    out = {name: np.array(v, copy=True) for name, v in inputs.items()}
    for op in program.ops:
        k, a, o = op.kind, dict(op.attrs), [env.get(x) for x in op.operands]
        if k == "pointer":
            shape, strides = program.values[op.results[0]].shape, a["strides"]
            grids = np.meshgrid(*[np.arange(s) for s in shape], indexing="ij")
            env[op.results[0]] = sum(g * s for g, s in zip(grids, strides)).astype(np.int64)
            env[("arg", op.results[0])] = a["arg"]
            continue
        if k == "load":
            arg = next(x for x in program.ops if op.operands[0] in x.results).attr("arg")
            res = out[arg][o[0]]
            if len(o) > 1:
                res = np.where(o[1], res, 0)
        elif k == "store":
            arg = next(x for x in program.ops if op.operands[0] in x.results).attr("arg")
            if arg not in out:
                size = int(o[0].max()) + 1
                out[arg] = np.zeros(size, NUMPY_DTYPES[program.values[op.operands[1]].dtype])
            out[arg][o[0]] = o[1]
            continue
        elif k == "arange":
            res = np.arange(a["n"], dtype=np.int32)
        elif k == "full":
            v = program.values[op.results[0]]
            res = np.full(v.shape, a["value"], NUMPY_DTYPES[v.dtype])
        elif k == "elementwise":
            fn = a["fn"]
            table = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "max": np.maximum,
                     "min": np.minimum, "and": np.bitwise_and, "shr": np.right_shift, "lt": np.less,
                     "le": np.less_equal, "eq": np.equal}
            if fn in table:
                res = table[fn](o[0], o[1])
            elif fn == "where":
                res = np.where(o[0], o[1], o[2])
            elif fn == "neg":
                res = -o[0]
            elif fn == "exp2":
                res = np.exp2(o[0])
            elif fn == "abs":
                res = np.abs(o[0])
            elif fn == "fp4_to_fp":
                res = _fp4(o[0])
            elif fn == "e8m0_to_fp":
                res = np.exp2(o[0].astype(np.float32) - 127.0)
            else:  # pragma: no cover - the builder checks fn
                raise LayoutError(f"program: unknown elementwise fn {quote(fn)}")
            res = res.astype(NUMPY_DTYPES[program.values[op.results[0]].dtype])
        elif k == "cast":
            res = o[0].astype(NUMPY_DTYPES[program.values[op.results[0]].dtype])
        elif k == "dot":
            res = o[0].astype(np.float32) @ o[1].astype(np.float32)
            if len(o) > 2:
                res = res + o[2]
        elif k == "reduce":
            res = {"add": np.sum, "max": np.max, "min": np.min}[a["combine"]](o[0], axis=a["axis"])
        elif k == "trans":
            res = np.transpose(o[0], a["perm"])
        elif k == "reshape":
            res = o[0].reshape(program.values[op.results[0]].shape)
        elif k == "join":
            res = np.stack([o[0], o[1]], -1)
        elif k == "split":
            env[op.results[0]], env[op.results[1]] = o[0][..., 0], o[0][..., 1]
            continue
        elif k == "expand_dims":
            res = np.expand_dims(o[0], a["axis"])
        elif k == "broadcast":
            res = np.broadcast_to(o[0], program.values[op.results[0]].shape)
        elif k == "gather":
            res = np.take_along_axis(o[0], o[1].astype(np.int64), a["axis"])
        elif k == "convert_layout":
            res = o[0]
        else:
            raise LayoutError(f"program: unknown op kind {quote(k)}")
        env[op.results[0]] = res
    return out
