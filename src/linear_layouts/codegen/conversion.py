"""Conversion steps: registers in layout ``src`` become registers in layout ``dst``.

Each step is a frozen value that emits C++ lines reading the packed register words ``a`` (``src``,
in a ``packing.Packing``) and writing the words ``b`` (``dst``), and says how much shared memory it
needs, which shared instructions it issues and which packings suit it best (``packings``).

- ``RegisterCopy``: ``b[r] = a[p(r)]`` (no-op and register permutation; ``p`` from the plan), as
  byte permutes of packed words, or, where the plan says renamed words, as word moves between a
  packing and its renaming (``dst_packing``).
- ``SharedConversion``: store through a shared LinearLayout ``S: offset -> dims`` (swizzled or not,
  optionally padded as Triton's ``PaddedSharedLayout``: the legacy baseline), barrier, load, and a
  barrier after the load unless the kernel says the next store goes to another buffer.  The barrier
  is ``bar.warp.sync`` when every warp reads only what it wrote itself (``warp_local``), else
  ``bar.sync``.

Example: ``SharedConversion(src, dst, S, 4, EmittedAccess("vector", 1), EmittedAccess("matrix", 4))``
is the seed transpose with st.shared.b32 stores and ldmatrix.x4 loads.
"""

from __future__ import annotations

from dataclasses import dataclass

from linear_layouts.analysis.broadcast import zero_bases_mask
from linear_layouts.codegen.elements import check_element_bytes
from linear_layouts.analysis.steps import RegisterEmission, SharedInstruction
from linear_layouts.codegen.hardware_map import HardwareMap, shared_map
from linear_layouts.codegen.packing import Emission, Packing, Source, gather_words, repack
from linear_layouts.core.word_packing import bit_permutation, renamed, renaming_packing
from linear_layouts.codegen.shared import (
    EmittedAccess,
    access_packing,
    emit_shared_load,
    emit_shared_store,
    shared_instruction_counts,
)
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout

__all__ = [
    "RegisterCopy",
    "SharedConversion",
    "widest_vector",
    "register_bits",
    "zero_register_mask",
    "canonical_vector_order",
]


def register_bits(layout: LinearLayout) -> int:
    """log2 of the number of registers of a distributed layout."""
    return layout.in_dim_size_log2("register", missing_ok=True)


def zero_register_mask(layout: LinearLayout) -> int:
    """Register bits whose basis vector is zero (those registers copy register ``r & ~mask``):
    ``analysis.broadcast.zero_bases_mask(layout, "register")``.

    >>> zero_register_mask(LinearLayout({"register": [[0], [1]], "lane": [[2]]}, ["dim0"]))
    1
    """
    return zero_bases_mask(layout, "register")


def _merge(*counts: dict[str, int]) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in counts:
        for k, v in c.items():
            out[k] = out.get(k, 0) + v
    return out


