"""``checked``'s list checks: the fast path (every element of an accepted type, no call per element)
accepts and refuses exactly what the per-element check does."""

from __future__ import annotations

from typing import Protocol

import numpy as np
import pytest

from linear_layouts.core.arguments import checked
from linear_layouts.core.errors import LayoutError


@checked
def _ints(xs: tuple[int, ...], ys: list[float], names: list[str]) -> int:
    return len(xs) + len(ys) + len(names)


@pytest.mark.parametrize("args", [
    ((1, 2), [1.5, 2], ["a"]),
    ((), [], []),
    ([np.int64(3), 4], [np.float32(1.0), 2], ("a", "b")),  # NumPy scalars: the per-element check
    (np.array([1, 2]), np.array([0.5]), ["x"]),
])
def test_lists_of_accepted_elements_pass(args) -> None:
    assert _ints(*args) == sum(len(a) for a in args)


@pytest.mark.parametrize("args, message", [
    (((1, True), [1.0], ["a"]), "xs must be a list of ints"),  # a bool is no int, even among ints
    (((1, 2.0), [1.0], ["a"]), "xs must be a list of ints"),
    (((1,), [1.0, "2"], ["a"]), "ys must be a list of numbers"),
    (((1,), [False], ["a"]), "ys must be a list of numbers"),
    (((1,), [1.0], ["a", 1]), "names must be a list of strings"),
    (("12", [1.0], ["a"]), "xs must be a list of ints"),
])
def test_lists_with_a_wrong_element_are_refused(args, message) -> None:
    with pytest.raises(LayoutError, match=message):
        _ints(*args)


class _Expands(Protocol):
    """A protocol that is not runtime-checkable (``isinstance`` refuses it)."""

    width: int

    def expand(self, text: str) -> str: ...


class _Expander:
    width = 4

    def expand(self, text: str) -> str:
        return text


@checked
def _reads(text: str, module: _Expands | None = None) -> str:
    return module.expand(text) if module is not None else text


def test_a_protocol_is_checked_by_its_members():
    """An argument of a protocol type has every method and attribute the protocol declares, or the call is a
    LayoutError naming them (it was an AttributeError from inside the function)."""
    assert _reads("x", _Expander()) == "x" and _reads("x") == "x"
    with pytest.raises(LayoutError, match=r"module must be a _Expands \(an object with expand, width\) or None, "
                                          r"got 'not a module'"):
        _reads("x", "not a module")
    with pytest.raises(LayoutError, match="module must be a _Expands"):
        _reads("x", type("OnlyExpand", (), {"expand": lambda self, text: text})())  # no width
