"""The realigned fp8 cast-transpose (``codegen.realign``) without a GPU: the emitted kernel, run by the emulator
on buffers with guard bytes on both sides of each output, writes every byte of ``C`` and ``T`` exactly as
ml_dtypes' fp8 of ``scale X`` and nothing outside them, and the exact amax, on shapes that cut its edge cases
(tiny and prime sizes, rows shorter than a word, whole tiles inside the matrix and tiles at its ends, every
offset of the three pointers) and on every tile it allows; the word realignment its stores follow covers
each byte of a row once (hypothesis); the shared tile's swizzle gives step 4's reads 32 banks; with nvcc,
the kernels keep their chunks in registers (no spills) within the registers the launch bounds budget."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from linear_layouts.codegen.emulate import find_cxx
from linear_layouts.codegen.ptx import find_nvcc
from linear_layouts.codegen.realign import (
    emit_realigned_cast_transpose_kernel, realigned_shared_bytes, swizzle, thread_registers, tile_columns,
    word_selector,
)
from linear_layouts.core.errors import LayoutError

from ._emulated import check_cast_kernel, compiles_without_spills

ml_dtypes = pytest.importorskip("ml_dtypes")


def _prmt(a: int, b: int, selector: int) -> int:
    data = (b << 32) | a
    return sum(((data >> (8 * ((selector >> (4 * i)) & 7))) & 0xFF) << (8 * i) for i in range(4))


@settings(max_examples=200, deadline=None)
@given(address=st.integers(0, 2**20), length=st.integers(1, 300), start=st.integers(0, 300))
def test_word_realignment_covers_each_byte_once(address, length, start):
    """The stores of a row of ``length`` bytes at ``address`` as the kernel makes them: stream word ``j`` holds
    row bytes ``4 j ..``; aligned word ``j`` (at ``address - e + 4 j``) is ``prmt(s[j - 1], s[j],
    word_selector(e))``, stored whole when it lies in the row, else byte by byte: each byte lands once, at
    its address, with its value."""
    row = [(start + p) % 251 for p in range(length)]
    words = [int.from_bytes(bytes(row[4 * j:4 * j + 4]).ljust(4, b"\0"), "little") for j in range(-(-length // 4))]
    e = address % 4
    memory: dict[int, int] = {}
    for j in range(len(words) + 1):
        value = _prmt(words[j - 1] if j else 0, words[j] if j < len(words) else 0, word_selector(e))
        lo = 4 * j - e
        whole = 0 <= lo and lo + 4 <= length
        for b in range(4):
            if whole or 0 <= lo + b < length:
                assert address + lo + b not in memory
                memory[address + lo + b] = (value >> (8 * b)) & 0xFF
    assert memory == {address + p: row[p] for p in range(length)}


def test_swizzle_spreads_step_4_reads_over_32_banks():
    """A step-4 read: lanes ``(c, u)`` read column word ``cw0 + c`` of row ``16 u + t``; with rows of N bytes
    (a multiple of 128), the bank is the swizzled word index mod 32: 32 distinct for every tile."""
    for rows in (16, 32, 64, 128, 256):
        lanes = rows // 16
        for n in (128, 256):
            for cw0 in range(0, n // 4, 32 // lanes):
                for t in range(16):
                    banks = {((16 * u + t) * n // 4 + ((cw0 + c) ^ swizzle(16 * u + t, rows))) % 32
                             for u in range(lanes) for c in range(32 // lanes)}
                    assert len(banks) == 32, (rows, n, cw0, t)


def _run(input_format, fp8, shape, offsets, rows=64, warps=8, wide=True):
    kernel = emit_realigned_cast_transpose_kernel("k", input_format, fp8, rows, warps, wide=wide)
    rng = np.random.default_rng(sum(shape) + rows)
    m, n = shape
    values = (rng.standard_normal(shape) * 400).astype(np.float32)
    values[m // 2, n - 1] = 6e4  # the amax in the last column of a middle row (saturates in e4m3)
    x = values.astype({"bf16": ml_dtypes.bfloat16, "fp16": np.float16, "fp32": np.float32}[input_format])
    check_cast_kernel(kernel, x, fp8, offsets, 0.37, scale_in_memory=True)


@pytest.mark.skipif(find_cxx() is None, reason="no C++20 compiler")
@pytest.mark.parametrize("input_format, fp8, shape, offsets", [
    ("bf16", "e4m3", (1, 1), (2, 3, 1)),        # one element: one partial word on each side
    ("fp16", "e5m2", (3, 2), (0, 1, 2)),        # rows shorter than a word
    ("bf16", "e4m3", (17, 19), (2, 15, 14)),    # primes, one tile
    ("fp32", "e4m3", (67, 150), (12, 9, 2)),    # fp32: 2 x 2 tiles, every output misaligned
    ("bf16", "e5m2", (200, 1100), (2, 3, 1)),   # whole tiles inside X (the unguarded loads) and edge tiles
    ("fp16", "e4m3", (129, 600), (0, 0, 0)),    # aligned pointers, odd rows: a last tile row of one row
    ("fp32", "e5m2", (131, 300), (4, 7, 5)),    # whole fp32 tiles, a last tile column of 44
])
def test_emulated_kernel_writes_every_byte_once(input_format, fp8, shape, offsets):
    _run(input_format, fp8, shape, offsets)


@pytest.mark.skipif(find_cxx() is None, reason="no C++20 compiler")
@pytest.mark.parametrize("input_format, rows, warps, wide", [
    ("bf16", 16, 4, True), ("fp16", 32, 8, True), ("bf16", 128, 16, True), ("fp32", 256, 32, True),
    ("fp32", 32, 4, True), ("bf16", 64, 8, False), ("fp32", 32, 8, False),
])
def test_every_tile_is_exact(input_format, rows, warps, wide):
    """Whole and edge tiles of each tile shape, with 8- / 16-byte chunk stores (``wide``) or 32-bit words."""
    _run(input_format, "e4m3", (rows + 37, 2 * tile_columns(2 if input_format != "fp32" else 4) + 13),
         (2 if input_format != "fp32" else 4, 5, 3), rows, warps, wide)


@pytest.mark.skipif(find_cxx() is None, reason="no C++20 compiler")
@pytest.mark.parametrize("c_offset", range(8))
def test_whole_tiles_at_every_output_offset(c_offset):
    """Whole 64 x 256 tiles with C at each offset mod 8 and T's rows (130 bytes apart, from 7 mod 16) at every
    offset mod 16: each 8-byte chunk of C and 16-byte chunk of T, and the first and last pieces of each row."""
    _run("bf16", "e4m3", (130, 520), (2, c_offset, 7))


@pytest.mark.skipif(find_nvcc() is None, reason="needs nvcc")
@pytest.mark.parametrize("input_format, rows, warps", [("bf16", 64, 8), ("fp32", 64, 8), ("bf16", 32, 8), ("bf16", 16, 4)])
def test_kernels_keep_their_chunks_in_registers(input_format, rows, warps, tmp_path):
    """ptxas's report (``-Xptxas -v``) under the launch bounds that ``thread_registers`` chose: no stack frame,
    no spills, and the CTAs the bounds name fit an SM's 64K registers."""
    kernel = emit_realigned_cast_transpose_kernel("k", input_format, "e4m3", rows, warps)
    compiles_without_spills(kernel, thread_registers(rows // warps), tmp_path)


def test_shared_bytes_launch_bounds_and_bad_arguments():
    kernel = emit_realigned_cast_transpose_kernel("k", "bf16", "e4m3")
    assert (kernel.tile_rows, kernel.tile_cols, kernel.threads) == (64, 256, 256)
    assert kernel.shared_bytes == realigned_shared_bytes(64, 2) == 64 * 256 + 128 + 32 * (64 + 256)
    assert "__launch_bounds__(256, 2)" in kernel.source  # 112 registers of 8 rows a warp: 2 CTAs of 256 threads
    assert "__launch_bounds__(256, 3)" in emit_realigned_cast_transpose_kernel("k", "bf16", "e4m3", 32, 8).source
    assert "__launch_bounds__(256, 1)" in emit_realigned_cast_transpose_kernel("k", "fp32", "e4m3", 64, 8,
                                                                               ctas_per_sm=1).source
    with pytest.raises(LayoutError, match="rows: must be a power of two from 16 to 128"):
        emit_realigned_cast_transpose_kernel("k", "bf16", "e4m3", rows=256)
    with pytest.raises(LayoutError, match="rows: 64 rows of 4 warps must be 1 to 8 rows a warp"):
        emit_realigned_cast_transpose_kernel("k", "bf16", "e4m3", rows=64, warps=4)
    with pytest.raises(LayoutError, match="ctas_per_sm"):
        emit_realigned_cast_transpose_kernel("k", "bf16", "e4m3", ctas_per_sm=-1)
    with pytest.raises(LayoutError, match="input_format"):
        emit_realigned_cast_transpose_kernel("k", "int8", "e4m3")
