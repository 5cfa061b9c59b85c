"""The cases of ``linear_layouts.ops`` on the device: the GPU tests' (``tests/ops/test_gpu.py``) and the sweep's
(``ops_bench.py``), and every kernel they launch, so that the CPU compiles them all ahead of time
(``precompile``; the device then finds the cubins in the carried kernel cache).

Sweep shapes: the paper's Figure 2 (fp8 transposes of ``M x N``), weight matrices of 7B- and 70B-class models
(``4096 x 11008``, ``8192 x 28672``, ...), attention's ``[B, S, H, D] <-> [B, H, S, D]``, NCHW <-> NHWC of
ResNet-50 activations, small launch-bound shapes, and the fp8 cast-transpose of weights and activations.
"""

from __future__ import annotations

import dataclasses
import os
from concurrent.futures import ThreadPoolExecutor

from linear_layouts.target import TARGETS

__all__ = ["GPU_DTYPES", "GPU_PERMUTES", "GPU_TRANSPOSES", "GPU_CASTS", "GPU_SPECIAL", "SWEEP", "CASTS",
           "sweep_cases", "sanitize_cases", "byte_tile_cases", "device_run_setup", "GPU_BYTES", "GPU_BYTES_OFFSETS", "GPU_BYTES_FORCED",
           "GPU_BYTE_TILES", "kernel_sources", "precompile", "tile_alternatives", "runner", "random_tensor",
           "checked_runner", "compile_contenders", "launched_tile", "permute_buffers", "cast_buffers", "checked_cast_runner", "run_cases", "bench_permutation", "SMS", "L2_BYTES", "LARGE_BYTES"]

#: SMs and L2 bytes of the device the cubins are prepared for (an H200): the tile choice depends on them.
SMS = TARGETS["H200"].sms
L2_BYTES = TARGETS["H200"].l2_bytes
#: Bytes from which a sweep case is "large" (the issue's bandwidth targets).
LARGE_BYTES = 16 << 20

#: Bytes per element of the dtypes used here (PyTorch names).
ITEMSIZE = {"float8_e4m3fn": 1, "uint8": 1, "int8": 1, "bool": 1, "bfloat16": 2, "float16": 2, "float32": 4,
            "int64": 8, "float64": 8, "complex128": 16}

# --------------------------------------------------------------------------------------------- GPU tests
GPU_DTYPES = ("float8_e4m3fn", "uint8", "bfloat16", "float16", "float32", "int64", "complex128", "bool")
GPU_PERMUTES = (
    ((37, 50), (1, 0)), ((131, 67), (1, 0)), ((1, 1), (1, 0)), ((3, 5), (1, 0)), ((1, 300), (1, 0)),
    ((0, 7), (1, 0)), ((513, 1023), (1, 0)), ((4096, 1024), (1, 0)), ((3, 257, 129), (0, 2, 1)),
    ((2, 77, 12, 64), (0, 2, 1, 3)), ((2, 77, 12, 3), (0, 2, 1, 3)), ((2, 77, 12, 2), (0, 2, 1, 3)),
    ((4, 64, 14, 14), (0, 2, 3, 1)), ((4, 14, 14, 64), (0, 3, 1, 2)), ((2, 3, 2, 3, 2, 3, 4), (6, 5, 4, 3, 2, 1, 0)),
    ((5, 1, 7, 1, 3), (2, 4, 0, 1, 3)), ((6, 8, 10), (0, 1, 2)), ((6, 8, 10), (2, 0, 1)),
    ((2051, 1568), (1, 0)), ((2, 2053, 96), (0, 2, 1)),  # odd output rows from 2048: the chunked transpose
    ((1283, 1571), (1, 0)),  # odd rows on both sides: the chunked transpose of misaligned input rows
    ((4, 3, 37, 41), (0, 2, 3, 1)), ((300, 5), (1, 0)),  # skinny: 3 channels, 5 columns
    ((4, 32, 32, 3), (0, 3, 1, 2)), ((4, 3, 32, 32), (0, 2, 3, 1)), ((2, 64, 64, 9), (0, 3, 1, 2)),  # interleave
    ((1000, 2), (1, 0)), ((2, 5000), (1, 0)),  # interleave kernel, a partial last tile (where the vectors fit)
    ((3, 17, 17, 3), (0, 3, 1, 2)), ((2, 5, 35, 35), (0, 2, 3, 1)), ((1031, 7), (1, 0)),  # odd and small: tiles
    ((8, 299, 299, 3), (0, 3, 1, 2)), ((4, 3, 299, 299), (0, 2, 3, 1)), ((300007, 7), (1, 0)),  # odd, from 2 MiB:
    ((2, 64, 64, 19), (0, 3, 1, 2)), ((110377, 19), (1, 0)),  # the interleave kernel's _any form; 4-byte vectors
    ((3, 1, 699053), (1, 0, 2)),  # the identity in memory from 2 MiB: the flat copy kernel
    ((8, 1024, 14, 14), (0, 2, 3, 1)), ((8, 28, 28, 512), (0, 3, 1, 2)),  # folded batches (launches.fold_side)
    ((16, 7, 7, 2048), (0, 3, 1, 2)),
)
GPU_TRANSPOSES = (((8192, 8192), ("uint8", "bfloat16", "float32")), ((4096, 11008), ("uint8", "bfloat16", "float32", "float64")),
                  ((3, 1000, 999), ("uint8", "bfloat16", "float32", "float64")),
                  ((2, 7), ("uint8", "bfloat16", "float32", "float64")), ((128, 128), ("uint8", "bfloat16", "float32", "float64")),
                  ((24, 80, 12552), ("bfloat16", "float16")))  # from DRAM: kernels.dram_tile, masked edges both ways
GPU_CASTS = ((8192, 8192), (4096, 11008), (130, 272), (45, 77), (4, 33, 64), (1, 16), (7,), (256, 512), (30, 7),
             (520, 256), (4104, 8192), (4112, 8192), (4097, 4096))  # T's rows narrow / 16 bytes into a sector
