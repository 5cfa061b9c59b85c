"""The IR reader's fast paths against plain references, on every IR fixture of the repository.

``mlir_text``'s bracket scans (``split_top``, ``find_top``, ``closing``) count brackets with ``str.count`` between
the occurrences of what they look for and keep their answers; ``ir_text``'s line helpers (``_strip_loc``,
``_opens_region``, ``_signature``) and its renaming of sibling regions' values (``_renamed``) take shortcuts for
the common lines. Each is compared here with a reference that reads one character at a time (or, for the
renaming, the plain line-by-line algorithm), on the lines of every ``.ttgir`` / ``.ttir`` / ``.mlir`` file under
``tests/`` and on random texts; and ``parse_module`` of each fixture with the fast scans must equal its parse
with the reference scans.
"""

from __future__ import annotations

import functools
import random
import re
from pathlib import Path

import pytest

from linear_layouts.core import mlir_text
from linear_layouts.core.mlir_text import VALUE_NAME, closing, find_top, split_top
from linear_layouts.triton_model import ir_text
from tests.kernels.test_ir_text import _depth_zero_indices

TESTS = Path(__file__).resolve().parents[1]
#: every IR text of the repository's tests (Triton 3.6 and 3.9; sm_80, sm_90, gfx942; hand-written fixtures)
FIXTURES = sorted({*TESTS.rglob("*.ttgir"), *TESTS.rglob("*.ttir"), *TESTS.rglob("*.mlir")})
NEEDLES = (",", " : ", "->", " to ", ">", ")", "{", " * ", "-", '"')


# --- references: one character at a time ---------------------------------------------------------------------

_top_indices = _depth_zero_indices  # the bracket scan's rule, one character at a time


def _reference_find_top(text: str, needle: str, *, last: bool = False, start: int = 0) -> int:
    """``find_top`` by ``_top_indices``: the first (or last) top-level index where ``needle`` begins."""
    hits = [i for i in _top_indices(text, start) if text.startswith(needle, i)]
    return (hits[-1] if last else hits[0]) if hits else -1


def _reference_split_top(text: str, sep: str = ",") -> list[str]:
    """``split_top`` by ``_top_indices``: ``text`` cut at each top-level ``sep`` (no two overlapping)."""
    parts, begin = [], 0
    for i in _top_indices(text):
        if i >= begin and text.startswith(sep, i):
            parts.append(text[begin:i].strip())
            begin = i + len(sep)
    tail = text[begin:].strip()
    return parts + [tail] if tail or parts else []


def _reference_closing(text: str, start: int) -> int:
    """``closing`` by ``_reference_find_top``: the first top-level closer of ``text[start]``'s kind after it."""
    return _reference_find_top(text, ">)}]"["<({[".index(text[start])], start=start + 1)


def _reference_strip_loc(line: str) -> tuple[str, str]:
    """``_strip_loc`` one character at a time: the last `` loc(`` whose parentheses close at the line's end."""
    i = line.rfind(" loc(")
    while i >= 0:
        inner, depth, j = line[i + 5:], 1, 0
        while j < len(inner) and depth:
            depth += {"(": 1, ")": -1}.get(inner[j], 0)
            j += 1
        if depth == 0 and not inner[j:].strip():
            return line[:i].rstrip(), inner[:j - 1]
        i = line.rfind(" loc(", 0, i)
    return line, ""


def _reference_opens_region(line: str) -> bool:
    """Whether ``line`` opens a region: its text before its loc ends with ``{``, not ``<{``."""
    body = _reference_strip_loc(line)[0].rstrip()
    return body.endswith("{") and not body.endswith("<{")


def _reference_signature(body: str) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """``_signature`` by the reference scans: (head, operand types, result types) of ``head : types``."""
    def types(text: str) -> tuple[str, ...]:
        text = text.strip()
        if text.startswith("(") and _reference_closing(text, 0) == len(text) - 1:
            text = text[1:-1]
        return tuple(t for part in _reference_split_top(text) for t in _reference_split_top(part, " * ") if t)

    colon = _reference_find_top(body, " : ", last=True)
    if colon < 0:
        return body, (), ()
    head, spelled = body[:colon], body[colon + 3:]
    for sep in ("->", " to "):
        at = _reference_find_top(spelled, sep)
        if at >= 0:
            return head, types(spelled[:at]), types(spelled[at + len(sep):])
    return head, types(spelled), ()


