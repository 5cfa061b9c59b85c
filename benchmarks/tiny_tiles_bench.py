"""Launch-bound transposes with narrow vectors: the lists' smallest tile against ``kernels.TINY_TILE`` (device).

A transpose whose output rows 16 bytes do not align takes ``choose_narrow_tile``'s list, which ends in 64 x 64 of 8
warps; a problem of a few hundred KiB then runs on a dozen CTAs (``[4, 7, 7, 160]`` fp32 NHWC -> NCHW: 12 tiles,
0.80x PyTorch eager in ``ops_heldout_19.md``). Each case times, together (``ops_bench._time_together``): ``ops``
(the planner as it is), the list's tile of most tiles, ``TINY_TILE``, Triton's ``tl.trans`` tiles (batched
transposes of the last two dims), PyTorch eager and a same-size copy; every output checked bit for bit.

    PYTHONPATH=src:benchmarks:/tmp/triton-3.6.0 python3 benchmarks/tiny_tiles_bench.py --mode prepare   # CPU
    PYTHONPATH=src:benchmarks python3 benchmarks/tiny_tiles_bench.py --out DIR          # device; carry
        benchmarks/build/tiny_tiles and benchmarks/build/triton_transpose
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)

HERE = Path(__file__).resolve().parent
CACHE = HERE / "build" / "tiny_tiles"
os.environ.setdefault("LINEAR_LAYOUTS_CACHE", str(CACHE))

#: (shape, dims, dtype): launch-bound permutations whose output rows take narrow vectors, none a case of the sweep or
#: of a held-out seed.
CASES = (((8, 14, 14, 72), (0, 3, 1, 2), "float16"), ((2, 28, 28, 120), (0, 3, 1, 2), "float32"),
         ((4, 120, 13, 13), (0, 2, 3, 1), "float16"), ((100, 75), (1, 0), "float32"), ((333, 211), (1, 0), "bfloat16"),
         ((3, 150, 99), (0, 2, 1), "float32"), ((16, 9, 9, 200), (0, 3, 1, 2), "float16"),
         ((1, 200, 23, 23), (0, 2, 3, 1), "float32"), ((6, 77, 300), (0, 2, 1), "bfloat16"),
         ((2, 45, 45, 96), (0, 3, 1, 2), "float32"))
_BASE, _OTHER = 1 << 40, 2 << 40
ITEMSIZE = {"float16": 2, "bfloat16": 2, "float32": 4}


def tiles(shape, dims, w: int, src: int, dst: int, device) -> dict:
    """``{label: launches}``: the narrow list's tile of most tiles (``most``) and ``TINY_TILE`` (``tiny``), where the
    problem is a transpose with narrow vectors."""
    from linear_layouts.core.errors import LayoutError
    from linear_layouts.ops.kernels import TINY_TILE, transpose_tiles
    from linear_layouts.ops.launches import _plan, permute_launches, pointer_alignment, transpose_vectors

    problem = _plan(tuple(shape), tuple(dims), w, pointer_alignment(src, dst))
    vin, vout, sectors = transpose_vectors(problem, src, dst, device)
    listed = transpose_tiles(w, vin, vout, sectors)
    most = max(listed, key=lambda c: c.tiles(problem.rows, problem.cols))
    tiny = dataclasses.replace(most, rows=TINY_TILE[0], cols=TINY_TILE[1], warps=TINY_TILE[2], block=1)
    out = {}
    for label, tile in (("most", most), ("tiny", tiny)):
        try:
            out[label] = permute_launches(tuple(shape), tuple(dims), w, src, dst, device, tile)
        except LayoutError:
            continue
    return out


def prepare() -> None:
    from harness.ops_cases import L2_BYTES, SMS, compile_sources, launch_sources
    from linear_layouts.ops.kernels import GridShape
    from linear_layouts.ops.launches import permute_launches

    device = GridShape(SMS, L2_BYTES)
    lists = []
    for shape, dims, dtype in CASES:
        lists.append(permute_launches(shape, dims, ITEMSIZE[dtype], _BASE, _OTHER, device))
        lists += list(tiles(shape, dims, ITEMSIZE[dtype], _BASE, _OTHER, device).values())
    count, seconds = compile_sources(launch_sources(lists), "sm_90")
    print(f"{count} cubins in {seconds:.0f} s into {CACHE}")
    import triton_transpose  # noqa: PLC0415 - Triton 3.6 (the device's) on the path

    triton_transpose.prepare({(ITEMSIZE[dtype], shape[-2] % 16 == 0, shape[-1] % 16 == 0)
                              for shape, dims, dtype in CASES if dims[-2:] == (len(shape) - 1, len(shape) - 2)})


def measure(out: Path) -> None:
    import torch

    import triton_transpose
    from ops_bench import _random, _same, _time_together
    from harness import ops_cases
    from linear_layouts import ops
    from linear_layouts.ops import launch

    triton = triton_transpose.TritonTransposes()
    device = launch.grid_shape(0)
    rows = []
    for shape, dims, dtype in CASES:
        x = _random(shape, dtype)
        expected = x.permute(dims).contiguous()
        y = torch.empty_like(expected)
        fns, correct = {}, {}
        for label, items in tiles(shape, dims, ITEMSIZE[dtype], x.data_ptr(), y.data_ptr(), device).items():
            run = ops_cases.runner(items)
            y.zero_()
            run()
            correct[label], fns[label] = _same(y, expected), run
        y.zero_()
        ops.permute(x, dims, out=y)
        correct["ops"], fns["ops"] = _same(y, expected), lambda: ops.permute(x, dims, out=y)
        if tuple(dims) == tuple(range(len(shape) - 2)) + (len(shape) - 1, len(shape) - 2):
            m, n = shape[-2], shape[-1]
            batch = x.numel() // (m * n)
            for tile, go in triton.launchers(ITEMSIZE[dtype], m, n).items():
                y.zero_()
                go(x.data_ptr(), y.data_ptr(), batch)
                correct[f"triton {tile}"] = _same(y, expected)
                fns[f"triton {tile}"] = lambda go=go: go(x.data_ptr(), y.data_ptr(), batch)
        fns["eager"], correct["eager"] = (lambda: x.permute(dims).contiguous()), True
        us = _time_together(fns)
        rows.append(dict(shape=list(shape), dims=list(dims), dtype=dtype,
                         kernels={k: dict(us=us[k], correct=correct[k]) for k in fns}))
        print(shape, dtype, {k: round(v, 2) for k, v in us.items()}, all(correct.values()), flush=True)
    out.mkdir(parents=True, exist_ok=True)
    env = dict(device=torch.cuda.get_device_name(0), torch=torch.__version__)
    (out / "tiny_tiles.json").write_text(json.dumps(dict(environment=env, rows=rows), indent=1))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", default="measure", choices=["prepare", "measure"])
    ap.add_argument("--out", default="/tmp/tiny_tiles")
    args = ap.parse_args(argv)
    if args.mode == "prepare":
        prepare()
    else:
        measure(Path(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
