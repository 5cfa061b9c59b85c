"""SASS of the GPU suite's conversion loop for every warp-shuffle kernel (``--kind``: the register
permutations, or the shared-memory kernels), on the CPU (no GPU): per loop iteration (one round trip
dst -> src -> dst with the suite's XORs), counts of SEL, LOP3, SHFL, PRMT, MOV and all instructions,
ours (nvcc -arch=sm_90 -cubin, cuobjdump -sass) and, for the kernels the suite compares with Triton
("ours" variants), Triton 3.6's Gluon ``convert_layout`` kernel for the same pair
(``gpu_gluon_convert.convert_kernel``, compiled for sm_90 without a GPU).

    PYTHONPATH=src:/path/to/triton-3.6 python benchmarks/shuffle_sass_loop.py [--no-triton] [--json OUT]
    PYTHONPATH=src:/path/to/triton-3.6 python benchmarks/shuffle_sass_loop.py --kind registers --lone
    PYTHONPATH=src python benchmarks/shuffle_sass_loop.py --lone --no-triton [--json OUT]

``--lone``: one conversion (what a real kernel runs): the suite kernel with ``iterations`` fixed to 0
at compile time (``lone_source``: load, one conversion, store; the loop is gone), and Triton's
``convert_once_kernel``: counts of the whole kernel's SASS (``kernel_counts``, NOPs left out).
``--reverse``: the suite's cases with source and destination swapped (the loop's other conversion,
dst -> src, as a lone conversion).  ``--cases``: some of the suite's cases.

cuobjdump: ``$CUOBJDUMP``, next to nvcc, on PATH, or the one in Triton's wheel.  The loop is the
longest backward branch of the kernel (none where the compiler folded the round trips away: all
counts 0); a loop nvcc unrolled holds several round trips (SHFL tells).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
import harness  # noqa: E402, F401  (puts src/ on the path)

from gpu_suite import build_variants, suite_cases  # noqa: E402

from harness.sass import dump, loop_rows, opcodes  # noqa: E402

from linear_layouts.codegen.ptx import compile_cubin  # noqa: E402

KEYS = ("SEL", "LOP3", "SHFL", "PRMT", "MOV")
def loop_counts(cubin: Path) -> dict[str, int]:
    """Opcode counts (``KEYS``, ``total``) of the longest loop of ``cubin``'s SASS."""
    best = loop_rows(dump(cubin))
    c = Counter(op.split(".")[0] for _, op, _, _ in best)
    return {**{k: c.get(k, 0) for k in KEYS}, "total": len(best)}


def kernel_counts(cubin: Path) -> dict[str, int]:
    """Opcode counts (``KEYS``, ``total``) of all of ``cubin``'s SASS but NOPs (padding)."""
    ops = [op.split(".")[0] for op in opcodes(dump(cubin))]
    c = Counter(op for op in ops if op != "NOP")
    return {**{k: c.get(k, 0) for k in KEYS}, "total": sum(c.values())}


def lone_source(source: str) -> str:
    r"""The suite kernel ``source`` with ``iterations`` a compile-time 0: load, one conversion, store.

    >>> lone_source("void k(int iterations) {\n  f(iterations);")
    'void k(int iterations_arg) {\n  const int iterations = 0; (void)iterations_arg;\n  f(iterations);'
    """
    head = "int iterations) {"
    if source.count(head) != 1:
        raise ValueError(f"source: expected one '{head}' (the suite kernel's signature)")
    return source.replace(head, "int iterations_arg) {\n  const int iterations = 0; (void)iterations_arg;")


def ours(source: str, work: Path, name: str) -> dict[str, int]:
    return loop_counts(compile_cubin(source))


def ours_lone(source: str, work: Path, name: str) -> dict[str, int]:
    return kernel_counts(compile_cubin(lone_source(source)))


def triton_counts(case, work: Path, lone: bool = False) -> dict[str, int]:
    """Triton's kernel for ``case``: the loop's counts (``loop_counts``), or, ``lone``, the whole of its
    one-conversion kernel (``convert_once_kernel``: load, convert, store; ``kernel_counts``)."""
    import triton  # noqa: PLC0415
    from triton.backends.compiler import GPUTarget  # noqa: PLC0415
    from triton.experimental.gluon._runtime import GluonASTSource  # noqa: PLC0415

    from gpu_gluon_convert import _INT, convert_kernel, convert_once_kernel, gluon_layout  # noqa: PLC0415

    m, n = (case.src.out_dim_size(d) for d in case.src.out_dim_names)
    t = _INT[case.bits // 8]
    sig = {"src_ptr": f"*{t}", "dst_ptr": f"*{t}", "iterations": "i32", "M": "constexpr", "N": "constexpr",
           "SRC": "constexpr", "DST": "constexpr"}
    if lone:
        del sig["iterations"]
    src = GluonASTSource(convert_once_kernel if lone else convert_kernel, sig,
                         constexprs={"M": m, "N": n, "SRC": gluon_layout(case.src), "DST": gluon_layout(case.dst)})
    compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": case.warps})
    path = work / f"{case.name}{'.lone' if lone else ''}.triton.cubin"
    path.write_bytes(compiled.asm["cubin"])
    return kernel_counts(path) if lone else loop_counts(path)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-triton", action="store_true")
    ap.add_argument("--json", default="")
    ap.add_argument("--lone", action="store_true", help="ours only, one conversion (whole kernel, iterations = 0)")
    ap.add_argument("--reverse", action="store_true", help="cases with src and dst swapped")
    ap.add_argument("--kind", default="warp shuffle", choices=["warp shuffle", "registers", "shared memory"],
                    help="the variants' step kind (default: warp shuffle)")
    ap.add_argument("--cases", default="", help="comma list of case names (default: the whole suite)")
    args = ap.parse_args()
    cases = suite_cases(False, args.cases)
    if args.reverse:
        cases = [replace(c, name=f"{c.name}_rev", src=c.dst, dst=c.src) for c in cases]
    variants = [v for v in build_variants(cases, 10) if v.step_kind == args.kind]
    work = Path(tempfile.mkdtemp(prefix="shuffle_sass_"))
    with ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        count = ours_lone if args.lone else ours
        counts = list(pool.map(lambda v: count(v.kernel.source, work, v.kernel.name), variants))
    rows = {}
    for v, c in zip(variants, counts):
        row = {"variant": v.variant, "kernel": v.kernel.name, "bits": v.case.bits, "warps": v.case.warps, "ours": c}
        if v.variant == "ours" and not args.no_triton:
            row["triton"] = triton_counts(v.case, work, lone=args.lone)
        rows[f"{v.case.name}/{v.variant}"] = row
        print(v.case.name, v.variant, c, row.get("triton", ""), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
