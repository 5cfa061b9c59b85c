"""The runtime: importable without CuPy; verify_conversion on a GPU (marked gpu)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from linear_layouts import LayoutError
from linear_layouts.codegen import runtime
from linear_layouts.codegen.verify import verify_conversion

from ._layouts import seed_transpose


def test_runtime_imports_without_cupy():
    # the module imported above without touching CuPy; only launching needs it
    if importlib.util.find_spec("cupy") is None:
        with pytest.raises(RuntimeError, match="CuPy"):
            runtime.cupy_module()


def test_verify_conversion_checks_the_shape():
    src, dst, _ = seed_transpose()
    with pytest.raises(LayoutError, match="shape"):
        verify_conversion(src, dst, "fp32", [32, 16])


@pytest.mark.gpu
def test_verify_conversion_on_the_gpu(cuda_gpu):
    from linear_layouts.layouts.blocked import BlockedLayout
    from linear_layouts.layouts.nvmma import NVMMADistributedLayout

    src, dst, _ = seed_transpose()
    for dtype in ("fp8", "fp16", "fp32"):
        assert verify_conversion(src, dst, dtype, [16, 32]).ok
    row = BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0]).to_linear([64, 64])
    mma = NVMMADistributedLayout([2, 0], [4, 1], [16, 8]).to_linear([64, 64])
    for dtype in ("fp8", "fp16", "fp32"):
        result = verify_conversion(row, mma, dtype, [64, 64], iterations=2)
        assert result.ok and result.checked == 4 * 64 * 64
