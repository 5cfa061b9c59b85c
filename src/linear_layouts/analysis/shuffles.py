"""Layout conversion inside a warp by warp shuffles (paper §5.4, "Intra-warp Data Exchange", Fig. 4).

For distributed layouts ``A`` (source) and ``B`` (destination) with the same warp and block bases,
every tensor bit kept inside a warp is, in each layout, a register bit or a lane bit. With ``A_Reg``,
``A_Thr``, ``B_Reg``, ``B_Thr`` the non-zero bases (flattened tensor vectors):

* ``V`` ⊆ A_Reg ∩ B_Reg: bits moved together in one 32-bit payload (at most ``32 / bitwidth`` elements);
* ``I = A_Thr ∩ B_Thr``, ``E = A_Thr ∖ I``, ``F = B_Thr ∖ I``, ``G = {e_i ⊕ f_i}`` (ascending order);
* ``R`` completes ``V ∪ I ∪ G`` (and the unpaired ``F``, see below) to the whole within-warp space:
  the non-vectorized common register bits and ``E``. Round ``j`` moves the coset ``R(j) ⊕ span(V∪I∪G)``:
  exactly one payload per destination lane, so there are ``2**|R|`` rounds, the fewest possible
  (a destination lane must receive ``2**(|B_Reg| - |V|)`` payloads).

Broadcasting (zero bases): when ``|F| > |E|`` the unpaired ``F`` bits are read from distinct copies
of the source (they are paired with ``A``'s zero lane bits, of which there are enough); when
``|E| > |F|`` the unpaired ``E`` bits are round bits and destination copies read the same lane;
zero register bits of ``B`` are filled by register ``copies`` after the rounds.

>>> from linear_layouts import LinearLayout
>>> A = LinearLayout({"register": [[1]], "lane": [[2], [4]]}, ["dim0"])   # Fig. 4 style, 4 lanes
>>> B = LinearLayout({"register": [[4]], "lane": [[1], [2]]}, ["dim0"])
>>> plan = plan_shuffle(A, B, 32)
>>> plan.I, plan.E, plan.F, plan.G, plan.R, plan.num_rounds
((2,), (4,), (1,), (5,), (4,), 2)
"""

from __future__ import annotations

from dataclasses import dataclass

from linear_layouts.analysis.dtypes import bitwidth as _bitwidth
from linear_layouts.errors import LayoutError
from linear_layouts.layout import LinearLayout

__all__ = ["ShuffleRound", "ShufflePlan", "check_distributed", "same_warp_data", "plan_shuffle"]

REGISTER, LANE, WARP, BLOCK = "register", "lane", "warp", "block"
WORD_BITS = 32


def check_distributed(layout: LinearLayout, name: str) -> None:
    """Raise unless ``layout`` is a distributed layout (Thm 4.10): in dims among register, lane, warp,
    block (register and lane present), every flattened basis zero or a power of two, the non-zero
    ones distinct."""
    if not isinstance(layout, LinearLayout):
        raise LayoutError(f"{name} must be a LinearLayout, got {type(layout).__name__}")
    extra = [d for d in layout.in_dim_names if d not in (REGISTER, LANE, WARP, BLOCK)]
    if extra or not layout.has_in_dim(REGISTER) or not layout.has_in_dim(LANE):
        raise LayoutError(
            f"{name} must be distributed: in dims register, lane(, warp, block), got {list(layout.in_dim_names)}"
        )
    seen: set[int] = set()
    for d in layout.in_dim_names:
        for b in layout.flat_bases(d):
            if b == 0:
                continue
            if b & (b - 1) or b in seen:
                raise LayoutError(
                    f"{name} must be distributed: every basis a distinct power of two or zero (Thm 4.10); "
                    f"{d} has basis {b:#x}"
                )
            seen.add(b)


def _flat(layout: LinearLayout, dim: str) -> tuple[int, ...]:
    return layout.flat_bases(dim) if layout.has_in_dim(dim) else ()


def same_warp_data(src: LinearLayout, dst: LinearLayout) -> bool:
    """Whether ``src`` and ``dst`` have the same warp and block bases, so every warp already holds the
    data it needs and a conversion stays inside the warp."""
    return _flat(src, WARP) == _flat(dst, WARP) and _flat(src, BLOCK) == _flat(dst, BLOCK)