@dataclass(frozen=True)
class RegisterCopy:
    """``b[r] = a[source[r]]`` for every register ``r`` of ``dst``: a no-op or a register
    permutation (the plan gives ``source`` and the ``emission``, ``analysis.steps.RegisterEmission``)
    of ``element_bytes``-byte elements (0: not given; byte permutes only).

    ``BYTE_PERMUTES``: ``b``'s words in any packing, built from ``a``'s by byte permutes;
    ``RENAMED_WORDS``: ``b`` is packed as ``a`` renamed (``dst_packing``), so its words are ``a``'s."""

    src: LinearLayout
    dst: LinearLayout
    source: tuple[int, ...]
    emission: RegisterEmission = RegisterEmission.BYTE_PERMUTES
    element_bytes: int = 0

    def __post_init__(self) -> None:
        n_src = self.src.in_dim_size("register", missing_ok=True)
        n_dst = self.dst.in_dim_size("register", missing_ok=True)
        if len(self.source) != n_dst or any(not 0 <= s < n_src for s in self.source):
            raise LayoutError(
                f"source: needs one src register in [0, {n_src}) for each of the {n_dst} dst registers"
            )
        if not isinstance(self.emission, RegisterEmission):
            raise LayoutError(f"emission: expected a RegisterEmission, got {self.emission!r}")
        if self.element_bytes:
            check_element_bytes(self.element_bytes)
        if self.emission is RegisterEmission.RENAMED_WORDS and (
                not self.element_bytes or self._renaming_src() is None):
            raise LayoutError("emission: renamed words need the element size and a packing of src whose words "
                              "the permutation renames (word_packing.renaming_packing)")

    shared_bytes = 0
    barrier_scope = None

    def _renaming_src(self) -> Packing | None:
        return renaming_packing(self.element_bytes, register_bits(self.src), self.source)

    def dst_packing(self, pin: Packing) -> Packing | None:
        """The packing ``b`` must take when ``a`` is packed as ``pin``: ``a``'s renamed (renamed words),
        None when any will do (byte permutes) or when none renames ``pin``'s words."""
        if self.emission is RegisterEmission.BYTE_PERMUTES:
            return None
        return renamed(pin, self.source)

    def accepts(self, pin: Packing, pout: Packing) -> bool:
        """Whether the step runs between these packings as its emission says (renamed words: ``pout``
        is ``pin`` renamed)."""
        return self.emission is RegisterEmission.BYTE_PERMUTES or pout == self.dst_packing(pin)

    def packings(self) -> tuple[list[Packing], list[Packing]]:
        """No preference (byte permutes); the source packed as ``word_packing.renaming_packing`` says and its
        renaming (renamed words)."""
        if self.emission is RegisterEmission.BYTE_PERMUTES:
            return [], []
        pin = self._renaming_src()
        return [pin], [self.dst_packing(pin)]  # type: ignore[list-item]

    def bit_permutation(self) -> tuple[int, ...] | None:
        """``p`` with ``source[r] = sum(bit i of r << p[i])`` when the copy permutes register bits
        (e.g. a transpose inside each thread), else None (``word_packing.bit_permutation``)."""
        return bit_permutation(self.source)

    def emit_words(self, a: str, b: str, pin: Packing, pout: Packing, em: Emission, smem: str = "smem",
                   trailing_barrier: bool = True) -> list[str]:
        """``b``'s words (``pout``) from ``a``'s (``pin``): byte permutes where the packings differ
        (a permutation of register bits goes through ``repack``'s staged byte exchanges); word moves
        alone for renamed words (``pout`` must be ``pin`` renamed)."""
        if not self.accepts(pin, pout):
            raise LayoutError(f"pout: a renamed-words permutation packs dst as src renamed, "
                              f"{self.dst_packing(pin)}, got {pout}")
        mark = len(em.lines)
        words = [f"{a}[{i}]" for i in range(pin.num_words)]
        perm = self.bit_permutation()
        if perm is not None and pin.register_bits == pout.register_bits:
            q = Packing(pin.element_bytes, pin.register_bits, tuple(perm[x] for x in pout.in_word))
            moved = repack(pin, q, words, em)
            exprs = [moved[q.word(self.source[pout.register(w, 0)]) + (w % pout.words_per_element)]
                     for w in range(pout.num_words)]
            lines = em.lines[mark:]
            del em.lines[mark:]
            return lines + [f"{b}[{i}] = {e};" for i, e in enumerate(exprs)]
        sources = [Source(x, pin.contents(i)) for i, x in enumerate(words)]
        exprs = gather_words(pout, sources, em, canon=self.source.__getitem__)
        lines = em.lines[mark:]
        del em.lines[mark:]
        return lines + [f"{b}[{i}] = {e};" for i, e in enumerate(exprs)]

    def instruction_counts(self) -> dict[str, int]:
        return {}


