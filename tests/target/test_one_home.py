"""Each fact of the GPU has one home, the ``Target`` (``linear_layouts.target``): the module globals that used to
hold them are gone, or derived from the default target, and no module below reads a fact it is not given."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from linear_layouts.target import DEFAULT_TARGET

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "linear_layouts"
#: the names the facts had: lanes, banks, bank bytes, phase bytes, the default device, the SM's capacity
OLD_NAMES = ("LANES", "BANKS", "PHASE_BYTES", "NUM_BANKS", "BANK_BYTES", "DEFAULT_DEVICE", "SM_SHARED_BYTES",
             "CTA_SHARED_BYTES", "CTA_RESERVED_SHARED_BYTES", "SM_THREADS")


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path.relative_to(PACKAGE).as_posix(), path.read_text()


def _assignments(source: str) -> dict[str, ast.expr]:
    found = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id in OLD_NAMES:
                    found[target.id] = node.value
    return found


def test_the_old_globals_are_gone_or_derived_from_the_target():
    """Outside ``target/``, a module-level ``LANES = 32`` or ``CTA_SHARED_BYTES = ...`` may only read a target."""
    literal = []
    for name, source in _modules():
        if name.startswith("target/"):
            continue
        for var, value in _assignments(source).items():
            text = ast.unparse(value)
            if not re.search(r"DEFAULT_TARGET|NVIDIA_LANES|\.shared\.|target", text):
                literal.append(f"{name}: {var} = {text}")
    assert literal == []


def test_the_derived_globals_equal_the_default_targets_facts():
    from linear_layouts.analysis import cost_model
    from linear_layouts.present.viz import model

    assert (cost_model.DEFAULT_DEVICE, cost_model.CTA_SHARED_BYTES, cost_model.SM_SHARED_BYTES,
            cost_model.CTA_RESERVED_SHARED_BYTES, cost_model.SM_THREADS) == (
        DEFAULT_TARGET.device, DEFAULT_TARGET.cta_shared_bytes, DEFAULT_TARGET.sm_shared_bytes,
        DEFAULT_TARGET.cta_reserved_shared_bytes, DEFAULT_TARGET.sm_threads)
    assert (model.NUM_BANKS, model.BANK_BYTES) == (DEFAULT_TARGET.shared.banks, DEFAULT_TARGET.shared.bank_bytes)


@pytest.mark.parametrize("pattern, why", [
    (r"\bcc\s*>=\s*(75|90)", "the ISA is Target.has(LDMATRIX / STMATRIX / WGMMA)"),
    (r"threads_per_warp\s*!=\s*32", "the lanes are Target.lanes"),
    (r"from linear_layouts\.analysis\.cost_model import [^\n]*(CTA_SHARED_BYTES|SM_SHARED_BYTES|SM_THREADS|"
     r"CTA_RESERVED_SHARED_BYTES|DEFAULT_DEVICE)", "capacity is read from the target a caller is given"),
    (r"from linear_layouts\.analysis\.banks import [^\n]*\b(LANES|BANKS)\b", "lanes and banks are the target's"),
    (r"analysis/devices", "the cost tables are target data (target/devices)"),
])
def test_no_module_reads_a_fact_from_a_global(pattern, why):
    hits = [name for name, source in _modules() if re.search(pattern, source)]
    assert hits == [], why
