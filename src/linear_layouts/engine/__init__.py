"""The layout engine (paper §4.4, Thm 9.3): a tile IR, transfer functions, anchors, propagation, and
Gluon emission.

>>> from linear_layouts.engine import examples, propagate
>>> propagate(examples.row_softmax()).conversions  # reduce -> expand_dims -> broadcast: no-ops
()
"""

from linear_layouts.engine.ir import Builder, Op, Program, Value
from linear_layouts.engine.propagate import (
    Conversion,
    CostFunction,
    EngineResult,
    check_consistent,
    naive_conversions,
    plan_cost,
    propagate,
    propagate_runs,
)

__all__ = [
    "Builder", "Op", "Program", "Value",
    "Conversion", "CostFunction", "EngineResult", "propagate", "propagate_runs", "plan_cost", "check_consistent", "naive_conversions",
]
