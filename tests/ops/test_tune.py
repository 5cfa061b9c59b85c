"""Autotuning (``ops.tune``) on the CPU: the candidates, each one's output (emulated), the choice a timing makes and
what is kept, and the settings' checks. The GPU side is ``test_gpu_tune.py``."""

from __future__ import annotations

import numpy as np
import pytest

from linear_layouts.core.errors import LayoutError
from linear_layouts.ops import launches as L
from linear_layouts.ops import tune
from linear_layouts.ops.driver import ArgumentPacking
from linear_layouts.ops.kernels import ChunkedTile, GridShape, TileConfig, tile_layouts
from linear_layouts.ops.launches import (
    _plan, permute_template, pointer_alignment, tile_for, transpose_candidates,
)
from linear_layouts.target import TARGETS

from tests.ops._emulated import SRC, DST, emulated_permute

GRID = GridShape.of(TARGETS["H200"])


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    """Each test starts with no choices and the module's settings as shipped."""
    tune.clear()
    yield
    tune.clear()


def _problem(shape, dims, itemsize, src=0, dst=0):
    return _plan(tuple(shape), tuple(dims), itemsize, pointer_alignment(src, dst))


def test_labels():
    assert tune.tune_label(TileConfig(2, 64, 64, 8, 8, 8)) == "64x64/8w"
    assert tune.tune_label(TileConfig(1, 128, 128, 8, 16, 16, 4)) == "128x128/8w"
    assert tune.tune_label(TileConfig(1, 128, 128, 8, 16, 16, 1)) == "128x128/8w v16/16"
    assert tune.tune_label(TileConfig(8, 256, 32, 4, 2, 1)) == "256x32/4w v2/1"
    assert tune.tune_label(ChunkedTile(2, 128, 64, 16, 32)) == "chunked"


@pytest.mark.parametrize("shape, dims, itemsize", [
    ((4096, 4096), (1, 0), 2), ((32, 28, 28, 512), (0, 3, 1, 2), 2), ((826851, 24), (1, 0), 8),
    ((64, 3, 256, 256), (0, 2, 3, 1), 2), ((4095, 11007), (1, 0), 1), ((5209, 4557), (1, 0), 4)])
def test_candidates_are_tiles_of_the_problem(shape, dims, itemsize):
    problem = _problem(shape, dims, itemsize)
    tiles = transpose_candidates(problem, 0, 0, GRID)
    assert len(tiles) == len(set(tiles)) >= 10
    planned = tile_for(problem, 0, 0, GRID)
    for tile in tiles:
        assert tile.element_bytes == problem.element_bytes
        if isinstance(tile, ChunkedTile):
            assert L.chunked_transposes(problem, 0, 0)
            continue
        assert tile.tile_bytes <= L.TUNING_MAX_TILE_BYTES
        tile_layouts(tile)  # its threads cover it
        assert problem.cols % tile.src_vector == 0 and problem.rows % tile.dst_vector == 0
    skinny = min(problem.rows, problem.cols) < 32
    assert skinny or planned in tiles or planned.rows * planned.cols * itemsize > L.TUNING_MAX_TILE_BYTES \
        or tune.tune_label(planned) in {tune.tune_label(t) for t in tiles}


def test_no_candidates_for_row_moves_and_copies():
    assert transpose_candidates(_problem((8, 2048, 8, 128), (0, 2, 1, 3), 2), 0, 0, GRID) == []
    assert transpose_candidates(_problem((64, 64), (0, 1), 4), 0, 0, GRID) == []


@pytest.mark.parametrize("shape, dims, dtype, offsets", [
    ((70, 45), (1, 0), np.float32, (0, 0)), ((3, 200), (1, 0), np.uint16, (0, 0)),
    ((2, 33, 65), (0, 2, 1), np.uint8, (0, 0)), ((5, 7, 9, 4), (0, 3, 1, 2), np.float64, (0, 0)),
    ((48, 40), (1, 0), np.uint16, (2, 4))])
