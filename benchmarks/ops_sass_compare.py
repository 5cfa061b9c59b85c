"""Static SASS of our ops' transposes beside Triton's ``tl.trans`` kernel at the same tile (CPU only).

For each tile shape both have (8-, 16- and 32-bit elements, 16-byte vectors, the 2-D case the Figure 2 and weight
transposes launch): registers, the CTAs an SM holds by registers / threads / shared memory, the memory
instructions, barriers, byte permutes and moves, and the prologue (instructions before the first global load,
the integer-division sequence ``I2F.U32.RP`` + ``MUFU.RCP`` of a 1-D grid's tile index). Ours are shown as
``permute_kernel`` emits them now and without the minimum CTAs per SM of their ``__launch_bounds__``
(``ops_cases.unbounded_kernel``: "unbounded") and also with the division instructions of the tile index
("unbounded div": the kernels before both changes but for their masked stores, which are the current ones).
Counts are static (each instruction once): our kernels hold a full-tile path and a masked path, so each global
access appears twice.

    PYTHONPATH=src python3 benchmarks/ops_sass_compare.py     # needs nvcc, cuobjdump, the Triton cubins
    # (benchmarks/build/triton_transpose, from ``ops_device.sh prepare``); writes results/ops_vs_triton_sass.json
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)
from harness import ops_cases
from harness.sass import cuobjdump

from linear_layouts.codegen.ptx import compile_cubin
from linear_layouts.ops.kernels import min_ctas, permute_kernel, transpose_tiles
from linear_layouts.target import resolve

HERE = Path(__file__).resolve().parent
TRITON = HERE / "build" / "triton_transpose"
OP = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)")
FAMILIES = ("LDG", "STG", "LDSM", "STSM", "LDS", "STS", "BAR", "PRMT", "MOV", "MUFU.RCP", "I2F", "STL", "LDL")


def sass_facts(cubin: Path) -> dict:
    tool = cuobjdump()
    usage = subprocess.run([tool, "-res-usage", str(cubin)], capture_output=True, text=True, check=True).stdout
    registers, stack = map(int, re.search(r"REG:(\d+) STACK:(\d+)", usage).groups())
    sass = subprocess.run([tool, "-sass", str(cubin)], capture_output=True, text=True, check=True).stdout
    ops = [m.group(2) for m in map(OP.search, sass.splitlines()) if m and m.group(2) != "NOP"]
    counts = Counter()
    for op in ops:
        for family in FAMILIES:
            if op == family or op.startswith(family + ".") or (family == "MOV" and "MOV" in op.split(".")[:2]):
                counts[op if family in ("LDG", "STG", "LDSM", "STSM", "LDS", "STS") else family] += 1
                break
    first_load = next((i for i, op in enumerate(ops) if op.startswith("LDG")), None)
    return dict(registers=registers, stack=stack, instructions=len(ops), before_first_load=first_load,
                counts=dict(sorted(counts.items())))


def occupancy(registers: int, threads: int, shared: int) -> dict:
    t = resolve(None)
    allocated = -(-registers // 8) * 8
    by = dict(registers=t.sm_registers // (allocated * threads), threads=t.sm_threads // threads,
              shared=t.sm_shared_bytes // (shared + t.cta_reserved_shared_bytes))
    return dict(by=by, ctas=min(min(by.values()), 32))


def main() -> None:
    index = json.loads((TRITON / "index.json").read_text())
    rows = []
    for w in (1, 2, 4):
        for config in transpose_tiles(w, 16 // w, 16 // w):
            shape = (config.rows, config.cols, config.warps)
            for label, kernel in (("ours", permute_kernel(config, 0)),
                                  ("ours unbounded", ops_cases.unbounded_kernel(config, 0)),
                                  ("ours unbounded div", ops_cases.unbounded_kernel(config, 0, fast_divide=False))):
                facts = sass_facts(compile_cubin(kernel.source))
                facts.update(occupancy(facts["registers"], kernel.threads, kernel.shared_bytes))
                rows.append(dict(kernel=label, bits=8 * w, tile=f"{shape[0]}x{shape[1]}/{shape[2]}w",
                                 min_ctas=min_ctas(config) if label == "ours" else 0, shared=kernel.shared_bytes,
                                 **facts))
            record = index.get(f"tt_{8 * w}b_11_{shape[0]}x{shape[1]}w{shape[2]}")
            if record and "error" not in record:
                facts = sass_facts(TRITON / record["cubin"])
                facts.update(occupancy(facts["registers"], 32 * shape[2], record["meta"]["shared"]))
                rows.append(dict(kernel="Triton 3.6", bits=8 * w, tile=f"{shape[0]}x{shape[1]}/{shape[2]}w",
                                 shared=record["meta"]["shared"], **facts))
    out = HERE / "results" / "ops_vs_triton_sass.json"
    out.write_text(json.dumps(rows, indent=1))
    print("| bits | tile | kernel | regs | CTAs/SM (by regs, threads, shared) | instr | before 1st LDG | counts |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        by = r["by"]
        print(f"| {r['bits']} | {r['tile']} | {r['kernel']} | {r['registers']} | {r['ctas']} ({by['registers']}, "
              f"{by['threads']}, {by['shared']}) | {r['instructions']} | {r['before_first_load']} | "
              f"{', '.join(f'{k} {v}' for k, v in r['counts'].items())} |")


if __name__ == "__main__":
    sys.exit(main())
