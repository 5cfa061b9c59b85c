"""Interoperability with Triton (optional extra ``linear_layouts[triton]``).

- ``to_gluon(layout)`` / ``from_gluon(gluon_layout)``: our catalog objects (or any ``LinearLayout``,
  recognized first) <-> Gluon's layout objects
  (``triton.experimental.gluon.language``, its ``amd`` and ``nvidia.blackwell`` submodules), for Triton
  3.9 and 3.6 (``cga_layout`` bases; 3.6's ``PaddedSharedLayout`` takes absolute ``block_bases``) and older
  Gluon (``ctas_per_cga`` / ``cta_split_num`` / ``cta_order``).
  ``AMDRotatingSharedLayout`` has no Gluon class: ``to_gluon(layout, shape)`` returns the equivalent
  ``SharedLinearLayout`` of that shape.
- ``gluon_expression(layout)``: the Gluon (3.9) Python source that builds a catalog descriptor (or any
  ``LinearLayout``, recognized first), as text; Triton is not needed.
- ``to_triton_linear_layout(ll)`` / ``from_triton_linear_layout(tll)``: our ``LinearLayout`` <-> Triton's
  C++ ``LinearLayout`` bound to Python (``triton._C.libtriton.linear_layout.LinearLayout``).
- ``triton_bank_conflicts(shared, distributed, bitwidth)``: Triton's own bank-conflict estimate
  (Gluon's ``get_shared_bank_conflicts``), to compare with ``analysis.banks``.

Triton is imported lazily; without it every function raises ``LayoutError``.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Sequence
from typing import Any

import linear_layouts.layouts as catalog
from linear_layouts.layouts.base import (
    DistributedLayout,
    SharedLayout,
    cga_layout_from_split_params,
    split_params_from_cga_layout,
)
from linear_layouts.core.element_type import element_type
from linear_layouts.core.errors import LayoutError, not_a_layout
from linear_layouts.core.layout import LinearLayout
from linear_layouts.layouts.gluon_text import expressible, gluon_expression

__all__ = [
    "to_gluon", "from_gluon", "gluon_expression", "to_triton_linear_layout", "from_triton_linear_layout", "triton_version",
    "triton_bank_conflicts",
]

_CGA_SPLIT_FIELDS = ("ctas_per_cga", "cta_split_num", "cta_order")


def _gluon_modules() -> list[Any]:
    try:
        from triton.experimental.gluon import language as gl
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise LayoutError(
            f"linear_layouts.triton needs triton >= 3.6 with Gluon (pip install 'linear_layouts[triton]'): {error}"
        ) from None
    modules = [gl]
    for name in ("amd", "nvidia.blackwell"):
        try:
            modules.append(__import__(f"triton.experimental.gluon.language.{name}", fromlist=["_"]))
        except ImportError:  # pragma: no cover - older Triton
            pass
    return modules


def triton_version() -> str:
    """The installed Triton's version string (``LayoutError`` when Triton is missing)."""
    _gluon_modules()
    import triton

    return triton.__version__


def _gluon_class(name: str) -> Any:
    for module in _gluon_modules():
        cls = getattr(module, name, None)
        if inspect.isclass(cls):
            return cls
    raise LayoutError(f"layout: the installed Triton's Gluon has no class {name}")


def _field_names(cls: Any) -> list[str]:
    if dataclasses.is_dataclass(cls):
        return [f.name for f in dataclasses.fields(cls)]
    return list(inspect.signature(cls).parameters)


def _plain(value: Any) -> Any:
    """Tuples -> lists (recursively), as Gluon stores its parameters."""
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


# --------------------------------------------------------------------------------------------------
# catalog -> Gluon
# --------------------------------------------------------------------------------------------------


