"""Session hooks shared by every test folder, and the Hypothesis settings profiles.

Hypothesis profiles, chosen by the environment variable ``HYPOTHESIS_PROFILE`` (Hypothesis's convention;
``pytest --hypothesis-profile=NAME`` does the same):

- ``ci`` (the default): derandomized, so every run of a commit draws the same examples (CI cannot pass and
  fail on one commit; a failure reproduces); each test's own ``max_examples``; no deadline and no
  ``too_slow`` health check (timing on a shared machine is noise); no example database.
- ``explore``: a fresh random seed each run and ``EXPLORE_SCALE`` times each test's examples, to look for
  failures the fixed draw misses (a failure is saved in ``.hypothesis/``, git-ignored, and replayed first
  next time)::

      HYPOTHESIS_PROFILE=explore python3 -m pytest tests/core/test_properties.py
"""

from __future__ import annotations

import gc
import os
import sys

import pytest

try:
    from hypothesis import HealthCheck, settings
except ImportError:  # without the test extra: the test modules that need Hypothesis say so themselves
    settings = None

#: how many times its own ``max_examples`` each Hypothesis test runs under the ``explore`` profile
EXPLORE_SCALE = 10

if settings is not None:
    settings.register_profile("ci", derandomize=True, database=None, deadline=None, print_blob=True,
                              suppress_health_check=[HealthCheck.too_slow])
    settings.register_profile("explore", derandomize=False, deadline=None, print_blob=True,
                              max_examples=100 * EXPLORE_SCALE,  # where a test sets no count (Hypothesis's 100)
                              suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_collection_modifyitems(config, items) -> None:  # noqa: ARG001 - pytest's hook signature
    """Under ``explore``: each collected Hypothesis test runs ``EXPLORE_SCALE`` times the ``max_examples``
    of its own ``@settings`` (which a profile cannot raise), with a random seed even where those settings
    derandomize. Hypothesis keeps a test's settings in ``_hypothesis_internal_use_settings``; a test without
    it (or a ``@given`` built inside a test's body) is left as it is."""
    if settings is None or settings.default is not settings.get_profile("explore"):
        return
    scaled: set[int] = set()
    for item in items:
        test = getattr(item, "obj", None)
        test = getattr(test, "__func__", test)  # a method: its function
        own = getattr(test, "_hypothesis_internal_use_settings", None)
        if own is None or id(test) in scaled:  # a test parametrized n ways is one function, scaled once
            continue
        scaled.add(id(test))
        test._hypothesis_internal_use_settings = settings(own, max_examples=own.max_examples * EXPLORE_SCALE,
                                                          derandomize=False)


def _gpu_present() -> bool:
    """CuPy imports and sees an NVIDIA GPU (False without CuPy, a driver or a device)."""
    try:
        import cupy  # noqa: PLC0415 - optional: the GPU machines have it
    except ImportError:
        return False
    try:
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # noqa: BLE001 - no driver, no device
        return False


@pytest.fixture(scope="session")
def cuda_gpu() -> None:
    """For a ``gpu``-marked test: skips it where CuPy or an NVIDIA GPU is missing."""
    if not _gpu_present():
        pytest.skip("needs CuPy and an NVIDIA GPU")


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
    debugging) and ``linear_layouts.triton_model.interop``'s cached bank-conflict builder (context, module, builder;
    released builder first). Without this a run stopped by ``-x`` on a failing doctest ended with
    ``nanobind: leaked 3 instances`` (that builder's three objects), 9 types and 348 functions."""
    for name in ("last_type", "last_value", "last_traceback", "last_exc"):
        if hasattr(sys, name):
            setattr(sys, name, None)
    cached = getattr(sys.modules.get("linear_layouts.triton_model.interop"), "_BUILDER", None)
    while cached:
        cached.pop()
    gc.collect()


def pytest_unconfigure(config) -> None:  # noqa: ARG001 - pytest's hook signature
    drop_triton_binding_defaults()
    release_session_references()
