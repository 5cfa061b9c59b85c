"""The ops' launches run on the CPU: ``ops.launches`` plans them for two buffers at made-up device addresses
and ``codegen.emulate.emulate_launch`` runs each generated kernel on those buffers' bytes."""

from __future__ import annotations

import numpy as np

from linear_layouts.codegen.emulate import emulate_launch
from linear_layouts.ops.launches import Copy, cast_launches, framework_gathers, permute_launches, view_launches

__all__ = ["SRC", "DST", "emulated_permute", "emulated_view_permute", "emulated_cast_transpose", "fp8_reference", "check_cast_kernel",
           "compiles_without_spills"]

#: Made-up device addresses of the buffers (256-byte aligned, far apart); an offset misaligns one.
SRC, DST, AUX = 1 << 40, 2 << 40, 3 << 40
#: SMs of the made-up device (an H100 / H200): the tile choice depends on it.
SMS = 132
UNWRITTEN = 0xAB
#: Bytes past each output that a cast kernel must leave unwritten.
GUARD = 40


def fp8_reference(x: np.ndarray, fp8: str, scale: float) -> np.ndarray:
    """The bytes of ``fp8(scale x)`` as PyTorch casts: in fp32, clamped to the format's largest finite value,
    rounded by ml_dtypes."""
    import ml_dtypes

    f8, top = (ml_dtypes.float8_e4m3fn, 448.0) if fp8 == "e4m3" else (ml_dtypes.float8_e5m2, 57344.0)
    return np.clip(x.astype(np.float32) * np.float32(scale), -top, top).astype(f8).view(np.uint8)


def check_cast_kernel(kernel, x: np.ndarray, fp8: str, offsets: tuple[int, int, int], scale: float = 0.37,
                      scale_in_memory: bool = False) -> None:
    """Run a cast-transpose ``kernel`` (any of ``ops``' three) on the ``m x n`` input ``x`` with X, C and T at
    ``offsets`` bytes past aligned buffers (the scale passed by value, or read from memory) and check C and T
    bit for bit against ``fp8_reference``, the amax exactly, and that nothing around C and T was written."""
    m, n = x.shape
    xo, co, to = offsets
    xbuf = np.zeros(xo + x.nbytes, np.uint8)
    xbuf[xo:] = x.view(np.uint8).reshape(-1)
    cbuf = np.full(co + m * n + GUARD, UNWRITTEN, np.uint8)
    tbuf = np.full(to + m * n + GUARD, UNWRITTEN, np.uint8)
    amax = np.array([2.0], np.float32)
    scales = (np.array([scale], np.float32), 0.0) if scale_in_memory else (None, scale)
    tm, tn = kernel.tile_counts(m, n)
    _, c_out, t_out, _, _, a_out, *_ = emulate_launch(kernel, tm * tn, [
        (xbuf, xo), (cbuf, co), (tbuf, to), *scales, amax, m, n, tn, tm])
    expected = fp8_reference(x, fp8, scale)
    assert np.array_equal(c_out[co:co + m * n].reshape(m, n), expected)
    assert np.array_equal(t_out[to:to + m * n].reshape(n, m), expected.T)
    for out, offset in ((c_out, co), (t_out, to)):  # nothing before or after the outputs
        assert (out[:offset] == UNWRITTEN).all() and (out[offset + m * n:] == UNWRITTEN).all()
    assert a_out[0] == max(2.0, float(np.abs(x.astype(np.float32)).max()))


