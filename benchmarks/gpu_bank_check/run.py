"""Replay cases.json on a GPU and read ncu's shared-memory wavefront counters. Self-contained.

Needs only Python 3, nvcc and ncu (no linear_layouts, no triton):
    cd benchmarks/gpu_bank_check && python3 run.py
For every case it generates one kernel (one CTA, ``num_warps`` warps) that performs exactly the
case's shared-memory instructions: for each instruction of a warp, every lane issues one inline-PTX
``ld.shared`` / ``st.shared`` of the case's vector width (u8, u16, b32, v2.b32, v4.b32) at the
lane's byte address (from a table; 32-bit shared address from ``__cvta_generic_to_shared``). It
compiles them into one program, runs it once under ``ncu`` with the metrics
``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}.sum``, and prints, per case, the measured
wavefronts next to our formula, our simulator and Triton 3.9's estimate. Results also go to
``results.json`` (in $OUT when set, else here).

Environment: ``BANK_CHECK_CASES`` another case file (relative to this folder or absolute; default
``cases.json``); ``BANK_CHECK_WORK`` the build folder (default /tmp/gpu_bank_check). Case keys
``predicted_paired`` / ``predicted_unpaired`` (paired_cases.json), when present, are copied to the rows;
case key ``same_data`` true: every lane of a warp stores the same values (default: values differ by lane).
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
METRIC = {"load": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
          "store": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"}

PTX = {
    # vector bytes -> (load asm, store asm, number of 32-bit registers)
    1: ("ld.shared.u8 %0, [%1];", "st.shared.u8 [%0], %1;", 1),
    2: ("ld.shared.u16 %0, [%1];", "st.shared.u16 [%0], %1;", 1),
    4: ("ld.shared.b32 %0, [%1];", "st.shared.b32 [%0], %1;", 1),
    8: ("ld.shared.v2.b32 {%0, %1}, [%2];", "st.shared.v2.b32 [%0], {%1, %2};", 2),
    16: ("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];", "st.shared.v4.b32 [%0], {%1, %2, %3, %4};", 4),
}


def kernel_source(idx: int, case: dict) -> str:
    n_instr = case["instructions_per_warp"]
    load_asm, store_asm, nregs = PTX[case["vector_bytes"]]
    smem = max(case["smem_bytes"], 16)
    flat = [a for warp in case["addresses"] for instr in warp for a in instr]
    table = ",".join(str(a) for a in flat)
    regs = [f"x{i}" for i in range(nregs)]
    if case["op"] == "load":
        outs = ", ".join(f'"=r"({r})' for r in regs)
        body = (f"    unsigned {', '.join(regs)};\n"
                f'    asm volatile("{load_asm}" : {outs} : "r"(a));\n'
                f"    acc += {' ^ '.join(regs)};\n")
    else:
        ins = ", ".join(f'"r"(acc + {i})' for i in range(nregs))
        body = f'    asm volatile("{store_asm}" :: "r"(a), {ins} : "memory");\n    acc += 1;\n'
    return f"""
static const unsigned table_{idx}[] = {{{table}}};
__global__ void case_{idx}(const unsigned* __restrict__ addr, unsigned* out) {{
  __shared__ __align__(16) unsigned char smem[{smem}];
  unsigned base = (unsigned)__cvta_generic_to_shared(smem);
  unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  unsigned acc = {"threadIdx.x & ~31u" if case.get("same_data") else "threadIdx.x"};
  for (int i = 0; i < {n_instr}; ++i) {{
    unsigned a = base + addr[(warp * {n_instr} + i) * 32 + lane];
{body}  }}
  out[threadIdx.x] = acc;
}}
"""


def program_source(cases: list[dict]) -> str:
    parts = ["#include <cstdio>\n#include <cuda_runtime.h>\n"]
    launches = []
    for i, c in enumerate(cases):
        parts.append(kernel_source(i, c))
        launches.append(
            f"  run(case_{i}, table_{i}, sizeof(table_{i}), {c['num_warps'] * 32}, \"{c['name']}\");"
        )
    parts.append("""