#: Launches at other addresses than a fresh tensor's: (shape, dims, itemsize, source offset, destination offset).
GPU_SPECIAL = (((300, 200), (1, 0), 2, 0, 0), ((300, 200), (1, 0), 2, 2, 0), ((300, 200), (1, 0), 2, 0, 120000),
               ((5, 6, 7), (2, 0, 1), 4, 0, 0), ((5, 6, 7), (0, 2, 1), 4, 0, 0))

# --------------------------------------------------------------------------------------------- the sweep
_FIG2 = (512, 1024, 2048, 4096, 8192)
_WEIGHTS = ((4096, 4096), (4096, 11008), (11008, 4096), (8192, 8192), (8192, 28672), (28672, 8192), (8192, 1024))
_ATTENTION = ((8, 2048, 32, 128), (4, 4096, 64, 128), (8, 2048, 8, 128), (16, 1024, 16, 64))
_RESNET = ((32, 64, 112, 112), (32, 256, 56, 56), (32, 512, 28, 28), (32, 1024, 14, 14), (32, 2048, 7, 7))
_SMALL = (("small", (64, 64), (1, 0), "float32"), ("small", (256, 512), (1, 0), "bfloat16"),
          ("small", (2, 4, 16, 8), (0, 2, 1, 3), "float16"), ("small", (1, 64, 7, 7), (0, 2, 3, 1), "float16"),
          ("small", (8, 96, 97), (0, 2, 1), "float32"))


def sweep_cases() -> list[tuple[str, tuple[int, ...], tuple[int, ...], str]]:
    """``(class, shape, dims, dtype)`` of the permutation sweep, the largest classes first."""
    cases = [("fig2 fp8", (m, n), (1, 0), "float8_e4m3fn") for m in _FIG2 for n in _FIG2]
    cases += [("weights", shape, (1, 0), dtype) for shape in _WEIGHTS for dtype in ("float8_e4m3fn", "bfloat16")]
    cases += [("weights", shape, (1, 0), "float32") for shape in _WEIGHTS[:4]]
    cases += [("weights", (4096, 4096), (1, 0), "float64")]
    cases += [("attention BSHD->BHSD", shape, (0, 2, 1, 3), dtype) for shape in _ATTENTION
              for dtype in ("bfloat16", "float8_e4m3fn")]
    cases += [("attention BHSD->BSHD", shape, (0, 2, 1, 3), "bfloat16") for shape in _ATTENTION[:2]]
    cases += [("attention BSHD->BHSD", _ATTENTION[0], (0, 2, 1, 3), "float32")]
    cases += [("NCHW->NHWC", shape, (0, 2, 3, 1), dtype) for shape in _RESNET for dtype in ("float16", "float32")]
    cases += [("NHWC->NCHW", (b, h, w, c), (0, 3, 1, 2), "float16") for b, c, h, w in _RESNET]
    cases += list(_SMALL)
    return cases


SWEEP = tuple(sweep_cases())
#: fp8 cast-transposes: (shape, input dtype, fp8 dtype).
CASTS = tuple([((4096, 4096), "bfloat16", "float8_e4m3fn"), ((4096, 11008), "bfloat16", "float8_e4m3fn"),
               ((8192, 8192), "bfloat16", "float8_e4m3fn"), ((8192, 28672), "bfloat16", "float8_e4m3fn"),
               ((16384, 4096), "bfloat16", "float8_e4m3fn"), ((16384, 8192), "bfloat16", "float8_e5m2"),
               ((8192, 8192), "float16", "float8_e5m2"), ((8192, 8192), "float32", "float8_e4m3fn"),
               ((4096, 11008), "float32", "float8_e4m3fn"), ((4095, 11007), "bfloat16", "float8_e4m3fn"),
               ((256, 512), "bfloat16", "float8_e4m3fn")])

# --------------------------------------------------------------------------------------------- kernels
_BASE = 1 << 40  # a fresh tensor's address: 512-byte aligned
_OTHER = 2 << 40


