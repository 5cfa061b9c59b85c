"""The compiled core: C versions of the hot paths of :mod:`linear_layouts.core.layout` and :mod:`linear_layouts.core.f2`.

An implementation detail. ``LinearLayout`` and ``f2`` stay the API, the documentation and the reference
implementation; when the C extension ``linear_layouts.core._ccore._ext`` is built (``pip install .`` builds it
with the system C compiler), they call it for layouts whose flattened bases fit 64-bit words (at most 64
in bits and 64 out bits) and run their Python code otherwise. Every C function either returns exactly what
the Python code returns or declines (``None`` / ``NotImplemented``), and then the Python code runs: bad
input gets the Python ``LayoutError`` with the same message whichever backend is active.

The pure-Python backend runs when the extension is absent or ``LINEAR_LAYOUTS_PURE_PYTHON=1`` is set.
The modules that call the extension register a hook (``on_switch``) that ``using`` calls with the backend
to use: this module imports nothing from the package.

>>> backend() in ("c", "python")
True
"""

from __future__ import annotations

import contextlib
import importlib
import os
from collections.abc import Callable, Iterator
from types import ModuleType

__all__ = ["ext", "backend", "available", "using", "on_switch"]


#: The interface version of the C source this package expects; a build of another version (a stale
#: extension left from an older checkout) is ignored, and the pure-Python core runs until it is rebuilt.
ABI_VERSION = 2


def _import_ext() -> ModuleType | None:
    try:
        module = importlib.import_module("linear_layouts.core._ccore._ext")
    except ImportError:
        return None
    return module if getattr(module, "ABI_VERSION", None) == ABI_VERSION else None


def _pure_python_requested() -> bool:
    return os.environ.get("LINEAR_LAYOUTS_PURE_PYTHON", "").strip() not in ("", "0")


#: The compiled module in use at import time, or None (pure Python).
ext: ModuleType | None = None if _pure_python_requested() else _import_ext()

#: The backend in use now (``ext`` until ``using`` switches it) and the hooks told of each switch.
_active: ModuleType | None = ext
_hooks: list[Callable[[ModuleType | None], None]] = []


def on_switch(hook: Callable[[ModuleType | None], None]) -> None:
    """Register ``hook(module)``: called now with the active backend (the compiled module, or None for pure
    Python), then on every switch. ``f2`` and ``layout`` register theirs when they are imported."""
    _hooks.append(hook)
    hook(_active)


def available() -> bool:
    """Whether the C extension is built and importable (whatever backend is active)."""
    return _import_ext() is not None


def backend() -> str:
    """The active backend: ``"c"`` or ``"python"``."""
    return "python" if _active is None else "c"


def _switch(module: ModuleType | None) -> None:
    global _active
    _active = module
    for hook in _hooks:
        hook(module)


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
            raise RuntimeError("the C extension linear_layouts.core._ccore._ext is not built")
    previous = _active
    _switch(module)
    try:
        yield
    finally:
        _switch(previous)