def test_every_candidate_permutes_exactly(shape, dims, dtype, offsets):
    rng = np.random.default_rng(7)
    a = rng.integers(0, 255, size=shape).astype(dtype)
    expected = np.ascontiguousarray(np.transpose(a, dims))
    itemsize = a.itemsize
    problem = _problem(shape, dims, itemsize, SRC + offsets[0], DST + offsets[1])
    tiles = transpose_candidates(problem, SRC + offsets[0], DST + offsets[1], GRID)
    assert tiles
    ran = 0
    for tile in tiles:
        try:
            got = emulated_permute(a, dims, offsets[0], offsets[1], GRID, tile)
        except LayoutError:  # a tile this problem's sizes refuse: tune leaves it out the same way
            continue
        assert np.array_equal(got, expected), tune.tune_label(tile)
        ran += 1
    assert ran >= len(tiles) // 2


def _untuned(shape, dims, itemsize):
    with pytest.raises(tune.Untuned, match="is not tuned yet") as caught:
        tune.tuned_template(shape, dims, itemsize, 0, 0, 0, GRID)
    return caught.value


def _times(values):
    """A timer that gives each label its value (1.0 for those not named) and records what it was asked."""
    asked = []

    def times(device, stream, src, dst, candidates):
        asked.append((device, stream, src, dst, list(candidates)))
        return {label: values.get(label, 1.0) for label in candidates}
    return times, asked


def test_a_faster_candidate_is_kept_and_launched():
    shape, dims = (32, 28, 28, 512), (0, 3, 1, 2)
    untuned = _untuned(shape, dims, 2)
    assert untuned.signature == (shape, dims, 2, 0, 0, 0)
    times, asked = _times({"128x64/8w": 0.5})
    tuning = tune.tune(untuned, SRC, 7, lambda nbytes: DST, times)
    assert tuning.chosen == "128x64/8w" and tuning.us["planned"] == 1.0 and tuning.us["128x64/8w"] == 0.5
    assert asked[0][:4] == (0, 7, SRC, DST) and asked[0][4][0] == tune.PLANNED
    assert tune.tunings == [tuning] and tune.is_tuned(untuned.signature)
    launches, _ = tune.tuned_template(shape, dims, 2, 0, 0, 0, GRID)
    tile = TileConfig(2, 128, 64, 8, 8, 8)
    assert launches == permute_template(shape, dims, 2, 0, 0, GRID, tile)[0]
    assert launches != permute_template(shape, dims, 2, 0, 0, GRID)[0]
    assert tune.tune(untuned, SRC, 7, lambda nbytes: DST, times) is None and len(asked) == 1  # tuned once


def test_the_planner_is_kept_within_the_margin():
    untuned = _untuned((4096, 4096), (1, 0), 2)
    times, _ = _times({"128x128/8w": 1.0 / (1 + tune.AUTOTUNE_MARGIN) + 1e-9})
    assert tune.tune(untuned, SRC, 0, lambda nbytes: DST, times).chosen == tune.PLANNED
    launches, _ = tune.tuned_template((4096, 4096), (1, 0), 2, 0, 0, 0, GRID)
    assert launches == permute_template((4096, 4096), (1, 0), 2, 0, 0, GRID)[0]


def test_what_is_not_tuned_is_the_planners():
    for shape, dims, itemsize in (((8, 2048, 8, 128), (0, 2, 1, 3), 2), ((64, 64), (1, 0), 4),
                                  ((2048, 4095), (1, 0), 2)):  # a row move, and transposes under AUTOTUNE_MIN_BYTES
        launches = tune.tuned_template(shape, dims, itemsize, 0, 0, 0, GRID)
        assert launches == permute_template(shape, dims, itemsize, 0, 0, GRID)
    assert tune.tunings == []
    assert 2 * 2 * 2048 * 4096 == tune.AUTOTUNE_MIN_BYTES  # one column more: tuned
    _untuned((2048, 4096), (1, 0), 2)


def test_signatures_are_kept_apart():
    first = _untuned((32, 28, 28, 512), (0, 3, 1, 2), 2)
    tune.tune(first, SRC, 0, lambda nbytes: DST, _times({"128x64/8w": 0.5})[0])
    other = _untuned((32, 28, 28, 512), (0, 3, 1, 2), 4)  # another element size: another signature
    with pytest.raises(tune.Untuned, match="is not tuned yet"):
        tune.tuned_template((32, 28, 28, 512), (0, 3, 1, 2), 2, 0, 0, 1, GRID)  # another device
    assert other.signature != first.signature
    tune.clear()
    assert tune.tunings == [] and not tune.is_tuned(first.signature)
    _untuned((32, 28, 28, 512), (0, 3, 1, 2), 2)


