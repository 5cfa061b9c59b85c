"""What people read: ``viz`` (text, SVG, PNG and HTML views of layouts, the explorer page and its local
server) and ``reports`` (the reports the CLI prints: banks, swizzle, conversion plan, CuTe, demo, kernel).
Nothing here decides anything: every number comes from ``analysis``, ``codegen`` or ``pipeline``.
"""
