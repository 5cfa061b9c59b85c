"""Warp-shuffle conversion emitter: a ``ShufflePlan`` (analysis.shuffles, paper §5.4) as
``__shfl_sync`` rounds (PTX ``shfl.sync.idx.b32``), sub-word elements packed into 32-bit payloads with
``__byte_perm`` (``prmt``).

Round ``j``: lane ``l`` packs registers ``send_registers[l]`` into a payload, reads the payload of lane
``source_lane[l]`` and unpacks it into ``receive_registers[l]``.  Register indices depend on the lane.
In the plans of §5.4 they are ``base_j ^ f(l)`` with ``f`` linear in the lane bits and the same in
every round; then the registers are permuted once per lane up front (``a'[r] = a[r ^ f(l)]``: one
conditional swap of register pairs per lane bit that moves them) and every round reads fixed
registers; the receive side likewise (``b[r ^ g(l)] = b'[r]`` at the end).  Otherwise each distinct
choice becomes a lane-mask select.  The source lane is affine in the lane bits (checked) and is
emitted as XORs of masked lane bits.  One ``shfl.sync`` per 32-bit word of the payload.

Example: the paper's Fig. 4 exchange (fp32, one element per payload) is two rounds of one
``shfl.sync.idx.b32`` each.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from linear_layouts.analysis.shuffles import lane_translation
from linear_layouts.codegen.elements import element_type, pack_words, unpack_words
from linear_layouts.codegen.index import IndexExpression, xor_terms
from linear_layouts.errors import LayoutError

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


def _conditional_swaps(regs: str, count: int, images: tuple[int, ...], t: str) -> list[str]:
    """``regs[r] <-> regs[r ^ m]`` in lanes whose bit ``i`` is set, for each image ``m`` (register
    arrays stay in registers: constant indices, selects)."""
    lines = []
    for i, m in enumerate(images):
        if not m:
            continue
        pairs = [(r, r ^ m) for r in range(count) if r < r ^ m < count]
        body = " ".join(f"{{ const {t} x = {regs}[{p}]; {regs}[{p}] = {regs}[{q}]; {regs}[{q}] = x; }}" for p, q in pairs)
        lines.append(f"if ((lane >> {i}) & 1u) {{ {body} }}")
    return lines


def _lane_groups(choices: tuple[tuple[int, ...], ...]) -> list[tuple[tuple[int, ...], int]]:
    """Distinct per-lane choices with the 32-bit mask of lanes making each, most frequent first."""
    masks: dict[tuple[int, ...], int] = {}
    for lane, choice in enumerate(choices):
        masks[choice] = masks.get(choice, 0) | (1 << lane)
    return sorted(masks.items(), key=lambda kv: -bin(kv[1]).count("1"))


@dataclass(frozen=True)
class ShuffleConversion:
    """A conversion step (see ``codegen.conversion``) executing ``plan`` (an ``analysis.shuffles.ShufflePlan``)."""

    plan: Any

    shared_bytes = 0

    @property
    def element_bytes(self) -> int:
        return self.plan.bitwidth // 8

    def _payload_words(self, elements: list[str]) -> list[str]:
        w = self.element_bytes
        per_word = max(1, 4 // w)
        padded = list(elements) + ["0"] * ((-len(elements)) % per_word)
        return pack_words(padded, w)

    def emit(self, a: str = "a", b: str = "b", smem: str = "smem") -> list[str]:
        w = self.element_bytes
        t = element_type(w)
        words = self.plan.words_per_shuffle
        lines: list[str] = []
        rounds = self.plan.rounds
        n_lanes = len(rounds[0].source_lane) if rounds else 32
        n_src = self.plan.src.in_dim_size("register") if self.plan.src.has_in_dim("register") else 1
        n_dst = self.plan.dst.in_dim_size("register") if self.plan.dst.has_in_dim("register") else 1
        send_f = lane_translation([r.send_registers for r in rounds], n_lanes)
        recv_g = lane_translation([r.receive_registers for r in rounds], n_lanes)
        if send_f is not None and any(send_f):
            # a'[r] = a[r ^ f(l)]: swap in a copy so the source registers stay intact for later use
            lines.append(f"{t} {a}_p[{n_src}];")
            lines.append(f"#pragma unroll\nfor (int r = 0; r < {n_src}; ++r) {a}_p[r] = {a}[r];")
            lines += _conditional_swaps(f"{a}_p", n_src, send_f, t)
            rounds = [type(r)(tuple((r.send_registers[0],) * n_lanes), r.source_lane, r.receive_registers) for r in rounds]
            a = f"{a}_p"
        if recv_g is not None and any(recv_g):
            rounds = [type(r)(r.send_registers, r.source_lane, tuple((r.receive_registers[0],) * n_lanes)) for r in rounds]
        for j, rnd in enumerate(rounds):
            names = [f"s{j}_{i}" for i in range(words)]
            sends = _lane_groups(rnd.send_registers)
            first = self._payload_words([f"{a}[{r}]" for r in sends[0][0]])
            lines.append("{ " + " ".join(f"unsigned {n} = {x};" for n, x in zip(names, first)))
            for choice, mask in sends[1:]:
                values = self._payload_words([f"{a}[{r}]" for r in choice])
                assigns = " ".join(f"{n} = {x};" for n, x in zip(names, values))
                lines.append(f"  if (({mask:#x}u >> lane) & 1u) {{ {assigns} }}")
            source = affine_lane_expression(rnd.source_lane).to_cuda()
            lines.append(f"  const unsigned src_lane = {source};")
            for n in names:
                lines.append(f"  {n} = __shfl_sync(0xffffffffu, {n}, src_lane);")
            unpacked = unpack_words(names, w)
            receives = _lane_groups(rnd.receive_registers)
            for index, (choice, mask) in enumerate(receives):
                assigns = " ".join(f"{b}[{r}] = {unpacked[k]};" for k, r in enumerate(choice))
                if len(receives) == 1:
                    lines.append(f"  {assigns}")
                else:
                    lines.append(f"  if (({mask:#x}u >> lane) & 1u) {{ {assigns} }}")
            lines.append("}")
        if recv_g is not None and any(recv_g):
            # received into b'[r] (= b[r ^ g(l)]): undo the lane translation in place
            lines += _conditional_swaps(b, n_dst, recv_g, t)
        for dst, src in self.plan.copies:
            lines.append(f"{b}[{dst}] = {b}[{src}];")
        return ["{"] + ["  " + x for x in lines] + ["}"]

    def instruction_counts(self) -> dict[str, int]:
        """Static per-thread count: ``shfl.sync.idx.b32`` = rounds x words per payload."""
        return {"shfl.sync.idx.b32": self.plan.shuffles_per_warp}
