"""Run the layout engine's choices on a GPU: each example program is propagated, emitted as a Gluon
kernel (``linear_layouts.engine.gluon``), launched on one CTA, and its outputs compared with NumPy.

For the lead to run on the device (Triton 3.6 or 3.9, torch with CUDA):
    python benchmarks/gpu_engine.py [--out benchmarks/results/engine_gpu.json] [--check-trivial]
``--check-trivial`` keeps the ``assert_trivial`` pins (needs a Triton whose ``gl.convert_layout`` has it).
Also runs each program's plain-Triton twin from ``engine_triton_compare.py`` on the same inputs,
checks it too, and times both (``triton.testing.do_bench``, one CTA: launch-bound, a sanity figure
rather than a performance claim), with the device, date and versions.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import traceback

import numpy as np

import harness  # noqa: E402, F401  (puts src/ on the path)

from linear_layouts.engine import examples, propagate  # noqa: E402
from linear_layouts.engine.gluon import gluon_kernel, reference  # noqa: E402

TORCH_DTYPES = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "i32": "int32", "u8": "uint8"}


def make_inputs(program, rng):
    """Random inputs per pointer argument (flat NumPy arrays), exactly representable in their dtype."""
    inputs = {}
    for op in program.ops:
        if op.kind != "pointer":
            continue
        arg, dtype = op.attr("arg"), op.attr("element")
        if arg in inputs:
            continue
        shape, strides = program.values[op.results[0]].shape, op.attr("strides")
        size = 1 + sum((s - 1) * st for s, st in zip(shape, strides))
        if dtype in ("fp16", "fp32"):
            inputs[arg] = (rng.integers(-16, 17, size) / 8).astype(np.float32 if dtype == "fp32" else np.float16)
        elif dtype == "bf16":
            inputs[arg] = (rng.integers(-16, 17, size) / 8).astype(np.float32)
        elif dtype == "u8":
            lo, hi = (120, 134) if "scale" in arg else (0, 256)
            inputs[arg] = rng.integers(lo, hi, size).astype(np.uint8)
        elif dtype == "i32":
            inputs[arg] = rng.integers(0, shape[-1], size).astype(np.int32)
    return inputs


def stored_args(program):
    out = {}
    for op in program.ops:
        if op.kind == "store":
            ptr = next(p for p in program.ops if op.operands[0] in p.results)
            shape, strides = program.values[ptr.results[0]].shape, ptr.attr("strides")
            out[ptr.attr("arg")] = (1 + sum((s - 1) * st for s, st in zip(shape, strides)), ptr.attr("element"))
    return out


def run_case(name, build, check_trivial, rng):
    import torch
    import triton

    program = build()
    result = propagate(program)
    kernel = gluon_kernel(result, name=name, check_trivial=check_trivial)
    inputs = make_inputs(program, rng)
    outputs = stored_args(program)
    args, tensors = [], {}
    for arg, dtype in program.args:
        if arg in inputs:
            t = torch.from_numpy(np.asarray(inputs[arg])).to(getattr(torch, TORCH_DTYPES[dtype])).cuda()
        else:
            size, _ = outputs[arg]
            t = torch.zeros(size, dtype=getattr(torch, TORCH_DTYPES[dtype]), device="cuda")
        tensors[arg] = t
        args.append(t)
    kernel[(1,)](*args, num_warps=program.num_warps)
    torch.cuda.synchronize()
    expected = reference(program, {k: np.asarray(v, dtype=np.float32) if v.dtype == np.float16 else v
                                   for k, v in inputs.items()})
    ok, max_err = True, 0.0
    for arg in outputs:
        got = tensors[arg].float().cpu().numpy()
        want = np.asarray(expected[arg], dtype=np.float32)
        err = float(np.max(np.abs(got - want) / (1 + np.abs(want))))
        max_err = max(max_err, err)
        ok &= err < 2e-2
    ms = triton.testing.do_bench(lambda: kernel[(1,)](*args, num_warps=program.num_warps))
    row = {"program": name, "ok": bool(ok), "max_rel_err": max_err, "conversions": len(result.conversions),
           "kinds": [c.plan.kind if c.plan else "?" for c in result.conversions], "gluon_ms": ms}
    try:  # the plain-Triton twin of engine_triton_compare.py: same arguments, Triton's own layouts
        from engine_triton_compare import CASES

        twin, _, constexprs = CASES[name]
        twin_args = [torch.zeros_like(t) if arg in outputs else t for (arg, _), t in zip(program.args, args)]
        twin[(1,)](*twin_args, **constexprs, num_warps=program.num_warps)
        torch.cuda.synchronize()
        twin_err = max(float(np.max(np.abs(t.float().cpu().numpy() - np.asarray(expected[arg], np.float32))
                                    / (1 + np.abs(np.asarray(expected[arg], np.float32)))))
                       for (arg, _), t in zip(program.args, twin_args) if arg in outputs)
        row["triton_max_rel_err"] = twin_err
        row["triton_ms"] = triton.testing.do_bench(
            lambda: twin[(1,)](*twin_args, **constexprs, num_warps=program.num_warps))
    except Exception as error:  # the twin is context, not the check
        row["triton_error"] = f"{type(error).__name__}: {error}"[:500]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="benchmarks/results/engine_gpu.json")
    parser.add_argument("--check-trivial", action="store_true")
    args = parser.parse_args()
    import torch
    import triton

    rng = np.random.default_rng(0)
    rows = []
    for name, build in examples.EXAMPLES.items():
        try:
            row = run_case(name, build, args.check_trivial, rng)
        except Exception as error:  # report and go on
            row = {"program": name, "ok": False, "error": f"{type(error).__name__}: {error}"[:2000],
                   "trace": traceback.format_exc()[-2000:]}
        rows.append(row)
        print(json.dumps(row), flush=True)
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "device": torch.cuda.get_device_name(), "triton": triton.__version__, "torch": torch.__version__,
            "python": platform.python_version()}
    with open(args.out, "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
    print(json.dumps(meta))
    print(f"{sum(r['ok'] for r in rows)}/{len(rows)} programs match NumPy")


if __name__ == "__main__":
    main()
