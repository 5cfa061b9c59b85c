"""A distributed layout's lane dim is checked against its target's lanes (``Target.lanes``: 32 on NVIDIA,
64 on AMD CDNA): the analysis takes a 64-lane layout on gfx942 and refuses a 32-lane one there, naming the
layout's argument and the target."""

from __future__ import annotations

import pytest

from linear_layouts.analysis.banks import check_distributed
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout
from linear_layouts.target import named_target


def _layout(lanes: int) -> LinearLayout:
    """4 registers along d0, ``lanes`` lanes along d1."""
    return LinearLayout.identity_1d(4, "register", "d0") * LinearLayout.identity_1d(lanes, "lane", "d1")


@pytest.mark.parametrize(("arch", "lanes"), [("sm_90", 32), ("gfx942", 64)])
def test_a_layout_of_the_targets_lanes_is_taken(arch, lanes):
    assert named_target(arch).lanes == lanes
    layout = _layout(lanes)
    assert check_distributed(layout, "layout", named_target(arch)) is layout


def test_a_32_lane_layout_on_a_64_lane_target_is_refused_naming_the_layout_and_the_target():
    with pytest.raises(LayoutError, match=r"^src: needs a 'lane' in dim of size 64 \(one gfx942 wavefront\); "
                                          r"a 32-lane layout needs a target of that many lanes"):
        check_distributed(_layout(32), "src", named_target("gfx942"))


def test_a_64_lane_layout_on_a_32_lane_target_is_refused():
    with pytest.raises(LayoutError, match=r"^dst: needs a 'lane' in dim of size 32 \(one NVIDIA warp\); "
                                          r"a 64-lane layout needs a target of that many lanes"):
        check_distributed(_layout(64), "dst", named_target("sm_90"))