def _tile_list(problem, src: int, dst: int, device, scan: bool) -> list:
    """The tiles to time of a transpose ``problem``: its list at 16-byte vectors (the sweep); ``scan``: the tiles
    autotuning times (``ops.launches.transpose_candidates``, the chunked transpose's among them)."""
    from linear_layouts.ops.kernels import transpose_tiles
    from linear_layouts.ops.launches import transpose_candidates

    w = problem.element_bytes
    if not scan:
        return transpose_tiles(w, 16 // w, 16 // w)
    return transpose_candidates(problem, src, dst, device)


def tile_alternatives(shape, dims, itemsize: int, src: int, dst: int, sms: int = SMS, l2_bytes: int = L2_BYTES,
                      scan: bool = False):
    """``{label: launches}``: a large batched transpose of 16-byte vectors at each tile of its list
    (``ops.kernels.transpose_tiles``), to time the planner's choice against the others; {} for other cases.
    ``scan``: any large batched transpose, at the tiles of ``_tile_list(scan=True)`` (labels carry the vectors
    and blocks where they are not 16 bytes)."""
    from linear_layouts.ops.kernels import GridShape, raster_order
    from linear_layouts.ops.launches import _plan, pointer_alignment, permute_launches
    from linear_layouts.ops.tune import tune_label
    from linear_layouts.ops.plan import PermuteKind

    problem = _plan(tuple(shape), tuple(dims), itemsize, pointer_alignment(src, dst))
    nbytes = itemsize
    for size in shape:
        nbytes *= size
    if problem.kind is not PermuteKind.TRANSPOSE or nbytes < LARGE_BYTES:
        return {}
    device = GridShape(sms, l2_bytes)
    out = {}
    for tile in _tile_list(problem, src, dst, device, scan):
        label = tune_label(tile) if scan else f"{tile.rows}x{tile.cols}/{tile.warps}w"
        try:
            out[label] = permute_launches(shape, dims, itemsize, src, dst, device, tile)
        except Exception:  # noqa: BLE001 - a tile the problem's vectors do not allow: left out
            continue
    if scan:
        return out
    chosen = permute_launches(shape, dims, itemsize, src, dst, device)[0].kernel
    for tile in _tile_list(problem, src, dst, device, scan):  # the planner's tile without its min CTAs (and dividing)
        if (tile.rows, tile.cols, tile.threads) == (chosen.tile_rows, chosen.tile_cols, chosen.threads):
            for suffix, fast in (("unbounded", True), ("unbounded div", False)):
                kernel = unbounded_kernel(tile, chosen.batch_dims, fast, raster_order(tile, 2 * nbytes, device))
                out[f"{tile.rows}x{tile.cols}/{tile.warps}w {suffix}"] = [  # the divider arguments come last
                    dataclasses.replace(item, kernel=kernel, values=item.values[:len(kernel.params)])
                    if hasattr(item, "kernel") else item
                    for item in permute_launches(shape, dims, itemsize, src, dst, device, tile)]
    return out


def runner(launches, device: int = 0, dependent: bool | None = None):
    """A function that launches ``launches`` (``ops.launches``' list: its ``Launch`` items) on PyTorch's current
    stream of ``device``: how the benchmarks run our kernels at a chosen tile; ``dependent``: True or False
    forces programmatic dependent launch on or off for every launch (None: as the ops launch them,
    ``ops.launch.DEPENDENT_LAUNCH``)."""
    import dataclasses

    import torch

    from linear_layouts.ops import launch
    from linear_layouts.ops.launches import Launch

    items = [item for item in launches if isinstance(item, Launch)]
    if dependent is not None:
        prepared = [(dataclasses.replace(launch.prepare(item.kernel, device, item.ctas), dependent=dependent),
                     [0 if v is None else v for v in item.values]) for item in items]

        def run_prepared():
            stream = torch.cuda.current_stream().cuda_stream
            for launched, values in prepared:
                launched.run(stream, values)

        return run_prepared

    def run():
        stream = torch.cuda.current_stream().cuda_stream
        for i, item in enumerate(items):
            launch.launch(item.kernel, device, stream, item.ctas, item.values, i > 0)

    return run


def random_tensor(shape, dtype: str):
    """A CUDA tensor of ``shape`` and PyTorch dtype ``dtype`` holding random bits (any pattern: NaNs, subnormals)."""
    import torch

    w = ITEMSIZE[dtype]
    numel = 1
    for size in shape:
        numel *= size
    return torch.randint(0, 256, (numel * w,), dtype=torch.uint8, device="cuda").view(getattr(torch, dtype)).view(shape)


def bit_equal(a, b) -> bool:
    """Two PyTorch tensors equal bit for bit (NaNs too), shape and dtype alike; compared in their logical row-major
    order (``flat_bytes``)."""
    import torch

    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return not a.numel() or bool(torch.equal(flat_bytes(a), flat_bytes(b)))


def flat_bytes(x):
    """The bytes of ``x`` in its logical row-major order, as a new 1-D tensor (a tensor PyTorch calls contiguous may
    carry any stride on a size-1 dim, which ``view`` as bytes refuses)."""
    import torch

    return x.reshape(-1).clone(memory_format=torch.contiguous_format).view(torch.uint8)


def permute_buffers(shape, dims, dtype: str):
    """``(x, out, expected)`` of a permutation on the GPU: ``random_tensor(shape, dtype)``, an empty contiguous output
    of the permuted shape, and PyTorch's ``x.permute(dims).contiguous()``."""
    import torch

    x = random_tensor(shape, dtype)
    out = torch.empty(tuple(shape[d] for d in dims), dtype=x.dtype, device="cuda")
    return x, out, x.permute(dims).contiguous()


def checked_runner(items, out, expected, fill=None):
    """``(run, correct)``: ``runner(items)``, run once after filling ``fill`` (default: ``out``) with 0xAB, and
    whether it left ``out`` equal to ``expected`` bit for bit."""
    import torch

    run = runner(items)
    (out if fill is None else fill).view(torch.uint8).fill_(0xAB)
    run()
    torch.cuda.synchronize()
    return run, bool(torch.equal(out.contiguous().view(torch.uint8), expected.contiguous().view(torch.uint8)))


def cast_buffers(m: int, n: int, fmt: str, scale: float = 0.37):
    """``(x, c, t, amax, expected)`` of an fp8 e4m3 cast-transpose on the GPU: ``x`` an ``m x n`` tensor of ``fmt``
    (``bf16``, ``fp16``, ``fp32``; normal values times 300), empty ``C`` and ``T`` bytes, a zeroed amax and PyTorch's
    cast of ``scale x`` (saturated) as bytes."""
    import torch

    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[fmt]
    x = (torch.randn(m, n, device="cuda") * 300).to(dtype)
    c = torch.empty(m, n, dtype=torch.uint8, device="cuda")
    t = torch.empty(n, m, dtype=torch.uint8, device="cuda")
    amax = torch.zeros(1, device="cuda")
    expected = (x.float() * scale).clamp(-448, 448).to(torch.float8_e4m3fn).view(torch.uint8)
    return x, c, t, amax, expected


def checked_cast_runner(items, buffers):
    """``(run, items, correct)``: ``runner`` of a cast-transpose's launches ``items`` with the amax of ``buffers``
    (``cast_buffers``') put in, the launches as run, and whether one run from zeroed outputs wrote ``C``, ``T`` and
    the amax bit for bit as PyTorch."""
    import torch

    from linear_layouts.ops.launches import Launch

    x, c, t, amax, expected = buffers
    items = [Launch(i.kernel, i.ctas, i.values[:5] + (amax.data_ptr(),) + i.values[6:]) for i in items]
    run = runner(items)
    for buffer in (c, t, amax):
        buffer.zero_()
    run()
    torch.cuda.synchronize()
    return run, items, bool(torch.equal(c, expected) and torch.equal(t, expected.t().contiguous())
                            and float(amax[0]) == float(x.float().abs().max()))


def bench_permutation(shape, dims, dtype: str, contenders, device, copy_tbs: float, time, describe) -> dict:
    """One case of a permutation benchmark on the GPU: ``{shape, dims, dtype, mib, kernels}``, each label of
    ``contenders(shape, dims, itemsize, src, dst, device)`` (``{label: launches}``) checked against PyTorch
    (``checked_runner``: ``correct``) and described (``describe(launches)``: more keys), then all of them timed
    together with eager and a same-size copy (``time_with_peers`` with ``time``: ``us``, ``tbs``, ``of_copy``)."""
    w = ITEMSIZE[dtype]
    x, out, expected = permute_buffers(shape, dims, dtype)
    numel = x.numel()
    row = dict(shape=list(shape), dims=list(dims), dtype=dtype, mib=round(numel * w / 2**20, 2), kernels={})
    fns = {}
    for label, items in contenders(shape, dims, w, x.data_ptr(), out.data_ptr(), device).items():
        fns[label], correct = checked_runner(items, out, expected)
        row["kernels"][label] = dict(correct=correct, **describe(items))
    time_with_peers(time, fns, x, dims, numel * w, copy_tbs, row["kernels"])
    return row


def launched_tile(items) -> dict:
    """``bench_permutation``'s ``describe`` for tiled launches: the tile of the first kernel of ``items``
    (``"RxC/Ww"``) and the CTAs of all of them."""
    from linear_layouts.ops.launches import Launch

    launched = [i for i in items if isinstance(i, Launch)]
    kernel = launched[0].kernel
    return dict(tile=f"{kernel.tile_rows}x{kernel.tile_cols}/{kernel.threads // 32}w", ctas=sum(i.ctas for i in launched))


def run_cases(groups, modules=("torch", "numpy")) -> tuple[dict, float, list]:
    """``(env, copy_tbs, rows)`` of a benchmark's device run on device 0: for each ``(cases, bench)`` of ``groups``,
    ``bench(*case, device, copy_tbs)`` of every case in order (the device's ``GridShape``, the 1 GiB copy's TB/s),
    a line printed after each and PyTorch's cached memory freed; ``env``: the environment (``modules``' versions)
    with the seconds taken."""
    import time

    import torch

    import gpu_suite
    from harness.environment import environment
    from linear_layouts.ops import launch

    start = time.time()
    env = environment(modules=modules, device=True)
    device = launch.grid_shape(0)
    copy_tbs = gpu_suite.copy_bandwidth()["tb_per_s"]
    rows = []
    for cases, bench in groups:
        for case in cases:
            rows.append(bench(*case, device, copy_tbs))
            print(f"{case}: {time.time() - start:.0f} s", flush=True)
            torch.cuda.empty_cache()
    env["seconds"] = round(time.time() - start, 1)
    return env, copy_tbs, rows


def unbounded_kernel(config, batch_dims: int, fast_divide: bool = True, raster: str = "n"):
    """The tiled kernel of ``config`` as ``ops.kernels.permute_kernel`` emits it (in order ``raster``, the planner's:
    the arguments, its dividers, follow it) but with no minimum of CTAs per SM in its ``__launch_bounds__``;
    ``fast_divide=False``: its tile index divided by division instructions too (as before either change; the
    masked stores are the current ones), to time each change."""
    from linear_layouts.codegen.permute import emit_tiled_permute_kernel
    from linear_layouts.codegen.plan import conversion_step, kernel_name
    from linear_layouts.ops.kernels import tile_layouts

    src, dst = tile_layouts(config)
    step = conversion_step(src, dst, 8 * config.element_bytes)
    name = kernel_name("ll_permute_unbounded" if fast_divide else "ll_permute_div", config, batch_dims,
                       *(("raster m",) if raster == "m" else ()))
    return emit_tiled_permute_kernel(name, src, dst, config.element_bytes, step, transposed=config.transposed,
                                     batch_dims=batch_dims, fast_divide=fast_divide, raster=raster)


#: The GPU tests' batches of small blocks (``tests/ops/test_gpu_small.py``), most of which take the small-block
#: kernel (``launches.small_blocks``): (shape, dims); a tiny batch of 2 and one of 4 small images too.
GPU_SMALL = (
    ((1000000, 2, 2), (0, 2, 1)), ((100000, 3, 5), (0, 2, 1)), ((100000, 8, 8), (0, 2, 1)),
    ((10000, 7, 7, 3), (0, 3, 1, 2)), ((10000, 3, 7, 7), (0, 2, 3, 1)), ((77777, 4, 4), (0, 2, 1)),
    ((3001, 2, 3, 4), (0, 3, 2, 1)), ((5000, 4, 4, 16), (0, 2, 1, 3)), ((20000, 3, 3), (0, 2, 1)),
    ((600, 7, 7, 3), (0, 3, 1, 2)), ((2, 3, 3), (0, 2, 1)), ((4, 32, 32, 3), (0, 3, 1, 2)),
)
#: Their element types (PyTorch names) and sizes.
GPU_SMALL_DTYPES = {"uint8": 1, "float16": 2, "float32": 4, "int64": 8, "complex128": 16}
#: Byte transposes ``ops`` gives the byte transpose (``codegen.permute_bytes``), and the output offsets tried.
GPU_BYTES = (((6049, 8459), (1, 0)), ((9, 2829, 3087), (0, 2, 1)), ((547, 466, 561), (2, 1, 0)),
             ((11335, 4099), (1, 0)))
GPU_BYTES_OFFSETS = (0, 3, 16)
#: Smaller byte transposes at each of ``GPU_BYTE_TILES`` (forced: ``(rows, cols, warps, granule bytes)``), and on
#: a device of a 4 KiB L2 (raster order "m"): also the sanitizer's.
GPU_BYTES_FORCED = (((1031, 777), (1, 0), 3, 5), ((3, 517, 389), (0, 2, 1), 0, 7), ((389, 5, 517), (2, 1, 0), 1, 0))
GPU_BYTE_TILES = ((128, 64, 5, 32), (128, 128, 9, 16), (128, 128, 12, 64), (64, 128, 6, 32))


def kernel_sources(sms: int = SMS) -> list[str]:
    """The source of every kernel the GPU tests and the sweep launch (fresh, aligned tensors), the sweep's
    tile alternatives and the sanitizer run's (``sanitize_cases``, for ``ops_sanitize.py``)."""
    from linear_layouts.ops.kernels import GridShape
    from linear_layouts.ops.launches import Launch, cast_launches, permute_launches

    device = GridShape(sms, L2_BYTES)

    sources: dict[str, None] = {}

    def add(launches):
        for item in launches:
            if isinstance(item, Launch):
                sources[item.kernel.source] = None

    for shape, dims in GPU_PERMUTES:
        for dtype in GPU_DTYPES:
            add(permute_launches(shape, dims, ITEMSIZE[dtype], _BASE, _OTHER, device))
    for shape, dtypes in GPU_TRANSPOSES:
        dims = tuple(range(len(shape) - 2)) + (len(shape) - 1, len(shape) - 2)
        for dtype in dtypes:
            add(permute_launches(shape, dims, ITEMSIZE[dtype], _BASE, _OTHER, device))
    for shape, dims, itemsize, so, do in GPU_SPECIAL:
        add(permute_launches(shape, dims, itemsize, _BASE + so, _OTHER + do, device))
    for _, shape, dims, dtype in SWEEP:
        add(permute_launches(shape, dims, ITEMSIZE[dtype], _BASE, _OTHER, device))
    from linear_layouts.ops import launches as _launches

    small_batches = _launches.SMALL_BATCHES
    try:
        for on in (True, False):  # the small-block kernels, and what the off switch takes
            _launches.SMALL_BATCHES = on
            for shape, dims in GPU_SMALL:
                for itemsize in GPU_SMALL_DTYPES.values():
                    add(permute_launches(shape, dims, itemsize, _BASE, _OTHER, device))
    finally:
        _launches.SMALL_BATCHES = small_batches
    for shape, dims in GPU_BYTES:
        for offset in GPU_BYTES_OFFSETS:
            add(permute_launches(shape, dims, 1, _BASE, _OTHER + offset, device))
        for launches in tile_alternatives(shape, dims, ITEMSIZE[dtype], _BASE, _OTHER, sms).values():
            add(launches)
    casts = [(shape, dtype) for shape in GPU_CASTS for dtype in ("bfloat16", "float16", "float32")]
    casts += [(shape, dtype) for shape, dtype, _ in CASTS] + [((5, 6, 7), "float32")]
    for shape, dtype in casts:
        n = shape[-1]
        m = 1
        for size in shape[:-1]:
            m *= size
        fmt = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}[dtype]
        for fp8 in ("e4m3", "e5m2"):
            add(cast_launches(fmt, fp8, m, n, _BASE, _OTHER, 3 << 40, None, 1.0, 4 << 40, device))
    for case in sanitize_cases(sms, L2_BYTES):
        add(case["launches"])
    return list(sources)


