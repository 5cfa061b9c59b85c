"""Cost-table files are read as every JSON a user sends is (``limits.unique_keys``): ``json.loads`` kept the last
of a key given twice (``{"1": 0.75, "1": 9.0}``: 9.0) silently; now a LayoutError naming the file and the key.
Their integer keys (warps, lanes of a pattern) are ASCII digits (``limits.parse_int``): ``"٨"`` was 8 warps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from linear_layouts import LayoutError
from linear_layouts.analysis.global_costs import load_global_table
from linear_layouts.core.limits import INT_RULE
from linear_layouts.target import DEVICE_DIR, load_device

SMALL = Path(__file__).resolve().parents[1] / "data/global_costs/small.json"


def test_a_device_file_with_a_key_given_twice_is_refused(tmp_path):
    text = (DEVICE_DIR / "H100.json").read_text()
    old = '"wavefront": {\n  "1": 0.75,'
    assert old in text
    path = tmp_path / "H100.json"
    path.write_text(text.replace(old, old + ' "1": 9.0,', 1))
    with pytest.raises(LayoutError, match=r"^device file .*H100\.json: key '1' given twice in one object$"):
        load_device(path)
    path.write_text(text.replace('"name": "H100",', '"name": "H100", "name": "H200",', 1))
    with pytest.raises(LayoutError, match="key 'name' given twice in one object"):
        load_device(path)


def test_a_device_file_s_warps_are_ascii_digits(tmp_path):
    raw = json.loads((DEVICE_DIR / "H100.json").read_text())
    raw["wavefront"] = {"1": 0.75, "٨": 0.75}
    path = tmp_path / "H100.json"
    path.write_text(json.dumps(raw, ensure_ascii=False))
    with pytest.raises(LayoutError, match="wavefront's warps: expected a non-negative integer, got '٨'") as info:
        load_device(path)
    assert INT_RULE in str(info.value)


def test_a_global_cost_table_with_a_key_given_twice_is_refused(tmp_path):
    text = SMALL.read_text()
    old = '"4": {"dense/32": 4,'
    assert old in text
    path = tmp_path / "table.json"
    path.write_text(text.replace(old, old + ' "dense/32": 99,', 1))
    with pytest.raises(LayoutError, match=r"cannot read a global cost table from .*: json: key 'dense/32' given "
                                          r"twice in one object$"):
        load_global_table(path)
    load_global_table(SMALL)


def test_a_global_cost_table_s_lanes_are_ascii_digits(tmp_path):
    raw = json.loads(SMALL.read_text())
    cells = raw["ns"]["full"]["dram"]["ld"]["b"]["4"]
    cells["dense/٣٢"] = cells.pop("dense/32")
    path = tmp_path / "table.json"
    path.write_text(json.dumps(raw, ensure_ascii=False))
    table = load_global_table(path)
    with pytest.raises(LayoutError, match="global cost table: the lanes of the cell 'dense/٣٢': expected") as info:
        table.instruction_ns("ld", "b", 4, lanes_per_segment=32)
    assert INT_RULE in str(info.value)
