"""The Gluon (Triton 3.9) source text of a layout descriptor, without Triton: ``gluon_expression``.

``expressible`` gives the descriptor Gluon has a class for (a ``LinearLayout`` recognized first, an
``AMDRotatingSharedLayout`` as the ``SharedLinearLayout`` of its shape); ``triton_model.interop.to_gluon``
builds Gluon's object from the same descriptor. Where Gluon keeps each class, and the few fields it writes
differently, are the kind's (``registry.LayoutKind``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout
from linear_layouts.layouts.base import DistributedLayout, SharedLayout
from linear_layouts.layouts.registry import Descriptor, kind_of

__all__ = ["gluon_expression", "expressible"]


def expressible(layout: Descriptor | LinearLayout, shape: Sequence[int] | None) -> Descriptor:
    """The catalog descriptor Gluon has a class for: a ``LinearLayout`` recognized, a kind without a Gluon
    class (``AMDRotatingSharedLayout``) as what its kind writes instead (the ``SharedLinearLayout`` of
    ``shape``)."""
    if isinstance(layout, LinearLayout):
        from linear_layouts.layouts.recognize import recognize

        layout = recognize(layout)
    kind = kind_of(layout)
    if kind is None or isinstance(layout, type) or not dataclasses.is_dataclass(layout):
        raise LayoutError(f"layout must be a linear_layouts.catalog layout or a LinearLayout, got {type(layout).__name__}")
    if kind.gluon_module is None and kind.gluon_substitute is not None:
        layout = kind.gluon_substitute(layout, shape)
    return layout


def gluon_expression(layout: Descriptor | LinearLayout, shape: Sequence[int] | None = None) -> str:
    """The Gluon (Triton 3.9) source that builds ``layout``: the class under its kind's module (``gl``,
    ``gl.amd``, ``gl.nvidia.blackwell``), required fields by keyword, optional fields only when not their
    default (nor a value the kind says Gluon's default means), or the kind's classmethod where it has one.
    A ``LinearLayout`` is recognized first; ``AMDRotatingSharedLayout`` (no Gluon class) becomes the
    ``SharedLinearLayout`` of ``shape``. No Triton needed.

    >>> from linear_layouts.layouts import NVMMASharedLayout
    >>> gluon_expression(NVMMASharedLayout(128, 16))
    'gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16)'
    """
    layout = expressible(layout, shape)
    kind = kind_of(layout)
    if kind is None or kind.gluon_module is None:
        raise LayoutError(f"layout: Gluon has no class for {type(layout).__name__}")

    def text(value: Any) -> str:
        if isinstance(value, (DistributedLayout, SharedLayout)) or dataclasses.is_dataclass(value):
            return gluon_expression(value)
        if isinstance(value, (tuple, list)):
            return "[" + ", ".join(text(v) for v in value) + "]"
        return repr(value)

    callee = f"{kind.gluon_module}.{kind.name}"
    factory = kind.gluon_factory(layout) if kind.gluon_factory is not None else None
    if factory is not None:
        method, values = factory
        return f"{callee}.{method}({', '.join(text(v) for v in values)})"
    arguments = []
    for f in dataclasses.fields(layout):
        value = getattr(layout, f.name)
        has_default = f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
        default = f.default if f.default is not dataclasses.MISSING else (
            f.default_factory() if f.default_factory is not dataclasses.MISSING else None)
        if has_default and (value == default or value in (None, ()) and not default):
            continue
        if kind.gluon_implied is not None and kind.gluon_implied(f.name, value):
            continue
        arguments.append(f"{f.name}={tuple(value) if f.name == 'block' else text(value)}")
    return f"{callee}({', '.join(arguments)})"
