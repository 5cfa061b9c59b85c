"""Sizes beyond one launch and many batch dims on the device, against PyTorch's ``x.permute(dims).contiguous()`` bit
for bit: uint8 tensors of more than ``2**31`` elements (about 2.2 GiB each; three live at a time) at the launch
limits as they are and with them lowered (``ops.launches.MAX_LAUNCH_CTAS`` / ``MAX_LAUNCH_EXTENT``) so that the same
tensors are cut into many launches at offsets past ``2**32`` bytes; permutations of up to 22 batch dims, one launch.
Skipped without PyTorch, CuPy and an NVIDIA GPU."""

from __future__ import annotations

import pytest

from linear_layouts import ops
from linear_layouts.ops import dispatch, launches

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")

#: ``(shape, dims)`` of more than ``2**31`` one-byte elements.
BIG = [
    ((46341, 46341), (1, 0)),                  # a tiled transpose, 2**31 + 4633 elements
    ((2**29 + 2**24 + 3, 2, 2), (0, 2, 1)),    # a batch of 2 x 2 transposes (the interleave kernel)
    ((2, 2**30 + 2**20 + 5), (1, 0)),          # one long interleave
    ((2**27 + 7, 4, 4), (1, 0, 2)),            # rows of 4 bytes moved as words
]
#: Lowered limits: ``(MAX_LAUNCH_EXTENT, MAX_LAUNCH_CTAS)``.
LOWERED = [None, (2**30, 2**16)]


@pytest.fixture
def fresh_plans():
    """The fast path's plans made again under the limits a test sets, and dropped after it."""
    dispatch.call_plan.cache_clear()
    yield
    dispatch.call_plan.cache_clear()
    torch.cuda.empty_cache()


def _random_bytes(shape, seed: int):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randint(0, 256, shape, dtype=torch.uint8, device="cuda", generator=g)


@pytest.mark.parametrize("lowered", LOWERED, ids=["limits", "lowered"])
@pytest.mark.parametrize("shape, dims", BIG, ids=str)
def test_more_than_2_31_elements_match_torch(cuda_gpu, fresh_plans, monkeypatch, shape, dims, lowered):
    if lowered is not None:
        monkeypatch.setattr(launches, "MAX_LAUNCH_EXTENT", lowered[0])
        monkeypatch.setattr(launches, "MAX_LAUNCH_CTAS", lowered[1])
    x = _random_bytes(shape, 1)
    assert x.numel() > 2**31
    got = ops.permute(x, dims)
    expected = x.permute(dims).contiguous()
    assert got.shape == expected.shape and torch.equal(got, expected)
    del got, expected, x


@pytest.mark.parametrize("shape, dims, dtype", [
    ((2,) * 24, tuple(reversed(range(24))), torch.uint8),                       # 22 batch dims, 2**18 launches before
    ((2,) * 24, (3, 17, 0, 22, 9, 14, 1, 20, 6, 11, 23, 4, 15, 8, 19, 2, 13, 21, 7, 10, 16, 5, 12, 18), torch.float16),
    ((3, 2, 5, 2, 2, 7, 2, 3, 2, 4, 2, 3), (11, 6, 4, 9, 2, 0, 7, 5, 10, 3, 1, 8), torch.bfloat16),
])
def test_many_batch_dims_match_torch(cuda_gpu, fresh_plans, shape, dims, dtype):
    itemsize = torch.empty((), dtype=dtype).element_size()
    assert len(launches.permute_launches(shape, dims, itemsize, 0, 1 << 20, 132)) == 1
    x = torch.randn(shape, device="cuda").to(dtype) if dtype.is_floating_point else _random_bytes(shape, 2)
    got = ops.permute(x, dims)
    expected = x.permute(dims).contiguous()
    assert torch.equal(got.view(torch.uint8 if dtype == torch.uint8 else torch.int16),
                       expected.view(torch.uint8 if dtype == torch.uint8 else torch.int16))
