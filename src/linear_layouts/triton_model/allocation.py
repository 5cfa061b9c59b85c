"""Where Triton 3.9 puts each shared-memory buffer of a function, and so the bytes it asks for
(``AllocationAnalysis::computeOffsets`` in ``Allocation.cpp``): not the most live at once, but what its
first-fit placement and graph colouring give, alignment gaps and fragmentation included.

The rules, each Triton's:

* the buffers, in Triton's order (explicit buffers in walk order, then the scratch buffers: the
  function's own first, then each op's in walk order), are stably sorted by size, largest first;
* *first fit* (``calculateStarts``): slots ``(offset, live interval)``, starting with one at 0 live
  everywhere; the lowest slot is taken (of equal offsets the first made), and the first buffer whose
  interval meets the slot's and no other open slot's goes there (its offset aligned up); the slot is
  split: one above the buffer over the common interval, and at the slot's offset, the parts of the
  slot's interval before and after the buffer's (each extended over the buffer's);
* two buffers *interfere* when their intervals and their bytes both overlap, or their bytes overlap
  and they belong to different regions of one ``ttg.warp_specialize`` (which run at once);
* *colouring* (``allocate``), repeated while any two interfere: each buffer in order takes the
  smallest colour none of its interfering buffers has (the first buffer starts with colour 0); then,
  in order, a buffer of colour other than 0 moves to just above the highest end of those it interferes
  with (aligned). The size is the highest end.

>>> allocate([Buffer(4096, 16, 0, 3), Buffer(2048, 16, 1, 5), Buffer(4096, 16, 4, 6)])
6144
>>> allocate([Buffer(64, 16, 0, 2), Buffer(8, 128, 1, 2)])  # the scratch is aligned to 128 bytes
136
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Buffer", "allocate"]

#: the end of an interval live to the function's end (Triton's ``Interval``'s default)
FOREVER = 2 ** 63


@dataclass(eq=False)
class Buffer:
    """``size`` bytes aligned to ``alignment``, live over the op ids ``[start, end)``; ``group``: the
    (``ttg.warp_specialize``, region) it is in, if any. ``offset`` is Triton's, once placed."""

    size: int
    alignment: int
    start: int
    end: int
    group: tuple[int, int] | None = None
    offset: int = field(default=0)

    def live_with(self, other: "Buffer") -> bool:
        return self.start < other.end and other.start < self.end


def _align(offset: int, alignment: int) -> int:
    return -(-offset // alignment) * alignment


def _first_fit(buffers: list[Buffer]) -> None:
    """Triton's ``calculateStarts``: initial offsets (module doc)."""
    slots: list[tuple[int, int, int, int]] = [(0, 0, 0, FOREVER)]  # (offset, order made, start, end)
    made = 1
    left = list(buffers)
    while left and slots:
        slots.sort(key=lambda s: (s[0], s[1]))
        offset, _, low, high = slots.pop(0)
        for buffer in left:
            if buffer.start < high and low < buffer.end and not any(
                    buffer.start < e and s < buffer.end for _, _, s, e in slots):
                break
        else:
            continue
        buffer.offset = _align(offset, buffer.alignment)
        new = [(buffer.offset + buffer.size, max(low, buffer.start), min(high, buffer.end))]
        if low < buffer.start:
            new.append((offset, low, buffer.end))
        if buffer.end < high:
            new.append((offset, buffer.start, high))
        for o, s, e in new:
            slots.append((o, made, s, e))
            made += 1
        left.remove(buffer)


def _interference(buffers: list[Buffer]) -> dict[int, list[int]]:
    """Buffer position -> positions of the buffers it interferes with (module doc); only those with any."""
    out: dict[int, list[int]] = {}
    for i, x in enumerate(buffers):
        for j, y in enumerate(buffers):
            if i == j or not (x.offset < y.offset + y.size and y.offset < x.offset + x.size):
                continue
            concurrent = (x.group is not None and y.group is not None and x.group[0] == y.group[0]
                          and x.group != y.group)
            if x.live_with(y) or concurrent:
                out.setdefault(i, []).append(j)
    return out


def allocate(buffers: list[Buffer]) -> int:
    """The bytes Triton's allocation asks for ``buffers`` (module doc); sets each buffer's ``offset``."""
    if not buffers:
        return 0
    order = sorted(buffers, key=lambda b: -b.size)  # stable: ties keep Triton's order
    _first_fit(order)
    graph = _interference(order)
    while True:
        size = 0
        colours = [0] + [-1] * (len(order) - 1)
        for i in range(len(order)):
            taken = {colours[j] for j in graph.get(i, ()) if colours[j] >= 0}
            colours[i] = next(c for c in range(len(order) + 1) if c not in taken)
        for i, x in enumerate(order):
            if colours[i] != 0:
                x.offset = _align(max((order[j].offset + order[j].size for j in graph.get(i, ())), default=0),
                                  x.alignment)
            size = max(size, x.offset + x.size)
        graph = _interference(order)
        if not graph:
            return size
