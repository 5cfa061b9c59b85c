"""What one conversion step executes, counted from its typed plan: ``OpCounts`` and ``shuffle_counts``.

``shuffle_counts(plan)`` counts, per thread, what the warp-shuffle emitter (``codegen.shuffle``) issues
for a ``ShufflePlan`` in steady state (its preferred packings on both sides: the payload's register
bits ``V`` first inside each 32-bit word), from the plan alone.  A plan in butterfly form
(``ShufflePlan.butterfly_form``) is ``shfl`` plus its hash-consed select trees (``butterfly_selects``).
Otherwise, with ``f`` / ``g`` the lane translations of the registers sent / received
(``ShufflePlan.send_translation`` / ``receive_translation``), ``w`` the element bytes:

    shfl = plan.shuffles_per_warp
    alu  = translate(source words, f, words sent) + Σ_words assemble(received payloads)
           + translate(destination words, g, words written) + Σ_words assemble(copies of zero bases)

``translate(P, f, N)``: the lane bits whose ``f`` moves whole words are conditional swaps, one select
per word still needed at that stage (backwards from ``N``, each swap doubling the set); for sub-word
elements the last of them folds, with any in-word part of ``f``, into one ``prmt`` per word of ``N``
(also one per word when only in-word parts move).  ``assemble``: a destination word built from the
``k`` words holding its elements costs ``k - 1`` prmt, or 1 when ``k = 1`` and the elements are not
already in place, 0 when they are (64- and 32-bit elements: always 0).  ``None`` where the emitter
cannot emit the plan (element widths other than 8/16/32/64 bits; registers not a lane translation of
fixed registers; source lanes not affine in the lane bits).  ``tests/codegen/test_op_counts.py``
checks equality with ``codegen.cost.step_counts`` field by field on random plans.

``register_permutation_counts(source, bits, src_register_bits, renamed_words)`` counts what the
register-copy emitter issues for the register permutation ``b[r] = a[source[r]]`` (a
:class:`~.steps.RegisterPermutation`): renamed words (``renamed_words``) cost nothing, the source
packed as ``word_packing.renaming_packing`` says (None where no packing renames); byte permutes, the
source packed naturally, build each natural destination word from the source's words, by the greedy
cover above
(``source[r]`` in place of ``r``), or, for a permutation of register bits, by the cheaper of that and
the staged bit exchanges (``word_packing.exchange_stages``: one prmt per word per stage).

Example: the paper's Fig. 4 exchange (fp32, one element per payload) is ``OpCounts(shfl=2, alu=4)``:
two rounds of one shfl, and one conditional swap of two words (2 selects) on each side.
"""

from __future__ import annotations

from dataclasses import dataclass

from linear_layouts.analysis.shuffles import ShufflePlan, butterfly_selects
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.word_packing import WORD_BYTES, Packing, bit_permutation, exchange_stages, renaming_packing

__all__ = ["OpCounts", "shuffle_counts", "register_permutation_counts"]


@dataclass(frozen=True)
class OpCounts:
    """What one conversion step of one CTA executes: shared-memory ``wavefronts`` of all warps,
    ``shfl`` and ``alu`` (byte permutes and selects) per thread, CTA and warp barriers."""

    wavefronts: int = 0
    shfl: int = 0
    alu: int = 0
    barriers_cta: int = 0
    barriers_warp: int = 0


