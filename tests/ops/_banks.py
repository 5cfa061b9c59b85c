"""Shared-memory bank model of the chunked cast-transpose's interior tile (``codegen.cast_chunks``): for one warp
instruction, the lanes' byte addresses -> 4-byte words -> banks (``word mod 32``); a bank serves one distinct word a
wavefront (lanes on the same word share it), so an instruction takes ``max over banks of its distinct words``
wavefronts. Step 2's byte stores and step 3's word loads are modelled address by address as the kernel computes
them (``smem`` at a multiple of 128 bytes), for a tile whose rows have flat shift ``corner = (r0 n + c0) mod G``,
row length ``n`` and column length ``m``."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from linear_layouts.codegen.cast_chunks import main_item


def wavefronts(addresses: Iterable[int]) -> int:
    """Wavefronts of one shared access of 1 to 4 bytes per lane at ``addresses``.

    >>> wavefronts([0, 1, 2, 3, 128]), wavefronts([0, 4, 8])
    (2, 1)
    """
    words: dict[int, set[int]] = {}
    for a in addresses:
        words.setdefault(a // 4 % 32, set()).add(a // 4)
    return max((len(w) for w in words.values()), default=0)


def linear_item(t: int, rows: int, cols: int, warps: int, g: int) -> tuple[int, int]:
    """The row-by-row item order: ``(t / (N / G), t mod (N / G))``."""
    return divmod(t, cols // g)


def store_wavefronts(rows: int, cols: int, warps: int, g: int, pitch: int, n: int, corner: int,
                     item: Callable[..., tuple[int, int]] = main_item) -> list[int]:
    """Wavefronts of every byte store of step 2 (``G`` a chunk, lanes ``32 w ..`` of item ``i``): the chunk of
    loaded row ``rr`` (``item`` of its main items, row ``t - main`` of chunk ``N / G`` after them) at byte
    ``P (G - 1) + rr + (G j - d + e) P`` with ``d = (corner + (rr - G + 1) n) mod G``."""
    k = cols // g
    loaded = rows + g - 1
    main, items = loaded * k, loaded * (k + 1)
    out = []
    for first in range(0, items, 32):
        lanes = [item(t, rows, cols, warps, g) if t < main else (t - main, k)
                 for t in range(first, min(first + 32, items))]
        for e in range(g):
            out.append(wavefronts(pitch * (g - 1) + rr + (g * j - (corner + (rr - g + 1) * n) % g + e) * pitch
                                  for rr, j in lanes))
    return out


def load_wavefronts(rows: int, cols: int, warps: int, g: int, pitch: int, m: int) -> list[int]:
    """Wavefronts of every word load of step 3: lane ``u`` (column ``cb = u / A``, ``ql = u mod A``, ``A`` lanes
    a T row) reads the ``G / 4 + 1`` words from ``first & ~3``, ``first = (cb + G - 1) P + G - 1 - s + G (ql +
    A z)``, ``s = cb m mod G`` (``r0`` and ``c0`` multiples of ``G``)."""
    threads, q_chunks = 32 * warps, rows // g
    lanes = min(q_chunks, max(1, threads // cols))
    out = []
    for first_u in range(0, cols * lanes, 32):
        for z in range(q_chunks // lanes):
            starts = []
            for u in range(first_u, min(first_u + 32, cols * lanes)):
                cb, ql = divmod(u, lanes)
                starts.append(((cb + g - 1) * pitch + g - 1 - cb * m % g + g * (ql + lanes * z)) & ~3)
            out += [wavefronts(s + 4 * w for s in starts) for w in range(g // 4 + 1)]
    return out
