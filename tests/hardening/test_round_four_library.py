"""Round four of the hardening, in the library: what the command line's hunt reached through it. Each failed
before its fix (a stray ValueError, a keyword silently dropped, a plan for a GPU the ops cannot run on)."""

from __future__ import annotations

import pytest

from linear_layouts import ops
from linear_layouts.core.element_type import element_type
from linear_layouts.core.errors import LayoutError
from linear_layouts.ops.kernels import GridShape
from linear_layouts.ops.launch import MIN_ARCH
from linear_layouts.spec import parse_spec
from linear_layouts.target import named_target


def test_a_width_of_thousands_of_digits_is_a_layout_error():
    with pytest.raises(LayoutError, match="dtype .*: an integer of 5000 digits; at most 40 digits"):
        element_type("9" * 5000)
    assert element_type("16").name == "b16"


@pytest.mark.parametrize("spec", [
    "BlockedLayout(size_per_thread=[1,4], size_per_thread=[4,1], threads_per_warp=[4,8], warps_per_cta=[4,1], "
    "order=[1,0])",
    "NVMMASharedLayout(128, 16, rank=2, rank=3)"])
def test_a_keyword_given_twice_is_refused(spec):
    with pytest.raises(LayoutError, match="keyword (size_per_thread|rank) given twice in one call"):
        parse_spec(spec)


@pytest.mark.parametrize("device", [GridShape(80, 6 << 20, "sm_70"), named_target("sm_70"), named_target("sm_50"),
                                    named_target(device="MI300X")])
def test_explain_refuses_what_the_ops_cannot_run_on(device):
    with pytest.raises(LayoutError, match=f"device: the layout ops run on NVIDIA GPUs of sm_{MIN_ARCH} and later"):
        ops.explain((64, 64), (1, 0), "bf16", device)
    assert "transpose of 64 x 64" in str(ops.explain((64, 64), (1, 0), "bf16", GridShape(40, 4 << 20, "sm_75")))
