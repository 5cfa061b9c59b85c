"""Source variants of the ops' tiled kernels, timed beside the kernels as emitted (device only).

Where a large case stays a few percent short of the copy bandwidth or of Triton's tile, this asks which of three
changes of the emitted source would close it, before any is built into the generator:

- ``grid3``: the tile index from a 3-D grid (``blockIdx.x / .y`` the tile's column / row of tiles, ``.z`` the
  batch), as Triton's kernel takes it, instead of two divisions of a 1-D index;
- ``cs``: streaming cache hints (``ld.global.cs`` loads through ``__ldcs``, ``st.global.cs`` stores: evict first);
- ``nopdl``: no ``griddepcontrol`` instructions in the prologue.

Each variant is the planner's launch list with every kernel's source edited, compiled like the ops' kernels
(``codegen.ptx.compile_cubin_bytes``) and launched through CuPy (so is ``base``, the source unedited, the control
for the launch path); ``ours`` is the op as it launches. Every output is checked bit for bit against
``x.permute(dims)``; contenders of a case are timed together (``harness.timing.time_together``, CUDA graphs).

    PYTHONPATH=src:benchmarks python3 benchmarks/ops_variants.py --out DIR    # device
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
import time
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)
from harness import ops_cases

#: (label, shape, dims, dtype): the large cases of the sweep below 90% of the copy bandwidth or below Triton's
#: best tile, and controls of each class.
CASES = (
    ("attention", (8, 2048, 8, 128), (0, 2, 1, 3), "bfloat16"),
    ("attention", (16, 1024, 16, 64), (0, 2, 1, 3), "bfloat16"),
    ("NCHW->NHWC", (32, 512, 28, 28), (0, 2, 3, 1), "float16"),
    ("NCHW->NHWC", (32, 512, 28, 28), (0, 2, 3, 1), "float32"),
    ("NCHW->NHWC", (32, 1024, 14, 14), (0, 2, 3, 1), "float32"),
    ("NCHW->NHWC", (32, 64, 112, 112), (0, 2, 3, 1), "float16"),
    ("NHWC->NCHW", (32, 112, 112, 64), (0, 3, 1, 2), "float16"),
    ("NHWC->NCHW", (32, 56, 56, 256), (0, 3, 1, 2), "float16"),
    ("NHWC->NCHW", (32, 28, 28, 512), (0, 3, 1, 2), "float16"),
    ("weights", (4096, 4096), (1, 0), "bfloat16"),
    ("weights", (8192, 8192), (1, 0), "bfloat16"),
    ("weights", (4096, 11008), (1, 0), "float32"),
    ("fig2", (4096, 4096), (1, 0), "float8_e4m3fn"),
)
#: The cases ``--mode scan`` times at every tile of their scan, plain and streaming.
SCAN_CASES = tuple(c for c in CASES if c[1] in ((32, 512, 28, 28), (32, 1024, 14, 14)))
VARIANTS = ("base", "grid3", "cs", "grid3+cs", "nopdl", "grid3+nopdl")
#: Small cases (``--mode small``) where ours at Triton's own tile ran 0.1-0.2 µs slower than Triton's kernel
#: (``ops_heldout.py --large 0 --small 40``, seeds 46 and 47), and their variants: the ``griddepcontrol``
#: instructions removed both (``nopdl``) or one at a time (``nowait``, ``notrigger``), the 3-D grid.
SMALL_CASES = (
    ("small NHWC->NCHW", (2, 7, 7, 576), (0, 3, 1, 2), "bfloat16"),
    ("small NCHW->NHWC", (4, 24, 28, 28), (0, 2, 3, 1), "bfloat16"),
    ("small NHWC->NCHW", (32, 9, 9, 80), (0, 3, 1, 2), "float16"),
    ("small batched", (38, 80, 48), (0, 2, 1), "float32"),
    ("small NHWC->NCHW", (2, 28, 28, 80), (0, 3, 1, 2), "float64"),
    ("small NHWC->NCHW", (1, 7, 7, 720), (0, 3, 1, 2), "float16"),
    ("small NHWC->NCHW", (16, 17, 17, 80), (0, 3, 1, 2), "float32"),
    ("small 3-D", (273, 13, 56), (2, 0, 1), "float16"),
    ("small NHWC->NCHW", (4, 31, 31, 160), (0, 3, 1, 2), "float32"),
    ("small NCHW->NHWC", (4, 112, 64, 64), (0, 2, 3, 1), "float16"),
)
SMALL_VARIANTS = ("base", "nopdl", "nowait", "notrigger", "grid3", "grid3+nopdl")
#: The variants ``--mode context`` times between a producer and a consumer.
CONTEXT_VARIANTS = ("cs", "ldcs", "stcs")
_DIVIDED = re.compile(
    r"  unsigned t = blockIdx\.x;\n  unsigned q = [^\n]*;\n  const unsigned (tile_col|tile_row) = t - q \* tiles_[nm];\n"
    r"  t = q;\n(?:  q = [^\n]*;\n  const unsigned (tile_col|tile_row) = t - q \* tiles_[nm];\n  t = q;\n"
    r"|  const unsigned (tile_col|tile_row) = t;\n)")
_LOAD = re.compile(r"\*reinterpret_cast<const (uint4|uint2|unsigned|unsigned short|unsigned char)\*>\(")


def _grid3(source: str) -> tuple[str, str]:
    """The source reading its tile from a 3-D grid, and its grid's order (``"nm"``: x along tiles_n)."""
    match = _DIVIDED.search(source)
    if match is None:
        raise ValueError("no 1-D tile index to replace")
    first = match.group(1)
    x, y = ("tile_col", "tile_row") if first == "tile_col" else ("tile_row", "tile_col")
    batched = match.group(2) is not None
    lines = (f"  unsigned t = blockIdx.z; unsigned q; (void)q;\n  const unsigned {x} = blockIdx.x;\n"
             f"  const unsigned {y} = blockIdx.y;\n") if batched else (
             f"  unsigned q; (void)q;\n  const unsigned {x} = blockIdx.x;\n  const unsigned {y} = blockIdx.y;\n")
    return source[:match.start()] + lines + source[match.end():], "nm" if first == "tile_col" else "mn"