def test_choices_are_bounded_least_recently_asked_for_forgotten(monkeypatch):
    monkeypatch.setattr(tune, "AUTOTUNE_SIGNATURES", 2)
    first, second = _untuned((32, 28, 28, 512), (0, 3, 1, 2), 2), _untuned((32, 28, 28, 512), (0, 3, 1, 2), 4)
    for untuned in (first, second):
        tune.tune(untuned, SRC, 0, lambda nbytes: DST, _times({})[0])
    tune.tuned_template((32, 28, 28, 512), (0, 3, 1, 2), 2, 0, 0, 0, GRID)  # the first, asked for again
    tune.tuned_template((64, 64), (1, 0), 4, 0, 0, 0, GRID)  # not tuned (small): kept as such, the second forgotten
    assert tune.is_tuned(first.signature) and not tune.is_tuned(second.signature)
    third = _untuned((32, 28, 28, 512), (0, 3, 1, 2), 8)
    tune.tune(third, SRC, 0, lambda nbytes: DST, _times({})[0])
    assert [t.signature for t in tune.tunings] == [second.signature, third.signature]
    assert not tune.is_tuned(first.signature) and tune.is_tuned(third.signature)
    _untuned((32, 28, 28, 512), (0, 3, 1, 2), 4)  # forgotten: tuned again at its next call


@pytest.mark.parametrize("name, value", [("AUTOTUNE", 1), ("AUTOTUNE_MIN_BYTES", 0), ("AUTOTUNE_ROUNDS", 2.5),
                                         ("AUTOTUNE_MARGIN", -0.1), ("AUTOTUNE_WINDOW_US", True),
                                         ("AUTOTUNE_SIGNATURES", 0), ("AUTOTUNE_MARGIN", float("nan")),
                                         ("AUTOTUNE_WINDOW_US", float("inf"))])
def test_settings_are_checked(monkeypatch, name, value):
    monkeypatch.setattr(tune, name, value)
    with pytest.raises(LayoutError, match=name):
        tune.tuned_template((4096, 4096), (1, 0), 2, 0, 0, 0, GRID)


@pytest.mark.parametrize("value", [0, None, "yes"])
@pytest.mark.parametrize("framework", ["torch", "cupy"])
def test_autotune_other_than_a_bool_is_refused_by_the_calls(monkeypatch, value, framework):
    from harness.fakes import FakeCuda, FakeTorchTensor, install

    from linear_layouts import ops
    from tests.ops.test_arguments import FakeArray

    install(monkeypatch, FakeCuda())
    monkeypatch.setattr(tune, "AUTOTUNE", value)  # 0 and None read as off before: a setting silently taken
    x, out = ((FakeTorchTensor((256, 256), 2), None) if framework == "torch" else
              (FakeArray((256, 256), np.float16), FakeArray((256, 256), np.float16, pointer=(1 << 40) + (1 << 20))))
    with pytest.raises(LayoutError, match="AUTOTUNE: must be True or False"):  # the fast path, the general one
        ops.permute(x, (1, 0), out=out)
    assert not tune.tunings