def to_gluon(layout: Any, shape: Sequence[int] | None = None) -> Any:
    """Gluon's layout object equal to our catalog ``layout`` (same class name and parameters).

    A ``LinearLayout`` is first recognized (``catalog.recognize``): the simplest Gluon class that produces
    it, else ``DistributedLinearLayout`` / ``SharedLinearLayout`` with its bases. ``shape`` is needed only
    for ``AMDRotatingSharedLayout`` (converted to a ``SharedLinearLayout``).

    >>> from linear_layouts.layouts import BlockedLayout
    >>> to_gluon(BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0]))  # doctest: +REQUIRES_TRITON
    BlockedLayout(size_per_thread=[1, 4], threads_per_warp=[4, 8], warps_per_cta=[4, 1], order=[1, 0], cga_layout=[])
    """
    layout = expressible(layout, shape)
    name = type(layout).__name__
    cls = _gluon_class(name)
    ours = {f.name: getattr(layout, f.name) for f in dataclasses.fields(layout)}
    gluon_fields = _field_names(cls)
    kwargs: dict[str, Any] = {}
    for field_name in gluon_fields:
        if field_name in ours:
            value = ours[field_name]
            if isinstance(value, (DistributedLayout, SharedLayout)):
                value = to_gluon(value)
            elif field_name == "cga_layout":
                value = [list(v) for v in value]
            elif field_name == "block" and name == "TensorMemoryLayout":
                value = tuple(value)
            else:
                value = _plain(value)
            kwargs[field_name] = value
    if "cga_layout" in ours and "cga_layout" not in gluon_fields:
        if "block_bases" in gluon_fields and name == "PaddedSharedLayout":  # Triton 3.6: absolute block bases
            kwargs["block_bases"] = layout.to_linear().bases["block"]
        elif all(f in gluon_fields for f in _CGA_SPLIT_FIELDS):  # older Gluon: split parameters
            if ours["cga_layout"]:
                ctas, split, order = split_params_from_cga_layout(ours["cga_layout"], layout.rank)
                kwargs.update(ctas_per_cga=list(ctas), cta_split_num=list(split), cta_order=list(order))
        elif "cta_split_num" in gluon_fields:  # older tensor-memory layouts: a split per dim
            ctas, split, _ = split_params_from_cga_layout(ours["cga_layout"], layout.rank)
            if ctas != split:
                raise LayoutError(f"cga_layout: the installed Gluon's {name} cannot broadcast over CTAs")
            kwargs["cta_split_num"] = tuple(split)
        elif ours["cga_layout"]:
            raise LayoutError(f"cga_layout: the installed Gluon's {name} takes no CGA layout")
    if "unpacked" in gluon_fields and "col_stride" in ours:  # older TensorMemoryLayout
        kwargs["unpacked"] = ours["col_stride"] != 1
    missing = [f for f in ours if f not in gluon_fields and f != "cga_layout" and ours[f] not in (None, (), False)]
    try:
        return cls(**kwargs)
    except (TypeError, AssertionError, ValueError) as error:
        raise LayoutError(
            f"layout: cannot build Gluon's {name} from {kwargs} (fields it lacks: {missing}): {error}"
        ) from None


# --------------------------------------------------------------------------------------------------
# Gluon -> catalog
# --------------------------------------------------------------------------------------------------


def _rank_of_gluon(gluon_layout: Any, values: dict[str, Any]) -> int:
    rank = getattr(gluon_layout, "rank", None)
    if isinstance(rank, int):
        return rank
    for key in ("order", "warps_per_cta", "size_per_thread", "shape"):
        if values.get(key):
            return len(values[key])
    return 2


