"""The docstring examples of every module under ``src/`` are tests: ``python3 -m pytest`` collects them
(``testpaths`` names ``src``) as ``--doctest-modules`` would, here only, with pyproject's
``doctest_optionflags``.

An example that needs Triton says so with ``# doctest: +REQUIRES_TRITON``: it runs where Triton is
installed; where it is not, its docstring's test is skipped with the reason.
"""

from __future__ import annotations

import doctest
import importlib.util

import pytest

from _pytest.doctest import DoctestModule

REQUIRES_TRITON = doctest.register_optionflag("REQUIRES_TRITON")


def pytest_collect_file(file_path, parent):
    """Each module's docstrings, unless ``--doctest-modules`` already collects them."""
    if file_path.suffix == ".py" and file_path.name != "conftest.py" and not parent.config.option.doctestmodules:
        return DoctestModule.from_parent(parent, path=file_path)
    return None


def _triton_installed() -> bool:
    try:
        return importlib.util.find_spec("triton") is not None
    except (ImportError, ValueError):  # a blocked or broken triton counts as absent
        return False


def pytest_collection_modifyitems(config, items) -> None:  # noqa: ARG001 - pytest's hook signature
    if _triton_installed():
        return
    skip = pytest.mark.skip(reason="the example needs Triton (pip install triton)")
    for item in items:
        examples = getattr(getattr(item, "dtest", None), "examples", ())
        if any(example.options.get(REQUIRES_TRITON) for example in examples):
            item.add_marker(skip)
