"""Whole-row moves (a permutation that keeps the last dim) at rows tiles of 2-16 KiB a CTA, 4 and 8 warps, against
``ops``' tile and eager: the scan ``kernels.ROWS_THREAD_BYTES`` was chosen on (the held-out runs' row moves, odd and
aligned). Each variant is checked bit for bit; all of a case's are timed together (CUDA graphs of 20 launches).

    PYTHONPATH=src python3 benchmarks/rows_tile_scan.py prepare          # CPU: the cubins
    PYTHONPATH=src python3 benchmarks/rows_tile_scan.py run OUT.json     # device
"""
from __future__ import annotations

import json
import os
import sys

import harness  # puts src/ on the path

os.environ.setdefault("LINEAR_LAYOUTS_CACHE", str(harness.BUILD / "rows_tile_scan" / "cache"))

from harness import ops_cases  # noqa: E402

ITEM = ops_cases.ITEMSIZE
CASES = [((437, 488, 401), (1, 0, 2), "uint8"), ((521, 113, 145), (1, 0, 2), "float16"),
         ((480, 489, 87), (1, 0, 2), "float16"), ((263, 533, 257), (1, 0, 2), "float16"),
         ((567, 595, 331), (1, 0, 2), "uint8"), ((520, 584, 243), (1, 0, 2), "float16"),
         ((215, 456, 373), (1, 0, 2), "float32"), ((200, 112, 59), (1, 0, 2), "float16"), ((48, 144, 155), (1, 0, 2), "uint8"),
         ((8, 2048, 8, 127), (0, 2, 1, 3), "bfloat16"), ((4, 1000, 12, 66), (0, 2, 1, 3), "float16"),
         ((8, 4232, 20, 96), (0, 2, 1, 3), "uint8"), ((8, 2048, 8, 128), (0, 2, 1, 3), "bfloat16"),
         ((2, 6728, 25, 112), (0, 2, 1, 3), "float16"), ((1, 608, 64, 32), (0, 2, 1, 3), "uint8"),
         ((2, 431, 52, 32), (0, 2, 1, 3), "bfloat16"), ((4, 5352, 20, 32), (0, 2, 1, 3), "float16"),
         ((216, 551, 160), (1, 0, 2), "uint8"), ((577, 160, 592), (1, 0, 2), "uint8")]
def variants(shape, dims, w, src, dst, device):
    from linear_layouts.ops.launches import permute_launches, _plan, pointer_alignment
    from linear_layouts.ops.kernels import TileConfig, rows_tile
    from linear_layouts.ops.plan import vector_elements
    out = {"ops": permute_launches(shape, dims, w, src, dst, device)}
    problem = _plan(shape, dims, w, pointer_alignment(src % 32, dst % 32))
    base = rows_tile(w, vector_elements(w, problem.cols, src % 32, dst % 32), problem.cols)
    for kib in (2, 4, 8, 16):
        m = max(base.rows, kib * 1024 // (base.cols * w))
        for warps in (4, 8):
            cfg = TileConfig(w, m, base.cols, warps, base.src_vector, base.dst_vector, 1, transposed=False)
            out[f"{kib}K/{warps}w"] = permute_launches(shape, dims, w, src, dst, device, cfg)
    return out
if sys.argv[1] == "prepare":
    from linear_layouts.ops.kernels import GridShape
    dev = GridShape(132, 60 << 20)
    srcs = set()
    for shape, dims, dt in CASES:
        srcs |= ops_cases.launch_sources(variants(shape, dims, ITEM[dt], 1 << 40, 2 << 40, dev).values())
    print(ops_cases.compile_sources(srcs, "sm_90", 2))
else:
    import gpu_suite
    from harness.timing import time_together
    from linear_layouts.ops import launch
    dev = launch.grid_shape(0)
    copy = gpu_suite.copy_bandwidth()["tb_per_s"]
    rows = []
    for shape, dims, dt in CASES:
        w = ITEM[dt]
        x, out, exp = ops_cases.permute_buffers(shape, dims, dt)
        n = x.numel()
        fns, row = {}, dict(shape=shape, dims=dims, dtype=dt, kernels={})
        for label, items in variants(shape, dims, w, x.data_ptr(), out.data_ptr(), dev).items():
            fns[label], ok = ops_cases.checked_runner(items, out, exp)
            k = items[0].kernel
            row["kernels"][label] = dict(ok=ok, tile=[k.tile_rows, k.tile_cols, k.threads // 32], ctas=items[0].ctas)
        fns["eager"] = lambda: x.permute(dims).contiguous()
        for label, us in time_together(lambda fn: gpu_suite._time(fn, repeats=5, inner=20), fns).items():
            row["kernels"].setdefault(label, {}).update(us=round(us, 3), of_copy=round(2 * n * w / us / 1e6 / copy, 3))
        rows.append(row)
        print(shape, dims, dt, {k: (v["us"], v["of_copy"], v.get("ok")) for k, v in row["kernels"].items()}, flush=True)
    json.dump(rows, open(sys.argv[2], "w"), indent=1)
