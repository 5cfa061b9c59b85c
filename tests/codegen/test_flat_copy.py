"""The flat copy kernel (``codegen.flat_copy``): every byte of ``[src, src + n)`` once at the same offset of ``dst``,
nothing else written, at every vector width, source residue, size and grid form (emulated on the CPU)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from linear_layouts.codegen.emulate import emulate_launch, find_cxx
from linear_layouts.codegen.flat_copy import COPY_VECTOR_BYTES, copy_vector_bytes, emit_copy_kernel
from linear_layouts.core.errors import LayoutError

needs_cxx = pytest.mark.skipif(find_cxx() is None, reason="no C++20 compiler for the emulator")

#: Bytes around the copied range that must stay as they were.
_GUARD = 24


@needs_cxx
@settings(max_examples=25, deadline=None)
@given(vector=st.sampled_from(sorted(COPY_VECTOR_BYTES)), per_thread=st.integers(1, 4), warps=st.integers(1, 2),
       persistent=st.sampled_from([0, 1, 3]), nbytes=st.integers(1, 6000), residue=st.integers(0, 15),
       seed=st.integers(0, 2**31))
def test_copies_exactly_its_bytes(vector, per_thread, warps, persistent, nbytes, residue, seed):
    kernel = emit_copy_kernel("c", vector, per_thread, warps, ctas_per_sm=persistent)
    rng = np.random.default_rng(seed)
    src = rng.integers(0, 256, nbytes + 2 * _GUARD, dtype=np.uint8)
    dst = np.full(nbytes + 2 * _GUARD, 0xAB, np.uint8)
    offset = _GUARD - _GUARD % 16 + residue  # the same residue mod 16 on both sides: buffers start aligned
    ctas = kernel.ctas(kernel.tiles(1, nbytes), 2)
    _, out, _ = emulate_launch(kernel, ctas, [(src, offset), (dst, offset), nbytes])
    expected = np.full_like(dst, 0xAB)
    expected[offset:offset + nbytes] = src[offset:offset + nbytes]
    assert (out == expected).all()


def test_grid_covers_any_head():
    """``tiles(1, n)`` blocks of ``U T V`` bytes: ``n`` plus a head under ``V`` bytes never needs one more."""
    k = emit_copy_kernel("c", 16, 2, 8)
    assert k.tile_cols == 8192 and k.tiles(1, 8192) == 1 and k.tiles(1, 8193) == 2
    assert emit_copy_kernel("c", 16, 4, 8).tiles(1, 46209004) == 2821  # the module doc's example


def test_vector_bytes_of_addresses():
    assert copy_vector_bytes(0x1003, 0x2007) == 4
    assert copy_vector_bytes(0x1000, 0x2000) == 16
    assert copy_vector_bytes(0x1001, 0x2000) == 1
    assert copy_vector_bytes(0x100A, 0x2002) == 8


@pytest.mark.parametrize("kwargs, message", [
    (dict(vector_bytes=3), "vector_bytes: must be a power of two"),
    (dict(vector_bytes=32), "vector_bytes: must be an int from 1 to 16"),
    (dict(vectors_per_thread=0), "vectors_per_thread"),
    (dict(warps=33), "warps"),
    (dict(vector_bytes=8, streaming=True), "streaming: the hinted accesses are 16-byte ones"),
    (dict(ctas_per_sm=-1), "ctas_per_sm"),
    (dict(warps=True), "warps"),
])
def test_bad_arguments_name_the_rule(kwargs, message):
    with pytest.raises(LayoutError, match=message):
        emit_copy_kernel("c", **kwargs)