@dataclass(frozen=True)
class SharedConversion:
    """Store ``src`` registers to shared memory laid out by ``shared`` (``offset -> dims``), barrier,
    load ``dst`` registers, barrier (the second barrier protects the buffer for the next store)."""

    src: LinearLayout
    dst: LinearLayout
    shared: LinearLayout
    element_bytes: int
    store: EmittedAccess
    load: EmittedAccess
    padding: tuple[int, int] = ()

    def __post_init__(self) -> None:
        check_element_bytes(self.element_bytes)
        if self.padding:
            interval, pad = self.padding
            if interval <= 0 or interval & (interval - 1) or pad < 0:
                raise LayoutError(f"padding: (interval, pad) needs a power-of-two interval and pad >= 0, got {self.padding}")
            for access in (self.store, self.load):
                if access.kind is SharedInstruction.MATRIX or pad % access.width or interval % access.width:
                    raise LayoutError(f"padding: {self.padding} breaks the alignment of a {access.description} access")
        # Validate eagerly: a bad plan fails at construction, not at emission.
        self.instruction_counts()

    @property
    def store_map(self) -> HardwareMap:
        return shared_map(self.src, self.shared)

    @property
    def load_map(self) -> HardwareMap:
        return shared_map(self.dst, self.shared)

    @property
    def shared_bytes(self) -> int:
        n = self.shared.in_dim_size("offset")
        if self.padding:
            interval, pad = self.padding
            n += ((n - 1) // interval) * pad
        return n * self.element_bytes

    @property
    def warp_local(self) -> bool:
        """Every warp loads only elements it stored itself: the same warp bases on both sides and no
        duplicated warps (whose stores are skipped).  Then ``bar.warp.sync`` orders the round trip."""
        ws = self.src.flat_bases("warp", missing_ok=True)
        wd = self.dst.flat_bases("warp", missing_ok=True)
        return tuple(ws) == tuple(wd) and all(ws)

    @property
    def barrier_scope(self) -> str:
        """``warp`` (bar.warp.sync) or ``cta`` (bar.sync)."""
        return "warp" if self.warp_local else "cta"

    def packings(self) -> tuple[list[Packing], list[Packing]]:
        """The packings in which the store and the load move whole register words (no permutes)."""
        w = self.element_bytes
        return ([access_packing(self.store.apply(self.store_map), w, register_bits(self.src))],
                [access_packing(self.load.apply(self.load_map), w, register_bits(self.dst))])

    def emit_words(self, a: str, b: str, pin: Packing, pout: Packing, em: Emission, smem: str = "smem",
                   trailing_barrier: bool = True) -> list[str]:
        """Store ``a`` (``pin``), barrier, load ``b`` (``pout``), and a barrier after the load unless
        ``trailing_barrier`` is False (the kernel's next store goes to another buffer)."""
        padding = self.padding or None
        bar = "ll_bar_warp();" if self.warp_local else "ll_bar_cta();"
        lines = emit_shared_store(self.store_map, self.element_bytes, self.store, pin, a, smem, padding, em)
        lines.append(bar)
        lines += emit_shared_load(self.load_map, self.element_bytes, self.load, pout, b, smem, padding, em,
                                  zero_register_mask(self.dst))
        if trailing_barrier:
            lines.append(bar)
        return lines

    def instruction_counts(self) -> dict[str, int]:
        """Static per-thread counts ``{ptx opcode: n}`` of the shared instructions emitted."""
        return _merge(
            shared_instruction_counts(self.store_map, self.element_bytes, self.store, True),
            shared_instruction_counts(self.load_map, self.element_bytes, self.load, False),
        )


def widest_vector(hmap: HardwareMap, element_bytes: int) -> int:
    """Baselines only (plans give the width): the longest aligned register run, at most 16 bytes."""
    v = 1 << hmap.contiguous_registers()
    while v * element_bytes > 16:
        v //= 2
    return v


def _low_register_bits(access: EmittedAccess, element_bytes: int) -> int:
    """How many of the lowest shared offset bits an access moves as register bits of one lane."""
    if access.kind is SharedInstruction.VECTOR:
        return access.width.bit_length() - 1
    return 0 if access.trans else (4 // element_bytes).bit_length() - 1 if element_bytes < 4 else 0


def canonical_vector_order(step: SharedConversion) -> SharedConversion:
    """``step`` with the lowest shared offset bits that both sides move inside one lane's vector (or
    ldmatrix word) put in increasing order of their tensor vectors.

    Both sides touch the same aligned blocks of shared memory before and after (the permuted offsets
    stay inside every vector of either side), so the wavefronts are unchanged; but two conversions
    through the same vector set now agree on the element order, and packed registers need no byte
    permutes between them (the backward plan's swizzle is often the forward's with its vector bits
    reordered)."""
    m = min(_low_register_bits(step.store, step.element_bytes), _low_register_bits(step.load, step.element_bytes))
    if m < 2 or step.padding:
        return step
    bases = [list(v) for v in step.shared.bases["offset"]]
    flat = step.shared.flat_bases("offset")
    order = sorted(range(m), key=lambda i: flat[i])
    if order == list(range(m)):
        return step
    new_bases = [bases[i] for i in order] + bases[m:]
    shared = LinearLayout({"offset": new_bases}, dict(step.shared.out_dims))

    def reorder(access: EmittedAccess, layout: LinearLayout) -> EmittedAccess:
        hmap = shared_map(layout, shared)
        by_image = {image: bit for bit, image in enumerate(hmap.register) if image}
        front = [by_image[1 << i] for i in range(m)]
        old = list(access.register_order) or list(range(len(hmap.register)))
        rest = [b for b in old if b not in front]
        return EmittedAccess(access.kind, access.width, tuple(front + rest), access.trans)

    return SharedConversion(step.src, step.dst, shared, step.element_bytes,
                            reorder(step.store, step.src), reorder(step.load, step.dst))
