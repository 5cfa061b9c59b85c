"""A CPU model of one CTA's registers and of ``shfl.sync.idx``, to check shuffle and gather plans (§5.4, §5.5).

Registers are ``regs[warp][lane][register]`` (NumPy int64 array). ``shfl_sync_idx(words, src_lane)``
is the PTX rule: every lane supplies one 32-bit word and receives the word of lane ``src_lane[lane]``.
Elements narrower than 32 bits are packed ``32 // bitwidth`` to a word (element k in bits
``k*bitwidth ..``); 64-bit elements travel as two words. Also here: seeded random distributed layouts
(paper Def. 4.10: every basis a distinct power of two or zero) for the simulators' random cases.

>>> import numpy as np
>>> shfl_sync_idx(np.arange(4) * 10, np.array([3, 2, 1, 0])).tolist()
[30, 20, 10, 0]
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from linear_layouts.core.element_type import DTypeLike, element_type
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout

__all__ = [
    "WORD_BITS",
    "distribute",
    "shfl_sync_idx",
    "pack",
    "unpack",
    "random_distributed_layout",
    "random_within_warp_partner",
    "pack_words",
    "unpack_words",
    "execute_shuffle_plan",
    "execute_gather_plan",
]

WORD_BITS = 32


def distribute(layout: LinearLayout, tensor: np.ndarray) -> np.ndarray:
    """``regs[warp, lane, register] = tensor[L(register, lane, warp)]`` for every slot (block 0).

    ``tensor`` is indexed by the layout's out dims (``tensor.shape`` = out dim sizes, dim0 first).
    >>> L = LinearLayout({"register": [[1]], "lane": [[2]], "warp": [[0]]}, ["dim0"])
    >>> distribute(L, np.arange(4) + 10).tolist()
    [[[10, 11], [12, 13]], [[10, 11], [12, 13]]]
    """
    sizes = tuple(layout.out_dims.values())
    if tuple(tensor.shape) != sizes:
        raise LayoutError(f"tensor must have shape {sizes} (the layout's out dims), got {tuple(tensor.shape)}")
    n_reg, n_lane = layout.in_dims.get("register", 1), layout.in_dims.get("lane", 1)
    n_warp = layout.in_dims.get("warp", 1)
    w, t, r = np.meshgrid(np.arange(n_warp), np.arange(n_lane), np.arange(n_reg), indexing="ij")
    ins = {d: a for d, a in (("register", r), ("lane", t), ("warp", w)) if layout.has_in_dim(d)}
    coords = layout.apply_array(ins)
    return tensor[tuple(coords[d] for d in layout.out_dim_names)]


def shfl_sync_idx(words: np.ndarray, src_lane: np.ndarray) -> np.ndarray:
    """``out[lane] = words[src_lane[lane]]`` for one warp: the semantics of ``shfl.sync.idx.b32`` (full mask).

    ``words`` must be 32-bit payloads (0 <= w < 2**32); a source lane out of range is an error here
    (the hardware would clamp; plans never rely on that).
    """
    words = np.asarray(words)
    src_lane = np.asarray(src_lane)
    n = words.shape[0]
    if src_lane.shape != (n,):
        raise LayoutError(f"src_lane must have one entry per lane ({n}), got shape {src_lane.shape}")
    if n and (words.min() < 0 or words.max() >= 1 << WORD_BITS):
        raise LayoutError("shfl_sync_idx: every payload must fit in 32 bits")
    if n and (src_lane.min() < 0 or src_lane.max() >= n):
        raise LayoutError(f"shfl_sync_idx: source lanes must be in [0, {n})")
    return words[src_lane]


def pack(values: Sequence[int], dtype: DTypeLike) -> list[int]:
    """Pack elements of ``bitwidth`` bits into 32-bit words, element k at bit ``k*bitwidth`` (little end).

    >>> pack([0x12, 0x34], 8), pack([2**40 + 7], 64)
    ([13330], [7, 256])
    """
    bitwidth = element_type(dtype).bits
    if bitwidth > WORD_BITS:
        if bitwidth % WORD_BITS:
            raise LayoutError(f"bitwidth above 32 must be a multiple of 32, got {bitwidth}")
        per = bitwidth // WORD_BITS
        return [(int(v) >> (WORD_BITS * i)) & 0xFFFFFFFF for v in values for i in range(per)]
    per = WORD_BITS // bitwidth
    if len(values) > per:
        raise LayoutError(f"at most {per} elements of {bitwidth} bits fit in one 32-bit word, got {len(values)}")
    word = 0
    for k, v in enumerate(values):
        if not 0 <= int(v) < 1 << bitwidth:
            raise LayoutError(f"value {v} does not fit in {bitwidth} bits")
        word |= int(v) << (k * bitwidth)
    return [word]


def unpack(words: Sequence[int], dtype: DTypeLike, count: int) -> list[int]:
    """Inverse of :func:`pack`: ``count`` elements of ``bitwidth`` bits from the words."""
    bitwidth = element_type(dtype).bits
    if bitwidth > WORD_BITS:
        per = bitwidth // WORD_BITS
        return [sum(int(words[e * per + i]) << (WORD_BITS * i) for i in range(per)) for e in range(count)]
    mask = (1 << bitwidth) - 1
    return [(int(words[0]) >> (k * bitwidth)) & mask for k in range(count)]


# ---------------------------------------------------------------------------------------------
# random distributed layouts (test-case generators for the simulators)


def _vector(position: int, shape_log2: Sequence[int]) -> list[int]:
    """Unit vector of flat bit ``position`` (first out dim least significant) as per-dim coordinates."""
    out = [0] * len(shape_log2)
    for d, k in enumerate(shape_log2):
        if position < k:
            out[d] = 1 << position
            return out
        position -= k
    raise LayoutError("position out of range")


def _assign(rng: np.random.Generator, positions: list[int], n_bits: int, n_nonzero: int) -> list[int | None]:
    """n_bits slots, n_nonzero of them (at random places) taking ``positions`` in order, the rest None (zero)."""
    slots: list[int | None] = [None] * n_bits
    where = sorted(rng.choice(n_bits, size=n_nonzero, replace=False).tolist()) if n_nonzero else []
    for s, p in zip(where, positions):
        slots[s] = p
    return slots


def _build(shape_log2: Sequence[int], parts: dict[str, list[int | None]]) -> LinearLayout:
    zero = [0] * len(shape_log2)
    bases = {
        d: [(_vector(p, shape_log2) if p is not None else list(zero)) for p in slots] for d, slots in parts.items()
    }
    out = [(f"dim{i}", 1 << k) for i, k in enumerate(shape_log2)]
    return LinearLayout(bases, out)


def random_distributed_layout(
    rng: np.random.Generator,
    shape_log2: Sequence[int],
    *,
    lane_bits: int = 5,
    warp_bits: int = 2,
    broadcast: bool = True,
    extra_register_zeros: int = 0,
) -> LinearLayout:
    """A random distributed layout (register, lane, warp) onto a tensor of shape ``2**shape_log2``.

    Every tensor bit goes to exactly one hardware bit; with ``broadcast`` some lane / warp bits are
    zero (duplicated data), and ``extra_register_zeros`` zero register bases are mixed in.
    """
    total = sum(shape_log2)
    positions = rng.permutation(total).tolist()
    lo_lane = 0 if broadcast else lane_bits
    n_lane = int(rng.integers(lo_lane, lane_bits + 1)) if broadcast else lane_bits
    n_lane = min(n_lane, total)
    n_warp = int(rng.integers(0, warp_bits + 1)) if broadcast else warp_bits
    n_warp = min(n_warp, total - n_lane)
    n_reg = total - n_lane - n_warp
    lane = _assign(rng, positions[:n_lane], lane_bits, n_lane)
    warp = _assign(rng, positions[n_lane:n_lane + n_warp], warp_bits, n_warp)
    reg = _assign(rng, positions[n_lane + n_warp:], n_reg + extra_register_zeros, n_reg)
    return _build(shape_log2, {"register": reg, "lane": lane, "warp": warp})


def random_within_warp_partner(
    rng: np.random.Generator, layout: LinearLayout, *, broadcast: bool = True, extra_register_zeros: int = 0
) -> LinearLayout:
    """A random distributed layout with the same warp bases as ``layout`` that redistributes, among
    registers and lanes (with new broadcasting), the tensor bits ``layout`` keeps inside a warp."""
    shape_log2 = [layout.out_dim_size_log2(d) for d in layout.out_dim_names]
    inside = [b.bit_length() - 1 for d in ("register", "lane") for b in layout.flat_bases(d) if b]
    inside = [inside[i] for i in rng.permutation(len(inside))]
    lane_bits = layout.in_dim_size_log2("lane")
    lo = 0 if broadcast else min(lane_bits, len(inside))
    n_lane = int(rng.integers(lo, min(lane_bits, len(inside)) + 1))
    lane = _assign(rng, inside[:n_lane], lane_bits, n_lane)
    n_reg = len(inside) - n_lane
    reg = _assign(rng, inside[n_lane:], n_reg + extra_register_zeros, n_reg)
    warp: list[int | None] = [b.bit_length() - 1 if b else None for b in layout.flat_bases("warp")]
    return _build(shape_log2, {"register": reg, "lane": lane, "warp": warp})


# ---------------------------------------------------------------------------------------------
# executing plans


def pack_words(values: np.ndarray, dtype: DTypeLike) -> np.ndarray:
    """Vectorized :func:`pack`: ``values[..., k]`` (k < elements per payload) -> ``words[..., i]`` (32-bit)."""
    bitwidth = element_type(dtype).bits
    values = np.asarray(values, dtype=np.int64)
    if bitwidth > WORD_BITS:
        per = bitwidth // WORD_BITS
        parts = [(values >> (WORD_BITS * i)) & 0xFFFFFFFF for i in range(per)]
        return np.stack(parts, axis=-1).reshape(values.shape[:-1] + (values.shape[-1] * per,))
    if values.shape[-1] * bitwidth > WORD_BITS:
        raise LayoutError(f"at most {WORD_BITS // bitwidth} elements of {bitwidth} bits fit in one 32-bit word")
    if np.any(values < 0) or np.any(values >= 1 << bitwidth):
        raise LayoutError(f"values must fit in {bitwidth} bits")
    shifts = np.arange(values.shape[-1], dtype=np.int64) * bitwidth
    return np.bitwise_or.reduce(values << shifts, axis=-1)[..., None]


def unpack_words(words: np.ndarray, dtype: DTypeLike, count: int) -> np.ndarray:
    """Vectorized :func:`unpack`: ``words[..., i]`` -> ``values[..., k]`` for k < count."""
    bitwidth = element_type(dtype).bits
    words = np.asarray(words, dtype=np.int64)
    if bitwidth > WORD_BITS:
        per = bitwidth // WORD_BITS
        w = words.reshape(words.shape[:-1] + (count, per))
        return sum(w[..., i] << (WORD_BITS * i) for i in range(per))
    shifts = np.arange(count, dtype=np.int64) * bitwidth
    return (words[..., :1] >> shifts) & ((1 << bitwidth) - 1)


def execute_shuffle_plan(plan, src_regs: np.ndarray) -> np.ndarray:
    """Run a :class:`~linear_layouts.analysis.shuffles.ShufflePlan` on ``src_regs[warp, lane, register]``
    (values of ``plan.bitwidth`` bits): per round, every lane packs its payload into 32-bit words, one
    ``shfl_sync_idx`` per word, every lane unpacks; then the register copies. Returns ``dst_regs``.

    Destination registers no round writes stay -1, so a plan that forgets one fails the comparison.
    """
    n_warps, n_lanes, _ = src_regs.shape
    n_dst = plan.dst.in_dim_size("register")
    out = np.full((n_warps, n_lanes, n_dst), -1, dtype=np.int64)
    lanes = np.arange(n_lanes)[:, None]
    for rnd in plan.rounds:
        send = np.array(rnd.send_registers)            # [lane, k]
        receive = np.array(rnd.receive_registers)      # [lane, k]
        source = np.array(rnd.source_lane)
        for w in range(n_warps):
            words = pack_words(src_regs[w][lanes, send], plan.bitwidth)   # [lane, word]
            got = np.stack([shfl_sync_idx(words[:, i], source) for i in range(words.shape[1])], axis=-1)
            out[w][lanes, receive] = unpack_words(got, plan.bitwidth, receive.shape[1])
    for dst_r, from_r in plan.copies:
        out[:, :, dst_r] = out[:, :, from_r]
    return out


def execute_gather_plan(plan, src_regs: np.ndarray, index_regs: np.ndarray) -> np.ndarray:
    """Run a warp-local :class:`~linear_layouts.analysis.gather.GatherPlan`: per round every lane sends
    its ``send_register`` (``plan.bitwidth``-bit values, packed into 32-bit words), computes its source
    lane from its own index value (``plan.source``), shuffles, and keeps the value when the selector
    matches. Returns ``out_regs[warp, lane, register]`` in the index layout (-1 where nothing was kept)."""
    n_warps, n_lanes, _ = src_regs.shape
    out = np.full(index_regs.shape, -1, dtype=np.int64)
    routes = {}  # (lane, index value) -> (source lane, selector), computed once
    for w in range(n_warps):
        for rnd in plan.rounds:
            words = pack_words(src_regs[w][:, [rnd.send_register]], plan.bitwidth)
            ks = index_regs[w, :, rnd.output_register].tolist()
            pairs = [routes.setdefault((t, k), plan.source(t, k)) for t, k in enumerate(ks)]
            source = np.array([p[0] for p in pairs])
            got = np.stack([shfl_sync_idx(words[:, i], source) for i in range(words.shape[1])], axis=-1)
            keep = np.array([p[1] == rnd.select for p in pairs])
            out[w, keep, rnd.output_register] = unpack_words(got, plan.bitwidth, 1)[keep, 0]
    return out
