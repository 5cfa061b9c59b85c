"""Dump what ``plan_conversion`` decides on seeded random pairs, to compare two revisions (no pytest items).

    PYTHONPATH=<checkout>/src python3 tests/analysis/plan_decisions.py OUT.jsonl [N]

One JSON line per pair: the pair's seed index, element width, the chosen kind, the ``Cost`` (every field,
the total as ``repr``) and the alternatives' kinds and costs, or the ``LayoutError`` message; in-warp
pairs also ``shuffle_time_ns`` of their shuffle plan.  Two thirds
of the pairs keep their data inside the warp (``random_within_warp_partner``: shuffle against shared
memory), one third are any two distributed layouts (``harness.smem_cases.random_distributed``).  Compare two
dumps with ``diff`` or ``cmp``: identical files mean identical decisions and costs, bit for bit.
"""

from __future__ import annotations

import json
import pathlib
import random
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "benchmarks"))  # harness.smem_cases

from harness.smem_cases import random_distributed, random_shape  # noqa: E402

from linear_layouts import LayoutError  # noqa: E402
from linear_layouts.analysis.conversion import plan_conversion  # noqa: E402
from linear_layouts.analysis.cost_model import shuffle_time_ns  # noqa: E402
from linear_layouts.analysis.shuffles import plan_shuffle, same_warp_data  # noqa: E402
from linear_layouts.analysis.warp_simulator import (  # noqa: E402
    random_distributed_layout,
    random_within_warp_partner,
)


def pairs(n: int):
    """``n`` seeded (index, src, dst, bits) pairs (module doc)."""
    rng = np.random.default_rng(20261126)
    prng = random.Random(20261126)
    for i in range(n):
        if i % 3 != 2:
            shape = [int(x) for x in rng.integers(0, 4, size=int(rng.integers(1, 4)))]
            while sum(shape) < 5:
                shape[int(rng.integers(len(shape)))] += 1
            src = random_distributed_layout(rng, shape, warp_bits=int(rng.integers(0, 4)),
                                            extra_register_zeros=int(rng.integers(0, 2)))
            dst = random_within_warp_partner(rng, src, extra_register_zeros=int(rng.integers(0, 2)))
        else:
            warps = prng.choice([0, 1, 2, 3])
            log2s = random_shape(prng, prng.randint(5 + warps, 11))
            src = random_distributed(prng, log2s, warps)
            dst = random_distributed(prng, log2s, warps)
        bits = int(rng.choice([8, 16, 32, 64, 128] if i % 7 == 6 else [8, 16, 32, 64]))
        yield i, src, dst, bits


def _cost(cost) -> dict:
    return {k: repr(v) for k, v in cost.__dict__.items()}


def decision(src, dst, bits) -> dict:
    """The plan's kind, cost and alternatives (or the error), as plain JSON values; for a pair that keeps
    its data in the warp also the shuffle plan's predicted time (``cost_model.shuffle_time_ns``)."""
    extra = {}
    if same_warp_data(src, dst) and src != dst:
        try:
            extra["shuffle_ns"] = repr(shuffle_time_ns(plan_shuffle(src, dst, bits)))
        except LayoutError as exc:
            extra["shuffle_error"] = str(exc)
    try:
        plan = plan_conversion(src, dst, bits)
    except LayoutError as exc:
        return {"error": str(exc), **extra}
    return {**extra, "kind": str(getattr(plan.kind, "value", plan.kind)), "cost": _cost(plan.cost),
            "alternatives": [[str(getattr(k, "value", k)), _cost(c)] for k, c in plan.alternatives]}


def main() -> None:
    out = pathlib.Path(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 3000
    with out.open("w") as sink:
        for i, src, dst, bits in pairs(n):
            sink.write(json.dumps({"i": i, "bits": bits, **decision(src, dst, bits)}) + "\n")


if __name__ == "__main__":
    main()
