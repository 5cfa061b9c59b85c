"""Session hooks shared by every test folder."""

from __future__ import annotations

import gc
import sys


def _is_binding_instance(value: object) -> bool:
    """An object of a class made by nanobind (its metaclass is one of nanobind's ``nb_type_*``)."""
    return type(type(value)).__name__.startswith("nb_type")


def drop_triton_binding_defaults() -> list[str]:
    """Remove from Triton's bound classes the methods whose default arguments are bound objects.

    Triton 3.9's ``GluonOpBuilder`` has four methods (``create_async_tma_*``) whose defaults are
    ``ir.attribute`` objects. Once the Python Gluon module has been imported from C++ (our oracle does
    that), those defaults outlive the interpreter's teardown and nanobind reports them at exit — with the
    classes and 300+ functions they keep alive — as 26 ``nanobind: leaked ...`` lines on stderr. Deleting
    the methods frees the defaults; nothing calls Triton once the session is over. Returns the
    ``Class.method`` names removed (none when Triton was never imported).
    """
    removed = []
    for name, module in list(sys.modules.items()):
        if not name.startswith("triton._C.libtriton") or module is None:
            continue
        for cls in [v for v in vars(module).values() if isinstance(v, type)]:
            for attribute, member in list(vars(cls).items()):
                if type(member).__name__ == "nb_method" and any(map(_is_binding_instance, gc.get_referents(member))):
                    delattr(cls, attribute)
                    removed.append(f"{cls.__name__}.{attribute}")
    return removed


def release_session_references() -> None:
    """Let go of what keeps Triton's bound objects alive past the session, so they are freed before nanobind's
    leak check runs at exit: the last failure's traceback (``sys.last_*``, kept by pytest for post-mortem
    debugging) and ``linear_layouts.triton``'s cached bank-conflict builder (context, module, builder;
    released builder first). Without this a run stopped by ``-x`` on a failing doctest ended with
    ``nanobind: leaked 3 instances`` (that builder's three objects), 9 types and 348 functions."""
    for name in ("last_type", "last_value", "last_traceback", "last_exc"):
        if hasattr(sys, name):
            setattr(sys, name, None)
    cached = getattr(sys.modules.get("linear_layouts.triton"), "_BUILDER", None)
    while cached:
        cached.pop()
    gc.collect()


def pytest_unconfigure(config) -> None:  # noqa: ARG001 - pytest's hook signature
    drop_triton_binding_defaults()
    release_session_references()
