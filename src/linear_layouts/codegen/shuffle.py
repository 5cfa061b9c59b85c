"""Warp-shuffle conversion emitter: a ``ShufflePlan`` (analysis.shuffles, paper §5.4) as
``__shfl_sync`` rounds (PTX ``shfl.sync.idx.b32``) on packed register words (``codegen.packing``).

Round ``j``: lane ``l`` sends the payload of registers ``send_registers[l]``, reads the payload of lane
``source_lane[l]`` and keeps it as registers ``receive_registers[l]``.  In the plans of §5.4 the
registers are ``base_j ^ f(l)`` (send) and ``base'_j ^ g(l)`` (receive) with ``f``, ``g`` linear in the
lane bits.  So the emitter

1. packs the source registers with the payload's register bits ``V`` first inside each word
   (``Packing.leading``; the kernel chooses that packing, so this costs nothing in a loop);
2. translates the source words once per lane, ``a'[r] = a[r ^ f(l)]`` (``translate_words``: a select
   per word and lane bit that moves whole words, one ``prmt`` with a lane-computed selector for the
   part inside the word);
3. issues one ``shfl.sync`` per 32-bit payload word per round, all lanes sending the same word of
   ``a'``; the source lane is an affine function of the lane (XORs of masked lane bits); a round in
   which every lane reads itself (``ShuffleRound.in_lane``) moves the word without a ``shfl``;
4. assembles the received bytes into ``b'`` (``b'[r] = b[r ^ g(l)]``, fixed registers: constant
   byte permutes only where a word is filled by several rounds) and translates back to ``b``.

Registers of ``dst`` with a zero basis copy their originals in the last byte permute.

Butterfly form (``ShufflePlan.butterfly_form``; 32- and 64-bit payloads where the register choice depends on at
most one lane bit and every round reads lane ``lane ^ m``, as in the register<->lane bit swap of §5.4):
each round is one ``shfl.sync.bfly.b32`` per word, the word sent chosen by one select on that lane bit,
and each destination register is one select between the register the lane already holds and the word
received (Triton's ``transferWithinWarp``).  No translated copies of the register file: a lane keeps in
place the half it needs, and the compiler folds a round trip's selects.

Example: the paper's Fig. 4 exchange (fp32, one element per payload) is two rounds of one
``shfl.sync.idx.b32`` each and no other instruction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from linear_layouts.analysis.shuffles import ButterflyForm, butterfly_leaves, lane_translation, select_tree
from linear_layouts.codegen.index import IndexExpression, xor_terms
from linear_layouts.codegen.packing import Emission, Packing, Source, gather_words, repack, translate_words
from linear_layouts.core.errors import LayoutError

__all__ = ["ShuffleConversion", "affine_lane_expression", "lane_translation"]  # lane_translation: re-exported


def affine_lane_expression(table: tuple[int, ...] | list[int]) -> IndexExpression:
    """``f(lane)`` for a table that is affine over F2 in the lane bits: ``f(0) ^ XOR_i bit_i * f_i``."""
    n = len(table)
    if n & (n - 1):
        raise LayoutError(f"table: needs a power-of-two number of lanes, got {n}")
    c = table[0]
    images = [table[1 << i] ^ c for i in range(n.bit_length() - 1)]
    expr = IndexExpression(c, tuple(xor_terms("lane", images)))
    for lane, value in enumerate(table):
        if expr.evaluate({"lane": lane}) != value:
            raise LayoutError("table: the source lanes of a shuffle round are not affine in the lane bits")
    return expr


def _register_index(layout) -> dict[int, int]:
    return {b: i for i, b in enumerate(layout.flat_bases("register")) if b}


@dataclass(frozen=True)
class ShuffleConversion:
    """A conversion step (see ``codegen.conversion``) executing ``plan`` (an ``analysis.shuffles.ShufflePlan``)."""

    plan: Any

    shared_bytes = 0
    barrier_scope = None

    def __post_init__(self) -> None:
        if self.plan.rounds and (self.plan.send_translation is None or self.plan.receive_translation is None):
            raise LayoutError("plan: the registers of the rounds are not a lane translation of fixed registers")

    @property
    def element_bytes(self) -> int:
        return self.plan.bitwidth // 8

    def _leads(self) -> tuple[list[int], list[int]]:
        a_reg, b_reg = _register_index(self.plan.src), _register_index(self.plan.dst)
        return [a_reg[v] for v in self.plan.V], [b_reg[v] for v in self.plan.V]

    def packings(self) -> tuple[list[Packing], list[Packing]]:
        """Source words with the payload bits first (the payload is one word), destination likewise."""
        lead_a, lead_b = self._leads()
        w = self.element_bytes
        return ([Packing.leading(w, self.plan.src.in_dim_size_log2("register", missing_ok=True), lead_a)],
                [Packing.leading(w, self.plan.dst.in_dim_size_log2("register", missing_ok=True), lead_b)])

    def emit_words(self, a: str, b: str, pin: Packing, pout: Packing, em: Emission, smem: str = "smem",
                   trailing_barrier: bool = True) -> list[str]:
        form = self.plan.butterfly_form
        if form is not None:
            return self._emit_butterfly(form, a, b, pin, pout, em)
        plan = self.plan
        w = self.element_bytes
        mark = len(em.lines)
        lead_a, lead_b = self._leads()
        ps = Packing.leading(w, pin.register_bits, lead_a, rest=pin)
        pr = Packing.leading(w, pout.register_bits, lead_b, rest=pout)
        rounds = plan.rounds
        e = plan.elements_per_shuffle
        words_per = plan.words_per_shuffle
        # 1. source words in the send packing
        a_words = repack(pin, ps, [f"{a}[{i}]" for i in range(pin.num_words)], em)
        # 2. a'[r] = a[r ^ f(lane)] for the words sent
        send_f = plan.send_translation or ()
        bases = [r.send_registers[0][0] for r in rounds]
        sent = {ps.word(s) + h for s in bases for h in range(words_per)}
        full = [a_words[i] if a_words[i] is not None else f"{a}[{i}]" for i in range(ps.num_words)]
        a_prime = translate_words(ps, full, send_f, sent, em) if any(send_f) else {i: full[i] for i in sent}
        # 3. rounds: one shfl per payload word; received bytes named in b' (fixed registers)
        received: list[Source] = []
        for rnd, s in zip(rounds, bases):
            src_lane = None if rnd.in_lane else em.define(affine_lane_expression(rnd.source_lane).to_cuda(), "src")
            d = rnd.receive_registers[0][0]
            dst_regs = rnd.receive_registers[0]  # lane 0: d ^ o'_k
            for h in range(words_per):
                if src_lane is None:  # every lane reads itself: the word is already here
                    name = a_prime[ps.word(s) + h]
                else:
                    name = em.fresh("r")
                    em.lines.append(f"const unsigned {name} = __shfl_sync(0xffffffffu, {a_prime[ps.word(s) + h]}, "
                                    f"{src_lane});")
                if w >= 4:
                    contents = tuple((d, 4 * h + j) for j in range(4))
                else:
                    slots: list = [None] * 4
                    q = ps.position(s)
                    for k in range(e):
                        pos = q ^ k
                        for j in range(w):
                            slots[pos * w + j] = (dst_regs[k], j)
                    contents = tuple(slots)
                received.append(Source(name, contents))
        # 4. b' words (packing pr), then b[r] = b'[r ^ g(lane)], then the output packing (+ copies)
        written = {bid[0] for s in received for bid in s.contents if bid is not None}
        needed = sorted({pr.word(r) + h for r in written for h in range(pr.words_per_element if w >= 4 else 1)})
        b_prime = gather_words(pr, received, em, only=needed, keep=written.__contains__)
        recv_g = plan.receive_translation or ()
        b_words = [x if x is not None else "0u" for x in b_prime]
        if any(recv_g):
            moved = translate_words(pr, b_words, recv_g, needed, em)
            b_words = [moved.get(i, "0u") for i in range(pr.num_words)]
        zero = plan.zero_register_mask
        canon = (lambda r: r & ~zero) if zero else None
        if canon is None:
            final = repack(pr, pout, b_words, em)
        else:
            sources = [Source(b_words[i], tuple(x if x is not None and x[0] in written else None
                                                for x in pr.contents(i))) for i in needed]
            final = gather_words(pout, sources, em, canon=canon)
        lines = em.lines[mark:]
        del em.lines[mark:]
        lines += [f"{b}[{i}] = {x};" for i, x in enumerate(final)]
        return ["{"] + ["  " + x for x in lines] + ["}"]

    def _emit_butterfly(self, form: ButterflyForm, a: str, b: str, pin: Packing, pout: Packing,
                        em: Emission) -> list[str]:
        """Butterfly form (module doc; ``analysis.shuffles.butterfly_leaves`` says which word each lane
        class sends and keeps): one ``shfl.sync.bfly`` per word of a crossing round, select trees on the
        lane bits (``select_tree``, hash-consed) for the words sent and the destination registers; each
        destination register is merged as soon as its received words have arrived (Triton's order: an
        exchange's send, shuffle and merges together, which ptxas schedules as a steady cadence)."""
        mark = len(em.lines)
        sends, dests = butterfly_leaves(self.plan, form)
        memo: dict = {}

        def select(t: int, hi: str, lo: str) -> str:
            if (t, hi, lo) not in memo:
                bit = form.lane_bits[t]
                cond = f"((lane >> {bit}) & 1u)" if bit else "(lane & 1u)"
                em.select += 1
                memo[t, hi, lo] = em.define(f"({cond} ? {hi} : {lo})", "x")
            return memo[t, hi, lo]

        names: dict = {}

        def name(leaf: tuple) -> str:
            return f"{a}[{pin.word(leaf[1]) + leaf[2]}]" if leaf[0] == "a" else names[leaf]

        final = ["0u"] * pout.num_words
        pending = dict(dests)

        def merge_ready() -> None:  # destination registers whose received words have all arrived
            for (r, h), leaves in list(pending.items()):
                if all(x[0] != "recv" or x in names for x in leaves):
                    final[pout.word(r) + h] = select_tree([name(x) for x in leaves], select)
                    del pending[r, h]

        merge_ready()
        for (j, h), leaves in sends.items():  # each exchange's send, shuffle and merges together
            value = select_tree([name(x) for x in leaves], select)
            names["recv", j, h] = em.fresh("r")
            em.lines.append(f"const unsigned {names['recv', j, h]} = __shfl_xor_sync(0xffffffffu, {value}, "
                            f"{form.masks[j]});")
            merge_ready()
        lines = em.lines[mark:]
        del em.lines[mark:]
        lines += [f"{b}[{i}] = {x};" for i, x in enumerate(final)]
        return ["{"] + ["  " + x for x in lines] + ["}"]

    def instruction_counts(self) -> dict[str, int]:
        """Static per-thread count: ``shfl.sync.idx.b32`` (``.bfly`` in butterfly form) = rounds x words
        per payload, but in-lane rounds."""
        key = "shfl.sync.bfly.b32" if self.plan.butterfly_form is not None else "shfl.sync.idx.b32"
        return {key: self.plan.shuffles_per_warp}
