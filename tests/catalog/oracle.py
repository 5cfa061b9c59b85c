"""Oracle glue for the catalog tests: Triton's unit-test JSON and triton 3.9's Gluon ``to_linear_layout``.

- ``unittests_dir()`` / ``load_conversions()``: the JSON of Triton's unit tests, vendored in ``tests/data/triton-unittests``.
- ``layout_of_json(expected)``: a ``LinearLayout`` from the JSON encoding.
- ``cga_of_json(params)``: 3.9 ``cga_layout`` bases from the JSON's classic CGA parameters.
- ``gluon_class(name)``: Gluon's class of that name (``gl``, ``gl.amd``, ``gl.nvidia.blackwell``).
- ``oracle_linear(gluon_layout, shape)``: triton 3.9's answer as our ``LinearLayout``.
- ``same_modulo_broadcast_registers(a, b)``: equality after removing zero register bases on both sides.

Import from a test module of this folder with ``from .oracle import ...``.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

import pytest

from linear_layouts import LinearLayout
from linear_layouts.layouts.base import cga_layout_from_split_params, remove_broadcast_registers


# ----------------------------------------------------------------------------- JSON unit tests
def unittests_dir() -> Path:
    """``tests/data/triton-unittests``: Triton's unit-test expectations, vendored in the repository."""
    return Path(__file__).resolve().parents[1] / "data" / "triton-unittests"


@lru_cache(maxsize=None)
def _load(name: str) -> dict:
    return json.loads((unittests_dir() / name).read_text())


def load_conversions() -> dict:
    """``conversions.json`` as a dict (``cases``, ``properties``)."""
    return _load("conversions.json")


def conversion_cases(*kinds: str) -> list[dict]:
    """The ``conversions.json`` cases of the given ``layout_kind``s."""
    return [case for case in _load("conversions.json")["cases"] if case["layout_kind"] in kinds]


def layout_of_json(encoded: dict) -> LinearLayout:
    """The ``LinearLayout`` of the JSON encoding ``{bases: [[in, vectors]..], out_dims: [[out, size]..]}``."""
    bases = [(name, [list(v) for v in vectors]) for name, vectors in encoded["bases"]]
    out_dims = [(name, int(size)) for name, size in encoded["out_dims"]]
    return LinearLayout(bases, out_dims, require_surjective=False)


def cga_of_json(params: dict) -> tuple[tuple[int, ...], ...]:
    """3.9 ``cga_layout`` bases of a JSON parameter set (``CTAsPerCGA/CTASplitNum/CTAOrder``, or ``CGA``)."""
    cga = params.get("CGA", params)
    if "CGALinearLayout" in cga:
        layout = layout_of_json(cga["CGALinearLayout"])
        return tuple(tuple(v) for v in layout.bases.get("block", []))
    return cga_layout_from_split_params(cga["CTAsPerCGA"], cga["CTASplitNum"], cga["CTAOrder"])


# ----------------------------------------------------------------------------- Triton 3.9 oracle
def gluon_class(name: str) -> Any:
    """Gluon's layout class ``name`` from ``gl``, ``gl.amd`` or ``gl.nvidia.blackwell`` (skip without triton)."""
    pytest.importorskip("triton")
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.language import amd
    from triton.experimental.gluon.language.nvidia import blackwell

    for module in (gl, amd, blackwell):
        if hasattr(module, name):
            return getattr(module, name)
    raise LookupError(f"Gluon has no layout class {name}")


@lru_cache(maxsize=1)
def _builder() -> Any:
    from triton._C.libtriton import gluon_ir, ir

    context = ir.context()
    ir.load_dialects(context)
    return context, gluon_ir.GluonOpBuilder(context)


def oracle_raw(gluon_layout: Any, shape: Sequence[int]) -> Any:
    """Triton 3.9's ``GluonOpBuilder.to_linear_layout`` for a Gluon layout object (its Python result)."""
    pytest.importorskip("triton")
    _, builder = _builder()
    return builder.to_linear_layout(gluon_layout._to_ir(builder), list(shape))