_VALUE_NAME = re.compile(VALUE_NAME)


def _reference_renamed(text: str) -> tuple[str, list[tuple[int, str, int, int]]]:
    """``_renamed`` line by line: every name looked up in every scope, every line's names collected."""
    lines = text.split("\n")
    names = set(_VALUE_NAME.findall(text))
    seen: set[str] = set()
    scopes: list[dict[str, tuple[str, int]]] = [ir_text._Isolated()]
    redefined: list[tuple[int, str, int, int]] = []
    function = -1

    def visible(name: str, scope: dict[str, tuple[str, int]]) -> tuple[str, int] | None:
        for outer in [scope] + ([] if isinstance(scope, ir_text._Isolated) else scopes[::-1]):
            if name in outer:
                return outer[name]
            if isinstance(outer, ir_text._Isolated):
                return None
        return None

    def define(name: str, scope: dict[str, tuple[str, int]], line: int) -> str:
        earlier = visible(name, scope)
        if earlier is not None:
            redefined.append((function, name, line, earlier[1]))
        new = name
        if name in seen:
            base, k = (name[1:] if not name[1:2].isdigit() else "v" + name[1:]), 1
            while f"%{base}_{k}" in names:
                k += 1
            new = f"%{base}_{k}"
            names.add(new)
        seen.add(name)
        scope[name] = (new, line)
        return new

    def lookup(name: str) -> str:
        return next((scope[name][0] for scope in reversed(scopes) if name in scope), name)

    for k, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("}"):
            if len(scopes) > 1:
                scopes.pop()
            if _reference_opens_region(stripped):
                scopes.append({})
            continue
        new: dict[str, str] = {}
        inner: dict[str, tuple[str, int]] = {}
        opens = _reference_opens_region(line)
        if stripped.startswith("tt.func"):
            seen.clear()
            function += 1
            scopes, inner = [ir_text._Isolated()], ir_text._Isolated()
            for name in ir_text._DECLARED.findall(stripped):
                new[name] = define(name, inner, k + 1)
        elif ir_text._PARTITION.match(stripped) and opens:
            inner = ir_text._Isolated()
            for name in ir_text._DECLARED.findall(stripped):
                new[name] = define(name, inner, k + 1)
        elif stripped.startswith("^"):
            for name in ir_text._DECLARED.findall(stripped):
                new[name] = define(name, scopes[-1], k + 1)
        elif "%" in stripped:
            m = ir_text._RESULTS.match(stripped)
            results = _VALUE_NAME.findall(m.group(1)) if m else []
            rest = m.group(2) if m else stripped
            head = set(ir_text._HEAD_DEFINED.findall(rest)) if opens and not rest.startswith('"') else set()
            for token in set(_VALUE_NAME.findall(stripped)) - set(results) - head:
                new[token] = lookup(token)
            for name in results:
                new[name] = define(name, scopes[-1], k + 1)
            for name in sorted(head):
                new[name] = define(name, inner, k + 1)
        if any(a != b for a, b in new.items()):
            lines[k] = ir_text._NAME_OR_STRING.sub(lambda t: new.get(t.group(0), t.group(0)), line)
        if opens:
            scopes.append(inner)
    out = "\n".join(lines)
    return (out if out != text else text), redefined


# --- the inputs -------------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def _fixture_lines() -> tuple[str, ...]:
    """The distinct stripped lines of every fixture, in a fixed order."""
    return tuple(sorted({line.strip() for path in FIXTURES for line in path.read_text().splitlines()} - {""}))


def _random_texts(seed: int, count: int) -> list[str]:
    """Short random texts of brackets, quotes, arrows, separators and names."""
    rng = random.Random(seed)
    pieces = list('ab<>(){}[]"-, :x') + ["->", " : ", " to ", ", ", "%a", "%b_1", " loc(", "#l)", "dense<0>",
                                        "{axis = 0 : i32}", "tensor<4xf32, #a>", " * "]
    return ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 20))) for _ in range(count)]


