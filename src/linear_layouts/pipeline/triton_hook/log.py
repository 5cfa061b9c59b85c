"""The hook's trace: each step of the measured choice, per kernel, on the logger ``linear_layouts.triton``.

``$LINEAR_LAYOUTS_TRITON_LOG`` set to ``1`` (or ``true`` / ``yes`` / ``on``) sends it to stderr, one line a step,
from the next step on; anything else leaves the logger to the application's ``logging`` setup (its records are
``DEBUG``). A step names the kernel and what happened::

    linear_layouts.triton: vector_add_kernel: armed: the first launch measures
    linear_layouts.triton: vector_add_kernel: engine: the model keeps Triton's layouts (0.05 s)

>>> enabled_by(" On ")
True
>>> enabled_by("0")
False
"""

from __future__ import annotations

import logging
import os
import sys
import threading

__all__ = ["LOG_ENV", "LOGGER_NAME", "enabled_by", "step"]

#: the environment variable that sends the trace to stderr
LOG_ENV = "LINEAR_LAYOUTS_TRITON_LOG"
LOGGER_NAME = "linear_layouts.triton"

_logger = logging.getLogger(LOGGER_NAME)
_handler: logging.Handler | None = None
_level_before = logging.NOTSET  # the logger's level when the handler came, put back when it goes
_lock = threading.Lock()


def enabled_by(value: str) -> bool:
    """The value of ``$LINEAR_LAYOUTS_TRITON_LOG`` turns the stderr trace on."""
    return value.strip().lower() in ("1", "true", "yes", "on")


def _stderr_handler() -> None:
    """Attach (or detach) the stderr handler as ``$LINEAR_LAYOUTS_TRITON_LOG`` says now; detaching puts back the
    level the application had given the logger."""
    global _handler, _level_before
    wanted = enabled_by(os.environ.get(LOG_ENV, ""))
    if wanted == (_handler is not None):
        return
    with _lock:
        if wanted and _handler is None:
            _handler = logging.StreamHandler(sys.stderr)
            _handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
            _logger.addHandler(_handler)
            _level_before = _logger.level
            _logger.setLevel(logging.DEBUG)
        elif not wanted and _handler is not None:
            _logger.removeHandler(_handler)
            _logger.setLevel(_level_before)
            _handler = None


def step(kernel: object, message: str) -> None:
    """One step for ``kernel`` (its name): ``"<kernel>: <message>"`` at ``DEBUG`` on ``linear_layouts.triton``."""
    _stderr_handler()
    if _logger.isEnabledFor(logging.DEBUG):
        _logger.debug("%s: %s", kernel, message)