def compiles_without_spills(kernel, registers_of, tmp_path) -> None:
    """nvcc (sm_90, ``-Xptxas -v``) compiles ``kernel`` with no stack frame and no spills, its launch bounds'
    CTAs are those ``registers_of`` (registers a thread is budgeted) allows, and they fit an SM's 64K registers."""
    import re
    import subprocess

    from linear_layouts.codegen.ptx import find_nvcc

    ctas = int(re.search(r"__launch_bounds__\(\d+, (\d+)\)", kernel.source).group(1))
    assert ctas == min(2048 // kernel.threads, 65536 // (kernel.threads * registers_of))
    (tmp_path / "k.cu").write_text(kernel.source)
    report = subprocess.run([find_nvcc(), "-arch=sm_90", "-cubin", "-w", "-Xptxas", "-v", "-o",
                             str(tmp_path / "k.cubin"), str(tmp_path / "k.cu")],
                            capture_output=True, text=True, check=True).stderr
    registers = int(re.search(r"Used (\d+) registers", report).group(1))
    assert re.search(r"0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads", report), report
    assert -(-registers // 8) * 8 * kernel.threads * ctas <= 65536


def _run(launches, buffers: dict[int, np.ndarray]) -> None:
    """Run ``launches``; ``buffers``: base address -> byte array (updated in place)."""
    def locate(address: int):
        base = max(b for b in buffers if b <= address)
        return base, address - base

    for item in launches:
        if isinstance(item, Copy):
            (sb, so), (db, do) = locate(item.src), locate(item.dst)
            buffers[db][do:do + item.nbytes] = buffers[sb][so:so + item.nbytes]
            continue
        args, bases = [], []
        for (ctype, _), value in zip(item.kernel.params, item.values):
            if "*" in ctype and value is not None:
                base, offset = locate(value)
                args.append((buffers[base], offset))
                bases.append(base)
            else:
                args.append(value)
                bases.append(None)
        out = emulate_launch(item.kernel, item.ctas, args)
        for base, value in zip(bases, out):
            if base is not None:
                buffers[base][:] = value


def emulated_permute(a: np.ndarray, dims, src_offset: int = 0, dst_offset: int = 0, sms: int = SMS,
                     tile=None) -> np.ndarray:
    """``np.transpose(a, dims)`` as ``ops.permute`` computes it (or with ``tile``), emulated; the buffers start
    ``src_offset`` / ``dst_offset`` bytes past aligned addresses."""
    a = np.ascontiguousarray(a)
    out_shape = tuple(a.shape[d] for d in dims)
    launches = permute_launches(a.shape, tuple(dims), a.itemsize, SRC + src_offset, DST + dst_offset, sms, tile)
    src = np.zeros(src_offset + a.nbytes, np.uint8)
    src[src_offset:] = a.view(np.uint8).reshape(-1)
    dst = np.full(dst_offset + a.nbytes, UNWRITTEN, np.uint8)
    buffers = {SRC: src, DST: dst}
    _run(launches, buffers)
    assert (buffers[DST][:dst_offset] == UNWRITTEN).all()  # nothing written before the output
    return buffers[DST][dst_offset:].view(a.dtype).reshape(out_shape)


def emulated_view_permute(base: np.ndarray, view: np.ndarray, dims, sms: int = SMS, out_base_shape=None,
                          out_view=None) -> np.ndarray:
    """``np.transpose(view, dims)`` as ``ops.permute`` computes it for ``view``, any NumPy view of the contiguous
    ``base`` (gaps, repeats, transposed: ``api._memory`` orders its dims by memory, ``view_launches`` reads it at
    its strides, gathered first into a scratch buffer where it takes that; NumPy's copy where the framework's copy does
    the op: ``launches.framework_gathers``), emulated over ``base``'s bytes. The output: a new contiguous buffer, or
    ``out_view(o)`` of a buffer ``o`` of ``out_base_shape`` (a view with gaps, written at its strides). Checks that
    nothing but the output's elements is written."""
    from linear_layouts.ops import api
    from linear_layouts.ops.tensors import Tensor, is_contiguous

    offset = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    t = Tensor("cupy", None, view.shape, tuple(s // view.itemsize for s in view.strides), view.itemsize, None, 0,
               SRC + offset)
    m, composed = api._memory(t, tuple(dims))
    strides = None if is_contiguous(m) else m.strides
    out_shape = tuple(view.shape[d] for d in dims)
    if out_view is None:  # a new contiguous output, guard elements after it
        out_base_shape = (view.size + -(-GUARD // view.itemsize),)

        def out_view(o):
            return o[:view.size].reshape(out_shape)
    out_base = np.full(out_base_shape + (view.itemsize,), UNWRITTEN, np.uint8).view(view.dtype)[..., 0]
    out = out_view(out_base)
    assert out.shape == out_shape
    out_offset = out.__array_interface__["data"][0] - out_base.__array_interface__["data"][0]
    out_strides = None if out.flags.c_contiguous else tuple(s // out.itemsize for s in out.strides)
    marks = np.zeros(out_base.shape, bool)  # the output's elements
    out_view(marks)[...] = True
    written = np.repeat(marks.reshape(-1), view.itemsize)
    before = out_base.view(np.uint8).reshape(-1).copy()
    if framework_gathers(m.shape, composed, m.itemsize, strides):  # the framework's copy does it: api._permute
        return np.ascontiguousarray(np.transpose(view, dims))
    launches = view_launches(m.shape, composed, m.itemsize, m.pointer, DST + out_offset, sms, strides, AUX,
                             out_strides)
    buffers = {SRC: base.view(np.uint8).reshape(-1).copy(), DST: before.copy(),
               AUX: np.full(max(view.size * view.itemsize, 1), UNWRITTEN, np.uint8)}
    _run(launches, buffers)
    after = buffers[DST]
    assert (after[~written] == before[~written]).all()  # nothing else written: gaps, guard
    return np.ascontiguousarray(out_view(after.view(view.dtype).reshape(out_base.shape)))


def emulated_cast_transpose(raw: np.ndarray, input_format: str, fp8: str, scale: float, amax: float = 0.0,
                            offsets: tuple[int, int, int] = (0, 0, 0), sms: int = SMS, misaligned: str | None = None,
                            tile=None):
    """``(out, out_t, amax)`` (uint8 fp8 bits, float) of ``ops.cast_transpose`` of the 2-D ``raw`` (the input's
    bits: uint16 for bf16 / fp16, uint32 for fp32), emulated; ``misaligned``, ``tile``: as ``cast_launches``'."""
    m, n = raw.shape
    xo, oo, to = offsets
    x = np.zeros(xo + raw.nbytes, np.uint8)
    x[xo:] = raw.view(np.uint8).reshape(-1)
    out = np.full(oo + m * n, UNWRITTEN, np.uint8)
    out_t = np.full(to + m * n, UNWRITTEN, np.uint8)
    am = np.array([amax], np.float32).view(np.uint8).copy()
    buffers = {SRC: x, DST: out, AUX: out_t, 4 << 40: am}
    launches = cast_launches(input_format, fp8, m, n, SRC + xo, DST + oo, AUX + to, None, scale, 4 << 40, sms,
                             misaligned, tile)
    _run(launches, buffers)
    assert (buffers[DST][:oo] == UNWRITTEN).all() and (buffers[AUX][:to] == UNWRITTEN).all()  # nothing before
    return (buffers[DST][oo:].reshape(m, n), buffers[AUX][to:].reshape(n, m),
            float(buffers[4 << 40].view(np.float32)[0]))
