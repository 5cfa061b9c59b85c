"""The one exception type of the package."""

from __future__ import annotations


class LayoutError(ValueError):
    """Bad input to a layout operation: the message names the argument and the rule it breaks."""
