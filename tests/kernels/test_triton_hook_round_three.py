"""The Triton hook, third review (no GPU): a time per compile beyond what a thread can wait; decision-cache
entries with numbers beyond any float, nested too deep or too large; tuple arguments of a measured launch;
a tensor argument that cannot be written back; our hook reached twice through another hook chained to it."""

from __future__ import annotations

import json
import sys
import types
import warnings

import pytest

triton = pytest.importorskip("triton")
from triton.backends.compiler import GPUTarget, Language  # noqa: E402

import linear_layouts.triton as lt  # noqa: E402
from linear_layouts.codegen.ptx import CacheWarning  # noqa: E402
from linear_layouts.errors import LayoutError  # noqa: E402
from linear_layouts.pipeline.triton_hook import decisions, measure, stage  # noqa: E402
from linear_layouts.pipeline.triton_hook import settings as hook_settings  # noqa: E402
from linear_layouts.pipeline.triton_hook.decisions import Basis  # noqa: E402
from linear_layouts.pipeline.triton_hook.settings import Mode, Settings  # noqa: E402

TARGET = GPUTarget("cuda", 90, 32)
IDENTITY = {"kernel": "k", "source": "s", "compile": "c", "target": "cuda:90:32", "device": "H200",
            "triton": "3.9.0", "linear_layouts": "0.1.0-0"}


@pytest.fixture(autouse=True)
def clean(tmp_path, monkeypatch):
    """A private Triton cache and kernel cache per test; no hook, no mode variable, no warning remembered."""
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton"))
    monkeypatch.setenv("LINEAR_LAYOUTS_CACHE", str(tmp_path / "ours"))
    monkeypatch.delenv(hook_settings.MODE_ENV, raising=False)
    monkeypatch.delenv(hook_settings.TIMEOUT_ENV, raising=False)
    monkeypatch.setattr(stage, "_warned", set())
    before = triton.knobs.runtime.add_stages_inspection_hook
    yield
    lt.disable()
    triton.knobs.runtime.add_stages_inspection_hook = before


# --------------------------------------------------------------------------------------------------------------
# settings: the engine's time per compile must be one a thread can be waited for
# --------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("timeout", [10 ** 400, 1e300, hook_settings.MAX_TIMEOUT_S * 2],
                         ids=["int_beyond_float", "1e300", "twice_the_max"])
def test_a_timeout_no_thread_can_wait_is_a_layout_error(timeout, monkeypatch):
    with pytest.raises(LayoutError, match="timeout_s must be a positive number of seconds, at most"):
        lt.enable("model", timeout_s=timeout)
    monkeypatch.setenv(hook_settings.TIMEOUT_ENV, str(timeout))
    with pytest.raises(LayoutError, match=r"\$LINEAR_LAYOUTS_TRITON_TIMEOUT must be a positive number"):
        lt.enable("model")
    assert not lt.installed()


def test_the_longest_timeout_accepted_is_waited_for():
    seconds = hook_settings.settings_for("model", hook_settings.MAX_TIMEOUT_S).timeout_s
    assert stage._with_timeout(lambda: 7, seconds) == 7


# --------------------------------------------------------------------------------------------------------------
# the decision cache: entries no float holds, nested too deep, too large are refused (and replaced), not raised
# --------------------------------------------------------------------------------------------------------------
def test_a_decision_with_an_integer_beyond_any_float_is_a_layout_error():
    with pytest.raises(LayoutError, match="predicted_gain must be a finite number"):
        decisions.Decision("triton", Basis.ERROR, "x", predicted_gain=10 ** 400)
    with pytest.raises(LayoutError, match="triton_samples_us must be a sequence of non-negative finite numbers"):
        decisions.Decision("triton", Basis.MEASURED_NOT_FASTER, "x", triton_samples_us=(10 ** 400, 1.0))


def rewrite_entry(path, **decision_fields):
    entry = json.loads(path.read_text())
    entry["decision"].update(decision_fields)
    entry["decision_sha256"] = decisions._digest(entry["decision"])
    path.write_text(json.dumps(entry))


@pytest.mark.parametrize("corruption", ["huge_int_sample", "huge_int_gain", "deep_nesting", "too_large"])
def test_a_corrupt_decision_file_is_refused_and_replaced(corruption, monkeypatch):
    path = decisions.store(IDENTITY, decisions.Decision("triton", Basis.ERROR, "first"))
    if corruption == "huge_int_sample":
        rewrite_entry(path, triton_samples_us=[10 ** 400])
    elif corruption == "huge_int_gain":
        rewrite_entry(path, predicted_gain=10 ** 400)
    elif corruption == "deep_nesting":
        path.write_text("[" * 200_000)
    else:
        monkeypatch.setattr(decisions, "MAX_ENTRY_BYTES", 64)
    with pytest.warns(CacheWarning, match="refused"):
        assert decisions.load(IDENTITY) is None
    monkeypatch.undo()
    decisions.store(IDENTITY, decisions.Decision("triton", Basis.ERROR, "again"))
    assert decisions.load(IDENTITY).reason == "again"