@dataclass(frozen=True)
class ShuffleRound:
    """One round: every lane sends ``send_registers[lane]`` (source registers, payload element k at k),
    reads the payload of lane ``source_lane[lane]`` and unpacks it into ``receive_registers[lane]``
    (destination registers, element k at k). One ``shfl.sync.idx`` per 32-bit word of the payload.

    Packing: element k of a payload occupies bits ``k*bitwidth ..`` of the 32-bit word; a 64-bit
    element is two words, low word first. All three tables are affine in (lane, round): each entry
    is the XOR of a lane-only part and a round-only part (see ``plan_shuffle``)."""

    send_registers: tuple[tuple[int, ...], ...]
    source_lane: tuple[int, ...]
    receive_registers: tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class ShufflePlan:
    """A warp-shuffle conversion ``src -> dst`` (§5.4), the same for every warp.

    Vectors ``V, I, E, F, G, R`` are flattened tensor vectors (first out dim least significant).
    After the rounds, every lane does ``reg[dst] = reg[src]`` for ``(dst, src)`` in ``copies``
    (destination registers that duplicate data, zero register bases of ``dst``).
    """

    src: LinearLayout
    dst: LinearLayout
    bitwidth: int
    V: tuple[int, ...]
    I: tuple[int, ...]
    E: tuple[int, ...]
    F: tuple[int, ...]
    G: tuple[int, ...]
    R: tuple[int, ...]
    elements_per_shuffle: int
    words_per_shuffle: int
    rounds: tuple[ShuffleRound, ...]
    copies: tuple[tuple[int, int], ...]

    @property
    def num_rounds(self) -> int:
        return len(self.rounds)

    @property
    def shuffles_per_warp(self) -> int:
        """``shfl.sync`` instructions each warp issues."""
        return self.num_rounds * self.words_per_shuffle

    @property
    def num_warps(self) -> int:
        return (self.src.in_dim_size(WARP) if self.src.has_in_dim(WARP) else 1) * (
            self.src.in_dim_size(BLOCK) if self.src.has_in_dim(BLOCK) else 1
        )


def _index(bases: tuple[int, ...]) -> dict[int, int]:
    """Non-zero flattened basis -> its bit index in the hardware dim."""
    return {b: i for i, b in enumerate(bases) if b}