#: The sanitizer run's transposes: (shape, dims, element bytes, source offset, destination offset); each tile of the list is run.
SANITIZE_TILED = (((2, 272, 288), (0, 2, 1), 1), ((2, 136, 144), (0, 2, 1), 2), ((2, 68, 72), (0, 2, 1), 4),
         ((2, 34, 36), (0, 2, 1), 8))
#: Other permutations with the planner's own tile: (shape, dims, element bytes, source offset, destination offset).
#: Row moves the realigned rows kernels take (``codegen.realign_rows``: the chunk kernel for rows under 32 bytes, the
#: span kernel from 32), planned for a 1-SM device (4 CTAs or more: ``REALIGNED_MIN_CTAS_PER_SM``):
#: (shape, dims, element bytes, input offset, output offset), odd rows at every alignment, up to 3 batch dims.
SANITIZE_REALIGNED = (((40, 30, 17), (1, 0, 2), 1, 3, 13), ((6, 8, 10, 19), (2, 0, 1, 3), 1, 15, 1),
                      ((64, 33, 37), (1, 0, 2), 4, 4, 0), ((2, 300, 3, 37), (0, 2, 1, 3), 2, 2, 6),
                      ((1, 300, 3, 37), (0, 2, 1, 3), 1, 0, 0), ((30, 40, 19), (1, 0, 2), 1, 0, 1),
                      ((4, 5, 6, 7, 33), (3, 1, 0, 2, 4), 1, 7, 9))