def test_the_fast_path_tunes_once_then_launches_the_choice(monkeypatch):
    from harness.fakes import FakeCuda, FakeTorchTensor, install

    from linear_layouts import ops

    cuda = FakeCuda()
    loaded = install(monkeypatch, cuda)
    monkeypatch.setattr(tune, "AUTOTUNE", True)
    shape, dims = (32, 28, 28, 512), (0, 3, 1, 2)
    grid = GridShape(132)
    chosen = permute_template(shape, dims, 2, 0, 0, grid, TileConfig(2, 128, 64, 8, 8, 8))[0][0][0]
    planned = permute_template(shape, dims, 2, 0, 0, grid)[0][0][0]
    assert chosen != planned
    cuda.launch_ms = lambda launch: 0.25 if loaded[launch["function"]] == chosen else 1.0
    x = FakeTorchTensor(shape, 2)
    y = ops.permute(x, dims)
    tuning = tune.tunings[-1]
    assert tuning.chosen == "128x64/8w" and tuning.signature == (shape, dims, 2, 0, 0, 0)
    assert tuning.us["128x64/8w"] == 250.0 and tuning.us[tune.PLANNED] == 1000.0  # µs a call, by the fake's clock
    assert cuda.synchronized == [0x5000] * 3  # the call's stream, once before each batch of windows
    compiled = [source for source, _ in cuda.compiled]  # every candidate's kernel, compiled ahead, once
    assert {arch for _, arch in cuda.compiled} == {"sm_90"} and chosen.source in compiled
    assert len(compiled) == len(set(compiled)) == len(tuning.us)
    timed = len(cuda.launches) - 1
    assert loaded[cuda.launches[-1]["function"]] == chosen and cuda.launches[-1]["stream"] == 0x5000
    assert FakeCuda.unpack(cuda.launches[-1], ArgumentPacking.of(chosen.params))[:2] == (x.data_ptr(), y.data_ptr())
    ops.permute(FakeTorchTensor(shape, 2), dims)  # the same signature: no timing, the choice
    assert len(cuda.launches) == timed + 2 and loaded[cuda.launches[-1]["function"]] == chosen
    assert len(tune.tunings) == 1
    monkeypatch.setattr(tune, "AUTOTUNE", False)  # off: the planner's again
    ops.permute(FakeTorchTensor(shape, 2), dims)
    assert loaded[cuda.launches[-1]["function"]] == planned


def test_a_captured_first_call_is_not_tuned(monkeypatch):
    from harness.fakes import FakeCuda, FakeTorchTensor, install

    from linear_layouts import ops

    cuda = FakeCuda()
    loaded = install(monkeypatch, cuda)
    monkeypatch.setattr(tune, "AUTOTUNE", True)
    cuda.capturing.add(0x5000)
    shape, dims = (32, 28, 28, 512), (0, 3, 1, 2)
    ops.permute(FakeTorchTensor(shape, 2), dims)
    planned = permute_template(shape, dims, 2, 0, 0, GridShape(132))[0][0][0]
    assert len(cuda.launches) == 1 and loaded[cuda.launches[0]["function"]] == planned and tune.tunings == []
    cuda.capturing.clear()
    ops.permute(FakeTorchTensor(shape, 2), dims)
    assert len(tune.tunings) == 1 and len(cuda.launches) > 3


def test_candidates_the_device_refuses_are_left_out(monkeypatch):
    """A candidate whose kernel does not load (too much shared memory for the device, say) is not timed; a timing
    whose launch fails keeps the planner's launches."""
    from harness.fakes import FakeCuda, install

    cuda = FakeCuda()
    loaded = install(monkeypatch, cuda)
    prepare = tune._launch.prepare
    refused = TileConfig(2, 128, 128, 8, 8, 8)
    big = permute_template((32, 28, 28, 512), (0, 3, 1, 2), 2, 0, 0, GRID, refused)[0][0][0]

    def picky(kernel, device, ctas, follows_ours=False):
        if kernel == big:
            raise RuntimeError("cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) failed: CUDA_ERROR_INVALID_VALUE")
        return prepare(kernel, device, ctas, follows_ours)

    monkeypatch.setattr(tune._launch, "prepare", picky)
    untuned = _untuned((32, 28, 28, 512), (0, 3, 1, 2), 2)
    assert "128x128/8w" in tune._candidates(untuned.signature, GRID)[0]
    tuning = tune.tune(untuned, SRC, 0x5000, lambda nbytes: DST)
    assert "128x128/8w" not in tuning.us and tune.PLANNED in tuning.us and len(tuning.us) >= 8
    assert all(loaded[launch["function"]] != big for launch in cuda.launches)
    tune.clear()
    cuda.status = 700  # every launch fails: the planner's, untimed
    tuning = tune.tune(_untuned((32, 28, 28, 512), (0, 3, 1, 2), 2), SRC, 0x5000, lambda nbytes: DST)
    assert tuning.us == {} and tuning.chosen == tune.PLANNED
    cuda.status = 0
    launches, _ = tune.tuned_template((32, 28, 28, 512), (0, 3, 1, 2), 2, 0, 0, 0, GRID)
    assert launches == permute_template((32, 28, 28, 512), (0, 3, 1, 2), 2, 0, 0, GRID)[0]
    tune.clear()

    def no_memory(nbytes):
        raise MemoryError("out of memory allocating the scratch output")

    launched = len(cuda.launches)
    tuning = tune.tune(_untuned((32, 28, 28, 512), (0, 3, 1, 2), 2), SRC, 0x5000, no_memory)
    assert tuning.us == {} and tuning.chosen == tune.PLANNED and len(cuda.launches) == launched


