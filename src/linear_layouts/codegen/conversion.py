"""Conversion steps: registers in layout ``src`` become registers in layout ``dst``.

Each step is a frozen value that emits C++ lines reading register array ``a`` (``src``) and writing
``b`` (``dst``), and says how much shared memory it needs and which shared instructions it issues.

- ``RegisterCopy``: ``b[r] = a[p(r)]`` (no-op and register permutation; ``p`` from the plan).
- ``SharedConversion``: store through a shared LinearLayout ``S: offset -> dims`` (swizzled or not,
  optionally padded as Triton's ``PaddedSharedLayout``: the legacy baseline), barrier, load, barrier.

Example: ``SharedConversion(src, dst, S, 4, SharedAccess("vector", 1), SharedAccess("matrix", 4))``
is the seed transpose with st.shared.b32 stores and ldmatrix.x4 loads.
"""

from __future__ import annotations

from dataclasses import dataclass

from linear_layouts.codegen.elements import check_element_bytes
from linear_layouts.codegen.hardware_map import HardwareMap, shared_map
from linear_layouts.codegen.shared import (
    SharedAccess,
    emit_shared_load,
    emit_shared_store,
    shared_instruction_counts,
)
from linear_layouts.errors import LayoutError
from linear_layouts.layout import LinearLayout

__all__ = [
    "RegisterCopy",
    "SharedConversion",
    "row_major_shared",
    "widest_vector",
]


def _merge(*counts: dict[str, int]) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in counts:
        for k, v in c.items():
            out[k] = out.get(k, 0) + v
    return out


@dataclass(frozen=True)
class RegisterCopy:
    """``b[r] = a[source[r]]`` for every register ``r`` of ``dst``: a no-op or a register
    permutation (the plan gives ``source``)."""

    src: LinearLayout
    dst: LinearLayout
    source: tuple[int, ...]

    def __post_init__(self) -> None:
        n_src = self.src.in_dim_size("register") if self.src.has_in_dim("register") else 1
        n_dst = self.dst.in_dim_size("register") if self.dst.has_in_dim("register") else 1
        if len(self.source) != n_dst or any(not 0 <= s < n_src for s in self.source):
            raise LayoutError(
                f"source: needs one src register in [0, {n_src}) for each of the {n_dst} dst registers"
            )

    shared_bytes = 0

    def emit(self, a: str = "a", b: str = "b", smem: str = "smem") -> list[str]:
        return [f"{b}[{r}] = {a}[{s}];" for r, s in enumerate(self.source)]

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
    store: SharedAccess
    load: SharedAccess
    padding: tuple[int, int] = ()

    def __post_init__(self) -> None:
        check_element_bytes(self.element_bytes)
        if self.padding:
            interval, pad = self.padding
            if interval <= 0 or interval & (interval - 1) or pad < 0:
                raise LayoutError(f"padding: (interval, pad) needs a power-of-two interval and pad >= 0, got {self.padding}")
            for access in (self.store, self.load):
                if access.kind == "matrix" or pad % access.width or interval % access.width:
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

    def emit(self, a: str = "a", b: str = "b", smem: str = "smem") -> list[str]:
        padding = self.padding or None
        return (
            emit_shared_store(self.store_map, self.element_bytes, self.store, a, smem, padding)
            + ["__syncthreads();"]
            + emit_shared_load(self.load_map, self.element_bytes, self.load, b, smem, padding)
            + ["__syncthreads();"]
        )

    def instruction_counts(self) -> dict[str, int]:
        """Static per-thread counts ``{ptx opcode: n}`` of the shared instructions emitted."""
        return _merge(
            shared_instruction_counts(self.store_map, self.element_bytes, self.store, True),
            shared_instruction_counts(self.load_map, self.element_bytes, self.load, False),
        )


def row_major_shared(layout: LinearLayout, fastest: str | None = None) -> LinearLayout:
    """The unswizzled shared layout of ``layout``'s tensor: offsets row-major with ``fastest`` the
    contiguous dim (default: the last dim), e.g. ``offset -> (dim0, dim1)`` with ``dim1`` fastest."""
    dims = list(layout.out_dims.items())
    names = [n for n, _ in dims]
    if fastest is None:
        fastest = names[-1]
    if fastest not in names:
        raise LayoutError(f"fastest: {fastest!r} is not an out dim of {names}")
    order = [fastest] + [n for n in reversed(names) if n != fastest]
    bases: list[list[int]] = []
    for name in order:
        k = names.index(name)
        size = layout.out_dims[name]
        for i in range(size.bit_length() - 1):
            v = [0] * len(names)
            v[k] = 1 << i
            bases.append(v)
    return LinearLayout({"offset": bases}, dict(dims))


def widest_vector(hmap: HardwareMap, element_bytes: int) -> int:
    """Baselines only (plans give the width): the longest aligned register run, at most 16 bytes."""
    v = 1 << hmap.contiguous_registers()
    while v * element_bytes > 16:
        v //= 2
    return v