def _clear_caches() -> None:
    """Every ``functools`` cache of ``mlir_text`` and ``ir_text`` emptied (a parse keeps the scans' answers)."""
    for module in (mlir_text, ir_text):
        for value in vars(module).values():
            if hasattr(value, "cache_clear"):
                value.cache_clear()


# --- the tests --------------------------------------------------------------------------------------------------

def test_the_fixtures_are_found():
    assert len(FIXTURES) > 200 and len(_fixture_lines()) > 5000


def test_bracket_scans_agree_with_the_character_rule_on_fixture_lines():
    """``split_top``, ``find_top`` (first and last, from several starts) and ``closing`` of a sample of the
    fixtures' lines (every twentieth distinct line) and of random texts, as the character rule reads them."""
    texts = list(_fixture_lines()[::20]) + _random_texts(7, 2000)
    for text in texts:
        for needle in NEEDLES:
            assert split_top(text, needle) == _reference_split_top(text, needle), (text, needle)
            for start in {0, len(text) // 3, len(text)}:
                for last in (False, True):
                    assert find_top(text, needle, last=last, start=start) == \
                        _reference_find_top(text, needle, last=last, start=start), (text, needle, start, last)
        for i, c in enumerate(text):
            if c in "<({[":
                assert closing(text, i) == _reference_closing(text, i), (text, i)


def test_line_helpers_agree_with_their_references_on_fixture_lines():
    """``_strip_loc``, ``_opens_region`` and ``_signature`` of every distinct fixture line (and of random texts)."""
    for line in list(_fixture_lines()) + _random_texts(11, 3000):
        assert ir_text._strip_loc(line) == _reference_strip_loc(line), line
        assert ir_text._opens_region(line) == _reference_opens_region(line), line
        assert ir_text._opens_region("    " + line + " ") == _reference_opens_region("    " + line + " "), line
        body = _reference_strip_loc(line)[0]
        m = ir_text._RESULTS.match(body)
        rest = " " + (m.group(2) if m else body)
        assert ir_text._signature(rest) == _reference_signature(rest), line


def test_renaming_agrees_with_the_line_by_line_algorithm_on_every_fixture():
    """``unique_value_names``' renaming (and the redefinitions it finds) of every fixture and of each fixture with
    its value names folded onto a few (so that regions share names), as the plain algorithm gives them."""
    for path in FIXTURES:
        text = path.read_text()
        folded = re.sub(r"%[A-Za-z_][\w$.-]*", lambda m: "%" + "abc"[len(m.group()) % 3], text)
        for case in (text, folded):
            assert ir_text._renamed(case) == _reference_renamed(case), path.name


@pytest.mark.parametrize("target", ["sm_90", "gfx942"])
def test_parse_with_the_fast_scans_equals_the_parse_with_the_reference_scans(target, monkeypatch):
    """``parse_module`` of each fixture of a target (and of the Triton 3.6 ones, and the hand-written ``.mlir``)
    equals its parse with ``split_top``, ``find_top`` and ``closing`` replaced by the character rule: the same
    ops, results, operands, types, attributes, regions, locations and op texts."""
    paths = [p for p in FIXTURES if target in p.parts or (target == "sm_90" and "triton_kernels" not in p.parts)]
    assert paths

    def parse_all() -> list[tuple[ir_text.Module, list[str]]]:
        _clear_caches()
        out = []
        for path in paths:
            try:
                module = ir_text.parse_module(path.read_text())
            except Exception as error:  # noqa: BLE001 - a fixture the reader refuses: the same refusal
                out.append((repr(error), []))
                continue
            out.append((module, [op.text for fn in module.functions for op in fn.walk()]))
        return out

    fast = parse_all()
    monkeypatch.setattr(ir_text, "split_top", _reference_split_top)
    monkeypatch.setattr(ir_text, "_find_top", _reference_find_top)
    monkeypatch.setattr(ir_text, "closing", _reference_closing)
    reference = parse_all()
    _clear_caches()
    for path, (a, b) in zip(paths, zip(fast, reference)):
        assert a == b, path.name
