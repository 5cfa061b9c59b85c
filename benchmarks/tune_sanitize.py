"""compute-sanitizer (memcheck, racecheck) over every candidate autotuning (``ops.tune``) launches: small odd and
misaligned problems, tuned with ``AUTOTUNE_MIN_BYTES`` lowered to 1 and one launch a candidate, so that each
candidate of ``launches.transpose_candidates`` (and each of ``launches.cast_choices``) runs on edges its tile cuts.
The child calls ``ops.permute`` / ``ops.cast_transpose`` on PyTorch tensors with PyTorch's caching allocator off
(``PYTORCH_NO_CUDA_MEMORY_CACHING=1``: one ``cudaMalloc`` per tensor, the tuning's scratch too, so that memcheck
bounds each access by its own buffer; inputs at the cases' byte offsets) and checks each result against PyTorch.

    PYTHONPATH=src python3 benchmarks/tune_sanitize.py --mode prepare   # CPU: the candidates' cubins
    PYTHONPATH=src python3 benchmarks/tune_sanitize.py --out DIR        # device: writes tune_sanitize.json
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

import harness  # noqa: E402, F401  (puts src/ on the path)
from harness.sanitizer import sanitize_all  # noqa: E402

#: ``(shape, dims, dtype, byte offset of x)``: transposes whose tiles all cut edges (2-D, batched, NCHW <-> NHWC,
#: skinny), at aligned and misaligned bases.
PERMUTES = (
    ((67, 45), (1, 0), "float32", 0), ((3, 37, 70), (0, 2, 1), "uint8", 0), ((2, 9, 9, 40), (0, 3, 1, 2), "float16", 0),
    ((2, 24, 7, 7), (0, 2, 3, 1), "bfloat16", 0), ((301, 7), (1, 0), "float64", 0), ((5, 130), (1, 0), "uint8", 3),
    ((33, 66), (1, 0), "float16", 2), ((90, 44), (1, 0), "uint8", 0), ((2, 29, 31), (0, 2, 1), "float32", 4),
)
#: ``(m, n, input dtype, byte offset of x)`` of cast-transposes to e4m3: aligned rows, odd rows, a misaligned base.
CASTS = ((64, 96, "bfloat16", 0), (33, 45, "bfloat16", 0), (40, 72, "float32", 0), (37, 50, "float16", 2))


def _at_offset(torch, values, offset: int):
    """``values`` copied into a new buffer of its bytes, ``offset`` bytes past the buffer's start."""
    raw = torch.zeros(offset + values.numel() * values.element_size(), dtype=torch.uint8, device="cuda")
    x = raw[offset:].view(values.dtype).view(values.shape)
    x.copy_(values)
    return x


def child() -> None:
    import torch

    from linear_layouts import ops
    from linear_layouts.ops import tune

    tune.AUTOTUNE, tune.AUTOTUNE_MIN_BYTES, tune.AUTOTUNE_ROUNDS, tune.AUTOTUNE_WINDOW_US = True, 1, 1, 0.0
    torch.manual_seed(0)
    wrong = timed = 0

    def report(what: str, ok: bool, before: int) -> None:
        nonlocal wrong, timed
        ran = tune.tunings[before:]
        timed += len(ran[0].us) if ran else 0
        wrong += not ok
        print(f"{what}: {len(ran[0].us) if ran else 0} candidates run, chose {ran[0].chosen if ran else None}, "
              f"{'ok' if ok else 'WRONG'}", flush=True)

    for shape, dims, dtype, offset in PERMUTES:
        values = torch.randint(0, 255, shape, device="cuda").to(getattr(torch, dtype))
        x = _at_offset(torch, values, offset)
        before = len(tune.tunings)
        y = ops.permute(x, dims)
        report(f"{shape} {dims} {dtype} +{offset}", torch.equal(y, values.permute(dims).contiguous()), before)
    f8 = torch.float8_e4m3fn
    for m, n, dtype, offset in CASTS:
        values = (torch.randn(m, n, device="cuda") * 300).to(getattr(torch, dtype))
        x = _at_offset(torch, values, offset)
        expected = (values.float() * 0.37).clamp(-448, 448).to(f8).view(torch.uint8)
        before = len(tune.tunings)
        c, ct, amax = ops.cast_transpose(x, f8, 0.37)
        ok = (torch.equal(c.view(torch.uint8), expected) and torch.equal(ct.view(torch.uint8), expected.t().contiguous())
              and float(amax[0]) == float(values.float().abs().max()))
        report(f"cast {m} x {n} {dtype} +{offset}", ok, before)
    torch.cuda.synchronize()
    print(f"TUNE SANITIZE SUMMARY: {wrong} wrong of {len(PERMUTES) + len(CASTS)}, {timed} candidates run", flush=True)


def kernel_sources() -> list[str]:
    """The kernels the child's tunings launch (on an H200's ``GridShape``), for ``--mode prepare``."""
    from harness import ops_cases
    from linear_layouts.ops import tune
    from linear_layouts.ops.kernels import GridShape

    device = GridShape(ops_cases.SMS, ops_cases.L2_BYTES)
    tune.AUTOTUNE_MIN_BYTES = 1
    widths = {"uint8": 1, "float16": 2, "bfloat16": 2, "float32": 4, "float64": 8}
    formats = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}
    signatures = [(shape, dims, widths[dtype], offset, 0, 0) for shape, dims, dtype, offset in PERMUTES]
    signatures += [("cast", formats[dtype], "e4m3", m, n, offset, 0, 0, 0) for m, n, dtype, offset in CASTS]
    sources = {}
    for signature in signatures:
        for candidate in tune._candidates(signature, device)[0].values():
            sources.update((kernel.source, None) for kernel, _, _ in candidate.launches(1 << 40, 2 << 40))
    return list(sources)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mode", default="sanitize", choices=["sanitize", "child", "prepare"])
    ap.add_argument("--out", default=str(HERE / "build" / "tune_sanitize"))
    ap.add_argument("--timeout", type=int, default=200)
    args = ap.parse_args()
    if args.mode == "child":
        child()
        return
    if args.mode == "prepare":  # CPU: the cubins into $LINEAR_LAYOUTS_CACHE
        from harness import ops_cases

        count, seconds = ops_cases.compile_sources(kernel_sources(), "sm_90", 2)
        print(f"prepared {count} kernels in {seconds:.0f} s")
        return
    sanitize_all([sys.executable, __file__, "--mode", "child"], args.timeout, Path(args.out) / "tune_sanitize.json",
                 dict(os.environ, PYTORCH_NO_CUDA_MEMORY_CACHING="1"), tail=3000)


if __name__ == "__main__":
    main()
