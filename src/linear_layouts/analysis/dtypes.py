"""Compatibility name: the element-type parser lives in :mod:`linear_layouts.core.element_type`.

>>> bitwidth("bf16")
16
"""

from linear_layouts.core.element_type import SUPPORTED_BITWIDTHS, bitwidth

__all__ = ["bitwidth", "SUPPORTED_BITWIDTHS"]
