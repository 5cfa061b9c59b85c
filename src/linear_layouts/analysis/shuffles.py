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

import functools
from dataclasses import dataclass

from linear_layouts.analysis.broadcast import zero_bases_mask, zero_basis_indices
from linear_layouts.core.arguments import checked
from linear_layouts.layouts.characterize import distributed_violation
from linear_layouts.core.element_type import DTypeLike, element_type
from linear_layouts.core.errors import LayoutError, not_a_layout
from linear_layouts.core.layout import LinearLayout
from linear_layouts.core.limits import MAX_ELEMENTS, check_layout_size

__all__ = [
    "ShuffleRound", "ShufflePlan", "check_permutation_layout", "same_warp_data", "plan_shuffle",
    "lane_translation", "ButterflyForm", "butterfly_form", "butterfly_leaves", "butterfly_selects", "select_tree",
]

REGISTER, LANE, WARP, BLOCK = "register", "lane", "warp", "block"
WORD_BITS = 32


def check_permutation_layout(layout: LinearLayout, name: str) -> None:
    """Raise unless ``layout`` is distributed in the sense of Def. 4.10 without surjectivity: in dims
    among register, lane, warp, block (register and lane present), its matrix a permutation matrix with
    zero columns (``catalog.characterize.distributed_violation``). Any number of lanes."""
    if not isinstance(layout, LinearLayout):
        raise not_a_layout(layout, name)
    extra = [d for d in layout.in_dim_names if d not in (REGISTER, LANE, WARP, BLOCK)]
    if extra or not layout.has_in_dim(REGISTER) or not layout.has_in_dim(LANE):
        raise LayoutError(
            f"{name} must be distributed: in dims register, lane(, warp, block), got {list(layout.in_dim_names)}"
        )
    violation = distributed_violation(layout)
    if violation is not None:
        raise LayoutError(f"{name} must be distributed: every basis a distinct power of two or zero "
                          f"(Def. 4.10); {violation}")


@checked
def same_warp_data(src: LinearLayout, dst: LinearLayout) -> bool:
    """Whether ``src`` and ``dst`` have the same warp and block bases, so every warp already holds the
    data it needs and a conversion stays inside the warp."""
    return all(src.flat_bases(d, missing_ok=True) == dst.flat_bases(d, missing_ok=True) for d in (WARP, BLOCK))


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

    @property
    def in_lane(self) -> bool:
        """Every lane reads itself (``source_lane[l] == l``): the round is a register move, no ``shfl``."""
        return all(src == lane for lane, src in enumerate(self.source_lane))


