"""A standalone HTML page for one layout: its SVG picture(s), Triton's text view, and its bases."""

from __future__ import annotations

from html import escape

from linear_layouts.core.arguments import checked
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.element_type import DTypeLike
from linear_layouts.core.layout import LinearLayout
from linear_layouts.core.limits import MAX_PICTURE_ELEMENTS
from linear_layouts.present.viz.svg import distributed_svg, matrix_svg, shared_svg
from linear_layouts.present.viz.text import is_shared_layout, layout_view

__all__ = ["layout_html"]

_STYLE = """body{font-family:DejaVu Sans,Helvetica,Arial,sans-serif;margin:18px;color:#1d1d1f}
h1{font-size:20px;color:#1f3b73}h2{font-size:15px;color:#1f3b73;margin-top:22px}
pre{background:#f6f8fc;padding:8px;font-size:11px;overflow:auto;max-height:420px}
.figure{overflow:auto;border:1px solid #ddd;padding:4px;max-width:100%}"""


@checked
def layout_html(layout: LinearLayout, *, title: str = "layout", dtype: DTypeLike = 32,
                max_elements: int = MAX_PICTURE_ELEMENTS) -> str:
    """One self-contained page: picture (SVG; for shared layouts also the memory view), the F2 matrix,
    Triton's ``get_distributed_view`` / ``get_shared_view`` text, and the bases as JSON. ``dtype``: the
    element type of a shared layout (for the banks). Layouts of more than ``max_elements`` elements are
    refused (``limits.MAX_PICTURE_ELEMENTS``).

    >>> "<svg" in layout_html(LinearLayout({"lane": [[1]]}, ["dim0"]))
    True
    """
    if not isinstance(title, str):
        raise LayoutError(f"title: expected a string, got {type(title).__name__}")
    n = max_elements
    if is_shared_layout(layout):
        pictures = [("tensor view, coloured by bank", shared_svg(layout, dtype, title=title, max_elements=n)),
                    ("memory view: 128-byte rows × banks",
                     shared_svg(layout, dtype, view="physical", title=f"{title} (memory)", max_elements=n))]
    else:
        pictures = [("who holds each element", distributed_svg(layout, title=title, max_elements=n))]
    parts = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{escape(title)}</title>"
             f"<style>{_STYLE}</style></head><body><h1>{escape(title)}</h1>"]
    for caption, svg in pictures:
        parts.append(f"<h2>{escape(caption)}</h2><div class=\"figure\">{svg}</div>")
    parts.append(f"<h2>F2 matrix</h2><div class=\"figure\">{matrix_svg(layout, title=title, max_elements=n)}</div>")
    parts.append(f"<h2>Triton's text view</h2><pre>{escape(layout_view(layout, max_elements=n))}</pre>")
    spec = layout.to_json()
    parts.append(f"<h2>Bases (paste into <code>linear-layouts show</code>)</h2><pre>{escape(spec)}</pre>")
    parts.append("</body></html>")
    return "\n".join(parts)