@pytest.mark.parametrize("input_format, m, n, offsets", [
    ("bf16", 64, 128, (0, 0, 0)), ("fp32", 96, 64, (0, 0, 0)), ("bf16", 48, 80, (0, 0, 8)),
    ("fp16", 33, 45, (0, 0, 0)), ("bf16", 40, 72, (2, 8, 8)), ("fp32", 17, 29, (4, 1, 3))])
def test_every_cast_choice_casts_exactly(input_format, m, n, offsets):
    """Each of ``cast_choices`` (tiles where rows align, misaligned kernels else) gives PyTorch's cast bits."""
    from tests.ops._emulated import emulated_cast_transpose, fp8_reference

    rng = np.random.default_rng(3)
    dtype = {"bf16": np.uint16, "fp16": np.float16, "fp32": np.float32}[input_format]
    if input_format == "bf16":
        values = (rng.standard_normal((m, n)).astype(np.float32) * 8).view(np.uint32) >> 16
        raw, real = values.astype(np.uint16), (values << 16).view(np.float32)
    else:
        real = (rng.standard_normal((m, n)) * 8).astype(dtype)
        raw = real.view(np.uint16 if dtype == np.float16 else np.uint32)
    expected = fp8_reference(real, "e4m3", 0.37).reshape(m, n)
    xo, oo, to = offsets
    choices = L.cast_choices(input_format, m, n, SRC + xo, DST + oo, (3 << 40) + to)
    assert choices
    for choice in [None, *choices]:
        option = {"misaligned": choice} if isinstance(choice, str) else {"tile": choice}
        out, out_t, amax = emulated_cast_transpose(raw, input_format, "e4m3", 0.37, 0.0, offsets, GRID, **option)
        assert np.array_equal(out, expected) and np.array_equal(out_t, expected.T), choice
        assert amax == float(np.abs(real.astype(np.float32)).max())


def test_cast_choices_and_their_tuning():
    assert [tune.tune_label(t) for t in L.cast_choices("bf16", 4096, 4096, 0, 0, 0)] == [
        "128x128/8w", "64x128/4w", "256x64/8w", "128x64/4w", "64x64/4w v16/16"]
    assert L.cast_choices("bf16", 4095, 11007, 0, 0, 0) == ["flat", "chunked", "realigned", "scalar"]
    assert L.cast_choices("bf16", 4095, 11007, 2, 0, 0) == ["realigned", "scalar"]  # x not 16-byte aligned
    with pytest.raises(LayoutError, match="is not a cast tile"):
        L.cast_launches("bf16", "e4m3", 4096, 4096, 0, 0, 0, None, 1.0, 64, GRID, tile=TileConfig(2, 64, 64, 4, 8, 8))
    args = ("bf16", "e4m3", 4095, 11007, 0, 0, 0, None, 1.0, 1 << 20, 0, GRID)
    with pytest.raises(tune.Untuned, match="is not tuned yet") as caught:
        tune.tuned_cast_launches(*args)
    untuned = caught.value
    assert untuned.signature == ("cast", "bf16", "e4m3", 4095, 11007, 0, 0, 0, 0)
    candidates, nbytes = tune._candidates(untuned.signature, GRID)
    assert list(candidates)[0] == tune.PLANNED and "realigned" in candidates and nbytes >= 2 * 4095 * 11007
    times, asked = _times({"realigned": 0.5})
    assert tune.tune(untuned, SRC, 0, lambda n: DST, times).chosen == "realigned"
    got = tune.tuned_cast_launches(*args)
    assert got == L.cast_launches(*args[:10], GRID, "realigned") != L.cast_launches(*args[:10], GRID)
    small = ("bf16", "e4m3", 256, 512, 0, 0, 0, None, 1.0, 1 << 20, 0, GRID)  # under AUTOTUNE_MIN_BYTES
    assert tune.tuned_cast_launches(*small) == L.cast_launches(*small[:10], GRID)


