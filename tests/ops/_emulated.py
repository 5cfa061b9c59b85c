"""The ops' launches run on the CPU: ``ops.launches`` plans them for two buffers at made-up device addresses
and ``codegen.emulate.emulate_launch`` runs each generated kernel on those buffers' bytes."""

from __future__ import annotations

import numpy as np

from linear_layouts.codegen.emulate import emulate_launch
from linear_layouts.ops.launches import Copy, cast_launches, permute_launches

__all__ = ["SRC", "DST", "emulated_permute", "emulated_cast_transpose"]

#: Made-up device addresses of the buffers (256-byte aligned, far apart); an offset misaligns one.
SRC, DST, AUX = 1 << 40, 2 << 40, 3 << 40
#: SMs of the made-up device (an H100 / H200): the tile choice depends on it.
SMS = 132
UNWRITTEN = 0xAB


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


def emulated_cast_transpose(raw: np.ndarray, input_format: str, fp8: str, scale: float, amax: float = 0.0,
                            offsets: tuple[int, int, int] = (0, 0, 0), sms: int = SMS):
    """``(out, out_t, amax)`` (uint8 fp8 bits, float) of ``ops.cast_transpose`` of the 2-D ``raw`` (the input's
    bits: uint16 for bf16 / fp16, uint32 for fp32), emulated."""
    m, n = raw.shape
    xo, oo, to = offsets
    x = np.zeros(xo + raw.nbytes, np.uint8)
    x[xo:] = raw.view(np.uint8).reshape(-1)
    out = np.full(oo + m * n, UNWRITTEN, np.uint8)
    out_t = np.full(to + m * n, UNWRITTEN, np.uint8)
    am = np.array([amax], np.float32).view(np.uint8).copy()
    buffers = {SRC: x, DST: out, AUX: out_t, 4 << 40: am}
    launches = cast_launches(input_format, fp8, m, n, SRC + xo, DST + oo, AUX + to, None, scale, 4 << 40, sms)
    _run(launches, buffers)
    assert (buffers[DST][:oo] == UNWRITTEN).all() and (buffers[AUX][:to] == UNWRITTEN).all()  # nothing before
    return (buffers[DST][oo:].reshape(m, n), buffers[AUX][to:].reshape(n, m),
            float(buffers[4 << 40].view(np.float32)[0]))
