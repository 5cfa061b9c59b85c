"""The Gluon kernels of benchmarks/gpu_shared_advice.py (imported only where Triton compiles them: the CPU
prepare step with Triton 3.6, or the CPU tests with Triton 3.9; the device only loads their cubins).

``gsa_roundtrip``: a tile loaded in ``STORE``, stored to shared memory of layout ``SMEM``, read back in
``LOAD`` and written out; ``gsa_convert``: the same data movement through ``gl.convert_layout`` (Triton's
own scratch layout). One CTA; the output equals the input bit for bit.
"""

from triton.experimental import gluon
from triton.experimental.gluon import language as gl

_BARRIER = getattr(gl, "barrier", None) or getattr(gl, "thread_barrier")  # Triton 3.9 / 3.6


@gluon.jit
def gsa_roundtrip(src, dst, M: gl.constexpr, N: gl.constexpr, STORE: gl.constexpr, LOAD: gl.constexpr,
                  SMEM: gl.constexpr):
    rows = gl.arange(0, M, layout=gl.SliceLayout(1, STORE))
    cols = gl.arange(0, N, layout=gl.SliceLayout(0, STORE))
    x = gl.load(src + rows[:, None] * N + cols[None, :])
    smem = gl.allocate_shared_memory(x.dtype, [M, N], SMEM, value=x)
    _BARRIER()
    y = smem.load(LOAD)
    rows_l = gl.arange(0, M, layout=gl.SliceLayout(1, LOAD))
    cols_l = gl.arange(0, N, layout=gl.SliceLayout(0, LOAD))
    gl.store(dst + rows_l[:, None] * N + cols_l[None, :], y)


@gluon.jit
def gsa_convert(src, dst, M: gl.constexpr, N: gl.constexpr, STORE: gl.constexpr, LOAD: gl.constexpr):
    rows = gl.arange(0, M, layout=gl.SliceLayout(1, STORE))
    cols = gl.arange(0, N, layout=gl.SliceLayout(0, STORE))
    x = gl.load(src + rows[:, None] * N + cols[None, :])
    y = gl.convert_layout(x, LOAD)
    rows_l = gl.arange(0, M, layout=gl.SliceLayout(1, LOAD))
    cols_l = gl.arange(0, N, layout=gl.SliceLayout(0, LOAD))
    gl.store(dst + rows_l[:, None] * N + cols_l[None, :], y)
