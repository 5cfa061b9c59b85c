"""Where each hardware bit of a distributed layout lands in a memory: the images that all
memory emitters share.

For a distributed layout ``D: (register, lane, warp) -> dims`` and a memory order
``M: dims -> address`` (row-major global memory, or the inverse of a shared layout
``S: offset -> dims``), the element held by ``(r, l, w)`` lives at ``(M o D)(r, l, w)``, a linear
map, so its address is the XOR of one image per set hardware bit.

Example: a blocked 4x8 layout ``{"register": [[0, 1]], "lane": [[0, 2], [0, 4], [1, 0], [2, 0]]}``
in row-major global memory has register images ``[1]`` and lane images ``[2, 4, 8, 16]``.
"""

from __future__ import annotations

from dataclasses import dataclass

from linear_layouts.codegen.index import IndexExpression, xor_terms, flat_images
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import quote
from linear_layouts.core.layout import LinearLayout

__all__ = ["HardwareMap", "global_map", "shared_map", "guard_redundant_threads", "DISTRIBUTED_DIMS"]

DISTRIBUTED_DIMS = ("register", "lane", "warp", "block")


@dataclass(frozen=True)
class HardwareMap:
    """Images (in elements) of the ``register``, ``lane`` and ``warp`` bits of a distributed layout
    in one memory, plus the bits whose data duplicates other bits' (Triton's free variables)."""

    register: tuple[int, ...]
    lane: tuple[int, ...]
    warp: tuple[int, ...]
    free_register: int
    free_lane: int
    free_warp: int
    zero_register: int  # register bits whose basis vector is zero (copies of another register)
    register_order: tuple[int, ...] = ()  # bit i of a (permuted) register index is array bit register_order[i]

    def register_index(self, register: int) -> int:
        """Index in the register array of (permuted) register ``register``."""
        if not self.register_order:
            return register
        out = 0
        for i, bit in enumerate(self.register_order):
            if (register >> i) & 1:
                out |= 1 << bit
        return out

    def permute_registers(self, order: tuple[int, ...] | list[int]) -> "HardwareMap":
        """The same map with register bits renumbered: new bit ``i`` is old bit ``order[i]``
        (``order`` may list only some bits first; the others follow in increasing order)."""
        n = len(self.register)
        order = list(order)
        if len(set(order)) != len(order) or any(not 0 <= b < n for b in order):
            raise LayoutError(f"order: must list distinct register bits in [0, {n}), got {order}")
        order += [b for b in range(n) if b not in order]

        def remap(mask: int) -> int:
            return sum(1 << i for i, b in enumerate(order) if (mask >> b) & 1)

        base = self.register_order or tuple(range(n))
        return HardwareMap(
            register=tuple(self.register[b] for b in order),
            lane=self.lane,
            warp=self.warp,
            free_register=remap(self.free_register),
            free_lane=self.free_lane,
            free_warp=self.free_warp,
            zero_register=remap(self.zero_register),
            register_order=tuple(base[b] for b in order),
        )

    @property
    def num_registers(self) -> int:
        return 1 << len(self.register)

    @property
    def num_warps(self) -> int:
        return 1 << len(self.warp)

    def address(self, register: int, lane: str | int = "lane", warp: str | int = "warp") -> IndexExpression:
        """Element offset held by ``register`` (a constant) of thread (``lane``, ``warp``)."""
        constant = 0
        for bit, image in enumerate(self.register):
            if (register >> bit) & 1:
                constant ^= image
        terms = []
        for var, images in (("lane", self.lane), ("warp", self.warp)):
            value = lane if var == "lane" else warp
            if isinstance(value, str):
                terms += xor_terms(value, images)
            else:
                for bit, image in enumerate(images):
                    if (value >> bit) & 1:
                        constant ^= image
        return IndexExpression(constant, tuple(terms))

    def contiguous_registers(self) -> int:
        """Largest ``k`` with register bit ``i`` at offset ``2**i`` for every ``i < k`` and every other
        image a multiple of ``2**k``: runs of ``2**k`` registers are aligned vectors."""
        k = 0
        while k < len(self.register) and self.register[k] == 1 << k:
            k += 1
        while k:
            others = self.register[k:] + self.lane + self.warp
            if all(image % (1 << k) == 0 for image in others):
                break
            k -= 1
        return k


