"""Do the hook's variants compute what Triton's kernel computes, bit for bit? (device)

For each kernel file: Triton's kernel as the JIT compiles it, launched three times from the same saved inputs
(is Triton's own kernel deterministic?); then through our stage (``measure.compile_variant``) the variant of
Triton's own TTGIR (the round trip: printed, parsed back, lowered by Triton's later stages) and the variant of
our engine's TTGIR (measured mode's call), each launched from the same inputs. Per variant and tensor argument:
bit-identical to Triton's first run, else the largest difference and how many elements differ.

    PYTHONPATH=src:benchmarks python3 benchmarks/hook_variant_check.py benchmarks/heldout_kernels5/*.py --out DIR
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)
from harness.environment import environment
from harness.hook_launch import full_args, jit_source, launch_kwargs, launch_scalars, torch_args, why


def _state(tensors):
    return [t.clone() for t in tensors]


def _restore(tensors, saved):
    for t, s in zip(tensors, saved):
        t.copy_(s)


def _difference(a, b) -> dict:
    """Bit-identical, else the count of differing elements and the largest difference (as float64)."""
    import torch

    x, y = a.view(torch.uint8), b.view(torch.uint8)
    if torch.equal(x, y):
        return {"identical": True}
    if a.dtype.is_floating_point:
        u, v = a.double(), b.double()
        differ = ~((u == v) | (u.isnan() & v.isnan()))
        worst = float((u - v).abs()[differ].nan_to_num(float("inf")).max())
        return {"identical": False, "elements": int(differ.sum()), "largest": worst,
                "relative": worst / max(float(v.abs().max()), 1e-30)}
    differ = a != b
    return {"identical": False, "elements": int(differ.sum())}


def check(path: str) -> dict:
    import torch

    from linear_layouts.kernels.spec import load_kernel_file
    from linear_layouts.pipeline.triton_hook.measure import MEASURE_FLOOR, compile_variant, same_code
    from linear_layouts.pipeline.triton_hook.settings import settings_for
    from linear_layouts.pipeline.triton_hook.stage import engine_ttgir, text_digest

    import triton
    from triton.backends.compiler import GPUTarget

    import linear_layouts.triton as lt
    from triton.compiler.compiler import make_backend

    spec = load_kernel_file(path)
    row: dict = {"kernel": spec.name}
    if spec.needs_allocator:
        triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    args = torch_args(spec)
    tensors = [a for a in args if torch.is_tensor(a)]
    saved = _state(tensors)
    grid = tuple(spec.grid) + (1,) * (3 - len(spec.grid))
    stream = torch.cuda.current_stream().cuda_stream
    major, minor = torch.cuda.get_device_capability()
    target = GPUTarget("cuda", major * 10 + minor, 32)
    source, options = jit_source(spec, make_backend(target))  # as the JIT builds them for this launch
    kernel = triton.compile(source, target=target, options=options.__dict__)
    kernel._init_handles()
    launch_args = full_args(spec, args)

    def launch(compiled) -> list:
        _restore(tensors, saved)
        torch.cuda.synchronize()
        compiled.run(*grid, stream, compiled.function, compiled.packed_metadata, None, None, None, *launch_args)
        torch.cuda.synchronize()
        return _state(tensors)

    reference = launch(kernel)

    def compare(outputs) -> dict:
        return {str(i): _difference(o, r) for i, (o, r) in enumerate(zip(outputs, reference))
                if not torch.equal(o.view(torch.uint8), r.view(torch.uint8))}

    row["triton_reruns"] = [compare(launch(kernel)) for _ in range(3)]
    settings = settings_for("measured")
    ttgir = kernel.asm["ttgir"]
    variants = {"round trip of Triton's TTGIR": ttgir}
    outcome = engine_ttgir(kernel.asm["ttir"], ttgir, timeout_s=settings.timeout_s, max_ops=settings.max_ops,
                           scalars=launch_scalars(spec), min_gain=MEASURE_FLOOR, narrowing=True)
    row["engine"] = outcome.reason
    if outcome.ttgir is not None:
        variants["engine's TTGIR"] = outcome.ttgir
    for name, text in variants.items():
        start = time.time()
        try:
            with lt.enabled("measured"):  # our stage in Triton's compile
                ours = compile_variant(kernel, text, text_digest(ttgir), options, settings)
        except Exception as error:  # noqa: BLE001 - recorded
            row[name] = {"error": why(error)}
            continue
        if ours is None:
            row[name] = {"error": "not taken (see the hook's warning)"}
            continue
        ours._init_handles()
        row[name] = {"compile_s": round(time.time() - start, 2), "same_code": same_code(kernel.asm, ours.asm),
                     "runs": [compare(launch(ours)) for _ in range(2)]}
    return row


def markdown(report: dict) -> str:
    """The run as a table: per kernel, Triton's reruns and each variant against Triton's first run."""
    env = report["environment"]

    def said(runs: list) -> str:
        differing = [run for run in runs if run]
        if not differing:
            return "bit-identical"
        parts = []
        for position, found in sorted(differing[0].items()):
            detail = f"{found['elements']} elements"
            if "relative" in found:
                detail += f", largest {found['largest']:.3g} ({found['relative']:.2g} of the largest value)"
            parts.append(f"argument {position}: {detail}")
        return f"differs in {len(differing)} of {len(runs)}: " + "; ".join(parts)

    lines = [f"# The hook's variants against Triton's kernel, bit for bit ({env.get('gpu', '?')}, "
             f"{env.get('date', '?')})",
             "", f"`benchmarks/hook_variant_check.py` (module doc); Triton {env.get('triton', '?')}, PyTorch "
             f"{env.get('torch', '?')}. Each variant's cell: whether its PTX is Triton's but for line information "
             "(`measure.same_code`), then its outputs against Triton's first launch from the same inputs.", "",
             "| kernel | Triton again (3 launches) | round trip of Triton's TTGIR | engine's TTGIR |",
             "|---|---|---|---|"]
    for row in report["rows"]:
        if "error" in row:
            lines.append(f"| {row['kernel']} | error: {row['error']} | | |")
            continue
        cells = [said(row["triton_reruns"])]
        for name in ("round trip of Triton's TTGIR", "engine's TTGIR"):
            variant = row.get(name)
            if variant is None:
                cells.append("no candidate")
            elif "error" in variant:
                cells.append(variant["error"])
            else:
                code = "Triton's code" if variant["same_code"] else "other code"
                cells.append(f"{code}: {said(variant['runs'])}")
        lines.append(f"| {row['kernel']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kernels", nargs="+")
    ap.add_argument("--out", default="/tmp/hook_variant_check")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for path in args.kernels:
        try:
            row = check(path)
        except Exception as error:  # noqa: BLE001 - recorded
            row = {"kernel": Path(path).stem, "error": why(error)}
        print(json.dumps(row), flush=True)
        rows.append(row)
    report = {"environment": environment(), "rows": rows}
    (out / "hook_variant_check.json").write_text(json.dumps(report, indent=1))
    (out / "hook_variant_check.md").write_text(markdown(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
