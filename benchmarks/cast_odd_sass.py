"""Instructions per element of the odd-shape fp8 cast-transpose kernels, from their sm_90 SASS (CPU only).

Each kernel is compiled twice with nvcc: as it is (registers, spills, static size) and as its hot path, the
code a whole tile inside the matrix runs: its edge branches (element-by-element chunk loads, byte stores of
a row's first and last word, the windowed kernel's partial-chunk loops) rewritten to constant false, the
realigned kernel's row offset fixed (one case of its warp-uniform ``switch`` kept). The hot build's SASS is
split at ``NANOSLEEP`` markers placed between the kernel's steps (a whole tile's partial words, the
first and last of each output row, are stored in their own step after the tile); a step's loop body (its longest backward
branch) counts once per trip, the rest once. Instructions per element = the thread's dynamic count / the
elements a thread covers; by kind: memory (global / shared), shuffles, byte permutes, float (cvt, mul,
max), integer and control.

    PYTHONPATH=src python3 benchmarks/cast_odd_sass.py [--out benchmarks/results/cast_odd_sass.md]

The previous (windowed) kernel is read from git at ``cast_odd_bench.PREVIOUS_COMMIT``. The scalar kernel
(``codegen.cast_scalar``) has no loops: its hot path (a whole tile) counts each instruction once.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)
from harness.sass import LINE, dump, resources

from linear_layouts.codegen.ptx import find_nvcc

HERE = Path(__file__).resolve().parent
KINDS = (("global", ("LDG", "STG")), ("shared", ("LDS", "STS")), ("shfl", ("SHFL",)), ("prmt", ("PRMT",)),
         ("float", ("F2FP", "FMUL", "FMNMX", "HADD2", "F2F", "FSEL", "FSETP")),
         ("control", ("BRA", "BSSY", "BSYNC", "WARPSYNC", "BAR", "EXIT", "BRA.DIV", "ENDCOLLECTIVE", "NOP")))


def compile_sass(source: str, name: str, work: Path) -> tuple[str, str]:
    """(SASS, -res-usage) of ``source`` compiled for sm_90."""
    cu, cubin = work / f"{name}.cu", work / f"{name}.cubin"
    cu.write_text(source)
    subprocess.run([find_nvcc(), "-arch=sm_90", "-cubin", "-O3", "-std=c++17", "-w", "-o", str(cubin), str(cu)],
                   check=True, capture_output=True)
    return dump(cubin), dump(cubin, "-res-usage")


def kind(opcode: str) -> str:
    for label, prefixes in KINDS:
        if opcode.split(".")[0] in prefixes:
            return label
    return "integer"


def sections(sass: str) -> list[list[tuple[int, str, str]]]:
    """The SASS rows (address, opcode, operands) between ``NANOSLEEP`` markers, up to the first ``EXIT`` after
    the last marker (what follows are out-of-line blocks: shuffles' divergent fallbacks, thread 0's atomic)."""
    parts: list[list] = [[]]
    for m in map(LINE.search, sass.splitlines()):
        if not m:
            continue
        if m.group(3).startswith("NANOSLEEP"):
            parts.append([])
            continue
        parts[-1].append((int(m.group(1), 16), m.group(3), m.group(4)))
        if len(parts) > 1 and m.group(3) == "EXIT":
            break
    return parts


def dynamic(part: list, trips: float) -> Counter:
    """Kinds of ``part``'s instructions as run: its longest loop ``trips`` times, the rest once."""
    best: list = []
    for addr, op, args in part:
        target = re.search(r"0x([0-9a-f]+)", args) if op.startswith("BRA") else None
        if target and int(target.group(1), 16) < addr:
            body = [r for r in part if int(target.group(1), 16) <= r[0] <= addr]
            best = body if len(body) > len(best) else best
    loop = {r[0] for r in best}
    out: Counter = Counter()
    for addr, op, _ in part:
        out[kind(op)] += trips if addr in loop and best else 1
    return out


