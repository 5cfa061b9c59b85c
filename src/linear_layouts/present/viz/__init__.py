"""Pictures of layouts: Triton-style text views, SVG, PNG (NumPy and zlib only), HTML, the explorer page.

>>> from linear_layouts import LinearLayout
>>> from linear_layouts.present.viz import distributed_view
>>> distributed_view(LinearLayout({"lane": [[1]]}, ["dim0"]))
'[T0:0, T1:0]\\n'
"""

from linear_layouts.present.viz.svg import bank_hits_svg, distributed_svg, matrix_svg, shared_svg
from linear_layouts.present.viz.text import distributed_view, layout_view, shared_view

__all__ = ["distributed_view", "shared_view", "layout_view", "distributed_svg", "shared_svg", "bank_hits_svg",
           "matrix_svg"]