def linear_of_triton_result(result: Any) -> LinearLayout:
    """Our ``LinearLayout`` of a Gluon ``DistributedLinearLayout`` / ``SharedLinearLayout`` /
    ``_TensorMemoryLinearLayout`` returned by ``to_linear_layout``: its bases, and out dims ``dim0, dim1, ...``
    of the sizes of Triton's own ``result.shape``, which need not be the shape asked for (a tensor-memory
    layout of ``blockN`` columns split over 2 CTAs along dim1 on a tensor of 1 column is Triton's 2 columns:
    ``to_linear_layout(.., [64, 1]).shape == [64, 2]``)."""
    out_dims = [(f"dim{i}", int(s)) for i, s in enumerate(result.shape)]
    kind = type(result).__name__
    if kind == "DistributedLinearLayout":
        bases = [("register", result.reg_bases), ("lane", result.lane_bases),
                 ("warp", result.warp_bases), ("block", result.block_bases)]
    elif kind == "SharedLinearLayout":
        bases = [("offset", result.offset_bases), ("block", result.block_bases)]
    elif kind == "_TensorMemoryLinearLayout":
        bases = [("row", result.rows), ("col", result.cols)]
    else:  # pragma: no cover - a new Gluon kind
        raise TypeError(f"unknown to_linear_layout result {kind}")
    bases = [(name, [list(map(int, v)) for v in vectors]) for name, vectors in bases]
    return LinearLayout(bases, out_dims, require_surjective=False)


def oracle_linear(gluon_layout: Any, shape: Sequence[int]) -> LinearLayout:
    """Triton 3.9's layout for ``gluon_layout`` asked for ``shape``, as our ``LinearLayout`` (out dims of the
    sizes Triton's result states: :func:`linear_of_triton_result`)."""
    return linear_of_triton_result(oracle_raw(gluon_layout, shape))


def same_modulo_broadcast_registers(ours: LinearLayout, theirs: LinearLayout) -> bool:
    """``ours == theirs`` after dropping the zero register bases of both (3.9 drops them for blocked)."""
    return remove_broadcast_registers(ours) == remove_broadcast_registers(theirs)


# ----------------------------------------------------------------------------- JSON params -> catalog
def catalog_of_json(kind: str, params: dict, builders: dict | None = None) -> Any:
    """Our catalog object for a ``conversions.json`` ``(layout_kind, params)``.

    Handles ``blocked``, ``nvidia_mma``, ``dot_operand`` and ``slice`` (parents recursively); other kinds
    come from ``builders`` (kind -> function(params, builders) -> object), else ``NotImplementedError``.
    """
    from linear_layouts.layouts.blocked import BlockedLayout
    from linear_layouts.layouts.dot_operand import DotOperandLayout
    from linear_layouts.layouts.nvmma import NVMMADistributedLayout
    from linear_layouts.layouts.slice import SliceLayout

    builders = builders or {}
    if kind in builders:
        return builders[kind](params, builders)
    if kind == "blocked":
        return BlockedLayout(params["sizePerThread"], params["threadsPerWarp"], params["warpsPerCTA"],
                             params["order"], cga_of_json(params))
    if kind == "nvidia_mma":
        return NVMMADistributedLayout([params["versionMajor"], params["versionMinor"]], params["warpsPerCTA"],
                                      params["instrShape"], cga_of_json(params))
    if kind == "dot_operand":
        parent = catalog_of_json(params["parent"]["kind"], params["parent"]["params"], builders)
        return DotOperandLayout(params["opIdx"], parent, params["kWidth"])
    if kind == "slice":
        parent = catalog_of_json(params["parent"]["kind"], params["parent"]["params"], builders)
        return SliceLayout(params["dim"], parent)
    raise NotImplementedError(kind)


def json_parent_kinds(case_params: dict) -> set[str]:
    """Every layout kind named in a (nested) JSON parameter set."""
    kinds = set()
    parent = case_params.get("parent")
    while parent is not None:
        kinds.add(parent["kind"])
        parent = parent["params"].get("parent")
    return kinds


# ----------------------------------------------------------------------------- (name, kwargs) -> objects
def _build(params: Any, lookup: Any) -> Any:
    if isinstance(params, tuple) and len(params) == 2 and isinstance(params[0], str) and isinstance(params[1], dict):
        name, kwargs = params
        return lookup(name)(**{k: _build(v, lookup) for k, v in kwargs.items()})
    return params


def build_ours(params: tuple[str, dict]) -> Any:
    """Our catalog object for ``(class_name, kwargs)`` (kwargs may nest such pairs, e.g. ``parent``)."""
    import linear_layouts.layouts as catalog

    return _build(params, lambda name: getattr(catalog, name))


def build_gluon(params: tuple[str, dict]) -> Any:
    """Gluon's object for the same ``(class_name, kwargs)``."""
    return _build(params, gluon_class)