def _slots(words: Packing, word: int) -> tuple:
    """The element slots of ``word``: ``(register, half)`` of each element it holds (``half``: the
    32-bit half of a 64-bit element, 0 otherwise), None where unused; ``WORD_BYTES // w`` entries for
    sub-word elements, one for 32- and 64-bit elements."""
    if words.element_bytes >= WORD_BYTES:
        return (divmod(word, words.words_per_element),)
    return tuple((words.register(word, p), 0) if p < words.elements_per_word else None
                 for p in range(WORD_BYTES // words.element_bytes))


def _translate(words: Packing, images: tuple[int, ...], needed: set[int]) -> int:
    """Selects and prmt of ``x'[r] = x[r ^ f(lane)]`` for the ``needed`` words (module doc)."""
    steps = [words.word_xor(m) for m in images if words.word_xor(m)]
    fold = steps.pop() if words.element_bytes < WORD_BYTES and steps else 0
    need = set(needed) | {x ^ fold for x in needed} if fold else set(needed)
    selects = 0
    for m in reversed(steps):
        selects += len(need)
        need |= {x ^ m for x in need}
    moves_in_word = any(words.position(m) for m in images) if words.element_bytes < WORD_BYTES else False
    return selects + (len(needed) if moves_in_word or fold else 0)


def _assemble(target: tuple, sources: list[tuple]) -> int | None:
    """Byte permutes building a word of ``target`` slots from ``sources`` (their slots), as the
    emitter's greedy cover does; None if a slot is in no source."""
    need = [(i, s) for i, s in enumerate(target) if s is not None]
    if not need:
        return 0
    holders: dict = {}
    for k, src in enumerate(sources):
        for s in src:
            if s is not None:
                holders.setdefault(s, []).append(k)
    order: list[int] = []  # the sources holding a slot, in the order of the target's slots
    for _, s in need:
        if s not in holders:
            return None
        order += [k for k in holders[s] if k not in order]
    if any(all(sources[k][i] == s for i, s in need) for k in order):
        return 0
    missing, chosen = {s for _, s in need}, 0
    while missing:
        best = max(range(len(order)), key=lambda j: (len(missing & set(sources[order[j]])), -j))
        missing -= set(sources[order[best]])
        chosen += 1
    return max(1, chosen - 1)


def _affine(table: tuple[int, ...]) -> bool:
    images = [table[1 << i] ^ table[0] for i in range(len(table).bit_length() - 1)]
    return all(table[lane] == table[lane & (lane - 1)] ^ images[(lane & -lane).bit_length() - 1]
               for lane in range(1, len(table)))


def shuffle_counts(plan: ShufflePlan) -> OpCounts | None:
    """Per-thread ``shfl`` and ``alu`` of the emitted warp-shuffle conversion ``plan`` (module doc);
    None where codegen cannot emit it.

    >>> from linear_layouts import LinearLayout
    >>> from linear_layouts.analysis.shuffles import plan_shuffle
    >>> A = LinearLayout({"register": [[1]], "lane": [[2], [4]]}, ["dim0"])
    >>> B = LinearLayout({"register": [[4]], "lane": [[1], [2]]}, ["dim0"])
    >>> shuffle_counts(plan_shuffle(A, B, 32))
    OpCounts(wavefronts=0, shfl=2, alu=4, barriers_cta=0, barriers_warp=0)
    """
    w = plan.bitwidth // 8
    if w not in (1, 2, 4, 8) or plan.bitwidth % 8:
        return None
    form = plan.butterfly_form
    if form is not None:  # one shfl.sync.bfly per word and select trees, nothing else (no packing)
        return OpCounts(shfl=plan.shuffles_per_warp, alu=butterfly_selects(plan, form))
    src_index = {b: i for i, b in enumerate(plan.src.flat_bases("register")) if b}
    dst_index = {b: i for i, b in enumerate(plan.dst.flat_bases("register")) if b}
    ps = Packing.leading(w, plan.src.in_dim_size_log2("register"), [src_index[v] for v in plan.V])
    pr = Packing.leading(w, plan.dst.in_dim_size_log2("register"), [dst_index[v] for v in plan.V])
    rounds = plan.rounds
    send_f, recv_g = plan.send_translation, plan.receive_translation
    if rounds and (send_f is None or recv_g is None):
        return None
    if any(not r.in_lane and not _affine(r.source_lane) for r in rounds):
        return None
    alu = 0
    halves = plan.words_per_shuffle
    # 1. the words sent, translated by f(lane)
    if any(send_f or ()):
        sent = {ps.word(r.send_registers[0][0]) + h for r in rounds for h in range(halves)}
        alu += _translate(ps, send_f, sent)
    # 2. the received payloads (lane 0's view) assembled into destination words
    received: list[tuple] = []
    for rnd in rounds:
        d, q = rnd.receive_registers[0], ps.position(rnd.send_registers[0][0])
        for h in range(halves):
            if w >= WORD_BYTES:
                received.append(((d[0], h),))
            else:
                slots: list = [None] * (WORD_BYTES // w)
                for k in range(plan.elements_per_shuffle):
                    slots[q ^ k] = (d[k], 0)
                received.append(tuple(slots))
    written = {s[0] for src in received for s in src if s is not None}
    needed = sorted({pr.word(r) + h for r in written for h in range(pr.words_per_element)})
    for word in needed:
        target = tuple(s if s is not None and s[0] in written else None for s in _slots(pr, word))
        cost = _assemble(target, received)
        if cost is None:
            return None
        alu += cost
    # 3. translated back by g(lane)
    if any(recv_g or ()):
        alu += _translate(pr, recv_g, set(needed))
    # 4. destination registers of zero bases copy their originals
    zero = plan.zero_register_mask
    if zero:
        kept = [tuple(s if s is not None and s[0] in written else None for s in _slots(pr, i)) for i in needed]
        for word in range(pr.num_words):
            target = tuple(None if s is None else (s[0] & ~zero, s[1]) for s in _slots(pr, word))
            cost = _assemble(target, kept)
            if cost is None:
                return None
            alu += cost
    return OpCounts(shfl=plan.shuffles_per_warp, alu=alu)


def _repack(src: Packing, dst: Packing) -> int:
    """Byte permutes turning words packed as ``src`` into words packed as ``dst`` (same registers), as
    ``codegen.packing.repack`` emits them: direct assembly, or the staged exchanges where there are two
    or more stages and their one prmt per word per stage is fewer."""
    if src == dst:
        return 0
    sources = [_slots(src, i) for i in range(src.num_words)]
    targets = [_slots(dst, i) for i in range(dst.num_words)]
    direct = sum(_assemble(t, sources) or 0 for t in targets)
    stages = exchange_stages(src, dst)
    if len(stages) >= 2 and len(stages) * dst.num_words < direct:
        total, current = 0, sources
        for packing in stages:
            words = [_slots(packing, i) for i in range(packing.num_words)]
            total += sum(_assemble(t, current) or 0 for t in words)
            current = words
        return total
    return direct


def register_permutation_counts(source: tuple[int, ...], bits: int, src_register_bits: int,
                                renamed_words: bool = False) -> OpCounts | None:
    """Per-thread ``alu`` of the register permutation ``b[r] = a[source[r]]`` of ``bits``-bit elements from
    ``2**src_register_bits`` registers, emitted as renamed words (``renamed_words``) or byte permutes
    (module doc); None where it cannot be emitted so (renamed words with no renaming packing).

    >>> swap = (0, 1, 4, 5, 2, 3, 6, 7)  # 8 registers, register bits 1 and 2 trade places
    >>> register_permutation_counts(swap, 8, 3).alu, register_permutation_counts(swap, 8, 3, renamed_words=True).alu
    (2, 0)
    """
    source = tuple(source)
    n = len(source)
    if bits not in (8, 16, 32, 64) or n < 1 or n & (n - 1) or any(not 0 <= s < 1 << src_register_bits for s in source):
        raise LayoutError(f"register_permutation_counts: a power of two of sources below 2**{src_register_bits}, "
                          f"8/16/32/64-bit elements, got {bits} bits, {n} sources {source[:8]}")
    w = bits // 8
    if renamed_words:
        return OpCounts() if renaming_packing(w, src_register_bits, source) is not None else None
    pa = Packing.natural(w, src_register_bits)
    if w >= WORD_BYTES:
        return OpCounts()
    dst_bits = n.bit_length() - 1
    pb = Packing.natural(w, dst_bits)
    p = bit_permutation(source)
    if p is not None and src_register_bits == dst_bits:
        return OpCounts(alu=_repack(pa, Packing(w, dst_bits, tuple(p[x] for x in pb.in_word))))
    sources = [_slots(pa, i) for i in range(pa.num_words)]
    alu = 0
    for word in range(pb.num_words):
        target = tuple(None if s is None else (source[s[0]], s[1]) for s in _slots(pb, word))
        alu += _assemble(target, sources) or 0
    return OpCounts(alu=alu)
