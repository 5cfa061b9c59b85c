"""The public API's type boundary: :func:`checked` checks a function's arguments against its annotations.

Every public function of the analyses, code generation and pictures is decorated with ``@checked``, so a
wrong *type* (``None`` where a layout goes, a float or a bool where an int goes, an array where a string
goes) raises :class:`LayoutError` naming the function, the argument and the expected type, instead of an
AttributeError or TypeError from deep inside. The *values* (a bit width of 0, an axis out of range) are
still each function's to check. Checks are shallow: the argument itself and, for ``list[X]`` /
``Sequence[X]`` / ``tuple[X, ...]``, its elements when X is a plain type.

=========================  ==================================================================================
annotation                 accepted
=========================  ==================================================================================
``LinearLayout`` or a      an instance of it
class
``int``                    an int or NumPy integer, not a bool
``bool``                   ``True`` / ``False`` (or a NumPy bool)
``str``                    a str
``float``                  an int or float, not a bool
``list[X]``, ``Sequence``  a list, tuple, range or NumPy array (not a str), elements X
``Mapping[K, V]``          a mapping
``X | Y``, ``X | None``    either
``Any``, unresolved names  anything
=========================  ==================================================================================

>>> @checked
... def double(n: int) -> int:
...     return 2 * n
>>> double(2.5)
Traceback (most recent call last):
...
linear_layouts.core.errors.LayoutError: double: n must be an int, got 2.5
"""

from __future__ import annotations

import collections.abc as abc
import functools
import inspect
import numbers
import types
import typing
from typing import Any, Callable, TypeVar

import numpy as np

from linear_layouts.core.errors import LayoutError, not_a_layout
from linear_layouts.core.limits import quote

__all__ = ["checked"]

F = TypeVar("F", bound=Callable[..., Any])
Check = Callable[[Any], bool]

_SEQUENCES = (list, tuple, range, np.ndarray)


def _is_int(value: Any) -> bool:
    return type(value) is int or isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def _is_bool(value: Any) -> bool:
    return isinstance(value, (bool, np.bool_))


