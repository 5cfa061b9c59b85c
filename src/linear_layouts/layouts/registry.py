"""The layout kinds: one ``LayoutKind`` record per descriptor class, registered by the class's own module.

A kind states everything the rest of the package needs to know about a descriptor class by name: its
memory space, its TTGIR attribute (name, body syntax, parse and print), its Gluon class (module and the
few fields Gluon writes differently), and its place among the kinds of its space (``rank``: recognition
tries the simpler kinds first; shared-layout advice prefers them). The TTGIR and Gluon text of a layout
(``layouts.ttgir_text``, ``layouts.gluon_text``), the encoding classes of ``triton_model.encodings`` and
``recognize`` read this table, so a new kind is one module: its descriptor and its ``register(...)``.

=====================  =============================================  ===================================
field                  ``BlockedLayout``'s                             read by
=====================  =============================================  ===================================
``space``              ``Space.DISTRIBUTED``                           encodings, recognize, report
``ttgir_name``         ``"ttg.blocked"``                               ttgir_text (``#ttg.blocked<...>``)
``parse_ttgir``        ``{sizePerThread = .., ...}`` -> descriptor      ttgir_text.parse_attribute
``format_ttgir``       descriptor -> ``#ttg.blocked<{...}>``            ttgir_text.format_attribute
``gluon_module``       ``"gl"`` (``gl.BlockedLayout(...)``)             gluon_text.gluon_expression
``rank``               0 (the simplest distributed kind)               recognize, shared advice
``candidates``         (in ``recognize``)                              recognize
=====================  =============================================  ===================================

Every kind of the catalog is registered when ``linear_layouts.layouts`` is imported (its descriptor
modules register on import).

>>> from linear_layouts.layouts import BlockedLayout
>>> kind = kind_of(BlockedLayout([1], [32], [4], [0]))
>>> kind.ttgir_name, kind.space.value, kind_named("ttg.blocked") is kind
('ttg.blocked', 'distributed', True)
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout

__all__ = ["Descriptor", "Space", "LayoutKind", "register", "unregister", "kind_of", "kind_named", "kinds"]


@runtime_checkable
class Descriptor(Protocol):
    """A layout descriptor: a frozen value whose ``to_linear(shape)`` is its ``LinearLayout`` on ``shape``."""

    def to_linear(self, shape: Sequence[int]) -> LinearLayout: ...


class Space(enum.Enum):
    """Where a kind's tensor lives: its LinearLayout's input dims."""

    DISTRIBUTED = "distributed"  #: registers: register, lane, warp, block
    SHARED = "shared"  #: shared memory: offset, block
    TENSOR_MEMORY = "tensor memory"  #: Blackwell's TMEM: row, col, block


@dataclass(frozen=True)
class LayoutKind:
    """One descriptor class and its text (module doc).

    ``parse_ttgir(body)`` builds the descriptor from the attribute's body as ``read_body(reader)`` reads
    it (None: a ``{key = value, ...}`` dictionary; ``ttgir_syntax`` has the others Triton prints), and
    ``format_ttgir(descriptor)`` prints the whole attribute. ``gluon_module`` is where Gluon keeps the class
    (``gl``, ``gl.amd``, ``gl.nvidia.blackwell``; None when Gluon has none: ``gluon_substitute(descriptor,
    shape)`` is then what Gluon writes instead). Gluon's text is the class called with the fields that are
    not their defaults, except those ``gluon_implied(name, value)`` says Gluon's default means, or the
    ``gluon_factory(descriptor)`` classmethod and arguments when it gives one. ``candidates(target,
    bitwidth, depth)`` yields descriptors ``recognize`` tries for a ``LinearLayout`` of the kind's space
    (the catalog's own searches live in ``recognize``); ``general``: the kind holds any layout of its space
    by its bases (``#ttg.linear``, ``#ttg.shared_linear``).
    """

    descriptor: type
    space: Space
    ttgir_name: str
    parse_ttgir: Callable[[Any], Any]
    format_ttgir: Callable[[Any], str]
    read_body: Callable[[Any], Any] | None = None
    gluon_module: str | None = "gl"
    gluon_substitute: Callable[[Any, Sequence[int] | None], Any] | None = None
    gluon_implied: Callable[[str, Any], bool] | None = None
    gluon_factory: Callable[[Any], tuple[str, tuple[Any, ...]] | None] | None = None
    rank: int = 0
    general: bool = False
    candidates: Callable[[LinearLayout, int | None, int], Iterable[Any]] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.descriptor, type):
            raise LayoutError(f"descriptor must be a class, got {type(self.descriptor).__name__}")
        if not isinstance(self.space, Space):
            raise LayoutError(f"space must be a Space, got {self.space!r}")
        dialect, _, mnemonic = self.ttgir_name.partition(".")
        if not dialect.isidentifier() or not mnemonic.isidentifier():
            raise LayoutError(f"ttgir_name must be 'dialect.mnemonic' (ttg.blocked), got {self.ttgir_name!r}")

    @property
    def name(self) -> str:
        """The class name, Gluon's and ours (``BlockedLayout``)."""
        return self.descriptor.__name__


_BY_TYPE: dict[type, LayoutKind] = {}
_BY_NAME: dict[str, LayoutKind] = {}


def register(kind: LayoutKind) -> LayoutKind:
    """Enter ``kind`` in the table (``LayoutError`` if its class or TTGIR name has a kind already);
    returns it, so a module can write ``KIND = register(LayoutKind(...))``."""
    if not isinstance(kind, LayoutKind):
        raise LayoutError(f"kind must be a LayoutKind, got {type(kind).__name__}")
    for table, key in ((_BY_TYPE, kind.descriptor), (_BY_NAME, kind.ttgir_name)):
        if key in table and table[key] is not kind:
            raise LayoutError(f"kind: {key if isinstance(key, str) else key.__name__} is registered already")
    _BY_TYPE[kind.descriptor] = kind
    _BY_NAME[kind.ttgir_name] = kind
    return kind


def unregister(kind: LayoutKind) -> None:
    """Remove ``kind`` (a no-op when it is not registered)."""
    if _BY_TYPE.get(kind.descriptor) is kind:
        del _BY_TYPE[kind.descriptor]
    if _BY_NAME.get(kind.ttgir_name) is kind:
        del _BY_NAME[kind.ttgir_name]


def kind_of(layout: Any) -> LayoutKind | None:
    """The kind of a descriptor (or of a descriptor class); None for anything else."""
    return _BY_TYPE.get(layout if isinstance(layout, type) else type(layout))


def kind_named(ttgir_name: str) -> LayoutKind | None:
    """The kind of a TTGIR attribute name (``"ttg.blocked"``, no ``#``); None when none is registered."""
    return _BY_NAME.get(ttgir_name)


def kinds(space: Space | None = None) -> tuple[LayoutKind, ...]:
    """The registered kinds (of ``space``), simplest first (``rank``, then the TTGIR name)."""
    found = [k for k in _BY_TYPE.values() if space is None or k.space is space]
    return tuple(sorted(found, key=lambda k: (k.rank, k.ttgir_name)))
