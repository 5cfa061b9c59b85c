"""``kernels.rewrite.rewrite_kernel`` on kernels larger than the corpus's: how its CPU time grows with the
ops of the imported TTIR, the measurement behind ``engine_compare.MAX_ENGINE_OPS``
(benchmarks/results/engine.md, 2026-11-27).

Three synthetic kernel families, compiled on the CPU by the installed Triton for ``--target`` (sm_90):

* ``sort``: the corpus's sort_rows (``tl.sort`` of [8, N] rows, a bitonic network of reshapes, reductions and
  selects) at a larger ``N``: more stages, tiles of higher rank;
* ``chain``: ``K`` unrolled rounds of loads, row and column reductions and element-wise ops on a 64x128 tile;
* ``straight``: ``K`` unrolled multiply-adds on one tile: one dependency chain as long as the kernel.

Each size is timed in a fresh process (CPU ``process_time`` of the one ``rewrite_kernel`` call; the imports
and the compile are not timed), with the limit raised to the kernel's size.

Run: ``python benchmarks/rewrite_scaling.py [--sizes sort=256,2048 chain=32,128 straight=200,1000]``;
``--child TTIR_PATH`` is the per-process worker.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)

HERE = Path(__file__).resolve()
ROOT = HERE.parents[1]

CHAIN = '''
import triton
import triton.language as tl


@triton.jit
def chain_kernel(x_ptr, w_ptr, out_ptr, K: tl.constexpr, M: tl.constexpr, N: tl.constexpr):
    rows = tl.program_id(0) * M + tl.arange(0, M)
    cols = tl.arange(0, N)
    offs = rows[:, None] * N + cols[None, :]
    x = tl.load(x_ptr + offs)
    for k in tl.static_range(K):
        w = tl.load(w_ptr + k * N + cols)
        x = x * w[None, :]
        x = x - tl.sum(x, axis=1)[:, None] / N
        x = x + tl.max(x, axis=0)[None, :]
        x = tl.exp(x * 0.5)
    tl.store(out_ptr + offs, x)


KERNEL = chain_kernel
SIGNATURE = {"x_ptr": "*fp32", "w_ptr": "*fp32", "out_ptr": "*fp32"}
CONSTEXPRS = {"K": 4, "M": 64, "N": 128}
SCALARS = {}
TENSORS = {"x_ptr": [4096, 128], "w_ptr": [64, 128], "out_ptr": [4096, 128]}
GRID = (64,)
OPTIONS = {"num_warps": 4, "num_stages": 3}
'''

STRAIGHT = '''
import triton
import triton.language as tl


@triton.jit
def straight_kernel(x_ptr, out_ptr, K: tl.constexpr, N: tl.constexpr):
    offs = tl.program_id(0) * N + tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    for k in tl.static_range(K):
        x = x * 1.001 + 0.5
    tl.store(out_ptr + offs, x)


KERNEL = straight_kernel
SIGNATURE = {"x_ptr": "*fp32", "out_ptr": "*fp32"}
CONSTEXPRS = {"K": 4, "N": 1024}
SCALARS = {}
TENSORS = {"x_ptr": [65536], "out_ptr": [65536]}
GRID = (64,)
OPTIONS = {"num_warps": 4, "num_stages": 3}
'''

#: family -> (kernel file text, or the corpus file; the constexpr the size sets, the others)
FAMILIES = {"sort": (ROOT / "tests" / "data" / "triton_kernels" / "sort_rows.py", "N", {"BLOCK_M": 8}),
            "chain": (CHAIN, "K", {"M": 64, "N": 128}),
            "straight": (STRAIGHT, "K", {"N": 1024})}
DEFAULT_SIZES = {"sort": [256, 2048, 8192], "chain": [32, 64, 128], "straight": [100, 400, 1000]}


def compile_sizes(family: str, sizes: list[int], target: str, out: Path) -> list[Path]:
    """TTIR / TTGIR of ``family`` at each size, written to ``out`` (``{family}{size}.ttir`` / ``.ttgir``)."""
    from linear_layouts.triton_model.compile import compile_kernel
    from linear_layouts.triton_model.kernel_file import load_kernel_file

    source, key, others = FAMILIES[family]
    path = source if isinstance(source, Path) else out / f"{family}_kernel.py"
    if not isinstance(source, Path):
        path.write_text(source)
    spec = load_kernel_file(path)
    stems = []
    for size in sizes:
        ir = compile_kernel(dataclasses.replace(spec, constexprs={**others, key: size}), target)
        stem = out / f"{family}{size}"
        stem.with_suffix(".ttir").write_text(ir.ttir)
        stem.with_suffix(".ttgir").write_text(ir.ttgir)
        stems.append(stem)
    return stems


def child(stem: str) -> None:
    """One ``rewrite_kernel`` of ``stem``.ttir / .ttgir, the limit raised to its size: prints ops, CPU s, wall s."""
    from linear_layouts.triton_model.ir_text import parse_module
    from linear_layouts.pipeline.rewrite import rewrite_kernel
    from linear_layouts.pipeline.ttir_import import import_ttir

    ttir, ttgir = Path(stem + ".ttir").read_text(), Path(stem + ".ttgir").read_text()
    ops = len(import_ttir(parse_module(ttir), num_warps=parse_module(ttgir).num_warps).program.ops)
    cpu, wall = time.process_time(), time.perf_counter()
    rewrite, _ = rewrite_kernel(ttir, ttgir, max_ops=ops)
    print(f"RESULT {ops} {time.process_time() - cpu:.2f} {time.perf_counter() - wall:.2f} "
          f"{rewrite.triton_conversions}->{rewrite.conversions}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="*", default=[], help="FAMILY=SIZE,SIZE (sort: N; chain, straight: K)")
    parser.add_argument("--target", default="sm_90")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per kernel")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child)
        return 0
    sizes = dict(DEFAULT_SIZES)
    for item in args.sizes:
        family, _, values = item.partition("=")
        if family not in FAMILIES:
            parser.error(f"--sizes: unknown family {family!r} (one of {', '.join(FAMILIES)})")
        sizes[family] = [int(v) for v in values.split(",") if v]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    print("| kernel | ops | CPU s | wall s | conversions (Triton -> chosen) |\n|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for family, values in sizes.items():
            for stem in compile_sizes(family, values, args.target, Path(tmp)):
                try:
                    proc = subprocess.run([sys.executable, str(HERE), "--child", str(stem)], env=env,
                                          capture_output=True, text=True, timeout=args.timeout)
                    line = next((l for l in proc.stdout.splitlines() if l.startswith("RESULT ")), None)
                    cells = line.split()[1:] if line else ["-", "-", "-", (proc.stderr.strip().splitlines()
                                                                          or ["no result"])[-1][:80]]
                except subprocess.TimeoutExpired:
                    cells = ["-", f"> {args.timeout}", "-", "stopped"]
                print(f"| {stem.name} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
