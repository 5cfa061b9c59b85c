"""Tests of the core algebra (f2.py, layout.py): Triton unit tests, seeds, properties, differential, errors."""
