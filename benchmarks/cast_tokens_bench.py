"""The fp8 cast-transpose of activations with a token count no multiple of 16: ``M`` odd (or 2, 4, 8 past 16), ``N``
a model's hidden size. ``X`` and ``C`` keep 16-byte rows; ``T``'s rows are ``M`` bytes, so its stores are as narrow
as ``M`` allows. ``ops`` (the tiled kernel, tall tiles for narrow stores) against the chunked kernel
(``codegen.cast_chunks``: aligned chunks of ``T``'s absolute positions) at its tiles; every output and the amax
checked bit for bit against PyTorch; all of a shape's contenders timed together (CUDA graphs of 20 launches).

    PYTHONPATH=src python3 benchmarks/cast_tokens_bench.py prepare          # CPU: the cubins
    PYTHONPATH=src python3 benchmarks/cast_tokens_bench.py run OUT.json     # device

Bandwidth counts ``X`` read once and ``C`` and ``T`` written once, against a 1 GiB copy's.
"""

from __future__ import annotations

import json
import os
import sys

import harness  # puts src/ on the path

os.environ.setdefault("LINEAR_LAYOUTS_CACHE", str(harness.BUILD / "cast_tokens" / "cache"))

from harness import ops_cases  # noqa: E402

#: (M, N, input format): odd token counts at 4K-16K tokens, the aligned shape, and M 2, 4, 8 past 16.
SHAPES = ((4095, 4096, "bf16"), (8191, 8192, "bf16"), (4097, 4096, "bf16"), (12289, 4096, "bf16"), (1023, 8192, "bf16"),
          (4095, 11008, "bf16"), (16383, 4096, "bf16"), (8190, 8192, "bf16"), (8196, 8192, "bf16"),
          (8200, 8192, "bf16"), (8192, 8192, "bf16"), (8191, 8192, "fp32"), (4095, 4096, "fp16"))
#: The chunked kernel's tiles (rows, columns, warps) beside its default (None); those a format does not take are
#: left out.
TILES = (None, (128, 64, 16), (64, 64, 16), (64, 64, 8), (32, 64, 4))
_AMAX = 5 << 40


def launches(m: int, n: int, fmt: str, x: int, c: int, t: int, device) -> dict:
    """``{label: launches}``: ``ops`` and the chunked kernel at each tile of ``TILES`` it takes (scale 0.37)."""
    from linear_layouts.core.errors import LayoutError
    from linear_layouts.ops.kernels import chunked_cast_kernel
    from linear_layouts.ops.launches import Launch, cast_launches

    out = {"ops": cast_launches(fmt, "e4m3", m, n, x, c, t, None, 0.37, _AMAX, device)}
    for tile in TILES:
        try:
            kernel = chunked_cast_kernel(fmt, "e4m3", tile, device.arch)
        except LayoutError:
            continue
        tm, tn = kernel.tile_counts(m, n)
        out[f"chunked {tile or 'default'}"] = [Launch(kernel, tm * tn, (x, c, t, None, 0.37, _AMAX, m, n, tn, tm))]
    return out


def prepare() -> None:
    from linear_layouts.ops.kernels import GridShape

    device = GridShape(ops_cases.SMS, ops_cases.L2_BYTES)
    sources = ops_cases.launch_sources(items for m, n, fmt in SHAPES
                                       for items in launches(m, n, fmt, 1 << 40, 2 << 40, 3 << 40, device).values())
    print(ops_cases.compile_sources(sources, "sm_90", 2))


def run(path: str) -> None:
    import gpu_suite
    from harness.environment import environment
    from harness.timing import time_together
    from linear_layouts.ops import launch

    device = launch.grid_shape(0)
    copy = gpu_suite.copy_bandwidth()["tb_per_s"]
    rows = []
    for m, n, fmt in SHAPES:
        w = 4 if fmt == "fp32" else 2
        buffers = ops_cases.cast_buffers(m, n, fmt)
        x, c, t = buffers[:3]
        fns, row = {}, dict(shape=(m, n, fmt), kernels={})
        for label, items in launches(m, n, fmt, x.data_ptr(), c.data_ptr(), t.data_ptr(), device).items():
            fns[label], items, ok = ops_cases.checked_cast_runner(items, buffers)
            row["kernels"][label] = dict(ok=ok, name=items[0].kernel.name)
        for label, us in time_together(lambda fn: gpu_suite._time(fn, repeats=5, inner=20), fns).items():
            row["kernels"][label].update(us=round(us, 2), of_copy=round(m * n * (w + 2) / us / 1e6 / copy, 3))
        rows.append(row)
        print(m, n, fmt, {k: (v["us"], v["of_copy"], v["ok"]) for k, v in row["kernels"].items()}, flush=True)
    env = environment(modules=("torch",), device=True)
    with open(path, "w") as f:
        json.dump(dict(environment=env, copy_tbs=copy, cases=rows), f, indent=1)


if __name__ == "__main__":
    if sys.argv[1:2] == ["prepare"]:
        prepare()
    elif sys.argv[1:2] == ["run"] and len(sys.argv) == 3:
        run(sys.argv[2])
    else:
        sys.exit(__doc__)
