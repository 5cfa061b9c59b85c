"""The odd-shape fp8 cast-transpose's two passes (``codegen.cast_flat``, then the byte transpose of ``C``) with
``C`` kept in L2 between them (device experiment).

The flat path reads ``X``, writes ``C``, then reads ``C`` back to write ``T``: 5 bytes an element for bf16 where the
fused kernels move 4. ``C`` (one byte an element) often fits in L2 while ``X`` does not; this times, together, the
flat path as it is and variants that keep ``C`` there: ``X`` read as streaming (``ld.global.cs``: L2 evicts it
first), the byte transpose taking its tiles in reverse order (the last-written part of ``C`` first), ``T`` stored as
streaming (``st.global.cs``), each alone and together; every ``C``, ``T`` and amax checked against PyTorch.

    PYTHONPATH=src:benchmarks python3 benchmarks/cast_l2_bench.py --out DIR          # device (compiles by NVRTC)
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)

#: (rows, cols, input dtype): odd shapes whose ``C`` is below, near and above the H200's 60 MiB of L2.
CASES = ((4095, 11007, "bfloat16"), (4097, 11009, "float16"), (2170, 15915, "bfloat16"), (6007, 7001, "bfloat16"),
         (3001, 5003, "bfloat16"), (4095, 11007, "float32"), (8191, 8193, "bfloat16"), (13213, 5385, "bfloat16"))

_LOAD = "return *reinterpret_cast<const uint4*>(x + f);"
_STORE = "ll_stg128(p, x.x, x.y, x.z, x.w); }"
_TILE = "unsigned t = blockIdx.x;"
#: variant -> (X streaming, transpose reversed, T streaming)
VARIANTS = {"flat": (False, False, False), "x_cs": (True, False, False), "reverse": (False, True, False),
            "x_cs+reverse": (True, True, False), "x_cs+reverse+t_cs": (True, True, True),
            "x_cs+t_cs": (True, False, True)}


def _variant(kernel, label: str, x_cs: bool, reverse: bool, t_cs: bool):
    """``kernel`` (the flat cast or the byte transpose) with the variant's hints, under a name of its own."""
    source = kernel.source
    if kernel.name.startswith("ll_cast_flat") and x_cs:
        assert _LOAD in source
        source = source.replace(_LOAD, "return __ldcs(reinterpret_cast<const uint4*>(x + f));")
    if kernel.name.startswith("ll_permute"):  # the byte transpose, or the tiled one where it takes C's transpose
        if reverse:
            source = source.replace(_TILE, "unsigned t = gridDim.x - 1u - blockIdx.x;")
        if t_cs:  # the byte transpose's 16-byte stores of T
            source = source.replace(_STORE, "__stcs(reinterpret_cast<uint4*>(p), x); }")
    if source == kernel.source:
        return kernel
    name = f"{kernel.name}_{label.replace('+', '_')}"
    return dataclasses.replace(kernel, name=name, source=source.replace(kernel.name, name))


def measure(out: Path) -> dict:
    import torch

    from harness import ops_cases
    from linear_layouts.ops import launch
    from linear_layouts.ops.launches import Launch, cast_launches
    from ops_bench import _same, _time_together

    env, device, copy_tbs = ops_cases.device_run_setup()
    fp8 = torch.float8_e4m3fn
    rows = []
    for m, n, dtype in CASES:
        x = torch.randn(m, n, device="cuda", dtype=getattr(torch, dtype))
        want = (x.float() * 0.5).to(fp8)
        want_t = want.t().contiguous()
        fmt = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}[dtype]
        fns, correct = {}, {}
        for label, flags in VARIANTS.items():
            c, t = torch.empty(m, n, dtype=fp8, device="cuda"), torch.empty(n, m, dtype=fp8, device="cuda")
            amax = torch.zeros(1, device="cuda")
            items = cast_launches(fmt, "e4m3", m, n, x.data_ptr(), c.data_ptr(), t.data_ptr(), None, 0.5,
                                  amax.data_ptr(), device, "flat")
            items = [dataclasses.replace(i, kernel=_variant(i.kernel, label, *flags)) if isinstance(i, Launch) else i
                     for i in items]
            run = ops_cases.runner(items)
            run()
            torch.cuda.synchronize()
            correct[label] = _same(c, want) and _same(t, want_t) and float(amax) == float(x.float().abs().max())
            fns[label] = run
        us = _time_together(fns)
        moved = x.numel() * (x.element_size() + 2)
        rows.append(dict(shape=[m, n], dtype=dtype, c_mib=round(m * n / 2**20, 1), correct=correct,
                         us={k: round(v, 2) for k, v in us.items()},
                         of_copy={k: round(moved / v / 1e6 / copy_tbs, 4) for k, v in us.items()}))
        print(rows[-1], flush=True)
    result = dict(environment=env, copy_tb_per_s=copy_tbs, l2_bytes=device.l2_bytes, rows=rows,
                  compiled=len(launch.compile_log))
    out.mkdir(parents=True, exist_ok=True)
    (out / "cast_l2.json").write_text(json.dumps(result, indent=1))
    return result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="/tmp/cast_l2")
    measure(Path(ap.parse_args(argv).out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
