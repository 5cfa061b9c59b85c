"""The byte transpose (``codegen.permute_bytes``) on the device against PyTorch, bit for bit: ``ops.permute`` of
uint8, fp8 and bool tensors where ``ops`` takes it (odd rows, batched, 3-D reversals), into outputs at offsets 16
bytes do not align; and smaller problems at each tile of ``GPU_BYTE_TILES``, in both raster orders, with the bytes
around the output untouched. Skipped without PyTorch, CuPy and an NVIDIA GPU."""

from __future__ import annotations

import pytest

from harness.ops_cases import GPU_BYTE_TILES, GPU_BYTES, GPU_BYTES_FORCED, GPU_BYTES_OFFSETS, runner
from linear_layouts import ops
from linear_layouts.ops import launch as ops_launch
from linear_layouts.ops import launches
from linear_layouts.ops.kernels import ByteTile, GridShape

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")


def _random(shape, dtype_name: str):
    bits = torch.randint(0, 256, tuple(shape), dtype=torch.uint8, device="cuda")
    if dtype_name == "bool":
        return (bits & 1).view(torch.bool)
    return bits.view(getattr(torch, dtype_name))


def _bytes(t):
    return t.contiguous().reshape(-1).view(torch.uint8)


@pytest.mark.parametrize("offset", GPU_BYTES_OFFSETS)
@pytest.mark.parametrize("shape, dims", GPU_BYTES, ids=str)
def test_ops_takes_the_byte_transpose_and_matches_torch(cuda_gpu, shape, dims, offset):
    x = _random(shape, "uint8")
    expected = x.permute(dims).contiguous()
    buffer = torch.full((x.numel() + 64,), 0xAB, dtype=torch.uint8, device="cuda")
    out = buffer[offset:offset + x.numel()].view(expected.shape)
    planned = launches.permute_launches(shape, dims, 1, x.data_ptr(), out.data_ptr(), ops_launch.grid_shape(0))
    assert planned[0].kernel.name.startswith("ll_permute_bytes")
    ops.permute(x, dims, out=out)
    assert torch.equal(_bytes(out), _bytes(expected))
    assert bool((buffer[:offset] == 0xAB).all()) and bool((buffer[offset + x.numel():] == 0xAB).all())


@pytest.mark.parametrize("dtype", ["float8_e4m3fn", "bool"])
def test_other_byte_types(cuda_gpu, dtype):
    x = _random(GPU_BYTES[0][0], dtype)
    assert torch.equal(_bytes(ops.transpose(x)), _bytes(x.t()))


@pytest.mark.parametrize("tile", GPU_BYTE_TILES + ("raster m",), ids=str)
@pytest.mark.parametrize("shape, dims, src_offset, dst_offset", GPU_BYTES_FORCED, ids=str)
def test_each_tile_matches_torch(cuda_gpu, shape, dims, src_offset, dst_offset, tile):
    device = ops_launch.grid_shape(0)
    if tile == "raster m":
        tile, device = GPU_BYTE_TILES[0], GridShape(device.multiprocessors, 4096, device.arch)
    numel = 1
    for size in shape:
        numel *= size
    source = torch.randint(0, 256, (numel + src_offset,), dtype=torch.uint8, device="cuda")
    x = source[src_offset:].view(shape)
    expected = x.permute(dims).contiguous()
    buffer = torch.full((numel + dst_offset + 64,), 0xAB, dtype=torch.uint8, device="cuda")
    planned = launches.permute_launches(shape, dims, 1, x.data_ptr(), buffer.data_ptr() + dst_offset, device,
                                        ByteTile(*tile))
    runner(planned)()
    torch.cuda.synchronize()
    assert torch.equal(buffer[dst_offset:dst_offset + numel], _bytes(expected))
    assert bool((buffer[:dst_offset] == 0xAB).all()) and bool((buffer[dst_offset + numel:] == 0xAB).all())
