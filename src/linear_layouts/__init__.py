"""linear_layouts: tensor layouts as linear maps over F2, bit-exact with Triton's LinearLayout."""

from linear_layouts.errors import LayoutError
from linear_layouts.layout import ColumnAction, LinearLayout, divide_left, divide_right

__all__ = ["LayoutError", "LinearLayout", "ColumnAction", "divide_left", "divide_right"]
__version__ = "0.1.0"
