"""Triton 3.9 as a stand-in attribute resolver, for tests only: Triton's own MLIR parser reads an encoding
attribute (``ir.parse_mlir_module`` on a one-argument function), Gluon returns its layout object, and
``linear_layouts.triton.from_gluon`` turns that into our catalog descriptor. The report itself never needs
Triton: it uses the project's TTGIR attribute parser (``linear_layouts.ttgir``)."""

from __future__ import annotations

import os
import tempfile

_STATE: dict = {}


def _builder():
    if not _STATE:
        from triton._C.libtriton import gluon_ir, ir

        ctx = ir.context()
        ir.load_dialects(ctx)
        try:
            from triton._C.libtriton import nvidia  # noqa: F401  (ttng dialect)
            nvidia.load_dialects(ctx)
        except (ImportError, AttributeError):
            pass
        _STATE.update(ir=ir, ctx=ctx, b=gluon_ir.GluonOpBuilder(ctx))
    return _STATE


def _parse(attr: str, rank: int):
    s = _builder()
    shared = any(k in attr for k in ("_shared<", "shared_linear<"))
    shape = "x".join([str({1: 256, 2: 256, 3: 64}.get(rank, 16))] * rank)
    ty = f"!ttg.memdesc<{shape}xf16, {attr}, #ttg.shared_memory>" if shared else f"tensor<{shape}xf16, {attr}>"
    text = ('module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32} {\n'
            f"  tt.func public @f(%x: {ty}) {{\n    tt.return\n  }}\n}}\n")
    fd, path = tempfile.mkstemp(suffix=".ttgir")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    try:
        mod = s["ir"].parse_mlir_module(path, s["ctx"])
        arg = mod.get_function("f").args(0)
        b = s["b"]
        return b.get_gluon_layout_from_memdesc(arg) if shared else b.get_gluon_layout_from_tensor(arg)
    finally:
        os.unlink(path)


def triton_resolver(attr: str):
    """Our catalog descriptor of an encoding attribute, as Triton 3.9 parses it."""
    from linear_layouts.errors import LayoutError
    from linear_layouts.triton import from_gluon

    if attr in _STATE.get("cache", {}):
        return _STATE["cache"][attr]
    last = None
    for rank in (2, 1, 3, 4):
        try:
            desc = from_gluon(_parse(attr, rank))
            _STATE.setdefault("cache", {})[attr] = desc
            return desc
        except Exception as error:  # Triton's verifier rejects a wrong rank
            last = error
    raise LayoutError(f"Triton could not read the attribute {attr[:80]!r}: {last}")
