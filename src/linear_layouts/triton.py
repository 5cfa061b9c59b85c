"""``linear_layouts.triton``: everything of ours a Triton user calls, in one place.

Layouts between Gluon and us (``to_gluon``, ``from_gluon``, ``gluon_expression``, Triton's own bank-conflict
estimate; ``triton_model.interop``) and our engine's layouts inside the user's own ``@triton.jit`` kernels
(``enable`` / ``disable`` / ``enabled`` / ``optimize``; ``pipeline.triton_hook``)::

    import linear_layouts.triton
    linear_layouts.triton.enable()      # every @triton.jit compile from now on

Both import Triton only when used: importing this module needs no Triton.
"""

from linear_layouts.pipeline.triton_hook import (MODE_ENV, Decision, Mode, TritonHookWarning, decision, disable,
                                                 enable, enabled, installed, mode, optimize)
from linear_layouts.triton_model.interop import *  # noqa: F401,F403
from linear_layouts.triton_model.interop import __all__ as _interop_all

__all__ = list(_interop_all) + ["enable", "disable", "enabled", "optimize", "mode", "installed", "decision",
                                "Decision", "Mode", "TritonHookWarning", "MODE_ENV"]
