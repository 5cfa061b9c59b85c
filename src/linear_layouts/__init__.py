"""linear_layouts: tensor layouts as linear maps over F2, bit-exact with Triton's LinearLayout.

The algebra (``LinearLayout``, ``ColumnAction``, ``divide_left`` / ``divide_right``) and the catalog of
hardware layouts (Gluon-named descriptors such as ``BlockedLayout`` with ``to_linear(shape)``) are
available at the top level. Modules that moved keep their old import paths (``_moved``).
"""

from linear_layouts import _moved

_moved.install()

from linear_layouts.layouts import *  # noqa: F401,F403 - the catalog is part of the public surface
from linear_layouts.layouts import __all__ as _catalog_all
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import ColumnAction, LinearLayout, divide_left, divide_right

__all__ = ["LayoutError", "LinearLayout", "ColumnAction", "divide_left", "divide_right", *_catalog_all]
__version__ = "0.1.0"

_moved.register_loaded()