def new_kernel(fmt: str, rows: int, warps: int, wide: bool = True):
    from linear_layouts.codegen.realign import emit_realigned_cast_transpose_kernel, tile_columns

    k = emit_realigned_cast_transpose_kernel(f"new_{fmt}_{rows}_{warps}", fmt, "e4m3", rows, warps, wide=wide)
    hot = k.source
    hot = re.sub(r"const bool full = rows_left == \d+u && cols_left == \d+u;", "const bool full = true;", hot)
    hot = re.sub(r"if \(full && first >= x_begin && last \+ \d+u <= x_end\)", "if (true)", hot)
    hot = hot.replace("switch (d >> 2) {", "switch (1u) {")
    hot = hot.replace("  ll_bar_cta();\n  // 4. T", "  __nanosleep(1);\n  ll_bar_cta();\n  // 4. T")
    hot = hot.replace("  if (full) {  // 5.", "  __nanosleep(2);\n  if (full) {  // 5.")
    hot = hot.replace("    }\n    for (unsigned q = threadIdx.x;", "    }\n    __nanosleep(4);\n    for (unsigned q = threadIdx.x;")
    hot = hot.replace("  // the CTA's amax", "  __nanosleep(3);\n  // the CTA's amax")
    columns = tile_columns(2 if fmt != "fp32" else 4)
    elements = rows * columns / k.threads
    items = (columns // 4) * (rows // 16)
    return k, hot, elements, (1, items / k.threads, rows / k.threads, columns / k.threads, 1)


def scalar_kernel(fmt: str, rows: int, cols: int, warps: int):
    """The scalar kernel of an ``rows x cols`` tile and its hot path (a whole tile: no masks)."""
    from linear_layouts.codegen.cast_scalar import emit_scalar_cast_transpose_kernel

    k = emit_scalar_cast_transpose_kernel(f"scalar_{fmt}_{rows}_{cols}_{warps}", fmt, "e4m3", rows, cols, warps)
    hot = re.sub(r"const bool full = rows_left >= \d+u && cols_left >= \d+u;", "const bool full = true;", k.source)
    return k, hot, rows * cols / k.threads, (1,)


def previous_kernel(fmt: str):
    """The windowed kernel of ``cast_odd_bench.PREVIOUS_COMMIT`` and its hot path (tile region only)."""
    from cast_odd_bench import PREVIOUS_COMMIT, module_at

    old = module_at(PREVIOUS_COMMIT)
    rows, cols = (128, 64) if fmt == "fp32" else (128, 128)
    k = old.emit_realigned_cast_transpose_kernel(f"previous_{fmt}", fmt, "e4m3", rows, cols, 8)
    hot = k.source.replace("if ((g < x_end && g + 16u > x_end) || (g < x_begin && g + 16u > x_begin))", "if (false)")
    hot = hot.replace("  ll_bar_cta();\n  // 2.", "  __nanosleep(1);\n  ll_bar_cta();\n  // 2.")
    hot = hot.replace("  ll_bar_cta();\n  // 3.", "  __nanosleep(2);\n  ll_bar_cta();\n  // 3.")
    hot = hot.replace("  // T: the chunks", "  __nanosleep(3);\n  // T: the chunks")
    hot = hot.replace("  // the CTA's amax", "  __nanosleep(4);\n  // the CTA's amax")
    hot = hot.replace("} else {  // the row's end", "} else if (false) {")
    hot = re.sub(r"if \(col0 == 0u && threadIdx.x", "if (false && threadIdx.x", hot)
    hot = re.sub(r"if \(row0 == 0u && threadIdx.x", "if (false && threadIdx.x", hot)
    wi = 4 if fmt == "fp32" else 2
    tasks = sum((nbi // li) * (nbj // (32 // li)) for nbi, nbj, li in
                ((rows // 4, cols // 4, 8), (rows // 4, 4, 8), (4, cols // 4, 4)))
    elements = rows * cols / k.threads
    # task loop: tasks / warps trips, each running one of its three regions' bodies (of about equal length: a
    # third of the loop per trip); C and T store loops: one row per thread group, 4 chunks unrolled
    return k, hot, elements, (1, tasks / 8 / 3, 1, 1, 1), wi


def report(label: str, k, hot: str, elements: float, trips: tuple, work: Path) -> dict:
    sass, res = compile_sass(k.source, k.name, work)
    registers, stack = resources(res)
    hot_sass, _ = compile_sass(hot, k.name + "_hot", work)
    total: Counter = Counter()
    for part, n in zip(sections(hot_sass), trips):
        total += dynamic(part, n)
    per = {key: total[key] / elements for key, _ in KINDS}
    per["integer"] = total["integer"] / elements
    static = sum(1 for m in map(LINE.search, sass.splitlines()) if m)
    return dict(label=label, registers=registers, stack=stack, static=static,
                per_element=sum(total.values()) / elements, kinds=per)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=HERE / "results" / "cast_odd_sass.md")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for fmt in ("bf16", "fp32"):
            k, hot, elements, trips, _ = previous_kernel(fmt)
            rows.append(report(f"previous windowed {fmt} {k.tile_rows}x{k.tile_cols}/8w", k, hot, elements, trips, work))
            for r, w, wide in ((64, 8, True), (32, 8, True), (32, 4, True), (16, 4, True), (64, 8, False)):
                k, hot, elements, trips = new_kernel(fmt, r, w, wide)
                label = f"new {fmt} {k.tile_rows}x{k.tile_cols}/{w}w{'' if wide else ' words'}"
                rows.append(report(label, k, hot, elements, trips, work))
            for r, c, w in ((64, 64, 8), (32, 64, 8), (64, 128, 8), (128, 64, 8)):
                k, hot, elements, trips = scalar_kernel(fmt, r, c, w)
                rows.append(report(f"scalar {fmt} {r}x{c}/{w}w", k, hot, elements, trips, work))
    labels = [key for key, _ in KINDS] + ["integer"]
    lines = ["# Odd-shape fp8 cast-transpose: SASS instructions per element (sm_90, nvcc "
             f"{subprocess.run([find_nvcc(), '--version'], capture_output=True, text=True).stdout.split()[-1]})", "",
             "Hot path of a whole tile inside the matrix (`benchmarks/cast_odd_sass.py`): dynamic instructions of one "
             "thread / the elements it covers. The new kernel stores a whole tile's C in 8-byte chunks (2-byte inputs) and "
             "T in 16-byte chunks, every warp instruction writing whole 32-byte sectors; `words` is the same kernel "
             "storing 32-bit words (T: a thread's 4 words 16 bytes apart, a warp instruction half-filling 16 sectors), "
             "fewer instructions but 2x (C) and 4x (T) the L2 store requests. `scalar`: one element an access "
             "(`codegen.cast_scalar`): a load, two byte stores to global memory, a byte store and load in shared "
             "memory per element.", "",
             "| kernel | registers | stack | static SASS | per element | " + " | ".join(labels) + " |",
             "|---|---|---|---|---|" + "---|" * len(labels)]
    for r in rows:
        lines.append(f"| {r['label']} | {r['registers']} | {r['stack']} | {r['static']} | {r['per_element']:.1f} | "
                     + " | ".join(f"{r['kinds'][key]:.2f}" for key in labels) + " |")
    text = "\n".join(lines) + "\n"
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