def _streaming(source: str, loads: bool = True, stores: bool = True) -> str:
    """Loads through ``__ldcs`` and / or stores ``st.global.cs``."""
    out, pos = [], 0
    for match in _LOAD.finditer(source):
        start = match.end()
        depth, i = 1, start
        while depth:
            depth += {"(": 1, ")": -1}.get(source[i], 0)
            i += 1
        out += [source[pos:match.start()], f"__ldcs(reinterpret_cast<const {match.group(1)}*>(",
                source[start:i], ")"]
        pos = i
    edited = "".join(out) + source[pos:] if loads else source
    if loads and edited == source:
        raise ValueError("no global load to mark")
    return edited.replace('asm volatile("st.global.', 'asm volatile("st.global.cs.') if stores else edited


def _no_pdl(source: str) -> str:
    edited = source.replace("  ll_grid_dependency_wait();", "  //").replace("  ll_launch_dependents();", "  //")
    if edited == source:
        raise ValueError("no griddepcontrol to remove")
    return edited


def variant(kernel, name: str):
    """``(kernel with its source edited as variant name, grid order or "")``."""
    source, order = kernel.source, ""
    for part in name.split("+"):
        if part == "grid3":
            source, order = _grid3(source)
        elif part in ("cs", "ldcs", "stcs"):
            source = _streaming(source, part != "stcs", part != "ldcs")
        elif part == "nopdl":
            source = _no_pdl(source)
        elif part in ("nowait", "notrigger"):
            call = "  ll_grid_dependency_wait();" if part == "nowait" else "  ll_launch_dependents();"
            if call not in source:
                raise ValueError("no griddepcontrol to remove")
            source = source.replace(call, "  //")
    return dataclasses.replace(kernel, source=source), order


_NUMPY = {"unsigned": "uint32", "unsigned long long": "uint64", "int": "int32", "long long": "int64",
          "float": "float32"}


def cupy_runner(launches, name: str, arch: str):
    """A function launching ``launches`` as variant ``name`` through CuPy (None where the edit does not apply)."""
    import tempfile

    import cupy as cp
    import numpy as np

    from linear_layouts.codegen.ptx import compile_cubin_bytes
    from linear_layouts.ops.launches import Launch

    calls = []
    for item in launches:
        if not isinstance(item, Launch):
            return None
        try:
            kernel, order = variant(item.kernel, name)
        except ValueError:
            return None
        with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
            f.write(compile_cubin_bytes(kernel.source, arch, "nvrtc"))
        function = cp.RawModule(path=f.name).get_function(kernel.name)
        values = dict(zip((p for _, p in kernel.params), item.values))
        args = tuple(np.uint64(v or 0) if "*" in t else getattr(np, _NUMPY[t])(v)
                     for (t, _), v in zip(kernel.params, item.values))
        if order:
            tn, tm = values["tiles_n"], values["tiles_m"]
            batch = item.ctas // (tn * tm)
            grid = (tn, tm, batch) if order == "nm" else (tm, tn, batch)
        else:
            grid = (item.ctas,)
        if kernel.shared_bytes > 48 * 1024:
            function.max_dynamic_shared_size_bytes = kernel.shared_bytes
        calls.append((function, grid, kernel.threads, kernel.shared_bytes, args))

    def run():
        for function, grid, threads, shared, args in calls:
            function(grid, (threads,), args, shared_mem=shared)

    return run