def from_gluon(gluon_layout: Any) -> Any:
    """Our catalog object equal to a Gluon layout object (Triton 3.9 or 3.6).

    >>> from_gluon(to_gluon(catalog.SliceLayout(0, catalog.BlockedLayout([1, 1], [4, 8], [1, 1], [1, 0]))))  # doctest: +REQUIRES_TRITON
    SliceLayout(dim=0, parent=BlockedLayout(...))
    """
    name = type(gluon_layout).__name__
    ours_cls = getattr(catalog, name, None)
    if ours_cls is None or not dataclasses.is_dataclass(ours_cls) or not dataclasses.is_dataclass(gluon_layout):
        raise LayoutError(f"gluon_layout: no catalog class for Gluon's {name}")
    values = {f.name: getattr(gluon_layout, f.name) for f in dataclasses.fields(gluon_layout)}
    kwargs: dict[str, Any] = {}
    our_fields = [f.name for f in dataclasses.fields(ours_cls)]
    for field_name in our_fields:
        if field_name in values:
            value = values[field_name]
            if dataclasses.is_dataclass(value) and not isinstance(value, type):
                value = from_gluon(value)
            elif hasattr(value, "value") and not isinstance(value, (list, tuple, int)):
                value = value.value  # constexpr
            if field_name == "tiles_per_warp" and value is not None and all(t == 1 for t in value):
                value = None  # Triton's parser fills unit tiles per instrShape entry (3), not per dim
            kwargs[field_name] = value
    if "cga_layout" in our_fields and "cga_layout" not in values and any(f in values for f in _CGA_SPLIT_FIELDS):
        rank = _rank_of_gluon(gluon_layout, values)
        split = values.get("cta_split_num") or [1] * rank
        ctas = values.get("ctas_per_cga") or split
        order = values.get("cta_order") or list(reversed(range(rank)))
        kwargs["cga_layout"] = cga_layout_from_split_params(ctas, split, order)
    if name == "PaddedSharedLayout" and "block_bases" in values and "cga_layout" not in values:  # Triton 3.6
        tile = [1] * len(values["shape"])
        for vector in values["offset_bases"]:
            for d, x in enumerate(vector):
                tile[d] = max(tile[d], 2 * x)
        kwargs["cga_layout"] = [[x // t if x else 0 for x, t in zip(v, tile)] for v in values["block_bases"]]
    if "unpacked" in values and "col_stride" in our_fields:  # older TensorMemoryLayout
        if values["unpacked"]:
            raise LayoutError("gluon_layout: an unpacked TensorMemoryLayout does not say its col_stride (32 / bitwidth)")
        kwargs["col_stride"] = 1
    try:
        return ours_cls(**kwargs)
    except TypeError as error:
        raise LayoutError(f"gluon_layout: cannot build our {name} from {kwargs}: {error}") from None


# --------------------------------------------------------------------------------------------------
# LinearLayout <-> Triton's C++ LinearLayout
# --------------------------------------------------------------------------------------------------


def _triton_ll_class() -> Any:
    try:
        from triton._C.libtriton.linear_layout import LinearLayout as TritonLinearLayout
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise LayoutError(f"linear_layouts.triton needs triton (pip install 'linear_layouts[triton]'): {error}") from None
    return TritonLinearLayout


def to_triton_linear_layout(layout: LinearLayout) -> Any:
    """Triton's C++ ``LinearLayout`` with the same in dims, bases, out dims and sizes.

    >>> to_triton_linear_layout(LinearLayout.identity_1d(4, "lane", "dim0")).bases  # doctest: +REQUIRES_TRITON
    [('lane', [[1], [2]])]
    """
    if not isinstance(layout, LinearLayout):
        raise not_a_layout(layout, "layout")
    cls = _triton_ll_class()
    bases = [(name, [list(v) for v in vectors]) for name, vectors in layout.bases.items()]
    names = list(layout.out_dim_names)
    sizes = [layout.out_dim_size(n) for n in names]
    try:
        return cls.from_bases(bases, names, sizes, False)
    except TypeError:  # pragma: no cover - an older binding without explicit sizes
        if not layout.is_surjective():
            raise LayoutError("layout: this Triton binding only builds surjective layouts") from None
        return cls.from_bases(bases, names)


def from_triton_linear_layout(triton_layout: Any) -> LinearLayout:
    """Our ``LinearLayout`` of a Triton C++ ``LinearLayout`` (same dims, bases and out sizes)."""
    try:
        bases = [(name, [list(map(int, v)) for v in vectors]) for name, vectors in triton_layout.bases]
        out_dims = [(name, int(size)) for name, size in triton_layout.out_dims]
    except (AttributeError, TypeError, ValueError):
        raise LayoutError(
            f"triton_layout must be a triton._C.libtriton.linear_layout.LinearLayout, got {type(triton_layout).__name__}"
        ) from None
    return LinearLayout(bases, out_dims, require_surjective=False)


# --------------------------------------------------------------------------------------------------
# Triton's bank-conflict estimate
# --------------------------------------------------------------------------------------------------

_BUILDER: list[Any] = []


def _gluon_builder() -> Any:
    """A Gluon op builder with an insertion block (3.9's get_shared_bank_conflicts needs one)."""
    if not _BUILDER:
        try:
            from triton._C.libtriton import gluon_ir, ir
        except ImportError as error:  # pragma: no cover - depends on the environment
            raise LayoutError(f"triton_bank_conflicts needs triton: {error}") from None
        ctx = ir.context()
        ir.load_dialects(ctx)
        b = gluon_ir.GluonOpBuilder(ctx)
        mod = b.create_module()
        fn = b.get_or_insert_function(mod, "bank_oracle", b.get_function_ty([], []), "public", False)
        mod.push_back(fn)
        b.set_insertion_point_to_start(fn.add_entry_block())
        _BUILDER.extend([ctx, mod, b])
    return _BUILDER[2]


def triton_bank_conflicts(shared: LinearLayout, distributed: LinearLayout, dtype: Any) -> int:
    """Triton's estimate of the extra wavefronts per phase when ``distributed`` (register, lane, warp ->
    tensor) reads or writes ``shared`` (offset -> tensor): Gluon's ``get_shared_bank_conflicts``, i.e.
    C++ ``bankConflictsMemDesc``. Compare with ``analysis.banks.bank_conflicts``: they differ below 4
    bytes per lane and on paired 8/16-byte accesses, where ours is the hardware's count (ncu:
    benchmarks/results/bank_conflicts_vs_triton.md).

    Triton 3.9 aborts the process when the bank row times the vector exceeds the tensor, and Gluon's
    ``SharedLinearLayout`` asserts it has an offset basis (a one-element tensor has none); those inputs
    raise ``LayoutError`` here instead.
    """
    from linear_layouts.analysis.banks import shared_access

    w = element_type(dtype).bits
    access = shared_access(shared, distributed, w)
    total = shared.in_dim_size("offset")
    if total == 1:
        raise LayoutError("shared: a one-element layout has no offset basis, which Gluon's SharedLinearLayout needs")
    if min(1024 // (access.vector_elements * w), total) * access.vector_elements > total:
        raise LayoutError("shared: Triton 3.9 aborts when one 128-byte bank row of vectors exceeds the tensor")
    from triton.experimental.gluon import language as gl

    b = _gluon_builder()
    shape = list(distributed.out_dims.values())
    bases = distributed.bases
    reg = gl.DistributedLinearLayout(
        reg_bases=bases.get("register", []), lane_bases=bases["lane"], warp_bases=bases.get("warp", []),
        block_bases=[], shape=shape,
    )
    smem = gl.SharedLinearLayout(offset_bases=shared.transpose_outs(list(distributed.out_dims)).bases["offset"])
    return int(b.get_shared_bank_conflicts(reg._to_ir(b), smem._to_ir(b), shape, w))