@dataclass(frozen=True)
class ShufflePlan:
    """A warp-shuffle conversion ``src -> dst`` (§5.4), the same for every warp.

    Vectors ``V, I, E, F, G, R`` are flattened tensor vectors (first out dim least significant).
    After the rounds, every lane does ``reg[dst] = reg[src]`` for ``(dst, src)`` in ``copies``
    (destination registers that duplicate data, zero register bases of ``dst``).

    What ``op_counts`` and the emitter both read is derived once per plan:
    ``send_translation`` / ``receive_translation`` (``f``, ``g``), ``zero_register_mask`` and
    ``butterfly_form``.  They are ``functools.cached_property``: pure functions of the frozen fields,
    stored in the instance ``__dict__`` on first use (``cached_property`` writes ``__dict__``
    directly, so the frozen ``__setattr__`` is not involved; the class must keep its ``__dict__``,
    i.e. no ``slots=True``).  Equality, hashing, ``repr`` and ``dataclasses.replace`` see only the
    fields, so a cached value never changes what a plan is.
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
        """``shfl.sync`` instructions each warp issues: one per payload word of every round but the
        in-lane ones (``ShuffleRound.in_lane``: every lane reads itself, a register move)."""
        return sum(not r.in_lane for r in self.rounds) * self.words_per_shuffle

    @property
    def num_warps(self) -> int:
        return self.src.in_dim_size(WARP, missing_ok=True) * self.src.in_dim_size(BLOCK, missing_ok=True)

    @property
    def _num_lanes(self) -> int:
        return len(self.rounds[0].source_lane) if self.rounds else 32

    @functools.cached_property
    def send_translation(self) -> tuple[int, ...] | None:
        """``f``: the rounds' send registers are ``base_j ^ f(lane)`` (``lane_translation``); None if
        they are not (or there are no rounds)."""
        return lane_translation([r.send_registers for r in self.rounds], self._num_lanes)

    @functools.cached_property
    def receive_translation(self) -> tuple[int, ...] | None:
        """``g``: the rounds' receive registers are ``base'_j ^ g(lane)``; None if they are not."""
        return lane_translation([r.receive_registers for r in self.rounds], self._num_lanes)

    @functools.cached_property
    def zero_register_mask(self) -> int:
        """The register bits of ``dst`` whose basis is zero (register ``r`` duplicates ``r & ~mask``)."""
        return zero_bases_mask(self.dst, REGISTER)

    @functools.cached_property
    def butterfly_form(self) -> "ButterflyForm | None":
        """``butterfly_form(self)``, computed once."""
        return butterfly_form(self)


def _index(bases: tuple[int, ...]) -> dict[int, int]:
    """Non-zero flattened basis -> its bit index in the hardware dim."""
    return {b: i for i, b in enumerate(bases) if b}


@checked
def plan_shuffle(src: LinearLayout, dst: LinearLayout, dtype: DTypeLike, *,
                 max_elements: int = MAX_ELEMENTS) -> ShufflePlan:
    """The warp-shuffle plan converting distributed ``src`` to ``dst`` (same warp / block bases), §5.4.

    Rounds: ``2**(|A_Reg ∩ B_Reg| - |V| + |E|)``; each moves one payload of ``2**|V|`` elements per lane.
    See the module docstring for the sets and an example. The rounds list every lane's registers (a
    warp's elements): layouts above ``max_elements`` inputs or elements (``limits.MAX_ELEMENTS``) are
    refused before they are built.
    """
    bits = element_type(dtype).bits
    check_permutation_layout(src, "src")
    check_permutation_layout(dst, "dst")
    check_layout_size(src, max_elements, "plan_shuffle: src")
    check_layout_size(dst, max_elements, "plan_shuffle: dst")
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
    a_zero_lanes = zero_basis_indices(src, LANE)
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
    # per lane, the registers of round 0 (offsets folded in); round j XORs its round part into them
    send_rows = [[send_by_lane[t] ^ o for o in src_offsets] for t in range(n_lanes)]
    dreg_rows = [[dreg_by_lane[t] ^ o for o in dst_offsets] for t in range(n_lanes)]
    src_lanes = src_by_lane[:n_lanes]
    rounds = []
    for j in range(1 << len(R)):
        s, d, lane = send_by_round[j], dreg_by_round[j], src_by_round[j]
        rounds.append(ShuffleRound(
            tuple([tuple([x ^ s for x in row]) for row in send_rows]),
            tuple([x ^ lane for x in src_lanes]),
            tuple([tuple([x ^ d for x in row]) for row in dreg_rows]),
        ))

    zero_mask = zero_bases_mask(dst, REGISTER)
    copies = tuple((r, r & ~zero_mask) for r in range(dst.in_dim_size(REGISTER)) if r & zero_mask)
    return ShufflePlan(
        src, dst, bits, tuple(V), tuple(I), tuple(E), tuple(F), tuple(G), tuple(R),
        elements, words, tuple(rounds), copies,
    )


def lane_translation(tables: list[tuple[tuple[int, ...], ...]], n_lanes: int) -> tuple[int, ...] | None:
    """``(f(lane bit 0), f(lane bit 1), ...)`` if every table is ``table[l] = table[0] ^ f(l)``
    elementwise with ``f`` linear over F2 and common to all tables, else None. Codegen turns such a
    register choice into one conditional swap per lane bit.  A plan's are ``ShufflePlan.send_translation``
    and ``receive_translation`` (computed once per plan).

    Example: ``lane_translation([tuple((l & 1,) for l in range(32))], 32) == (1, 0, 0, 0, 0)``."""
    if not tables:
        return None
    bits = n_lanes.bit_length() - 1
    first = tables[0]
    images = tuple(first[1 << i][0] ^ first[0][0] for i in range(bits))
    f_of = [0] * n_lanes  # f(lane) = XOR of the images of its set bits, built from lane - lowest bit
    for lane in range(1, n_lanes):
        low = lane & -lane
        f_of[lane] = f_of[lane ^ low] ^ images[low.bit_length() - 1]
    for table in tables:
        base = table[0]
        for lane in range(n_lanes):
            f, row = f_of[lane], table[lane]
            if type(row) is tuple and len(row) == len(base):  # noqa: E721 - the common case, compared at once
                if row != tuple([y ^ f for y in base]):
                    return None
            elif any(x != y ^ f for x, y in zip(row, base)):
                return None
    return images


MAX_BUTTERFLY_LANE_BITS = 1  # lane bits a butterfly select tree may depend on (2**k - 1 selects per word)


@dataclass(frozen=True)
class ButterflyForm:
    """A shuffle plan in butterfly form: ``lane_bits`` (the lane bits the register choice depends on),
    per round the XOR mask of its source lane (0: in-lane round) and its base send / receive registers
    (lane 0's), and ``f``, ``g``: the register translations of those lane bits (send, receive)."""

    lane_bits: tuple[int, ...]
    masks: tuple[int, ...]
    send_base: tuple[int, ...]
    recv_base: tuple[int, ...]
    f: tuple[int, ...]
    g: tuple[int, ...]

    def classes(self) -> list[tuple[int, int, int]]:
        """``(lane class c, f(c), g(c))`` for the ``2**len(lane_bits)`` values of the lane bits."""
        out = []
        for c in range(1 << len(self.lane_bits)):
            fc = gc = 0
            for t, bit in enumerate(self.lane_bits):
                if c >> t & 1:
                    fc ^= self.f[bit]
                    gc ^= self.g[bit]
            out.append((c, fc, gc))
        return out


def butterfly_form(plan: ShufflePlan) -> ButterflyForm | None:
    """The butterfly form of ``plan`` (module doc), or None where it does not apply: sub-word payloads,
    a source lane not ``lane ^ m``, a register choice depending on more than
    ``MAX_BUTTERFLY_LANE_BITS`` lane bits, or a destination register no round writes.  Callers read
    it once per plan as ``plan.butterfly_form``.

    Example: the register bit 2 <-> lane bit 1 swap of a [32, 64] fp32 tile has masks 0 and 2 (32 rounds each) and lane_bits (1,)."""
    rounds = plan.rounds
    if not rounds or plan.bitwidth < 32 or plan.elements_per_shuffle != 1:
        return None
    f, g = plan.send_translation, plan.receive_translation
    if f is None or g is None:
        return None
    lane_bits = tuple(i for i in range(len(f)) if f[i] or g[i])
    if len(lane_bits) > MAX_BUTTERFLY_LANE_BITS:
        return None
    masks = []
    for rnd in rounds:
        m = rnd.source_lane[0]
        if any(src != lane ^ m for lane, src in enumerate(rnd.source_lane)):
            return None
        masks.append(m)
    form = ButterflyForm(lane_bits, tuple(masks), tuple(r.send_registers[0][0] for r in rounds),
                         tuple(r.receive_registers[0][0] for r in rounds), f, g)
    written = set(form.recv_base)
    zero = plan.zero_register_mask
    n_dst = plan.dst.in_dim_size(REGISTER)
    if len(written) != len(rounds) or any(r ^ gc not in written for r in range(n_dst) if not r & zero
                                          for _, _, gc in form.classes()):
        return None
    return form


def select_tree(leaves: list, select) -> object:
    """The value a lane picks among ``leaves`` (one per lane class, class ``c``'s bit ``t`` = lane bit
    ``lane_bits[t]``): a binary tree of ``select(t, value_if_set, value_if_clear)``, no select where both
    sides are equal.  ``select_tree(["x", "x"], f) == "x"``."""
    if all(x == leaves[0] for x in leaves):
        return leaves[0]
    half = len(leaves) // 2
    t = half.bit_length() - 1
    lo, hi = select_tree(leaves[:half], select), select_tree(leaves[half:], select)
    return lo if lo == hi else select(t, hi, lo)


def butterfly_leaves(plan: ShufflePlan, form: ButterflyForm) -> tuple[dict, dict]:
    """What each lane class sends and keeps in butterfly form: ``{(round, word): leaves}`` for the
    rounds that cross lanes and ``{(dst register, word): leaves}``, a leaf ``("a", src register, word)``
    or ``("recv", round, word)``; duplicated destination registers (zero bases) read their original."""
    classes = form.classes()
    words = plan.words_per_shuffle
    sends = {(j, h): tuple(("a", s ^ fc, h) for _, fc, _ in classes)
             for j, (m, s) in enumerate(zip(form.masks, form.send_base)) if m for h in range(words)}
    round_of = {d: j for j, d in enumerate(form.recv_base)}
    zero = plan.zero_register_mask
    dests = {}
    for r in range(plan.dst.in_dim_size(REGISTER)):
        for h in range(words):
            leaves = []
            for _, fc, gc in classes:
                j = round_of[(r & ~zero) ^ gc]
                leaves.append(("recv", j, h) if form.masks[j] else ("a", form.send_base[j] ^ fc, h))
            dests[r, h] = tuple(leaves)
    return sends, dests


def butterfly_selects(plan: ShufflePlan, form: ButterflyForm) -> int:
    """Selects the butterfly emitter issues for ``plan`` (hash-consed select trees of
    ``butterfly_leaves``): the register bit 2 <-> lane bit 1 swap of :func:`butterfly_form`'s example,
    32 sent words + 64 registers = 96."""
    nodes: set = set()

    def select(t, hi, lo):
        nodes.add((t, hi, lo))
        return ("sel", t, hi, lo)

    sends, dests = butterfly_leaves(plan, form)
    for leaves in list(sends.values()) + list(dests.values()):
        select_tree(list(leaves), select)
    return len(nodes)
