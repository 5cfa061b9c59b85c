"""compute-sanitizer (memcheck, racecheck) over the layout ops' kernels on small, odd and misaligned cases: every
tile of the transposes' lists on a batch of matrices that cut their edge tiles, a row move, a misaligned
permutation, and the misaligned fp8 cast-transposes (realigned, scalar, chunked; rows at any byte offset; both
ends of ``X`` inside a 16-byte chunk) on each input type. The child launches each case through ``ops.launch`` on CuPy buffers whose
bases sit at the cases' byte offsets (so a read or write one byte outside a tensor is outside its buffer)
and checks it against NumPy (the casts: ``T`` against ``C``'s transpose, the amax exactly).

    PYTHONPATH=src python3 benchmarks/ops_sanitize.py --out DIR   # device: writes ops_sanitize.json

``harness.ops_cases.sanitize_cases()`` lists the launches (the CPU compiles their cubins ahead:
``harness.ops_cases.kernel_sources``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

import harness  # noqa: E402, F401  (puts src/ on the path)
from harness.ops_cases import _BASE, sanitize_cases as cases  # noqa: E402
from harness.sanitizer import sanitize_all  # noqa: E402


def child() -> None:
    """Run every case (under the sanitizer: the parent's command), checked; prints one line per case."""
    import cupy as cp
    import numpy as np

    from linear_layouts.ops import launch as ops_launch
    from linear_layouts.ops.launches import Launch

    cp.cuda.set_allocator(None)  # one cudaMalloc per buffer: memcheck bounds each access by its own buffer
    rng = np.random.default_rng(0)
    stream = cp.cuda.get_current_stream().ptr
    sms = ops_launch.multiprocessors(0)
    wrong = 0
    for case in cases(sms, ops_launch.grid_shape(0).l2_bytes):
        if case["kind"] == "view":  # the whole base in its buffer, the view read at its strides
            from harness.ops_cases import apply_view

            dtype = np.dtype(f"u{case['w']}")
            base = rng.integers(0, np.iinfo(dtype).max, size=case["shape"], dtype=dtype, endpoint=True)
            view = apply_view(base, case["steps"])
            src = cp.asarray(base.view(np.uint8).reshape(-1))
            buffer = np.zeros(case.get("out_buffer", (view.size,)), dtype)  # the output's, ending with it
            window = (apply_view(buffer, case["out_steps"]) if "out_steps" in case
                      else buffer.reshape(tuple(view.shape[d] for d in case["dims"])))
            window[...] = np.transpose(view, case["dims"])
            dst = cp.zeros(buffer.nbytes, cp.uint8)
            scratch = cp.zeros(view.size * view.itemsize, cp.uint8)  # a gather's, where the op takes one
            remap = {_BASE: src.data.ptr, 2 * _BASE: dst.data.ptr, 3 * _BASE: scratch.data.ptr}
            for item in case["launches"]:
                values = list(item.values)
                for i in (0, 1):
                    values[i] = remap[values[i] // _BASE * _BASE] + values[i] % _BASE
                ops_launch.launch(item.kernel, 0, stream, item.ctas, values)
            ok = bool(np.array_equal(cp.asnumpy(dst).view(dtype).reshape(buffer.shape), buffer))  # gaps still 0
        elif case["kind"] == "permute":
            w, shape = case["w"], case["shape"]
            so, do = case["offsets"]
            dtype = np.dtype(f"u{w}")
            a = rng.integers(0, np.iinfo(dtype).max, size=shape, dtype=dtype, endpoint=True)
            nbytes = a.nbytes
            src = cp.zeros(so + nbytes, cp.uint8)  # the tensor ends where its buffer ends
            dst = cp.zeros(do + nbytes, cp.uint8)
            src[so:] = cp.asarray(a.view(np.uint8).reshape(-1))
            remap = {_BASE: src.data.ptr, 2 * _BASE: dst.data.ptr}
            for item in case["launches"]:
                values = list(item.values) if isinstance(item, Launch) else []
                for i, v in enumerate(values[:2]):
                    base = _BASE if i == 0 else 2 * _BASE
                    values[i] = remap[base] + (v - base)
                if isinstance(item, Launch):
                    ops_launch.launch(item.kernel, 0, stream, item.ctas, values)
                else:
                    ops_launch.copy_bytes(0, stream, remap[2 * _BASE] + (item.dst - 2 * _BASE),
                                          remap[_BASE] + (item.src - _BASE), item.nbytes)
            got = cp.asnumpy(dst[do:]).view(dtype).reshape(tuple(shape[d] for d in case["dims"]))
            ok = bool(np.array_equal(got, np.transpose(a, case["dims"])))
        else:
            m, n = case["shape"]
            xo, co, to = case["offsets"]
            wi = 4 if case["fmt"] == "fp32" else 2
            values = (rng.standard_normal((m, n)) * 100).astype(np.float32)
            raw = (values.view(np.uint32) if wi == 4 else (values.view(np.uint32) >> 16).astype(np.uint16)
                   if case["fmt"] == "bf16" else values.astype(np.float16).view(np.uint16))
            x = cp.zeros(xo + raw.nbytes, cp.uint8)
            x[xo:] = cp.asarray(raw.view(np.uint8).reshape(-1))
            c = cp.zeros(co + m * n, cp.uint8)
            t = cp.zeros(to + m * n, cp.uint8)
            amax = cp.zeros(1, cp.float32)
            # the made-up bases of X, C, T and the amax (``sanitize_cases``): a kernel's pointer parameters, and the
            # copies of C's transpose where the flat cast makes T as one (``cast_launches``' "flat")
            remap = {k * _BASE: buffer.data.ptr for k, buffer in ((1, x), (2, c), (3, t), (4, amax))}
            for item in case["launches"]:
                if isinstance(item, Launch):
                    values_ = [remap[v // _BASE * _BASE] + v % _BASE if "*" in ctype and v is not None else v
                               for (ctype, _), v in zip(item.kernel.params, item.values)]
                    ops_launch.launch(item.kernel, 0, stream, item.ctas, values_)
                else:
                    ops_launch.copy_bytes(0, stream, remap[item.dst // _BASE * _BASE] + item.dst % _BASE,
                                          remap[item.src // _BASE * _BASE] + item.src % _BASE, item.nbytes)
            cc = cp.asnumpy(c[co:]).reshape(m, n)
            tt = cp.asnumpy(t[to:]).reshape(n, m)
            if wi == 4:
                ref = np.abs(raw.view(np.float32)).max()
            elif case["fmt"] == "bf16":
                ref = np.abs((raw.astype(np.uint32) << 16).view(np.float32)).max()
            else:
                ref = np.abs(raw.view(np.float16).astype(np.float32)).max()
            ok = bool(np.array_equal(tt, cc.T)) and float(amax[0]) == float(ref)
        cp.cuda.runtime.deviceSynchronize()
        wrong += not ok
        print(f"  {case['kind']} {case['shape']} {case.get('tile', '')} {case['offsets']}: {'ok' if ok else 'WRONG'}",
              flush=True)
    print(f"OPS SANITIZE SUMMARY: {wrong} wrong of {len(cases(sms))}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mode", default="sanitize", choices=["sanitize", "child"])
    ap.add_argument("--out", default=str(HERE / "build" / "ops_sanitize"))
    ap.add_argument("--timeout", type=int, default=120)
    args = ap.parse_args()
    if args.mode == "child":
        child()
        return
    sanitize_all([sys.executable, __file__, "--mode", "child"], args.timeout, Path(args.out) / "ops_sanitize.json")


if __name__ == "__main__":
    main()