#: Skinny transposes whose output rows 16 bytes do not align, planned for a device of one SM and 64 KiB of L2 so that
#: they move more than it holds and keep ``kernels.SKINNY_MISALIGNED_RUN_BYTES``' longer tiles (no grid to fill):
#: ``(shape, dims, w, src offset, dst offset)``.
SANITIZE_SKINNY = (((4001, 24), (1, 0), 2, 0, 0), ((3, 2001, 23), (0, 2, 1), 4, 0, 4), ((1501, 29), (1, 0), 8, 0, 8),
                   ((2, 1999, 17), (0, 2, 1), 2, 4, 2))
#: fp64 transposes of odd sides within the L2 that take ``kernels.TINY_TILE`` (``L2_TINY_ELEMENT_BYTES``) on the
#: sanitizer's device: ``(shape, dims, w, src offset, dst offset)``.
SANITIZE_TINY_FP64 = (((47, 67, 115), (0, 2, 1), 8, 0, 8), ((9, 131, 257), (0, 2, 1), 8, 8, 0))
SANITIZE_OTHERS = (((3, 77, 5, 64), (0, 2, 1, 3), 2, 0, 0), ((40, 24), (1, 0), 2, 2, 0), ((37, 50), (1, 0), 1, 0, 3),
          ((131, 67), (1, 0), 4, 0, 0), ((2051, 1568), (1, 0), 2, 0, 6), ((3, 2053, 64), (0, 2, 1), 4, 0, 4),
          ((1031, 256), (1, 0), 1, 0, 3), ((2053, 64), (1, 0), 8, 0, 8), ((5, 3, 40, 41), (0, 2, 3, 1), 2, 0, 0),
          ((1031, 257), (1, 0), 4, 4, 4), ((1033, 77), (1, 0), 2, 2, 0), ((2, 1029, 35), (0, 2, 1), 1, 3, 1),
          ((2, 64, 64, 3), (0, 3, 1, 2), 1, 0, 0), ((2, 3, 64, 64), (0, 2, 3, 1), 2, 0, 0),  # the interleave kernel
          ((1000, 9), (1, 0), 1, 0, 0), ((3, 1000), (1, 0), 4, 0, 16),
          ((8, 299, 299, 3), (0, 3, 1, 2), 1, 0, 5), ((4, 3, 299, 299), (0, 2, 3, 1), 2, 2, 0),
          ((262147, 9), (1, 0), 1, 8, 3), ((2, 64, 64, 19), (0, 3, 1, 2), 1, 0, 0), ((110377, 19), (1, 0), 1, 3, 5),
          ((3, 1, 174763), (1, 0, 2), 4, 0, 0), ((3145749, 1), (1, 0), 1, 1, 0),  # the flat copy kernel: 16-byte,
          ((1, 1048587), (1, 0), 2, 2, 0), ((5, 1, 299999), (1, 0, 2), 4, 8, 0),  # 1-, 2- and 8-byte vectors
          ((1001, 2, 2), (0, 2, 1), 1, 3, 5), ((777, 3, 5), (0, 2, 1), 4, 4, 8),  # batches of small blocks:
          ((513, 8, 8), (0, 2, 1), 2, 2, 6), ((129, 2, 3, 4), (0, 3, 2, 1), 8, 8, 0),  # the small-block kernel
          ((50000, 3, 3), (0, 2, 1), 2, 0, 2),
          ((300, 2, 3, 63), (0, 3, 2, 1), 1, 1, 3), ((200, 4, 11, 11), (0, 2, 3, 1), 1, 0, 1),  # tiny tiled CTAs,
          ((140, 3, 63, 63), (0, 3, 2, 1), 2, 0, 2), ((133, 2, 40, 31), (0, 3, 2, 1), 8, 8, 0),  # blocks to 32 KiB
          ((3, 16, 7, 7), (0, 2, 3, 1), 2, 0, 0), ((3, 7, 7, 40), (0, 3, 1, 2), 4, 0, 4),  # folded batches: the
          ((5, 70, 14, 14), (0, 2, 3, 1), 8, 0, 0),  # last matrix's last tile ends where the buffer ends
          ((8, 2048, 8, 128), (0, 2, 1, 3), 2, 0, 0))  # a row move beyond the L2: the 8-warp tile
