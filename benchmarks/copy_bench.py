"""The flat copy kernel (``codegen.flat_copy``) against the driver's device-to-device copy, at many sizes.

A permutation that is the identity in memory (``[248, 154333, 1] -> [248, 1, 154333]``) is a copy of the whole
tensor. Each case is ``nbytes`` from a source at byte offset ``src_offset`` of its buffer to a fresh output; each
contender is checked bit for bit and all of a case's are timed together (``harness.timing.time_together``, CUDA
graphs of ``LAUNCHES`` launches):

- ``memcpy``: ``cuMemcpyDtoDAsync`` (``ops.launch.copy_bytes``), and ``torch copy_``: PyTorch's ``out.copy_(x)``;
- ``copy U/W[ s]``: the kernel with the widest vectors the addresses allow (``flat_copy.copy_vector_bytes``),
  ``U`` vectors a thread, ``W`` warps, ``s``: streaming hints, ``pK``: a persistent grid of ``K`` CTAs an SM;
- and a 1 GiB copy for the device's bandwidth.

Each contender is timed twice: in CUDA graphs (``graph``), where a captured ``cuMemcpyDtoDAsync`` becomes a graph
memcpy node, and launched back to back on a stream (``stream``: ``LAUNCHES`` launches between CUDA events, median
of ``REPEATS``), as a program that does not capture graphs runs it.

    PYTHONPATH=src python3 benchmarks/copy_bench.py --mode prepare   # CPU: nvcc cubins for sm_90
    PYTHONPATH=src python3 benchmarks/copy_bench.py --out DIR        # device: copy.{json,md}

Sizes: the identity permutations the held-out seeds drew (``ops_heldout.md``), powers of two, and odd sizes
between; bandwidth counts the bytes read and written.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)

BUILD = harness.BUILD / "copy"
os.environ.setdefault("LINEAR_LAYOUTS_CACHE", str(BUILD / "cache"))

from harness import ops_cases  # noqa: E402

#: (bytes, source offset).
CASES = (
    (193 * 126073, 0), (240 * 130072, 0), (137 * 84323 * 4, 0), (248 * 154333 * 2, 0), (109 * 53863 * 4, 0),
    (181 * 136472 * 2, 0), (113 * 107555 * 4, 0),
    (16 << 20, 0), (32 << 20, 0), (64 << 20, 0), (256 << 20, 0), (1 << 30, 0),
    ((16 << 20) + 4, 0), ((64 << 20) + 48, 0), (100_000_007, 0), (300_000_001, 0),
    (1 << 16, 0), (1 << 20, 0), (3_000_017, 0), (4 << 20, 0),
    (100_000_007, 8), (100_000_007, 4), (100_000_007, 1), (64 << 20, 2),
)
#: The kernel variants: (vectors a thread, warps, streaming, CTAs an SM of a persistent grid or 0).
VARIANTS = ((2, 8, False, 0), (4, 8, False, 0), (8, 8, False, 0), (4, 4, False, 0), (8, 4, False, 0),
            (4, 8, True, 0), (8, 8, True, 0), (2, 8, False, 4), (4, 8, False, 4), (4, 8, False, 8),
            (8, 4, False, 8), (4, 8, True, 4))
LAUNCHES, REPEATS = 20, 5
_BASE = 1 << 40


def _kernels(src_offset: int) -> dict:
    from linear_layouts.codegen.flat_copy import copy_vector_bytes, emit_copy_kernel

    v = copy_vector_bytes(_BASE + src_offset, _BASE)
    out = {}
    for u, w, streaming, persistent in VARIANTS:
        if streaming and v != 16:
            continue
        label = f"copy {u}/{w}{' s' if streaming else ''}{f' p{persistent}' if persistent else ''}"
        out[label] = emit_copy_kernel(f"ll_copy_{v}_{u}_{w}{'_s' if streaming else ''}_p{persistent}", v, u, w,
                                      streaming, persistent)
    return out


def prepare(jobs: int) -> None:
    """Every kernel variant compiled for sm_90 into the kernel cache ``BUILD/cache``."""
    from linear_layouts.codegen.ptx import find_nvcc

    if find_nvcc() is None:
        sys.exit("copy_bench: nvcc not found")
    (BUILD / "cache").mkdir(parents=True, mode=0o700, exist_ok=True)
    sources = {k.source for _, offset in CASES for k in _kernels(offset).values()}
    n, seconds = ops_cases.compile_sources(sources, "sm_90", jobs)
    print(f"prepared {n} kernels for sm_90 in {seconds:.0f} s into {BUILD / 'cache'}")


def _time(fn) -> float:
    import gpu_suite

    return gpu_suite._time(fn, repeats=REPEATS, inner=LAUNCHES)


def _time_stream(fn) -> float:
    """Median µs per launch of ``fn``, ``LAUNCHES`` back to back on the current stream between CUDA events."""
    from harness.timing import time_back_to_back

    return time_back_to_back(fn, REPEATS, LAUNCHES)


def bench_case(nbytes: int, src_offset: int, copy_tbs: float, sms: int) -> dict:
    import torch

    from harness.timing import time_together
    from linear_layouts.codegen.flat_copy import copy_vector_bytes
    from linear_layouts.ops import launch

    x = torch.randint(0, 256, (nbytes + src_offset,), dtype=torch.uint8, device="cuda")
    out = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    src, dst = x.data_ptr() + src_offset, out.data_ptr()
    expected = x[src_offset:]
    fns = {"memcpy": lambda: launch.copy_bytes(0, torch.cuda.current_stream().cuda_stream, dst, src, nbytes),
           "torch copy_": lambda: out.copy_(expected)}
    for label, kernel in _kernels(src_offset).items():
        ctas = kernel.ctas(kernel.tiles(1, nbytes), sms)
        fns[label] = (lambda k=kernel, c=ctas: launch.launch(k, 0, torch.cuda.current_stream().cuda_stream, c,
                                                              (src, dst, nbytes)))
    row = dict(nbytes=nbytes, src_offset=src_offset, mib=round(nbytes / 2**20, 2),
               vector=copy_vector_bytes(src, dst), kernels={})
    for label, fn in fns.items():
        out.fill_(0xAB)
        fn()
        torch.cuda.synchronize()
        row["kernels"][label] = dict(correct=bool(torch.equal(out, expected)))
    for label, us in time_together(_time, fns).items():
        row["kernels"][label].update(us=round(us, 2), of_copy=round(2 * nbytes / us / 1e6 / copy_tbs, 3))
    for label, us in time_together(_time_stream, fns).items():
        row["kernels"][label].update(stream_us=round(us, 2),
                                     stream_of_copy=round(2 * nbytes / us / 1e6 / copy_tbs, 3))
    for key in ("us", "stream_us"):
        best = min((k for k in row["kernels"] if k.startswith("copy ")), key=lambda k: row["kernels"][k][key])
        prefix = "" if key == "us" else "stream_"
        row[prefix + "best"] = best
        row[prefix + "best_vs_memcpy"] = round(row["kernels"]["memcpy"][key] / row["kernels"][best][key], 3)
    return row


def markdown(env: dict, copy_tbs: float, rows: list[dict]) -> str:
    labels = list(rows[0]["kernels"]) if rows else []
    lines = ["# The flat copy kernel against the driver's copy (`codegen.flat_copy`)", "",
             f"{env.get('date', '')}, {env.get('gpu', '')}; torch {env.get('torch', '')}, {env.get('nvcc', '')}. "
             f"1 GiB copy (PyTorch `copy_` of int32, back to back): {copy_tbs:.3f} TB/s (read + written). Cells: "
             "µs (% of the 1 GiB copy's bandwidth); labels `copy U/W`: U vectors a thread, W warps (`s`: streaming "
             "hints, `pK`: a persistent grid of K CTAs an SM), the vectors `V` bytes, the widest the addresses allow; WRONG: not bit-exact."]
    for prefix, title in (("", "CUDA graphs"), ("stream_", "Back to back on a stream")):
        lines += ["", f"## {title}", "", "| bytes | src offset | MiB | V | " + " | ".join(labels)
                  + " | best kernel / memcpy |", "|---:|---:|---:|---:|" + "---:|" * len(labels) + "---:|"]
        for row in rows:
            cells = []
            for label in labels:
                k = row["kernels"].get(label)
                cells.append("-" if k is None else f"{k[prefix + 'us']} ({100 * k[prefix + 'of_copy']:.1f}%)"
                             + ("" if k["correct"] else " WRONG"))
            lines.append(f"| {row['nbytes']} | {row['src_offset']} | {row['mib']} | {row['vector']} | " + " | ".join(cells)
                         + f" | {row[prefix + 'best_vs_memcpy']}x ({row[prefix + 'best']}) |")
    return "\n".join(lines) + "\n"


def run(out: Path) -> None:
    import torch
    from harness.environment import environment

    import gpu_suite

    start = time.time()
    env = environment(modules=("torch", "cupy", "numpy"), device=True)
    copy_tbs = gpu_suite.copy_bandwidth()["tb_per_s"]
    rows = []
    for nbytes, offset in CASES:
        rows.append(bench_case(nbytes, offset, copy_tbs, torch.cuda.get_device_properties(0).multi_processor_count))
        print(f"{nbytes} +{offset}: best {rows[-1]['best']} {rows[-1]['best_vs_memcpy']}x memcpy (graphs), "
              f"{rows[-1]['stream_best']} {rows[-1]['stream_best_vs_memcpy']}x (stream), {time.time() - start:.0f} s",
              flush=True)
        torch.cuda.empty_cache()
    env["seconds"] = round(time.time() - start, 1)
    out.mkdir(parents=True, exist_ok=True)
    (out / "copy.json").write_text(json.dumps(dict(environment=env, copy_tbs=copy_tbs, cases=rows), indent=1))
    (out / "copy.md").write_text(markdown(env, copy_tbs, rows))
    print((out / "copy.md").read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("prepare", "run"), default="run")
    parser.add_argument("--out", type=Path, default=Path("copy_out"))
    parser.add_argument("--jobs", type=int, default=2, help="nvcc processes at a time (prepare)")
    args = parser.parse_args()
    if args.mode == "prepare":
        prepare(args.jobs)
    else:
        run(args.out)


if __name__ == "__main__":
    main()
