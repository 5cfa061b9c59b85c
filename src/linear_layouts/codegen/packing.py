"""Packed registers: sub-word elements live in 32-bit words end to end, moved with byte permutes.

A thread's registers of ``w``-byte elements are held in ``unsigned`` words as a ``Packing`` says
(``linear_layouts.core.word_packing``, re-exported here: the in-word register bits pick the element inside
a word, the other register bits the word).

Changing the packing is a byte permutation.  ``prmt`` (``__byte_perm``) builds one word from any 4
of the 8 bytes of two words, so a word whose bytes come from ``s`` words costs ``s - 1`` prmt (1 when
one word is only reordered, 0 when it is already in place).  A packing change that swaps ``d``
in-word register bits for ``d`` word bits is done in ``d`` stages of one prmt per word (each stage
exchanges one bit: every new word takes half of each of two old words); the 4x4 byte transpose of
8-bit elements is the case ``d = 2``: 8 prmt for 4 words instead of 12 by direct assembly.

Values are tracked symbolically: a word is a tuple of 4 byte ids ``(register, byte of the element)``
(or None: don't care), so every emitted permutation is checked while it is built.

Example: 8-bit registers 0..7 packed naturally (``in_word=(0, 1)``) and packed along register bits
(1, 2): ``repack(Packing(1, 3, (0, 1)), Packing(1, 3, (1, 2)), ...)`` costs 2 prmt per word.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import count
from typing import Callable, Iterable, Sequence

from linear_layouts.core.errors import LayoutError
from linear_layouts.core.word_packing import ByteId, Packing, Word, exchange_stages

__all__ = [
    "ByteId",
    "Word",
    "Packing",
    "Source",
    "Emission",
    "prmt_selector",
    "assemble",
    "repack",
    "xor_selector_expression",
    "source_index",
    "relevant_sources",
    "gather_words",
    "translate_words",
]


@dataclass(frozen=True)
class Source:
    """A 32-bit C++ value ``expr`` whose bytes hold ``contents`` (byte ids or None)."""

    expr: str
    contents: Word


def prmt_selector(picks: Sequence[tuple[int, int] | None]) -> int:
    """``__byte_perm`` selector placing, at each byte, byte ``j`` of operand ``o`` (0: a, 1: b) for
    ``picks[i] = (o, j)``; None bytes take byte i of a (don't care).

    >>> hex(prmt_selector([(0, 0), (1, 0), (0, 1), (1, 1)]))
    '0x5140'
    """
    sel = 0
    for i, pick in enumerate(picks):
        nib = i if pick is None else 4 * pick[0] + pick[1]
        sel |= nib << (4 * i)
    return sel


@dataclass
class Emission:
    """C++ lines being built, with fresh temporaries and a count of the ``prmt`` emitted."""

    prefix: str = "t"
    lines: list[str] = None  # type: ignore[assignment]
    prmt: int = 0
    select: int = 0
    _ids: Iterable[int] = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.lines is None:
            self.lines = []
        self._ids = count()

    @property
    def alu(self) -> int:
        """Non-memory instructions counted: byte permutes and selects."""
        return self.prmt + self.select

    def fresh(self, stem: str = "") -> str:
        return f"{self.prefix}{stem}{next(self._ids)}"

    def define(self, expr: str, stem: str = "") -> str:
        """A ``const unsigned`` temporary holding ``expr`` (expr itself when it is a plain name)."""
        if expr.replace("_", "a").replace("[", "").replace("]", "").isalnum():
            return expr
        name = self.fresh(stem)
        self.lines.append(f"const unsigned {name} = {expr};")
        return name


def _canonical(bid, canon: Callable[[int], int] | None):
    if bid is None or canon is None:
        return bid
    return (canon(bid[0]), bid[1])


def assemble(target: Word, sources: Sequence[Source], em: Emission,
             canon: Callable[[int], int] | None = None, stem: str = "") -> Source:
    """A word with ``target``'s bytes built from ``sources`` with the fewest prmt (greedy cover).

    ``canon`` maps a register to the register whose value it duplicates (copies read the original).
    Raises LayoutError if a byte is in no source."""
    where: dict = {}
    for s_index, s in enumerate(sources):
        for j, bid in enumerate(s.contents):
            if bid is not None:
                where.setdefault(bid, []).append((s_index, j))
    need = [(i, _canonical(b, canon)) for i, b in enumerate(target) if b is not None]
    if not need:
        return Source("0u", (None,) * 4)
    for _, bid in need:
        if bid not in where:
            raise LayoutError(f"assemble: byte {bid} is in none of the sources")
    # exact match: one source already holds every needed byte in place
    for s in sources:
        if all(s.contents[i] == bid for i, bid in need):
            return s
    # greedy cover by the sources holding most missing bytes
    missing = {bid for _, bid in need}
    chosen: list[int] = []
    while missing:
        best = max(range(len(sources)), key=lambda k: (len(missing & set(sources[k].contents)), -k))
        chosen.append(best)
        missing -= set(sources[best].contents)
    chosen_set = chosen
    first = sources[chosen_set[0]]
    if len(chosen_set) == 1:
        picks = []
        for i in range(4):
            bid = _canonical(target[i], canon)
            picks.append(None if bid is None else (0, first.contents.index(bid)))
        em.prmt += 1
        expr = f"__byte_perm({first.expr}, 0u, {prmt_selector(picks):#06x}u)"
        return Source(em.define(expr, stem), _placed(target, canon))
    # chain: partial word (a) absorbs each further source (b)
    acc = first
    placed: list = [None] * 4
    for i, bid in need:
        if bid in acc.contents:
            placed[i] = bid
    acc_picks = [(0, acc.contents.index(placed[i])) if placed[i] is not None else None for i in range(4)]
    pending_first = True
    for k in chosen_set[1:]:
        src = sources[k]
        picks = []
        new_contents: list = [None] * 4
        for i in range(4):
            bid = _canonical(target[i], canon)
            if bid is not None and placed[i] is None and bid in src.contents:
                picks.append((1, src.contents.index(bid)))
                placed[i] = bid
                new_contents[i] = bid
            elif placed[i] is not None:
                picks.append(acc_picks[i] if pending_first else (0, i))
                new_contents[i] = placed[i]
            else:
                picks.append(None)
        em.prmt += 1
        expr = f"__byte_perm({acc.expr}, {src.expr}, {prmt_selector(picks):#06x}u)"
        acc = Source(em.define(expr, stem), tuple(new_contents))
        acc_picks = [(0, i) for i in range(4)]
        pending_first = False
    return Source(acc.expr, _placed(target, canon))


def _placed(target: Word, canon) -> Word:
    return tuple(_canonical(b, canon) for b in target)


def repack(src: Packing, dst: Packing, words: Sequence[str], em: Emission,
           canon: Callable[[int], int] | None = None, only: Iterable[int] | None = None) -> list[str | None]:
    """C++ expressions of ``dst``'s words from ``words`` (expressions of ``src``'s words), by the
    cheaper of direct assembly and bit-exchange stages (module doc).  ``only``: the dst words needed
    (others are None).  ``canon``: duplicated registers read their originals."""
    if src.register_bits != dst.register_bits or src.element_bytes != dst.element_bytes:
        raise LayoutError("repack: packings of different register files")
    wanted = sorted(set(range(dst.num_words) if only is None else only))
    sources = [Source(words[i], src.contents(i)) for i in range(src.num_words)]
    if src == dst and canon is None:
        return [words[i] if i in wanted else None for i in range(dst.num_words)]

    def direct(e: Emission) -> list[str | None]:
        out: list[str | None] = [None] * dst.num_words
        by_byte = source_index(sources)
        for w in wanted:
            target = dst.contents(w)
            out[w] = assemble(target, relevant_sources(sources, by_byte, target, canon), e, canon).expr
        return out

    trial = Emission(em.prefix + "d")
    direct(trial)
    stages = exchange_stages(src, dst) if canon is None else []
    if len(stages) >= 2 and len(stages) * len(wanted) < trial.prmt:
        current = sources
        for s_index, packing in enumerate(stages):
            by_byte = source_index(current)
            need = wanted if s_index == len(stages) - 1 else range(packing.num_words)
            nxt: list[Source] = []
            for w in range(packing.num_words):
                if w not in need:
                    continue
                target = packing.contents(w)
                nxt.append(assemble(target, relevant_sources(current, by_byte, target, None), em, None))
            if s_index == len(stages) - 1:
                out: list[str | None] = [None] * dst.num_words
                for w, s in zip(wanted, nxt):
                    out[w] = s.expr
                return out
            current = nxt
    return direct(em)


def source_index(sources: Sequence[Source]) -> dict:
    by_byte: dict = {}
    for k, s in enumerate(sources):
        for bid in s.contents:
            if bid is not None:
                by_byte.setdefault(bid, []).append(k)
    return by_byte


def relevant_sources(sources: Sequence[Source], by_byte: dict, target: Word, canon) -> list[Source]:
    """The sources holding some byte of ``target`` (keeps the greedy cover small and fast)."""
    keep: list[int] = []
    for bid in target:
        bid = _canonical(bid, canon)
        for k in by_byte.get(bid, ()):
            if k not in keep:
                keep.append(k)
    return [sources[k] for k in keep]


def xor_selector_expression(element_bytes: int, position_xor: str, from_b: str | None = None) -> str:
    """C++ selector of ``__byte_perm(x, y, sel)`` taking element ``p ^ m`` into position ``p``
    (``m`` = the runtime value ``position_xor``, in elements), from ``y`` instead of ``x`` where the
    runtime 0/1 value ``from_b`` is 1.

    >>> xor_selector_expression(1, "m")
    '(0x3210u ^ ((m) * 0x1111u))'
    """
    parts = ["0x3210u"]
    if position_xor:
        parts.append(f"(({position_xor}) * {0x1111 * element_bytes:#x}u)")
    if from_b:
        parts.append(f"(({from_b}) * 0x4444u)")
    return "(" + " ^ ".join(parts) + ")" if len(parts) > 1 else parts[0]


def gather_words(target: Packing, sources: Sequence[Source], em: Emission,
                 canon: Callable[[int], int] | None = None, only: Iterable[int] | None = None,
                 keep: Callable[[int], bool] | None = None) -> list[str | None]:
    """Expressions of ``target``'s words assembled from ``sources`` (any words with known bytes);
    ``canon``: the register whose bytes a (duplicated) register takes; ``keep``: registers whose
    bytes matter (others are don't-care)."""
    by_byte = source_index(sources)
    wanted = set(range(target.num_words) if only is None else only)
    out: list[str | None] = [None] * target.num_words
    for w in sorted(wanted):
        t = target.contents(w)
        if keep is not None:
            t = tuple(b if b is not None and keep(b[0]) else None for b in t)
        out[w] = assemble(t, relevant_sources(sources, by_byte, t, canon), em, canon).expr
    return out


def translate_words(packing: Packing, words: Sequence[str], images: Sequence[int], needed: Iterable[int],
                    em: Emission, lane: str = "lane") -> dict[int, str]:
    """Lane-dependent register translation of a packed register file: the words of ``x'`` with
    ``x'[r] = x[r ^ f(lane)]``, ``f`` linear with ``f(2**i) = images[i]``, for the ``needed`` words.

    Word bits of ``f`` become selects (one per word per lane bit, as conditional swaps); the in-word
    part and the last word bit fold into one ``prmt`` per word whose selector is computed from the
    lane (``xor_selector_expression``)."""
    from linear_layouts.codegen.index import xor_terms, IndexExpression  # noqa: PLC0415

    word_steps = [(i, packing.word_xor(m)) for i, m in enumerate(images) if packing.word_xor(m)]
    positions = [packing.position_xor(m) for m in images]
    sub_word = packing.element_bytes < 4
    fold = word_steps[-1] if sub_word and word_steps else None
    selects = word_steps[:-1] if fold else word_steps
    # words needed before each select stage (backwards), then emit forwards
    stage_needs = []
    need = set(needed)
    if fold:
        need |= {w ^ fold[1] for w in need}
    for i, m in reversed(selects):
        stage_needs.append(set(need))
        need |= {w ^ m for w in need}
    stage_needs.reverse()
    current = {w: words[w] for w in need}
    for (i, m), keep in zip(selects, stage_needs):
        bit = f"(({lane} >> {i}) & 1u)" if i else f"({lane} & 1u)"
        nxt = {}
        for w in sorted(keep):
            em.select += 1
            nxt[w] = em.define(f"({bit} ? {current[w ^ m]} : {current[w]})", "x")
        current = nxt
    has_position = any(positions)
    if not has_position and not fold:
        return {w: current[w] for w in needed}
    pos_expr = IndexExpression(0, tuple(xor_terms(lane, positions))).to_cuda() if has_position else ""
    from_b = (f"(({lane} >> {fold[0]}) & 1u)" if fold[0] else f"({lane} & 1u)") if fold else None
    selector = em.define(xor_selector_expression(packing.element_bytes, pos_expr, from_b), "sel")
    out = {}
    for w in sorted(set(needed)):
        other = current[w ^ fold[1]] if fold else "0u"
        em.prmt += 1
        out[w] = em.define(f"__byte_perm({current[w]}, {other}, {selector})", "x")
    return out