#: Views with gaps (``apply_view`` steps) that end where their base ends, so that a read past the last element
#: leaves the buffer: ``(base shape, element bytes, steps, dims)``.
SANITIZE_VIEWS = (((97, 130), 2, (("index", ((0, 97, 1), (30, 130, 1))),), (1, 0)),
                  ((97, 130), 4, (("index", ((0, 97, 1), (30, 130, 1))), ("transpose", (1, 0))), (0, 1)),
                  ((5, 40, 288), 2, (("reshape", (5, 40, 3, 4, 24)), ("index", ((0, 5, 1), (0, 40, 1), 2))),
                   (0, 2, 1, 3)),
                  ((61, 77), 1, (("index", ((0, 61, 1), (0, 77, 2))),), (1, 0)),
                  ((33, 100), 8, (("index", ((3, 33, 1), (50, 100, 1))),), (1, 0)),
                  ((1, 300), 4, (("expand", (64, 300)),), (1, 0)),
                  ((40, 90), 2, (("index", ((0, 40, 1), (1, 90, 2))),), (1, 0)))  # gathered first
#: Outputs with gaps (``apply_view`` steps of an output buffer) that end where their buffer ends: ``(input shape,
#: element bytes, dims, output buffer shape, steps)``.
SANITIZE_OUT_VIEWS = (((2, 40, 4, 64), 2, (0, 2, 1, 3), (2, 4, 100, 64),
                       (("index", ((0, 2, 1), (0, 4, 1), (60, 100, 1))),)),  # a KV cache's last window
                      ((37, 50), 1, (1, 0), (50, 41), (("index", ((0, 50, 1), (4, 41, 1))),)),
                      ((64, 100), 4, (1, 0), (100, 200), (("index", ((0, 100, 1), (136, 200, 1))),)),
                      ((6, 5), 4, (1, 0), (6, 8), (("transpose", (1, 0)), ("index", ((3, 8, 1), (0, 6, 1))))))


def apply_view(x, steps):
    """``x`` (a NumPy array or a PyTorch tensor) viewed by ``steps``, each ``("index", (a, ...))`` (``a`` an index
    or ``(start, stop, step)``), ``("reshape", shape)`` (a view: no copy), ``("transpose", order)`` or
    ``("expand", shape)``: ``apply_view(y, (("index", ((0, 4, 1), (2, 9, 1))),))`` is ``y[0:4, 2:9]``."""
    import numpy as np

    torch_tensor = hasattr(x, "is_cuda")
    for kind, arg in steps:
        if kind == "index":
            x = x[tuple(slice(*a) if isinstance(a, tuple) else a for a in arg)]
        elif kind == "reshape":
            if torch_tensor:
                x = x.view(*arg)
            else:
                x = x.view()
                x.shape = arg  # NumPy refuses where the view would need a copy, as torch's view does
        elif kind == "transpose":
            x = x.permute(*arg) if torch_tensor else x.transpose(arg)
        elif kind == "expand":
            x = x.expand(*arg) if torch_tensor else np.broadcast_to(x, arg)
        else:
            raise ValueError(f"steps: unknown view step {kind!r}")
    return x


