"""Triton's own layout conversion as the peer: a Gluon kernel load(src) -> gl.convert_layout -> store(dst).

The layouts come from ``linear_layouts.triton_model.interop.to_gluon`` (of a catalog ``DistributedLinearLayout``
with the layout's bases).  The kernel mirrors our
generated kernels exactly: one tile per program, ``iterations`` round trips dst -> src -> dst with
an XOR by 1 after every conversion (so Triton cannot fold two conversions into one).  Works with
Triton 3.6 (GPU machines) and 3.9 (here; ``gluon_ptx`` compiles for sm_90 without a GPU).
"""

from __future__ import annotations

from triton.experimental import gluon
from triton.experimental.gluon import language as gl


@gluon.jit
def convert_kernel(src_ptr, dst_ptr, iterations, M: gl.constexpr, N: gl.constexpr,
                   SRC: gl.constexpr, DST: gl.constexpr):
    base = gl.program_id(0) * (M * N)
    rows = gl.arange(0, M, layout=gl.SliceLayout(1, SRC))
    cols = gl.arange(0, N, layout=gl.SliceLayout(0, SRC))
    x = gl.load(src_ptr + base + rows[:, None] * N + cols[None, :])
    y = gl.convert_layout(x, DST)
    for _ in range(iterations):
        y = y ^ 1
        x = gl.convert_layout(y, SRC)
        x = x ^ 1
        y = gl.convert_layout(x, DST)
    rows_d = gl.arange(0, M, layout=gl.SliceLayout(1, DST))
    cols_d = gl.arange(0, N, layout=gl.SliceLayout(0, DST))
    gl.store(dst_ptr + base + rows_d[:, None] * N + cols_d[None, :], y)


@gluon.jit
def convert_once_kernel(src_ptr, dst_ptr, M: gl.constexpr, N: gl.constexpr, SRC: gl.constexpr, DST: gl.constexpr):
    base = gl.program_id(0) * (M * N)
    rows = gl.arange(0, M, layout=gl.SliceLayout(1, SRC))
    cols = gl.arange(0, N, layout=gl.SliceLayout(0, SRC))
    x = gl.load(src_ptr + base + rows[:, None] * N + cols[None, :])
    y = gl.convert_layout(x, DST)
    rows_d = gl.arange(0, M, layout=gl.SliceLayout(1, DST))
    cols_d = gl.arange(0, N, layout=gl.SliceLayout(0, DST))
    gl.store(dst_ptr + base + rows_d[:, None] * N + cols_d[None, :], y)


def gluon_layout(layout):
    """``gl.DistributedLinearLayout`` of a ``linear_layouts.LinearLayout``: our catalog's
    ``DistributedLinearLayout`` of its bases, through ``linear_layouts.triton_model.interop.to_gluon``."""
    from linear_layouts.layouts.linear import DistributedLinearLayout  # noqa: PLC0415
    from linear_layouts.triton_model.interop import to_gluon  # noqa: PLC0415

    b = layout.bases
    shape = [layout.out_dim_size(d) for d in layout.out_dim_names]
    return to_gluon(DistributedLinearLayout(b.get("register", []), b.get("lane", []), b.get("warp", []),
                                            b.get("block", []), shape))


_INT = {1: "i8", 2: "i16", 4: "i32", 8: "i64"}


def gluon_ptx(src, dst, element_bytes: int, num_warps: int, once: bool = False) -> str:
    """PTX Triton generates for ``src -> dst`` on sm_90 (no GPU needed); ``once``: one conversion,
    no round-trip loop."""
    import triton  # noqa: PLC0415
    from triton.backends.compiler import GPUTarget  # noqa: PLC0415
    from triton.experimental.gluon._runtime import GluonASTSource  # noqa: PLC0415

    m, n = (src.out_dim_size(d) for d in src.out_dim_names)
    t = _INT[element_bytes]
    signature = {"src_ptr": f"*{t}", "dst_ptr": f"*{t}", "iterations": "i32", "M": "constexpr", "N": "constexpr",
                 "SRC": "constexpr", "DST": "constexpr"}
    if once:
        del signature["iterations"]
    source = GluonASTSource(
        convert_once_kernel if once else convert_kernel, signature,
        constexprs={"M": m, "N": n, "SRC": gluon_layout(src), "DST": gluon_layout(dst)},
    )
    compiled = triton.compile(source, target=GPUTarget("cuda", 90, 32), options={"num_warps": num_warps})
    return compiled.asm["ptx"]


def gluon_launcher(src, dst, num_warps: int):
    """``launch(x, y, iterations, tiles)``: the peer on torch tensors ``x -> y`` (``tiles`` programs);
    the Gluon layouts are built once."""
    m, n = (src.out_dim_size(d) for d in src.out_dim_names)
    s, d = gluon_layout(src), gluon_layout(dst)

    def launch(x, y, iterations: int, tiles: int) -> None:
        convert_kernel[(tiles,)](x, y, iterations, m, n, s, d, num_warps=num_warps)

    return launch