def in_context(label, shape, dims, dtype, grid, copy_tbs) -> dict:
    """The planner's launches plain and streaming (``cs``) between a producer and a consumer, as a program runs
    them: ``x`` written by a PyTorch copy just before (in L2, dirty) and the output read by one just after; each
    pair timed together, the producer's and consumer's own times subtracted."""
    import torch

    import ops_bench
    from harness.timing import time_together
    from linear_layouts.ops.launches import permute_launches

    x = ops_bench._random(shape, dtype)
    source = x.clone()
    out = torch.empty([shape[d] for d in dims], dtype=x.dtype, device="cuda")
    after = torch.empty_like(out)
    launches = permute_launches(tuple(shape), tuple(dims), x.element_size(), x.data_ptr(), out.data_ptr(), grid)
    produce, consume = (lambda: x.copy_(source)), (lambda: after.copy_(out))
    fns = {"produce": produce, "consume": consume}
    runs = {"ours": ops_cases.runner(launches)}
    runs.update({name: cupy_runner(launches, name, grid.arch) for name in CONTEXT_VARIANTS})
    for name, run in runs.items():
        fns[name] = run
        fns[f"produce + {name}"] = lambda run=run: (produce(), run())
        fns[f"{name} + consume"] = lambda run=run: (run(), consume())
        fns[f"produce + {name} + consume"] = lambda run=run: (produce(), run(), consume())
    us = time_together(ops_bench._time, fns)
    return dict(label=label, shape=list(shape), dims=list(dims), dtype=dtype, us=us,
                after_producer={k: us[f"produce + {k}"] - us["produce"] for k in runs},
                before_consumer={k: us[f"{k} + consume"] - us["consume"] for k in runs},
                between={k: us[f"produce + {k} + consume"] - us["produce"] - us["consume"] for k in runs})


def _checked_times(fns: dict, x, out, expected, copy_tbs: float) -> dict:
    """Each of ``fns`` run once into ``out`` and checked against ``expected``, then the correct ones timed together
    with a same-size copy of ``x`` (``copy``): ``{us, correct, of_copy}`` (of the 1 GiB copy's ``copy_tbs``)."""
    import torch

    import ops_bench
    from harness.timing import time_together

    correct = {}
    for key, fn in fns.items():
        out.zero_()
        fn()
        torch.cuda.synchronize()
        correct[key] = ops_cases.bit_equal(out, expected)
    flat = x.reshape(-1)
    copy = torch.empty_like(flat)
    timed = {k: v for k, v in fns.items() if correct[k]}
    timed["copy"] = lambda: copy.copy_(flat)
    us = time_together(ops_bench._time, timed)
    nbytes = 2 * x.numel() * x.element_size()
    return dict(us=us, correct=correct, of_copy={k: nbytes / (v * 1e-6) / 1e12 / copy_tbs for k, v in us.items()})


def scan(label, shape, dims, dtype, grid, copy_tbs) -> dict:
    """Every tile of the problem's scan (``ops_cases.tile_alternatives(scan=True)``), plain and streaming."""
    import torch

    import ops_bench

    x = ops_bench._random(shape, dtype)
    out = torch.empty([shape[d] for d in dims], dtype=x.dtype, device="cuda")
    expected = x.permute(dims).contiguous()
    alternatives = ops_cases.tile_alternatives(tuple(shape), tuple(dims), x.element_size(), x.data_ptr(),
                                               out.data_ptr(), grid.multiprocessors, grid.l2_bytes, True)
    fns = {}
    for tile, launches in alternatives.items():
        fns[tile] = ops_cases.runner(launches)
        run = cupy_runner(launches, "ldcs", grid.arch)
        if run is not None:
            fns[tile + " ldcs"] = run
    return dict(label=label, shape=list(shape), dims=list(dims), dtype=dtype,
                **_checked_times(fns, x, out, expected, copy_tbs))


