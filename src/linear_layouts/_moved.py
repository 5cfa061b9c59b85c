"""Old import paths of moved modules: ``MOVED`` maps each old dotted name to the module's home now.

``install()`` (called by ``linear_layouts/__init__``) puts a finder first on ``sys.meta_path`` that
answers an old name with the very module object of its new name -- no second copy, so ``isinstance``,
module-level caches and monkeypatching see one module whichever name imported it:

>>> import linear_layouts.layout as old
>>> import linear_layouts.core.layout as new
>>> old is new and old.LinearLayout is new.LinearLayout
True

This module imports nothing from the package (the names are strings).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from types import ModuleType

#: old dotted name -> new dotted name
MOVED: dict[str, str] = {
    # core/
    "linear_layouts.f2": "linear_layouts.core.f2",
    "linear_layouts.layout": "linear_layouts.core.layout",
    "linear_layouts.element_type": "linear_layouts.core.element_type",
    "linear_layouts.word_packing": "linear_layouts.core.word_packing",
    "linear_layouts.errors": "linear_layouts.core.errors",
    "linear_layouts.limits": "linear_layouts.core.limits",
    "linear_layouts.arguments": "linear_layouts.core.arguments",
    "linear_layouts.mlir_text": "linear_layouts.core.mlir_text",
    "linear_layouts._ccore": "linear_layouts.core._ccore",
    "linear_layouts._ccore._ext": "linear_layouts.core._ccore._ext",
    # layouts/
    "linear_layouts.catalog": "linear_layouts.layouts",
    "linear_layouts.catalog.amd": "linear_layouts.layouts.amd",
    "linear_layouts.catalog.base": "linear_layouts.layouts.base",
    "linear_layouts.catalog.blocked": "linear_layouts.layouts.blocked",
    "linear_layouts.catalog.characterize": "linear_layouts.layouts.characterize",
    "linear_layouts.catalog.dot_operand": "linear_layouts.layouts.dot_operand",
    "linear_layouts.catalog.instruction_tiles": "linear_layouts.layouts.instruction_tiles",
    "linear_layouts.catalog.linear": "linear_layouts.layouts.linear",
    "linear_layouts.catalog.nvmma": "linear_layouts.layouts.nvmma",
    "linear_layouts.catalog.recognize": "linear_layouts.layouts.recognize",
    "linear_layouts.catalog.shared": "linear_layouts.layouts.shared",
    "linear_layouts.catalog.slice": "linear_layouts.layouts.slice",
    "linear_layouts.catalog.tensor_memory": "linear_layouts.layouts.tensor_memory",
    "linear_layouts.ttgir": "linear_layouts.triton_model.ttgir",
    "linear_layouts.layouts.ttgir": "linear_layouts.triton_model.ttgir",
    # pipeline/
    "linear_layouts.kernels": "linear_layouts.pipeline",
    "linear_layouts.kernels.ttir_import": "linear_layouts.pipeline.ttir_import",
    "linear_layouts.kernels.report": "linear_layouts.pipeline.report",
    "linear_layouts.kernels.engine_compare": "linear_layouts.pipeline.engine_compare",
    "linear_layouts.kernels.rewrite": "linear_layouts.pipeline.rewrite",
    "linear_layouts.kernels.shared_memory": "linear_layouts.pipeline.shared_memory",
    # triton_model/
    "linear_layouts.kernels.ir_text": "linear_layouts.triton_model.ir_text",
    "linear_layouts.kernels.layouts": "linear_layouts.triton_model.encodings",
    "linear_layouts.kernels.triton_lowering": "linear_layouts.triton_model.lowering",
    "linear_layouts.kernels.allocation": "linear_layouts.triton_model.allocation",
    "linear_layouts.kernels.liveness": "linear_layouts.triton_model.liveness",
    "linear_layouts.kernels.trips": "linear_layouts.triton_model.trips",
    "linear_layouts.kernels.compile": "linear_layouts.triton_model.compile",
    "linear_layouts.kernels.spec": "linear_layouts.triton_model.kernel_file",
    # present/
    "linear_layouts.viz": "linear_layouts.present.viz",
    "linear_layouts.viz.algorithm": "linear_layouts.present.viz.algorithm",
    "linear_layouts.viz.bank_steps": "linear_layouts.present.viz.bank_steps",
    "linear_layouts.viz.catalog_scenarios": "linear_layouts.present.viz.catalog_scenarios",
    "linear_layouts.viz.colors": "linear_layouts.present.viz.colors",
    "linear_layouts.viz.explorer": "linear_layouts.present.viz.explorer",
    "linear_layouts.viz.font": "linear_layouts.present.viz.font",
    "linear_layouts.viz.grid": "linear_layouts.present.viz.grid",
    "linear_layouts.viz.grid_text": "linear_layouts.present.viz.grid_text",
    "linear_layouts.viz.model": "linear_layouts.present.viz.model",
    "linear_layouts.viz.page": "linear_layouts.present.viz.page",
    "linear_layouts.viz.png": "linear_layouts.present.viz.png",
    "linear_layouts.viz.scenarios": "linear_layouts.present.viz.scenarios",
    "linear_layouts.viz.server": "linear_layouts.present.viz.server",
    "linear_layouts.viz.svg": "linear_layouts.present.viz.svg",
    "linear_layouts.viz.text": "linear_layouts.present.viz.text",
    "linear_layouts.reports": "linear_layouts.present.reports",
    "linear_layouts.reports.banks": "linear_layouts.present.reports.banks",
    "linear_layouts.reports.conversion": "linear_layouts.present.reports.conversion",
    "linear_layouts.reports.cute": "linear_layouts.present.reports.cute",
    "linear_layouts.reports.demo": "linear_layouts.present.reports.demo",
    "linear_layouts.reports.kernel": "linear_layouts.present.reports.kernel",
    "linear_layouts.reports.swizzle": "linear_layouts.present.reports.swizzle",
    # removed: the element-type shim (its names are in core.element_type)
    "linear_layouts.analysis.dtypes": "linear_layouts.core.element_type",
}


class _OldNames(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finder and loader of the names in ``MOVED``: the loader returns the new module itself."""

    def __init__(self) -> None:
        self._specs: dict[str, importlib.machinery.ModuleSpec | None] = {}

    def find_spec(self, name: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        if name not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(name, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(MOVED[spec.name])
        self._specs[spec.name] = module.__spec__  # the import system writes the old name's spec over it
        return module

    def exec_module(self, module: ModuleType) -> None:
        old = module.__spec__.name if module.__spec__ is not None else None
        if old in self._specs:
            module.__spec__ = self._specs.pop(old)
        register_loaded()


def register_loaded() -> None:
    """Enter every old name whose new module and old parent are loaded into ``sys.modules`` (and as an
    attribute of the parent where that name is free), so that an old name is never loaded over a name its
    package already binds (``linear_layouts.catalog.recognize`` stays the function ``recognize``)."""
    for old, new in MOVED.items():  # parents before their children
        module = sys.modules.get(new)
        parent_name, _, child = old.rpartition(".")
        parent = sys.modules.get(parent_name)
        if module is None or parent is None or old in sys.modules:
            continue
        sys.modules[old] = module
        if not hasattr(parent, child):
            setattr(parent, child, module)


_FINDER = _OldNames()


def install() -> None:
    """Put the finder of old names first on ``sys.meta_path`` (once): first, so that a folder left at an
    old path (say a stale ``__pycache__``) is never imported as a namespace package instead."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
