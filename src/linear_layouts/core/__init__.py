"""The core: what every other package builds on, needing only the standard library and NumPy.

``f2`` (linear algebra over F2), ``layout`` (``LinearLayout``), ``element_type`` (every ``dtype=``),
``word_packing``, ``errors`` (``LayoutError``), ``limits`` (the size policy), ``arguments`` (``@checked``),
``mlir_text`` (MLIR lexical rules) and ``_ccore`` (the optional compiled core of ``f2`` and ``layout``).
"""