def guard_redundant_threads(hmap: HardwareMap, lines: list[str], *, lanes: bool = True) -> list[str]:
    """``lines`` run only by the threads that hold the first copy of their data (Triton's
    ``emitRedundantThreadPredicate``): wrapped in ``if (((lane & free_lane) | (warp & free_warp)) == 0u)``
    over the terms whose mask is not 0; unchanged when no lane or warp is free. ``lanes=False`` predicates
    warps only (a warp-wide ``.sync.aligned`` instruction such as stmatrix needs every lane).

    >>> hmap = HardwareMap((1,), (2, 4, 8, 16, 0), (), free_register=0, free_lane=0x10, free_warp=0,
    ...                    zero_register=0)
    >>> guard_redundant_threads(hmap, ["st(x);"])
    ['if (((lane & 0x10u)) == 0u) {', '  st(x);', '}']
    """
    parts = []
    if lanes and hmap.free_lane:
        parts.append(f"(lane & {hmap.free_lane:#x}u)")
    if hmap.free_warp:
        parts.append(f"(warp & {hmap.free_warp:#x}u)")
    if not parts:
        return lines
    return [f"if (({' | '.join(parts)}) == 0u) {{"] + ["  " + line for line in lines] + ["}"]


def _check_distributed(layout: LinearLayout, argument: str) -> None:
    for name in layout.in_dim_names:
        if name not in DISTRIBUTED_DIMS:
            raise LayoutError(f"{argument}: in dim {quote(name)} is not one of {DISTRIBUTED_DIMS}")
    if layout.has_in_dim("block") and layout.in_dim_size("block") > 1:
        raise LayoutError(f"{argument}: CTA clusters (block size > 1) are not supported by codegen")
    if layout.has_in_dim("lane") and layout.in_dim_size("lane") != 32:
        raise LayoutError(f"{argument}: lane dim must have size 32 (one warp), got {layout.in_dim_size('lane')}")


def _hardware_map(layout: LinearLayout, images: dict[str, list[int]]) -> HardwareMap:
    masks = layout.free_variable_masks()
    zero = 0
    if layout.has_in_dim("register"):
        for bit, vector in enumerate(layout.bases["register"]):
            if not any(vector):
                zero |= 1 << bit
    return HardwareMap(
        register=tuple(images.get("register", [])),
        lane=tuple(images.get("lane", [])),
        warp=tuple(images.get("warp", [])),
        free_register=int(masks.get("register", 0)),
        free_lane=int(masks.get("lane", 0)),
        free_warp=int(masks.get("warp", 0)),
        zero_register=zero,
    )


def global_map(layout: LinearLayout, strides: dict[str, int] | None = None) -> HardwareMap:
    """Images of ``layout``'s hardware bits in a row-major tile (last dim fastest), or with the given
    power-of-two element ``strides`` per out dim (a tile inside a larger matrix)."""
    _check_distributed(layout, "layout")
    return _hardware_map(layout, flat_images(layout, strides))


def shared_map(layout: LinearLayout, shared: LinearLayout) -> HardwareMap:
    """Images of ``layout``'s hardware bits as offsets of the shared layout ``shared``
    (``offset -> dims``, bijective): the map ``shared^-1 o layout``."""
    _check_distributed(layout, "layout")
    if "offset" not in shared.in_dim_names:
        raise LayoutError(f"shared: needs an 'offset' in dim, has {shared.in_dim_names}")
    if shared.has_in_dim("block") and shared.in_dim_size("block") > 1:
        raise LayoutError("shared: CTA clusters (block size > 1) are not supported by codegen")
    if dict(shared.out_dims) != dict(layout.out_dims):
        raise LayoutError(
            f"shared: out dims {shared.out_dims} differ from the distributed layout's {layout.out_dims}"
        )
    offsets = shared.sublayout(["offset"], list(shared.out_dim_names))
    if not offsets.is_invertible():
        raise LayoutError("shared: the offset -> dims map must be bijective (one slot per element)")
    composed = layout.invert_and_compose(offsets)
    return _hardware_map(layout, flat_images(composed, {"offset": 1}))