def plan_shuffle(src: LinearLayout, dst: LinearLayout, dtype: int | str) -> ShufflePlan:
    """The warp-shuffle plan converting distributed ``src`` to ``dst`` (same warp / block bases), §5.4.

    Rounds: ``2**(|A_Reg ∩ B_Reg| - |V| + |E|)``; each moves one payload of ``2**|V|`` elements per lane.
    See the module docstring for the sets and an example.
    """
    bits = _bitwidth(dtype)
    check_distributed(src, "src")
    check_distributed(dst, "dst")
    if src.out_dims != dst.out_dims:
        raise LayoutError(f"src and dst must have the same out dims, got {src.out_dims} and {dst.out_dims}")
    if src.in_dim_size(LANE) != dst.in_dim_size(LANE):
        raise LayoutError("src and dst must have the same number of lanes")
    if not same_warp_data(src, dst):
        raise LayoutError("src and dst must have the same warp and block bases for a warp-shuffle conversion")

    a_reg, a_lane = _index(src.flat_bases(REGISTER)), _index(src.flat_bases(LANE))
    b_reg, b_lane = _index(dst.flat_bases(REGISTER)), _index(dst.flat_bases(LANE))
    if set(a_reg) | set(a_lane) != set(b_reg) | set(b_lane):
        raise LayoutError("src and dst must keep the same tensor bits inside a warp")  # pragma: no cover

    common_regs = sorted((v for v in a_reg if v in b_reg), key=lambda v: a_reg[v])
    max_v = (WORD_BITS // bits).bit_length() - 1 if bits <= WORD_BITS else 0
    V, RR = common_regs[:max_v], common_regs[max_v:]
    I = sorted(v for v in a_lane if v in b_lane)
    E = sorted(v for v in a_lane if v not in b_lane)
    F = sorted(v for v in b_lane if v not in a_lane)
    n = min(len(E), len(F))
    G = [E[i] ^ F[i] for i in range(n)]
    f_extra = F[n:]
    a_zero_lanes = [i for i, b in enumerate(src.flat_bases(LANE)) if b == 0]
    if len(a_zero_lanes) < len(f_extra):  # pragma: no cover - |I|+|E|+|Z_A| = |I|+|F|+|Z_B| rules it out
        raise LayoutError("src has too few duplicated lanes to serve dst's lanes")
    f_extra_lane = {v: a_zero_lanes[i] for i, v in enumerate(f_extra)}
    R = RR + E
    elements = 1 << len(V)
    words = max(1, bits // WORD_BITS)
    n_lanes = src.in_dim_size(LANE)

    def element_offsets(index: dict[int, int]) -> list[int]:
        offs = [0]
        for v in V:
            offs += [o | (1 << index[v]) for o in offs]
        return offs

    src_offsets, dst_offsets = element_offsets(a_reg), element_offsets(b_reg)
    lane_bits = src.in_dim_size_log2(LANE)
    pair_of = {E[i]: F[i] for i in range(n)}

    def source_lane_of(x: int) -> int:  # A's lane holding tensor vector x (unpaired F: a copy lane)
        out = 0
        for v in I + E:
            if x & v:
                out |= 1 << a_lane[v]
        for v in f_extra:
            if x & v:
                out |= 1 << f_extra_lane[v]
        return out

    def dst_register_of(x: int) -> int:  # B's register bits of tensor vector x
        return sum(1 << b_reg[v] for v in E + RR if x & v)

    # Everything is linear in (lane bits, round bits): tabulate images of single bits, XOR them.
    # Destination lane bit k adds to the element it needs: its I / F bit, and the E partner of its F bit.
    need_lane = [0] * lane_bits
    for v in I + F:
        need_lane[b_lane[v]] ^= v
    for e, f in pair_of.items():
        need_lane[b_lane[f]] ^= e
    # Source lane bit k adds to the register it sends: the F partner of its E bit, or its unpaired F.
    send_lane = [0] * lane_bits
    for e, f in pair_of.items():
        send_lane[a_lane[e]] |= 1 << a_reg[f]
    for v in f_extra:
        send_lane[f_extra_lane[v]] |= 1 << a_reg[v]
    # Round bit t (vector R[t]) adds R[t] to the element needed, and to the register sent its F
    # partner (paired E), itself (common register) or nothing (unpaired E).
    send_round = [(1 << a_reg[pair_of[r]]) if r in pair_of else (1 << a_reg[r]) if r in a_reg else 0 for r in R]

    def table(images: list[int]) -> list[int]:
        out = [0]
        for img in images:
            out += [x ^ img for x in out]
        return out

    # source lane and destination register are linear in the needed element, hence in (lane, round)
    src_by_lane = table([source_lane_of(x) for x in need_lane])
    src_by_round = table([source_lane_of(r) for r in R])
    dreg_by_lane = table([dst_register_of(x) for x in need_lane])
    dreg_by_round = table([dst_register_of(r) for r in R])
    send_by_lane, send_by_round = table(send_lane), table(send_round)
    rounds = []
    for j in range(1 << len(R)):
        rounds.append(ShuffleRound(
            tuple(tuple(send_by_lane[t] ^ send_by_round[j] ^ o for o in src_offsets) for t in range(n_lanes)),
            tuple(src_by_lane[t] ^ src_by_round[j] for t in range(n_lanes)),
            tuple(tuple(dreg_by_lane[t] ^ dreg_by_round[j] ^ o for o in dst_offsets) for t in range(n_lanes)),
        ))

    zero_mask = sum(1 << i for i, b in enumerate(dst.flat_bases(REGISTER)) if b == 0)
    copies = tuple((r, r & ~zero_mask) for r in range(dst.in_dim_size(REGISTER)) if r & zero_mask)
    return ShufflePlan(
        src, dst, bits, tuple(V), tuple(I), tuple(E), tuple(F), tuple(G), tuple(R),
        elements, words, tuple(rounds), copies,
    )