def _is_float(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


_PLAIN: dict[Any, tuple[Check, str]] = {
    int: (_is_int, "an int"),
    bool: (_is_bool, "True or False"),
    float: (_is_float, "a number"),
    str: (lambda v: type(v) is str or isinstance(v, str), "a string"),
    bytes: (lambda v: isinstance(v, bytes), "bytes"),
    type(None): (lambda v: v is None, "None"),
}


def _check_of(hint: Any) -> tuple[Check, str] | None:
    """(predicate, description) of an annotation, or None where anything goes."""
    if hint is Any or isinstance(hint, (str, typing.ForwardRef, TypeVar)):
        return None
    if hint in _PLAIN:
        return _PLAIN[hint]
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        parts = [_check_of(a) for a in args]
        if any(p is None for p in parts):
            return None
        return (lambda v: any(p(v) for p, _ in parts)), " or ".join(d for _, d in parts)
    if origin in (list, tuple, abc.Sequence, abc.MutableSequence, abc.Iterable, abc.Collection):
        element_hint = (args[0] if len(args) == 2 and args[1] is Ellipsis else None) if origin is tuple else \
            (args[0] if args else None)
        element = _check_of(element_hint) if element_hint is not None else None
        kinds = _SEQUENCES if origin is not abc.Iterable else (*_SEQUENCES, abc.Iterable)

        def is_list(v: Any) -> bool:
            return type(v) is list or type(v) is tuple or \
                isinstance(v, kinds) and not isinstance(v, (str, bytes, abc.Mapping))

        if element is None:
            return is_list, "a list"
        is_element, what = element
        exact = _exact_types(element_hint)

        def is_list_of(v: Any) -> bool:
            if (type(v) is list or type(v) is tuple) and exact.issuperset(map(type, v)):
                return True  # every element of a type the element check accepts: no call per element
            return is_list(v) and all(is_element(x) for x in (v.tolist() if isinstance(v, np.ndarray) else v))

        return is_list_of, f"a list of {_plural(what)}"
    if origin in (dict, abc.Mapping, abc.MutableMapping):
        return (lambda v: isinstance(v, abc.Mapping)), "a mapping"
    if origin is not None:
        return None
    if inspect.isclass(hint):
        try:
            isinstance(None, hint)
        except TypeError:  # a typing.Protocol that is not runtime-checkable: every member it declares, by name
            members = _protocol_members(hint)
            return ((lambda v: all(hasattr(v, m) for m in members)),
                    f"{_article(hint.__name__)} (an object with {', '.join(members)})")
        return (lambda v: type(v) is hint or isinstance(v, hint)), _article(hint.__name__)
    return None


def _protocol_members(protocol: type) -> tuple[str, ...]:
    """The names a ``typing.Protocol`` declares (its methods and annotated attributes, its bases' too):
    ``Aliases`` -> ``('expand',)``."""
    names: set[str] = set()
    for base in protocol.__mro__:
        if base in (object, typing.Protocol, typing.Generic):
            continue
        names.update(n for n in vars(base) if not n.startswith("_"))
        names.update(n for n in getattr(base, "__annotations__", {}) if not n.startswith("_"))
    return tuple(sorted(names))


def _exact_types(hint: Any) -> frozenset[type]:
    """Types whose every instance passes ``_check_of(hint)`` (a fast path for list elements; empty: none known).

    >>> sorted(t.__name__ for t in _exact_types(float))
    ['float', 'int']
    """
    if hint in _PLAIN:
        return frozenset({float: (int, float)}.get(hint, (hint,)))
    if inspect.isclass(hint) and typing.get_origin(hint) is None and _check_of(hint) is not None:
        return frozenset((hint,))
    return frozenset()


def _passing_type(hint: Any) -> Any:
    """A type every instance of which passes ``_check_of(hint)`` (the wrapper then skips the check's call), or
    None.

    >>> _passing_type(int), _passing_type(list[int])
    (<class 'int'>, None)
    """
    exact = _exact_types(hint)
    return hint if hint in exact else None


def _plural(what: str) -> str:
    for article in ("an ", "a "):
        if what.startswith(article):
            return what[len(article):] + "s"
    return what


def _article(name: str) -> str:
    return ("an " if name[:1] in "AEIOU" else "a ") + name


def _hints(function: Callable[..., Any]) -> dict[str, Any]:
    """The function's annotations, resolved where possible (unresolvable names: Any)."""
    try:
        return typing.get_type_hints(function)
    except Exception:  # noqa: BLE001 - a name only imported for type checking: resolve one by one
        resolved = {}
        namespace = getattr(function, "__globals__", {})
        for name, text in getattr(function, "__annotations__", {}).items():
            try:
                resolved[name] = eval(text, namespace) if isinstance(text, str) else text  # noqa: S307
            except Exception:  # noqa: BLE001
                resolved[name] = Any
        return resolved


def checked(function: F) -> F:
    """Decorator: raise LayoutError when an argument of ``function`` does not match its annotation.

    The annotations are resolved on the first call (so names defined later in the module work); defaults
    are not checked; a missing or extra argument stays Python's TypeError (a programming error, not bad
    data). Cost: about a microsecond per call.
    """
    signature = inspect.signature(function)
    positional = [p.name for p in signature.parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    checks: dict[str, tuple[Check, str]] | None = None
    #: (index, a type every value of which passes, check, parameter) of each checked positional parameter
    by_position: tuple[tuple[int, Any, Check, str], ...] = ()
    name = function.__qualname__

    def fail(parameter: str, value: Any, what: str) -> LayoutError:
        if what == "a LinearLayout":  # a descriptor where a layout goes: say how to get its layout
            return not_a_layout(value, f"{name}: {parameter}")
        return LayoutError(f"{name}: {parameter} must be {what}, got {_described(value)}")

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nonlocal checks, by_position
        if checks is None:
            hints = _hints(function)
            found_checks = {}
            for parameter in signature.parameters:
                found = _check_of(hints.get(parameter, Any))
                if found is not None:
                    found_checks[parameter] = found
            by_position = tuple((i, _passing_type(hints[parameter]), found_checks[parameter][0], parameter)
                                for i, parameter in enumerate(positional) if parameter in found_checks)
            checks = found_checks
        n = len(args)
        for i, passing, check, parameter in by_position:
            if i < n:
                value = args[i]
                if type(value) is not passing and not check(value):
                    raise fail(parameter, value, checks[parameter][1])
        for parameter, value in kwargs.items():
            check = checks.get(parameter)
            if check is not None and not check[0](value):
                raise fail(parameter, value, check[1])
        return function(*args, **kwargs)

    return typing.cast(F, wrapper)


def _described(value: Any) -> str:
    if value is None or isinstance(value, (bool, numbers.Number, str, list, tuple, dict)):
        return quote(value)
    return f"a {type(value).__name__}"
