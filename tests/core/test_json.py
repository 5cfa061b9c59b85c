"""LinearLayout.to_json / from_json: the one JSON format of layouts (the CLI's, Triton's unit tests')."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from linear_layouts import LayoutError, LinearLayout
from linear_layouts.spec import layout_from_spec

from ._support import ours, random_spec

ALGEBRA = Path(__file__).resolve().parents[1] / "data" / "triton-unittests" / "algebra.json"


@settings(max_examples=150, deadline=None)
@given(st.randoms(use_true_random=False))
def test_round_trip_and_the_spec_parser_read_the_same_layout(rng: random.Random):
    layout = ours(random_spec(rng))
    text = layout.to_json()
    assert LinearLayout.from_json(text) == layout
    assert LinearLayout.from_json(json.loads(text)) == layout
    assert layout_from_spec(text) == layout
    data = json.loads(text)
    assert list(data["bases"]) == list(layout.in_dim_names)           # dims keep their order
    assert list(data["out_dims"].items()) == list(layout.out_dims.items())
    assert data.get("require_surjective", True) == layout.is_surjective()


def test_reads_every_layout_of_tritons_unit_test_json():
    cases = json.loads(ALGEBRA.read_text())["cases"]
    read = 0
    for case in cases:
        expected = case.get("expected")
        if not isinstance(expected, dict) or "bases" not in expected:
            continue
        layout = LinearLayout.from_json({"bases": expected["bases"], "out_dims": expected["out_dims"],
                                         "require_surjective": False})
        assert [[n, b] for n, b in layout.bases.items()] == [[n, [list(v) for v in b]] for n, b in expected["bases"]]
        assert list(layout.out_dims.items()) == [(n, s) for n, s in expected["out_dims"]]
        assert layout.is_surjective() == expected["surjective"], case["name"]
        read += 1
    assert read > 50


def test_non_surjective_layouts_say_so():
    layout = LinearLayout({"lane": [[1]]}, {"dim0": 4}, require_surjective=False)
    assert json.loads(layout.to_json()) == {"bases": {"lane": [[1]]}, "out_dims": {"dim0": 4},
                                           "require_surjective": False}
    assert LinearLayout.from_json(layout.to_json()) == layout


@pytest.mark.parametrize("text, message", [
    ("[1, 2]", "a JSON object with 'bases' and 'out_dims', got list"),
    ('{"bases": {}', "invalid JSON at line 1 column 13"),
    ('{"bases": {}}', "needs both 'bases' and 'out_dims'"),
    ('{"bases": {}, "out_dims": [], "shape": [2]}', r"unknown JSON keys \['shape'\]"),
    ('{"bases": 3, "out_dims": ["dim0"]}', "'bases' must be an object"),
    ('{"bases": {}, "out_dims": 2}', "'out_dims' must be an object"),
    ('{"bases": {}, "out_dims": [], "require_surjective": "no"}', "must be true or false"),
    ('{"bases": {"lane": [[1]]}, "out_dims": {"dim0": 4}}', "not surjective"),
])
def test_bad_json_raises_layout_error(text, message):
    with pytest.raises(LayoutError, match=message):
        LinearLayout.from_json(text)


def test_a_json_spec_not_onto_its_out_dims_names_the_json_key():
    """From JSON text (the CLI's layout arguments) the switch is the object's key, not a Python argument."""
    from linear_layouts.spec import parse_spec

    with pytest.raises(LayoutError, match='add "require_surjective": false to the JSON object'):
        parse_spec('{"bases": {"register": [[1]]}, "out_dims": {"dim0": 4}}')
    assert parse_spec('{"bases": {"register": [[1]]}, "out_dims": {"dim0": 4}, "require_surjective": false}').value
