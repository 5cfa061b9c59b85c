"""``ops.explain``: what ``permute`` launches for a shape, told on the CPU — the same launches
``launches.permute_launches`` makes, each named by its kernel's kind, and a LayoutError naming the argument for
bad input."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from linear_layouts import ops
from linear_layouts.core.errors import LayoutError
from linear_layouts.ops.explain import KERNEL_KINDS, explain
from linear_layouts.ops.kernels import GridShape
from linear_layouts.ops.launches import Copy, Launch, permute_launches
from linear_layouts.target import named_target

H200 = GridShape(132, 60 << 20)
BASE = 1 << 40


def _launches(shape, dims, itemsize, device=GridShape(132), src_offset=0, dst_offset=0):
    return permute_launches(shape, dims, itemsize, BASE + src_offset, 2 * BASE + dst_offset, device)


@pytest.mark.parametrize("shape, dims, dtype, kind, problem", [
    ((6415, 12552), (1, 0), "fp16", "chunked transpose", "transpose"),   # odd output rows of 2-byte stores
    ((6415, 12552), (1, 0), "fp32", "tiled", "transpose"),               # fp32 keeps the tiled kernel
    ((6049, 8459), (1, 0), "u8", "byte transpose", "transpose"),
    ((64, 299, 299, 3), (0, 3, 1, 2), "u8", "deinterleave", "transpose"),
    ((100000, 3, 5), (0, 2, 1), "fp32", "small blocks", "transpose"),
    ((8, 2048, 32, 128), (0, 2, 1, 3), "bf16", "tiled", "rows"),
    ((231, 312, 361), (1, 0, 2), "u8", "realigned rows", "rows"),     # rows of 361 bytes
    ((4096, 4096), (0, 1), "fp32", "flat copy", "copy"),
    ((4, 8), (0, 1), "fp32", "driver copy", "copy"),
])
def test_each_kernel_kind_is_named(shape, dims, dtype, kind, problem):
    summary = explain(shape, dims, dtype, H200)
    assert summary.problem == problem
    assert [launch.kind for launch in summary.launches] == [kind]
    assert str(summary).count("\n") == 1 and kind in str(summary)


def test_the_sweeps_nhwc_case_reads_as_the_planner_runs_it():
    """``[32, 28, 28, 512]`` bf16 NHWC -> NCHW on an H100's grid: 32 transposes of 784 x 512 on 64 x 64 tiles of
    8 warps (L2-resident, rule 3 of ``ops.kernels``), 13 x 8 tiles a matrix."""
    summary = explain((32, 28, 28, 512), (0, 3, 1, 2), "bf16")
    assert (summary.problem, summary.rows, summary.cols, summary.batch) == ("transpose", 784, 512, 32)
    (launch,) = summary.launches
    assert (launch.kind, launch.rows, launch.cols, launch.warps, launch.ctas) == ("tiled", 64, 64, 8, 13 * 8 * 32)
    assert summary.nbytes == 32 * 28 * 28 * 512 * 2 and "24.5 MiB each way" in str(summary)
    assert "64 x 64 tile, 8 warps, 3328 CTAs" in str(summary)


def test_the_device_and_the_offsets_change_the_plan():
    """The grid's L2 moves a problem between regimes (skinny fp32 tiles of 8 warps from DRAM), an offset of 4
    bytes narrows the vectors (another kernel)."""
    shape, dims = (2, 384, 384, 26), (0, 3, 1, 2)  # 61 MB read and written: over an H100's L2, within an H200's
    assert explain(shape, dims, "fp32", GridShape(132)).launches[0].warps == 8
    assert explain(shape, dims, "fp32", H200).launches[0].warps == 4
    aligned, off = explain((300, 3000), (1, 0), "bf16"), explain((300, 3000), (1, 0), "bf16", src_offset=2)
    assert aligned.launches[0].kernel != off.launches[0].kernel


def test_empty_and_a_fold():
    assert explain((0, 8), (1, 0), "fp32").launches == () and explain((0, 8), (1, 0), "fp32").problem == "empty"
    (launch,) = explain((32, 64, 7, 7), (0, 2, 3, 1), "u8").launches  # NCHW -> NHWC of 7 x 7 uint8 planes
    assert launch.fold == "cols" and "folded along cols" in str(launch)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([1, 2, 3, 5, 7, 16, 33, 64, 129]), min_size=1, max_size=4).flatmap(
    lambda shape: st.tuples(st.just(tuple(shape)), st.permutations(range(len(shape))),
                            st.sampled_from(["u8", "bf16", "fp32", "fp64"]), st.sampled_from([0, 8]))))
def test_explain_is_what_permute_launches(case):
    """Every launch ``explain`` reports is the one ``permute_launches`` makes: the same kernel, grid and order."""
    shape, dims, dtype, offset = case
    itemsize = {"u8": 1, "bf16": 2, "fp32": 4, "fp64": 8}[dtype]
    items = _launches(shape, tuple(dims), itemsize, H200, offset, 0)
    summary = explain(shape, dims, dtype, H200, src_offset=offset)
    assert len(summary.launches) == len(items)
    for launch, item in zip(summary.launches, items):
        if isinstance(item, Copy):
            assert (launch.kernel, launch.kind, launch.copy_bytes) == (None, "driver copy", item.nbytes)
        else:
            assert isinstance(item, Launch)
            assert (launch.kernel, launch.ctas, launch.warps) == (item.kernel.name, item.ctas, item.kernel.threads // 32)
            assert launch.kind in dict(KERNEL_KINDS).values()


@pytest.mark.parametrize("args, kwargs, argument", [
    (("abc", (0,), "fp32"), {}, "shape"),
    (((4, -1), (1, 0), "fp32"), {}, "shape"),
    (((4, 8), (1, 1), "fp32"), {}, "dims"),
    (((4, 8), (1, 0), "notatype"), {}, "dtype"),
    (((4, 8), (1, 0), "fp4"), {}, "dtype"),
    (((4, 8), (1, 0), "fp32"), {"device": 132}, "device"),
    (((4, 8), (1, 0), "fp32"), {"device": "H20"}, r"device: unknown 'H20' \(did you mean 'H200'\?\)"),
    (((4, 8), (1, 0), "fp32"), {"device": "MI300X"}, "device: the layout ops run on NVIDIA GPUs"),
    (((4, 8), (1, 0), "fp32"), {"device": GridShape(132, 1 << 20, "gfx942")}, "device: the layout ops run on NVIDIA"),
    (((4, 8), (1, 0), "fp32"), {"device": GridShape(132, 1 << 20, "sm90")}, "device: target must be sm_<cc>"),
    (((4, 8), (1, 0), "fp32"), {"src_offset": 2}, "src_offset"),
    (((4, 8), (1, 0), "fp32"), {"dst_offset": -4}, "dst_offset"),
    ((((1 << 20),) * 4, (3, 2, 1, 0), "bf16"), {}, "shape"),   # 2**81 bytes: refused before any planning
])
def test_bad_input_names_the_argument(args, kwargs, argument):
    with pytest.raises(LayoutError, match=argument):
        explain(*args, **kwargs)


def test_a_known_device_plans_with_its_sms_l2_and_architecture():
    """A device's name, its Target and ``GridShape.of`` it are one device; the default is the H100's."""
    h200 = named_target(device="H200")
    shape, dims = (32, 28, 28, 512), (0, 3, 1, 2)
    assert GridShape.of(h200) == H200
    assert explain(shape, dims, "bf16", "h200") == explain(shape, dims, "bf16", h200) == explain(
        shape, dims, "bf16", H200)
    assert explain(shape, dims, "bf16").device == GridShape.of(named_target("sm_90")) == GridShape(132)
    a100 = explain(shape, dims, "bf16", "A100")
    assert (a100.device.multiprocessors, a100.device.l2_bytes, a100.device.arch) == (108, 40 << 20, "sm_80")
    assert "108 SMs, 40 MiB L2" in str(a100)
    # the L2 decides: 49 MiB moved is L2-resident on an H200, not on an A100 (raster order, so another kernel)
    big = (40, 28, 28, 512)  # 61 MiB moved: under 1.25 L2s of an H200 (raster "n"), over those of 40 MiB
    assert explain(big, dims, "bf16", "H200").launches != explain(big, dims, "bf16", GridShape(132, 40 << 20))\
        .launches
    with pytest.raises(LayoutError, match="target: must be a Target"):
        GridShape.of("H200")


@pytest.mark.parametrize("args, message", [
    ((0,), "multiprocessors must be an int >= 1, got 0"), ((132.5,), "multiprocessors must be an int >= 1"),
    ((True,), "multiprocessors must be an int >= 1, got True"), ((132, -1), "l2_bytes must be an int >= 0"),
    ((132, 50 << 20, 90), "arch must be a string"),
])
def test_a_grid_of_no_device_is_refused(args, message):
    """A grid the planner would plan nonsense for (no SMs, a negative L2) is refused where it is made."""
    with pytest.raises(LayoutError, match=f"GridShape: {message}"):
        GridShape(*args)


def test_exported_from_ops():
    assert ops.explain is explain


def test_sizes_read_without_an_exponent():
    """A batch of 4096 transposes of 4096 x 256 bf16 moves 8 GiB each way: told in GiB, never ``8.19e+03 MiB``;
    binary units up to TiB, three digits, bytes below a KiB."""
    from linear_layouts.ops.explain import _size

    assert "(8 GiB each way)" in str(explain((4096, 4096, 256), (0, 2, 1), "bf16"))
    assert [_size(n) for n in (0, 1023, 1024, 1023 << 10, 3 << 29, 1023 << 30, 5 << 40)] == [
        "0 bytes", "1023 bytes", "1 KiB", "1023 KiB", "1.5 GiB", "1023 GiB", "5 TiB"]


def test_the_device_may_be_an_architecture():
    """``device="sm_80"`` plans on its default device (an A100's SMs and L2), as ``permute --target sm_80`` does; a
    misspelt name is a LayoutError naming ``device``."""
    assert str(explain((4096, 11008), (1, 0), "bf16", device="sm_80")) == str(explain((4096, 11008), (1, 0), "bf16",
                                                                                        device="A100"))
    with pytest.raises(LayoutError, match=r"^device: unknown 'H300' \(did you mean"):
        explain((4, 4), (1, 0), "bf16", device="H300")


def test_a_dtype_numpy_cannot_parse_is_a_layout_error():
    """NumPy's dtype parser raises SyntaxError on 5000 digits: explain says dtype, never NumPy's error."""
    with pytest.raises(LayoutError, match="^dtype: "):
        explain((4, 4), (1, 0), "9" * 5000)