def test_a_cast_tunes_through_the_driver(monkeypatch):
    """The cast's candidates launched and timed through the (fake) driver as ``ops.cast_transpose`` launches them:
    their arguments packed (a null scale pointer as 0), the fastest kept, its launches then the call's."""
    from harness.fakes import FakeCuda, install

    cuda = FakeCuda()
    loaded = install(monkeypatch, cuda)
    args = ("bf16", "e4m3", 4095, 11007, 0, 0, 0, None, 1.0, 1 << 20, 0, GridShape(132))
    with pytest.raises(tune.Untuned, match="is not tuned yet") as caught:
        tune.tuned_cast_launches(*args)
    realigned = L.cast_launches(*args[:10], GridShape(132), "realigned")[0].kernel
    cuda.launch_ms = lambda launch: 0.5 if loaded[launch["function"]] == realigned else 1.0
    tuning = tune.tune(caught.value, SRC, 0x5000, lambda nbytes: DST)
    assert tuning.chosen == "realigned" and set(tuning.us) == {"planned", "chunked", "realigned", "scalar"}
    timed = [launch for launch in cuda.launches if loaded[launch["function"]] == realigned]
    values = FakeCuda.unpack(timed[0], ArgumentPacking.of(realigned.params))
    assert values[0] == SRC and values[3] == 0 and values[4] == 1.0  # x, no scale pointer, the scale 1.0
    assert tune.tuned_cast_launches(*args)[0].kernel == realigned


@pytest.mark.parametrize("value, on", [("1", True), ("yes", True), (" 1 ", True), ("0", False), ("", False),
                                       (None, False)])
def test_the_environment_sets_the_default(value, on):
    """``LINEAR_LAYOUTS_AUTOTUNE`` read as ``LINEAR_LAYOUTS_PURE_PYTHON`` is: set to anything but 0, on."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "LINEAR_LAYOUTS_AUTOTUNE"}
    if value is not None:
        env["LINEAR_LAYOUTS_AUTOTUNE"] = value
    done = subprocess.run([sys.executable, "-c", "from linear_layouts.ops import tune; print(tune.AUTOTUNE)"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == str(on), done.stderr[-500:]


def test_compile_ahead_compiles_each_kernel_once_on_threads_and_leaves_failures_to_prepare(monkeypatch):
    import threading

    from linear_layouts.ops import launch

    grid = GridShape(132)
    kernels = [launches[0][0] for launches in (permute_template((4096, 4096), (1, 0), 2, 0, 0, grid, tile)[0]
                                               for tile in transpose_candidates(_problem((4096, 4096), (1, 0), 2),
                                                                                0, 0, grid)[:6])]
    threads, seen = set(), []
    barrier = threading.Barrier(2, timeout=10)  # two compiles at once, or the test times out

    def compile_cubin_bytes(source, arch, prefer):
        threads.add(threading.get_ident())
        seen.append((source, arch, prefer))
        if len(seen) <= 2:
            barrier.wait()
        if source == kernels[1].source:
            raise RuntimeError("ptxas: out of resources")
        return b""

    monkeypatch.setattr(launch, "compile_cubin_bytes", compile_cubin_bytes)
    monkeypatch.setattr(launch, "device_arch", lambda device: "sm_90")
    monkeypatch.setattr(launch.os, "cpu_count", lambda: 4)
    launch.compile_ahead(kernels + kernels[:2], 0)
    assert sorted(s for s, _, _ in seen) == sorted({k.source for k in kernels})
    assert all(arch == "sm_90" and prefer == launch.COMPILER for _, arch, prefer in seen) and len(threads) >= 2
    launch.compile_ahead(kernels[:1], 0)  # one kernel: prepare compiles it, nothing ahead
    assert len(seen) == len(set(k.source for k in kernels))
