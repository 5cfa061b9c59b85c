"""``target.resolve``: an entry point's ``target`` may be a ``Target``, None, or a name, read as ``named_target``
reads it (a known device, case-insensitive, or an architecture); anything else is a LayoutError naming ``target``."""

from __future__ import annotations

import pytest

from linear_layouts import LayoutError
from linear_layouts.analysis.bank_simulator import instruction_wavefronts
from linear_layouts.target import DEFAULT_TARGET, TARGETS, named_target, resolve
from linear_layouts.target.amd import MI300X
from linear_layouts.target.nvidia import A100, H100, H200

@pytest.mark.parametrize("name", [*TARGETS, "h200", "mi300x", "a100"])
def test_a_device_name_is_its_target(name):
    assert resolve(name) == named_target(device=name)


@pytest.mark.parametrize("name", ["sm_80", "sm_90", "sm_90a", "sm_100", "sm_86", "gfx942", "gfx90a"])
def test_an_architecture_is_named_targets(name):
    assert resolve(name) == named_target(name)


def test_names_select_the_known_values():
    assert (resolve("H200"), resolve("sm_90"), resolve("A100"), resolve("gfx942"), resolve(None)) == (
        H200, H100, A100, MI300X, DEFAULT_TARGET)
    assert resolve(H200) is H200


@pytest.mark.parametrize("name, hint", [("H300", "did you mean 'H200' or 'H100'?"), ("sm90", "did you mean 'sm_90'?"),
                                        ("", "unknown ''"), ("sm_90 ", "unknown 'sm_90 '")])
def test_a_wrong_name_names_target_and_what_is_accepted(name, hint):
    with pytest.raises(LayoutError, match=r"^target: unknown") as raised:
        resolve(name)
    message = str(raised.value)
    assert message.startswith("target: unknown") and hint in message
    assert "MI300X" in message and "sm_<cc>" in message and "gfx<arch>" in message


@pytest.mark.parametrize("value", [90, b"sm_90", ("sm_90",), 1.5])
def test_a_wrong_type_names_target(value):
    with pytest.raises(LayoutError, match=r"^target must be a Target, a device name \(A100, H100"):
        resolve(value)


def test_an_analysis_takes_a_name_for_target():
    column = [128 * lane for lane in range(32)]  # every lane in bank 0: one wavefront per lane on NVIDIA
    for name, value in (("H100", H100), ("sm_80", A100), ("h200", H200)):
        assert instruction_wavefronts(column, 4, target=name) == instruction_wavefronts(column, 4, target=value) == 32
    wide = [128 * lane for lane in range(64)]
    assert instruction_wavefronts(wide, 4, target="MI300X") == instruction_wavefronts(wide, 4, target=MI300X)
    with pytest.raises(LayoutError, match="an instruction has 32 lane addresses"):
        instruction_wavefronts(wide, 4, target="H100")
    with pytest.raises(LayoutError, match="target: unknown 'H1000'"):
        instruction_wavefronts(column, 4, target="H1000")