def view_launches(view, dims, src: int, dst: int, device, scratch: int = 3 * _BASE, out_strides=None) -> list:
    """``ops.permute``'s launches for a NumPy ``view`` whose first element is at ``src`` (its dims in memory order,
    read at its strides: ``api._memory``), the output at ``dst`` (at ``out_strides`` where it is a view with gaps), a
    gather first into ``scratch`` where the op takes one (``plan.gathers_first``)."""
    from linear_layouts.ops import api, launches
    from linear_layouts.ops.tensors import Tensor, is_contiguous

    w = view.itemsize
    t = Tensor("cupy", None, tuple(view.shape), tuple(s // w for s in view.strides), w, None, 0, src)
    m, composed = api._memory(t, tuple(dims))
    return launches.view_launches(m.shape, composed, w, src, dst, device, None if is_contiguous(m) else m.strides,
                                  scratch, out_strides)
#: The sanitizer run's misaligned cast-transposes, each by the realigned, the scalar and the chunked kernel (the
#: scalar one where the offsets do not allow the chunked one): (rows, cols, input format, fp8, byte offsets of X, C
#: and T).
SANITIZE_CASTS = ((131, 259, "bf16", "e4m3", (2, 3, 5)), (133, 70, "fp32", "e5m2", (4, 1, 7)),
         (257, 300, "fp16", "e4m3", (0, 0, 0)), (1, 30, "bf16", "e5m2", (6, 0, 9)),
         (200, 1100, "bf16", "e5m2", (2, 3, 1)), (131, 300, "fp32", "e4m3", (4, 7, 5)),
         (131, 259, "bf16", "e4m3", (16, 8, 24)), (133, 70, "fp32", "e5m2", (0, 4, 12)), (3, 5, "fp16", "e5m2", (0, 0, 0)))


def byte_tile_cases(sms: int = SMS, l2_bytes: int = L2_BYTES) -> list[dict]:
    """``GPU_BYTES_FORCED`` at each of ``GPU_BYTE_TILES`` (raster order "n"), and at the first on a 4 KiB L2 (raster
    order "m"): their launches for made-up aligned bases plus the offsets."""
    from linear_layouts.ops.kernels import ByteTile, GridShape
    from linear_layouts.ops.launches import permute_launches

    out = []
    for shape, dims, so, do in GPU_BYTES_FORCED:
        for tile, l2 in [(t, l2_bytes) for t in GPU_BYTE_TILES] + [(GPU_BYTE_TILES[0], 4096)]:
            out.append(dict(kind="permute", shape=shape, dims=dims, w=1, offsets=(so, do),
                            tile=f"bytes {tile}" + (" raster m" if l2 == 4096 else ""),
                            launches=permute_launches(shape, dims, 1, _BASE + so, 2 * _BASE + do,
                                                      GridShape(sms, l2), ByteTile(*tile))))
    return out


def sanitize_cases(sms: int = SMS, l2_bytes: int = L2_BYTES) -> list[dict]:
    """Each case: its kind, sizes, offsets and the launches planned for made-up aligned bases plus the offsets."""
    from linear_layouts.ops.kernels import SHARED_SECTOR_TILES, GridShape, TileConfig, transpose_tiles
    from linear_layouts.ops.launches import MISALIGNED_CASTS, cast_launches, permute_launches

    device = GridShape(sms, l2_bytes)
    out = []
    for shape, dims, w in SANITIZE_TILED:
        tiles = list(transpose_tiles(w, 16 // w, 16 // w))
        if w == 2:  # kernels.dram_tile's form and the ldmatrix.trans conversion
            tiles += [dataclasses.replace(tiles[1], warps=8, row_lanes=4), dataclasses.replace(tiles[1], ldmatrix=True)]
        if w in SHARED_SECTOR_TILES:  # kernels.shared_sector_tile's
            (m, n, warps, block) = SHARED_SECTOR_TILES[w][0]
            tiles.append(TileConfig(w, m, n, warps, 16 // w, 16 // w, block))
        for tile in tiles:
            out.append(dict(kind="permute", shape=shape, dims=dims, w=w, offsets=(0, 0), tile=str(tile),
                            launches=permute_launches(shape, dims, w, _BASE, 2 * _BASE, device, tile)))
    for shape, dims, w, so, do in SANITIZE_OTHERS:
        out.append(dict(kind="permute", shape=shape, dims=dims, w=w, offsets=(so, do),
                        launches=permute_launches(shape, dims, w, _BASE + so, 2 * _BASE + do, device)))
    for shape, dims, w, so, do in SANITIZE_REALIGNED:
        out.append(dict(kind="permute", shape=shape, dims=dims, w=w, offsets=(so, do), tile="realigned rows",
                        launches=permute_launches(shape, dims, w, _BASE + so, 2 * _BASE + do, GridShape(1, l2_bytes))))
    for shape, dims, w, so, do in SANITIZE_SKINNY:
        out.append(dict(kind="permute", shape=shape, dims=dims, w=w, offsets=(so, do), tile="skinny long runs",
                        launches=permute_launches(shape, dims, w, _BASE + so, 2 * _BASE + do, GridShape(1, 1 << 16))))
    for shape, dims, w, so, do in SANITIZE_TINY_FP64:
        out.append(dict(kind="permute", shape=shape, dims=dims, w=w, offsets=(so, do), tile="tiny fp64",
                        launches=permute_launches(shape, dims, w, _BASE + so, 2 * _BASE + do, device)))
    for m, n, fmt, fp8, (xo, co, to) in SANITIZE_CASTS:
        for misaligned in MISALIGNED_CASTS:  # the realigned kernel, the scalar one, the chunked one
            out.append(dict(kind="cast", shape=(m, n), fmt=fmt, fp8=fp8, offsets=(xo, co, to), tile=misaligned,
                            launches=cast_launches(fmt, fp8, m, n, _BASE + xo, 2 * _BASE + co, 3 * _BASE + to, None,
                                                   0.5, 4 * _BASE, device, misaligned)))
    out += byte_tile_cases(sms, l2_bytes)
    import numpy as np

    for base_shape, w, steps, dims in SANITIZE_VIEWS:
        base = np.empty(base_shape, np.dtype(f"u{w}"))
        view = apply_view(base, steps)
        offset = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
        out.append(dict(kind="view", shape=base_shape, w=w, steps=steps, dims=dims, offsets=(offset, 0),
                        launches=view_launches(view, dims, _BASE + offset, 2 * _BASE, device)))
    byte_window = ((600, 300), 1, (1, 0), (300, 613), (("index", ((0, 300, 1), (13, 613, 1))),))
    for (shape, w, dims, buffer, steps), grid in ([(case, device) for case in SANITIZE_OUT_VIEWS]
                                                  + [(byte_window, GridShape(sms, 4096))]):  # the byte transpose
        o = np.empty(buffer, np.dtype(f"u{w}"))
        window = apply_view(o, steps)
        offset = window.__array_interface__["data"][0] - o.__array_interface__["data"][0]
        out_strides = tuple(st // w for st in window.strides)
        out.append(dict(kind="view", shape=shape, w=w, steps=(), dims=dims, offsets=(0, offset), out_buffer=buffer,
                        out_steps=steps, launches=permute_launches(shape, dims, w, _BASE, 2 * _BASE + offset, grid,
                                                                   out_strides=out_strides)))
    tiny_l2 = GridShape(sms, 4096)  # the transposes, and the casts with narrow stores of T, in raster order "m"
    for shape, dims, w in SANITIZE_TILED:
        out.append(dict(kind="permute", shape=shape, dims=dims, w=w, offsets=(0, 0), tile="raster m",
                        launches=permute_launches(shape, dims, w, _BASE, 2 * _BASE, tiny_l2)))
    for m, n, fmt in ((301, 128, "bf16"), (255, 192, "fp32")):
        out.append(dict(kind="cast", shape=(m, n), fmt=fmt, fp8="e4m3", offsets=(0, 0, 0), tile="raster m",
                        launches=cast_launches(fmt, "e4m3", m, n, _BASE, 2 * _BASE, 3 * _BASE, None, 0.5, 4 * _BASE,
                                               tiny_l2)))
    return out


def compile_sources(sources, arch: str = "sm_90", workers: int = 0) -> tuple[int, float]:
    """Compile each of ``sources`` (kernel sources, repeats ignored) into the kernel cache (``$LINEAR_LAYOUTS_CACHE``)
    by the ops' compiler (``ops.launch.COMPILER``: NVRTC, else nvcc), ``workers`` at a time; returns ``(kernels,
    seconds)``."""
    import time

    from linear_layouts.codegen.ptx import compile_cubin
    from linear_layouts.ops.launch import COMPILER

    start = time.time()
    sources = sorted(set(sources))
    with ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 2) as pool:
        list(pool.map(lambda s: compile_cubin(s, arch, COMPILER), sources))
    return len(sources), time.time() - start


def compile_contenders(contenders, problems, cache, jobs: int) -> None:
    """Compile into ``cache`` (the kernel cache of a benchmark's run) for sm_90 every kernel ``contenders(shape,
    dims, itemsize, src, dst, device)`` (``{label: launches}``) launches for each ``(shape, dims, itemsize)`` of
    ``problems`` at fresh tensors' addresses on the sweep's device; prints what it did."""
    from pathlib import Path

    from linear_layouts.ops.kernels import GridShape

    device = GridShape(SMS, L2_BYTES)
    Path(cache).mkdir(parents=True, mode=0o700, exist_ok=True)
    sources = launch_sources(items for shape, dims, w in problems
                             for items in contenders(shape, dims, w, _BASE, _OTHER, device).values())
    n, seconds = compile_sources(sources, "sm_90", jobs)
    print(f"prepared {n} kernels for sm_90 in {seconds:.0f} s into {cache}")


def device_run_setup(modules=("torch", "numpy")) -> tuple[dict, object, float]:
    """``(environment, grid, copy TB/s)`` a device benchmark starts from: ``harness.environment``'s record (with
    ``modules``' versions and the device), device 0's ``GridShape`` and its 1 GiB copy bandwidth
    (``gpu_suite.copy_bandwidth``)."""
    from harness.environment import environment

    import gpu_suite
    from linear_layouts.ops import launch

    return environment(modules=modules, device=True), launch.grid_shape(0), gpu_suite.copy_bandwidth()["tb_per_s"]


def launch_sources(launch_lists) -> set[str]:
    """The kernel sources of every ``Launch`` in ``launch_lists`` (lists of launches and copies)."""
    return {item.kernel.source for items in launch_lists for item in items if hasattr(item, "kernel")}


def time_with_peers(time, fns: dict, x, dims, nbytes: int, copy_tbs: float, kernels: dict) -> dict:
    """``fns`` (label -> launch) timed together (``timing.time_together`` with ``time``) with PyTorch eager
    ``x.permute(dims).contiguous()`` and a same-size copy of 4-byte elements (``eager``, ``copy``); each label's
    ``us``, ``tbs`` (``2 nbytes`` moved) and ``of_copy`` (of ``copy_tbs``) into ``kernels[label]``, returned."""
    import torch

    from harness.timing import time_together

    words = -(-nbytes // 4)
    src, dst = (torch.empty(words, dtype=torch.int32, device=x.device) for _ in range(2))
    fns = dict(fns, eager=lambda: x.permute(dims).contiguous(), copy=lambda: dst.copy_(src))
    for label, value in time_together(time, fns).items():
        entry = kernels.setdefault(label, {})
        entry["us"] = round(value, 2)
        entry["tbs"] = round(2 * nbytes / value / 1e6, 3)
        entry["of_copy"] = round(entry["tbs"] / copy_tbs, 3)
    return kernels


def precompile(arch: str = "sm_90", workers: int = 0) -> tuple[int, float]:
    """Compile every ``kernel_sources()`` cubin into the kernel cache (``compile_sources``)."""
    return compile_sources(kernel_sources(), arch, workers)
