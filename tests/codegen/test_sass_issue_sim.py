"""benchmarks/sass_issue_sim.py's loop reader and issue model (benchmarks/harness/sass_issue.py; docstring
examples), and the model's point: two orders of the same instructions cost different cycles when a select
waits on a shuffle."""

import doctest

from harness import sass_issue


def _module():
    return sass_issue


def test_docstring_examples():
    result = doctest.testmod(_module())
    assert result.attempted >= 3 and result.failed == 0


def test_order_matters_with_equal_instructions():
    sim = _module()
    sends = [("SEL", f"R{10 + i}", ("R1", "R2", "P0")) for i in range(4)]
    shuffles = [("SHFL", f"R{20 + i}", (f"R{10 + i}", "R0")) for i in range(4)]
    merges = [("SEL", f"R{30 + i}", (f"R{20 + i}", "R3", "P0")) for i in range(4)]
    batched = sends + shuffles + merges  # every merge after every shuffle: latencies overlap
    chained = [x for i in range(4) for x in (sends[i], shuffles[i], merges[i])]  # each merge right after its shuffle
    assert sorted(batched) == sorted(chained)
    assert sim.issue_cycles(batched, warps=1) < sim.issue_cycles(chained, warps=1)
    assert sim.issue_cycles(chained, warps=2) < 2 * sim.issue_cycles(chained, warps=1)  # a second warp fills bubbles
