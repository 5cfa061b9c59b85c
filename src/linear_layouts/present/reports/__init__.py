"""Readable reports: the text the ``linear-layouts`` command prints, built from the library's results.

One module per report: :mod:`~linear_layouts.present.reports.banks` (the wavefronts of one shared-memory access,
step by step), :mod:`~linear_layouts.present.reports.swizzle` (the optimal-swizzle construction against the
baselines), :mod:`~linear_layouts.present.reports.conversion` (a conversion plan explained: ``str(plan)`` fitted to a width),
:mod:`~linear_layouts.present.reports.demo` (the paper's Layout A and the seed transpose end to end),
:mod:`~linear_layouts.present.reports.cute` (a layout in CuTe's words; the best CuTe swizzle beside the optimum). Every
report is a pure function returning a string; the CLI only parses arguments and prints them.

>>> from linear_layouts.present.reports import layout_a_report
>>> layout_a_report().splitlines()[-1]
'A(r1, t9, w0) = (i, j) = (2, 3)'
"""

from linear_layouts.present.reports.banks import banks_report
from linear_layouts.present.reports.conversion import plan_report
from linear_layouts.present.reports.cute import cute_advice_report, cute_report, cute_swizzle_report
from linear_layouts.present.reports.demo import DEMO_STEPS, demo_report, layout_a_report
from linear_layouts.present.reports.swizzle import advice_report, swizzle_report

__all__ = ["banks_report", "swizzle_report", "advice_report", "plan_report",
           "layout_a_report", "demo_report", "DEMO_STEPS",
           "cute_report", "cute_swizzle_report", "cute_advice_report"]
