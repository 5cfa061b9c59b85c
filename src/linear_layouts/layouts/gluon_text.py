"""The Gluon (Triton 3.9) source text of a layout descriptor, without Triton: ``gluon_expression``.

``expressible`` gives the descriptor Gluon has a class for (a ``LinearLayout`` recognized first, an
``AMDRotatingSharedLayout`` as the ``SharedLinearLayout`` of its shape); ``triton_model.interop.to_gluon``
builds Gluon's object from the same descriptor.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import linear_layouts.layouts as catalog
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout
from linear_layouts.layouts.base import DistributedLayout, SharedLayout

__all__ = ["gluon_expression", "expressible"]


def expressible(layout: Any, shape: Sequence[int] | None) -> Any:
    """The catalog descriptor Gluon has a class for: a ``LinearLayout`` recognized, an
    ``AMDRotatingSharedLayout`` (no Gluon class) as the ``SharedLinearLayout`` of ``shape``."""
    if isinstance(layout, LinearLayout):
        from linear_layouts.layouts.recognize import recognize

        layout = recognize(layout)
    name = type(layout).__name__
    if not dataclasses.is_dataclass(layout) or getattr(catalog, name, None) is not type(layout):
        raise LayoutError(f"layout must be a linear_layouts.catalog layout or a LinearLayout, got {name}")
    if name == "AMDRotatingSharedLayout":
        if shape is None:
            raise LayoutError("shape is required: Gluon has no AMDRotatingSharedLayout; it becomes a SharedLinearLayout")
        linear = layout.to_linear(shape)
        layout = catalog.SharedLinearLayout(linear.bases["offset"], linear.bases.get("block", []))
    return layout


#: Where Gluon 3.9 keeps the classes that are not in ``triton.experimental.gluon.language`` itself.
_GLUON_SUBMODULES = {"AMDMFMALayout": "gl.amd.", "AMDWMMALayout": "gl.amd.",
                     "TensorMemoryLayout": "gl.nvidia.blackwell.", "TensorMemoryScalesLayout": "gl.nvidia.blackwell."}


def gluon_expression(layout: Any, shape: Sequence[int] | None = None) -> str:
    """The Gluon (Triton 3.9) source that builds ``layout``: the class under ``gl`` (``gl.amd``,
    ``gl.nvidia.blackwell``), required fields by keyword, optional fields only when not their default.
    A ``LinearLayout`` is recognized first; ``AMDRotatingSharedLayout`` (no Gluon class) becomes the
    ``SharedLinearLayout`` of ``shape``. No Triton needed.

    >>> from linear_layouts.layouts import NVMMASharedLayout
    >>> gluon_expression(NVMMASharedLayout(128, 16))
    'gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16)'
    """
    layout = expressible(layout, shape)
    name = type(layout).__name__

    def text(value: Any) -> str:
        if isinstance(value, (DistributedLayout, SharedLayout)) or dataclasses.is_dataclass(value):
            return gluon_expression(value)
        if isinstance(value, (tuple, list)):
            return "[" + ", ".join(text(v) for v in value) + "]"
        return repr(value)

    if name == "PaddedSharedLayout" and layout.identity_order() is not None:
        return (f"gl.PaddedSharedLayout.with_identity_for({text(layout.interval_padding_pairs)}, "
                f"{text(layout.shape)}, {text(layout.identity_order())})")
    arguments = []
    for f in dataclasses.fields(layout):
        value = getattr(layout, f.name)
        has_default = f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
        default = f.default if f.default is not dataclasses.MISSING else (
            f.default_factory() if f.default_factory is not dataclasses.MISSING else None)
        if has_default and (value == default or value in (None, ()) and not default):
            continue
        if name == "AMDMFMALayout" and f.name in ("element_bitwidth", "tiles_per_warp") and \
                (value == 32 or value is not None and all(t == 1 for t in value)):
            continue  # Gluon's defaults (None) mean these values
        arguments.append(f"{f.name}={tuple(value) if f.name == 'block' else text(value)}")
    return f"{_GLUON_SUBMODULES.get(name, 'gl.')}{name}({', '.join(arguments)})"
