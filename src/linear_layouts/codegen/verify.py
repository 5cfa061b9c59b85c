"""Plan, generate, run and check a conversion on the GPU in one call.

``verify_conversion(src, dst, dtype, shape)`` asks :func:`linear_layouts.codegen.plan.conversion_kernel` for
the kernel of ``plan_conversion(src, dst, dtype)`` and runs it through
:func:`linear_layouts.codegen.runtime.check_kernel`: load(src) -> convert -> store(dst) over a few tiles of
random bits (plus round trips), every output element compared with its input.

Example (on a GPU)::

    result = verify_conversion(src, dst, "fp16", [64, 64])
    assert result.ok, result
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from linear_layouts.core.arguments import checked
from linear_layouts.codegen.plan import conversion_kernel
from linear_layouts.codegen.runtime import check_kernel
from linear_layouts.core.element_type import DTypeLike
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout
from linear_layouts.target import Target

__all__ = ["Verification", "verify_conversion"]


@dataclass(frozen=True)
class Verification:
    """Outcome of ``verify_conversion``: ``wrong`` elements out of ``checked``."""

    kernel: str
    checked: int
    wrong: int

    @property
    def ok(self) -> bool:
        """No element went astray."""
        return self.wrong == 0


@checked
def verify_conversion(
    src: LinearLayout,
    dst: LinearLayout,
    dtype: DTypeLike,
    shape: Sequence[int],
    *,
    tiles: int = 4,
    iterations: int = 1,
    seed: int = 0,
    target: Target | None = None,
) -> Verification:
    """Plan ``src -> dst`` for ``dtype`` elements, generate its kernel, run load(src) -> convert ->
    store(dst) on the GPU over ``tiles`` tiles (plus ``iterations`` round trips) and check every element.

    Requires: ``shape`` is the layouts' tensor shape (LayoutError otherwise, before any GPU work).
    """
    sizes = [src.out_dim_size(d) for d in src.out_dim_names]
    if list(shape) != sizes:
        raise LayoutError(f"shape: {list(shape)} differs from the layouts' tensor shape {sizes}")
    kernel = conversion_kernel(src, dst, dtype, target=target)
    checked = tiles * kernel.tile_elements
    return Verification(kernel.name, checked, check_kernel(kernel, tiles, iterations, seed))
