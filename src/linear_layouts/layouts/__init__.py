"""The layout catalog: every Triton / Gluon layout as a ``LinearLayout``, bit-exact with Triton.

Classes are named and parameterized as Gluon's (triton 3.9), so switching is a change of import::

    from linear_layouts.layouts import BlockedLayout
    BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0]).to_linear([32, 64])   # a LinearLayout

Distributed layouts map ``register, lane, warp, block`` to ``dim0..``; shared layouts map
``offset, block``; tensor-memory layouts map ``row, col, block``. ``AMDRotatingSharedLayout`` is
Triton's ``AMDRotatingSharedEncoding`` (Gluon has no class for it). Gluon 3.9's ``to_linear_layout``
returns blocked layouts without their zero register bases: ``remove_broadcast_registers`` does the same.
``recognize(L)`` goes the other way: the simplest descriptor whose ``to_linear`` is ``L``.
"""

from linear_layouts.layouts.amd import AMDMFMALayout, AMDWMMALayout
from linear_layouts.layouts.base import (
    DistributedLayout,
    SharedLayout,
    cga_layout_from_split_params,
    combine_cta_cga_with_shape,
    remove_broadcast_registers,
    split_params_from_cga_layout,
)
from linear_layouts.layouts.blocked import BlockedLayout
from linear_layouts.layouts.characterize import (
    is_distributed_layout,
    is_memory_layout,
    mma_swizzle_layout,
    mma_swizzle_offset,
)
from linear_layouts.layouts.dot_operand import DotOperandLayout
from linear_layouts.layouts.instruction_tiles import (
    ldmatrix_offset_tile,
    ldmatrix_row_tile,
    ldmatrix_tile,
    stmatrix_offset_tile,
    stmatrix_tile,
    vectorized_shared_tile,
)
from linear_layouts.layouts.linear import DistributedLinearLayout, SharedLinearLayout
from linear_layouts.layouts.nvmma import NVMMADistributedLayout
from linear_layouts.layouts.recognize import recognize
from linear_layouts.layouts.shared import (
    AMDRotatingSharedLayout,
    NVMMASharedLayout,
    PaddedSharedLayout,
    SwizzledSharedLayout,
    row_major_shared,
)
from linear_layouts.layouts.slice import SliceLayout
from linear_layouts.layouts.tensor_memory import TensorMemoryLayout, TensorMemoryScalesLayout

__all__ = [
    # base classes and helpers
    "DistributedLayout",
    "SharedLayout",
    "remove_broadcast_registers",
    "combine_cta_cga_with_shape",
    "cga_layout_from_split_params",
    "split_params_from_cga_layout",
    # distributed layouts
    "BlockedLayout",
    "SliceLayout",
    "DotOperandLayout",
    "DistributedLinearLayout",
    "NVMMADistributedLayout",
    "AMDMFMALayout",
    "AMDWMMALayout",
    # shared-memory layouts
    "SwizzledSharedLayout",
    "NVMMASharedLayout",
    "AMDRotatingSharedLayout",
    "PaddedSharedLayout",
    "SharedLinearLayout",
    "row_major_shared",
    # tensor memory
    "TensorMemoryLayout",
    "TensorMemoryScalesLayout",
    # recognition: the simplest descriptor of a LinearLayout
    "recognize",
    # the paper's characterizations (§4.3)
    "is_distributed_layout",
    "is_memory_layout",
    "mma_swizzle_layout",
    "mma_swizzle_offset",
    # SIMD instruction tiles (§5.3)
    "vectorized_shared_tile",
    "ldmatrix_row_tile",
    "ldmatrix_tile",
    "ldmatrix_offset_tile",
    "stmatrix_tile",
    "stmatrix_offset_tile",
]
