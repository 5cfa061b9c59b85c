"""Readable reports: the text the ``linear-layouts`` command prints, built from the library's results.

One module per report: :mod:`~linear_layouts.reports.banks` (the wavefronts of one shared-memory access,
step by step), :mod:`~linear_layouts.reports.swizzle` (the optimal-swizzle construction against the
baselines), :mod:`~linear_layouts.reports.conversion` (a conversion plan explained),
:mod:`~linear_layouts.reports.demo` (the paper's Layout A and the seed transpose end to end),
:mod:`~linear_layouts.reports.cute` (a layout in CuTe's words; the best CuTe swizzle beside the optimum). Every
report is a pure function returning a string; the CLI only parses arguments and prints them.

>>> from linear_layouts.reports import layout_a_report
>>> layout_a_report().splitlines()[-1]
'A(r1, t9, w0) = (i, j) = (2, 3)'
"""

from linear_layouts.reports.banks import banks_report
from linear_layouts.reports.conversion import plan_report
<<<<<<< HEAD
from linear_layouts.reports.cute import cute_report, cute_swizzle_report
from linear_layouts.reports.demo import demo_report, layout_a_report
from linear_layouts.reports.swizzle import swizzle_report

__all__ = ["banks_report", "swizzle_report", "plan_report", "layout_a_report", "demo_report", "cute_report",
           "cute_swizzle_report"]
=======
from linear_layouts.reports.demo import DEMO_STEPS, demo_report, layout_a_report
from linear_layouts.reports.swizzle import swizzle_report

__all__ = ["banks_report", "swizzle_report", "plan_report", "layout_a_report", "demo_report", "DEMO_STEPS"]
>>>>>>> 0a18462 (Text that fits a terminal: Triton's views and the owner table show their first columns (lanes) that fit and say what was left out; prose of the reports wraps at word boundaries (bases printed so lines break between vectors); the terminal's width when stdout is one, 100 columns for files and pipes (Triton's views go whole to them), --wide for everything; demo in six steps of one screen each (177 lines, none over 100 columns; was ~430 lines, 96 over 120); the kernel's opening comment fits 100 columns)
