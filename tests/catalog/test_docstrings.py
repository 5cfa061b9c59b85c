"""The docstring examples of the catalog modules of engineer "core" are tests too."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "linear_layouts.catalog.base",
    "linear_layouts.catalog.blocked",
    "linear_layouts.catalog.slice",
    "linear_layouts.catalog.linear",
    "linear_layouts.catalog.nvmma",
    "linear_layouts.catalog.dot_operand",
    "linear_layouts.catalog.tensor_memory",
    "linear_layouts.catalog.characterize",
    "linear_layouts.triton",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    if name != "linear_layouts.triton":
        assert result.attempted > 0