def bench(label, shape, dims, dtype, triton, grid, copy_tbs, variants=VARIANTS) -> dict:
    """The planner's launches as they are, as each of ``variants`` and Triton's tiles (where the problem is a plain
    batched transpose)."""
    import torch

    import ops_bench
    from linear_layouts.ops.launches import permute_launches

    x = ops_bench._random(shape, dtype)
    out = torch.empty([shape[d] for d in dims], dtype=x.dtype, device="cuda")
    expected = x.permute(dims).contiguous()
    launches = permute_launches(tuple(shape), tuple(dims), x.element_size(), x.data_ptr(), out.data_ptr(), grid)
    fns = {"ours": ops_cases.runner(launches)}
    for name in variants:
        run = cupy_runner(launches, name, grid.arch)
        if run is not None:
            fns[name] = run
    problem = ops_bench._problem(shape, dims, dtype)
    batch = ops_bench._triton_batch(problem)
    if batch is not None and triton is not None:
        for tile, launch in triton.launchers(x.element_size(), problem.rows, problem.cols).items():
            fns[f"triton {tile}"] = lambda launch=launch: launch(x.data_ptr(), out.data_ptr(), batch)
    timed = _checked_times(fns, x, out, expected, copy_tbs)
    triton_best = min((v for k, v in timed["us"].items() if k.startswith("triton")), default=None)
    return dict(label=label, shape=list(shape), dims=list(dims), dtype=dtype, triton_best_us=triton_best, **timed)


def report(results: dict, variants=VARIANTS) -> str:
    env = results["environment"]
    lines = [f"# Source variants of the ops' kernels ({env.get('device', '?')}, {results['date']})", "",
             f"Copy bandwidth (1 GiB): {results['copy_tbs']:.3f} TB/s. µs per launch (CUDA graphs of 20, timed "
             "together); in brackets the fraction of the copy bandwidth. `ours`: the op as it launches; the "
             "variants launched through CuPy (`base`: the unedited source). Wrong outputs: "
             f"{[(r['label'], r['shape'], k) for r in results['rows'] for k, v in r['correct'].items() if not v]}.", "",
             "| case | dtype | ours | " + " | ".join(variants) + " | Triton best | same-size copy |",
             "|---|---|---:|" + "---:|" * (len(variants) + 2)]
    for r in results["rows"]:
        cells = []
        for key in ("ours",) + variants:
            v = r["us"].get(key)
            cells.append("-" if v is None else f"{v:.2f} ({r['of_copy'][key]:.1%})")
        t = r["triton_best_us"]
        lines.append(f"| {r['label']} {r['shape']} | {r['dtype']} | " + " | ".join(cells)
                     + f" | {'-' if t is None else f'{t:.2f}'} | {r['us']['copy']:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--mode", choices=("variants", "context", "scan", "small"), default="variants")
    args = ap.parse_args(argv)
    env, grid, copy_tbs = ops_cases.device_run_setup(modules=("torch", "cupy", "numpy"))
    try:
        import triton_transpose

        triton = triton_transpose.TritonTransposes()
    except Exception as error:  # noqa: BLE001 - the peer is optional here, and said
        print(f"no Triton peer: {error}", file=sys.stderr)
        triton = None
    rows = []
    cases = {"scan": SCAN_CASES, "small": SMALL_CASES}.get(args.mode, CASES)
    variants = SMALL_VARIANTS if args.mode == "small" else VARIANTS
    for case in cases:
        if args.mode in ("variants", "small"):
            rows.append(bench(*case, triton, grid, copy_tbs, variants))
        else:
            rows.append((in_context if args.mode == "context" else scan)(*case, grid, copy_tbs))
        print(case, {k: round(v, 2) for k, v in rows[-1]["us"].items()}, flush=True)
    results = dict(environment=env, date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), copy_tbs=copy_tbs,
                   rows=rows)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.mode in ("context", "scan"):
        (out / f"ops_variants_{args.mode}.json").write_text(json.dumps(results, indent=1))
        return 0
    name = "ops_variants" if args.mode == "variants" else "ops_variants_small"
    (out / f"{name}.json").write_text(json.dumps(results, indent=1))
    (out / f"{name}.md").write_text(report(results, variants))
    print(report(results, variants))
    return 0


if __name__ == "__main__":
    sys.exit(main())