template <typename K>
static void run(K kernel, const unsigned* table, size_t bytes, int threads, const char* name) {
  unsigned *addr = nullptr, *out = nullptr;
  cudaMalloc(&addr, bytes);
  cudaMalloc(&out, 1024 * sizeof(unsigned));
  cudaMemcpy(addr, table, bytes, cudaMemcpyHostToDevice);
  kernel<<<1, threads>>>(addr, out);
  cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess) printf("%s: %s\\n", name, cudaGetErrorString(err));
  cudaFree(addr);
  cudaFree(out);
}

int main() {
""" + "\n".join(launches) + """
  printf("done\\n");
  return 0;
}
""")
    return "".join(parts)


def parse_ncu_csv(text: str) -> dict[tuple[int, str], float]:
    """(launch id, metric name) -> value from ``ncu --csv`` output (one row per kernel and metric)."""
    start = text.find('"ID"')
    if start < 0:
        return {}
    values = {}
    for row in csv.DictReader(io.StringIO(text[start:])):
        try:
            values[(int(row["ID"]), row["Metric Name"])] = float(row["Metric Value"].replace(",", ""))
        except (KeyError, ValueError):
            continue
    return values


def parse_ncu_text(text: str) -> dict[tuple[int, str], float]:
    """Fallback for the plain report: one block per launch, the value is the last column."""
    values, launch = {}, -1
    for line in text.splitlines():
        if re.match(r"\s*case_\d+", line):
            launch += 1
        for metric in METRIC.values():
            if metric in line:
                values[(launch, metric)] = float(line.split()[-1].replace(",", ""))
    return values


def main() -> int:
    cases = json.loads((HERE / os.environ.get("BANK_CHECK_CASES", "cases.json")).read_text())["cases"]
    work = Path(os.environ.get("BANK_CHECK_WORK", "/tmp/gpu_bank_check"))
    work.mkdir(parents=True, exist_ok=True)
    (work / "bank_check.cu").write_text(program_source(cases))
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    ncu = shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
    subprocess.run([nvcc, "-O2", "-arch=sm_90", "-o", str(work / "bank_check"), str(work / "bank_check.cu")],
                   check=True)
    subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"], check=False)
    metrics = ",".join(METRIC.values())
    proc = subprocess.run([ncu, "--csv", "--metrics", metrics, str(work / "bank_check")],
                          capture_output=True, text=True)
    values = parse_ncu_csv(proc.stdout) or parse_ncu_text(proc.stdout)
    if not values:
        print(proc.stdout[-3000:], proc.stderr[-3000:])
        print("could not read ncu metrics")
        return 1
    rows = []
    print(f"{'case':28s} {'op':5s} {'bits':>4s} {'vecB':>4s} {'measured':>8s} {'ours':>6s} {'sim':>6s} {'triton':>6s}")
    for i, c in enumerate(cases):
        measured = values.get((i, METRIC[c["op"]]))
        rows.append({"name": c["name"], "op": c["op"], "bitwidth": c["bitwidth"], "vector_bytes": c["vector_bytes"],
                     "measured": measured, "ours": c["predicted_ours"], "simulator": c["predicted_simulator"],
                     "triton": c["predicted_triton"]})
        rows[-1].update({k: c[k] for k in ("predicted_paired", "predicted_unpaired") if k in c})
        print(f"{c['name']:28s} {c['op']:5s} {c['bitwidth']:4d} {c['vector_bytes']:4d} {measured!s:>8s} "
              f"{c['predicted_ours']:6d} {c['predicted_simulator']:6d} {c['predicted_triton']!s:>6s}"
              + (f" paired {c['predicted_paired']} unpaired {c['predicted_unpaired']}" if "predicted_paired" in c else ""))
    ok_ours = sum(r["measured"] == r["ours"] for r in rows)
    ok_tri = sum(r["measured"] == r["triton"] for r in rows if r["triton"] is not None)
    n_tri = sum(r["triton"] is not None for r in rows)
    print(f"ours matches ncu on {ok_ours}/{len(rows)}; triton matches ncu on {ok_tri}/{n_tri}")
    out_dir = Path(os.environ.get("OUT", HERE))
    (out_dir / "results.json").write_text(json.dumps({"rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
