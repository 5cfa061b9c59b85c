"""The compiled core: C versions of the hot paths of :mod:`linear_layouts.layout` and :mod:`linear_layouts.f2`.

An implementation detail. ``LinearLayout`` and ``f2`` stay the API, the documentation and the reference
implementation; when the C extension ``linear_layouts._ccore._ext`` is built (``pip install .`` builds it
with the system C compiler), they call it for layouts whose flattened bases fit 64-bit words (at most 64
in bits and 64 out bits) and run their Python code otherwise. Every C function either returns exactly what
the Python code returns or declines (``None`` / ``NotImplemented``), and then the Python code runs: bad
input gets the Python ``LayoutError`` with the same message whichever backend is active.

The pure-Python backend runs when the extension is absent or ``LINEAR_LAYOUTS_PURE_PYTHON=1`` is set.

>>> backend() in ("c", "python")
True
"""

from __future__ import annotations

import contextlib
import importlib
import os
from collections.abc import Iterator
from types import ModuleType

__all__ = ["ext", "backend", "available", "using"]


def _import_ext() -> ModuleType | None:
    try:
        return importlib.import_module("linear_layouts._ccore._ext")
    except ImportError:
        return None


def _pure_python_requested() -> bool:
    return os.environ.get("LINEAR_LAYOUTS_PURE_PYTHON", "").strip() not in ("", "0")


#: The compiled module in use at import time, or None (pure Python).
ext: ModuleType | None = None if _pure_python_requested() else _import_ext()


def available() -> bool:
    """Whether the C extension is built and importable (whatever backend is active)."""
    return _import_ext() is not None


def backend() -> str:
    """The active backend: ``"c"`` or ``"python"``."""
    from linear_layouts import layout

    return "python" if layout._C is None else "c"


def _switch(module: ModuleType | None) -> None:
    from linear_layouts import f2, layout

    f2._use_backend(module)
    layout._use_backend(module)


@contextlib.contextmanager
def using(name: str) -> Iterator[None]:
    """Run a block with backend ``name`` (``"c"`` or ``"python"``), then restore the previous one.

    For tests and benchmarks; raises RuntimeError for ``"c"`` when the extension is not built.
    """
    if name not in ("c", "python"):
        raise ValueError(f"backend must be 'c' or 'python', got {name!r}")
    module = None
    if name == "c":
        module = _import_ext()
        if module is None:
            raise RuntimeError("the C extension linear_layouts._ccore._ext is not built")
    from linear_layouts import layout

    previous = layout._C
    _switch(module)
    try:
        yield
    finally:
        _switch(previous)
