"""Row moves whose rows 16 bytes do not align: the realigned rows kernel (``codegen.realign_rows``) against the tiled
kernel's narrow vectors, on seeded random shapes.

Each seed draws problems as ``rows_bench.cases`` does below its aligned seeds (3-D ``(1, 0, 2)`` and 4-D
``(0, 2, 1, 3)`` of 1-, 2-, 4- and here 8-byte elements; last dims of 17-600 elements, odd at least half the time;
16-128 MiB, a quarter 64 KiB to 6 MiB, all of them from seed ``SMALL_SEEDS`` on; every fourth draw's input and
output at element offsets from 16-byte aligned addresses) and keeps those whose rows the tiled kernel moves in vectors narrower than 16 bytes. (Seeds 7-13 drew
rows of whole 16-byte vectors at such offsets only: ``rows_bench``'s aligned draws.) Every case is checked bit for bit and its contenders timed
together (``harness.timing.time_together``, CUDA graphs of 20 launches):

- ``ops``: as ``permute`` launches it (a realigned kernel where ``launches._template``'s rules take one);
- ``tiled``: the tiled kernel's launches (``REALIGNED_ROWS_BELOW = 0``, ``REALIGNED_TILE_USE = 0``);
- ``u1w4``, ``u1``, ``u2``, ``u2w4``: the chunk kernel (where ``launches.realigned_rows`` takes a realigned kernel at
  any vector and grid) of 1 or 2 output chunks a thread, of 4 warps or 8 (``ops``' chunk kernel: ``u1w4``);
- ``s2``, ``s4``, ``s8``, ``s4w8``: the span kernel of 2, 4 or 8 chunks a thread, 4 or 8 warps, where rows are a span
  long or more;
- PyTorch eager and a same-size copy of 4-byte elements; and a 1 GiB copy for the device's bandwidth.

    PYTHONPATH=src python3 benchmarks/realign_rows_bench.py --mode prepare --seed 1   # CPU: the cubins
    PYTHONPATH=src python3 benchmarks/realign_rows_bench.py --seed 1 --out DIR        # device
"""

from __future__ import annotations

import dataclasses
import math
import os
import random
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)

BUILD = harness.BUILD / "realign_rows"
os.environ.setdefault("LINEAR_LAYOUTS_CACHE", str(BUILD / "cache"))

from harness import cli, ops_cases  # noqa: E402
from harness.results import write_outputs  # noqa: E402
from rows_bench import row_move  # noqa: E402

LAUNCHES, REPEATS = 20, 5
DTYPES = ("uint8", "float16", "bfloat16", "float32", "float64")
#: Seeds from this one draw small problems only (64 KiB to 6 MiB: where ``REALIGNED_MIN_CTAS_PER_SM`` decides).
SMALL_SEEDS = 50
#: Seeds from this one draw row moves of matrices of 2 to 8 rows in a large batch, any vectors, half of them small
#: (64 KiB to 6 MiB), 30% of the rows whole 16-byte vectors.
FEW_ROWS_SEEDS = 70
#: The realigned kernel's variants: label -> (chunks a thread, warps).
VARIANTS = {"u1w4": (1, 4), "u1": (1, 8), "u2": (2, 8), "u2w4": (2, 4)}
#: The span kernel's variants (``codegen.realign_rows.emit_realigned_span_kernel``): label -> (chunks a span, warps),
#: where the rows are at least a span long.
SPANS = {"s2": (2, 4), "s4": (4, 4), "s8": (8, 4), "s4w8": (4, 8)}


def _vector_bytes(shape, dims, w: int, src: int, dst: int) -> int | None:
    """Bytes of the tiled kernel's row vectors for the problem, None where it is not a move of rows."""
    from linear_layouts.ops.launches import _plan, pointer_alignment
    from linear_layouts.ops.plan import PermuteKind, vector_elements

    problem = _plan(tuple(shape), tuple(dims), w, pointer_alignment(src % 32, dst % 32))
    if problem.kind is not PermuteKind.ROWS:
        return None
    return vector_elements(w, problem.cols, src % 32, dst % 32) * w


def _few_rows_cases(rng: random.Random, count: int) -> list:
    """Row moves whose matrices have 2 to 8 rows and a large batch (module doc), any vectors."""
    out = []
    while len(out) < count:
        dtype = rng.choice(DTYPES)
        w = ops_cases.ITEMSIZE[dtype]
        last = rng.randrange(17, 601) | (1 if rng.random() < 0.5 else 0)
        if rng.random() < 0.3:
            last = max(1, rng.randrange(1, 21) * 16 // w)  # whole 16-byte vectors
        target = rng.randrange(64 << 10, 6 << 20) if rng.random() < 0.5 else rng.randrange(16 << 20, 96 << 20)
        few = rng.randrange(2, 9)
        batch = max(2, target // (few * last * w))
        if rng.random() < 0.5:
            shape, dims = (few, batch, last), (1, 0, 2)
        else:
            heads = rng.choice((4, 8, 12, 16, 25, 32))
            shape, dims = (max(1, batch // heads), few, heads, last), (0, 2, 1, 3)
        out.append((shape, dims, dtype, 0, 0))
    return out


def cases(seed: int, count: int) -> list[tuple[tuple[int, ...], tuple[int, ...], str, int, int]]:
    """The seed's problems (module doc): ``(shape, dims, dtype, input offset, output offset)``."""
    rng = random.Random(seed)
    if seed >= FEW_ROWS_SEEDS:
        return _few_rows_cases(rng, count)
    out = []
    draw = 0
    while len(out) < count:
        draw += 1
        dtype = rng.choice(DTYPES)
        w = ops_cases.ITEMSIZE[dtype]
        last = rng.randrange(17, 601) | (1 if rng.random() < 0.5 else 0)
        small = seed >= SMALL_SEEDS or rng.random() < 0.25
        target = rng.randrange(64 << 10, 6 << 20) if small else rng.randrange(16 << 20, 128 << 20)
        shape, dims = row_move(rng, max(2, target // (last * w)), last)
        offsets = (w * rng.randrange(0, 16 // w), w * rng.randrange(0, 16 // w)) if draw % 4 == 0 else (0, 0)
        vector = _vector_bytes(shape, dims, w, *offsets)
        if vector is not None and vector < 16:
            out.append((shape, dims, dtype) + offsets)
    return out


def _launches_at(shape, dims, w: int, src: int, dst: int, device, below: int, floor: int | None = None):
    """``permute_launches`` with ``launches.REALIGNED_ROWS_BELOW`` set to ``below`` for the call (0: no realigned
    kernel at all, ``REALIGNED_TILE_USE`` 0 too) and, unless None, ``REALIGNED_MIN_CTAS_PER_SM`` to ``floor``."""
    from linear_layouts.ops import launches

    saved = launches.REALIGNED_ROWS_BELOW, launches.REALIGNED_MIN_CTAS_PER_SM, launches.REALIGNED_TILE_USE
    launches.REALIGNED_ROWS_BELOW = below
    if below == 0:
        launches.REALIGNED_TILE_USE = 0
    if floor is not None:
        launches.REALIGNED_MIN_CTAS_PER_SM = floor
    try:
        return launches.permute_launches(shape, dims, w, src, dst, device)
    finally:
        launches.REALIGNED_ROWS_BELOW, launches.REALIGNED_MIN_CTAS_PER_SM, launches.REALIGNED_TILE_USE = saved


def contenders(shape, dims, w: int, src: int, dst: int, device) -> dict:
    """``{label: launches}`` (module doc)."""
    from linear_layouts.codegen.realign_rows import CHUNK_BYTES, emit_realigned_rows_kernel, emit_realigned_span_kernel
    from linear_layouts.ops import launches

    out = {"ops": launches.permute_launches(shape, dims, w, src, dst, device),
           "tiled": _launches_at(shape, dims, w, src, dst, device, 0)}
    realigned = _launches_at(shape, dims, w, src, dst, device, 17, 0)  # the realigned kernels at any vector and grid
    if len(realigned) == 1 and realigned[0].kernel.name.startswith("ll_rows_realigned"):
        (item,) = realigned
        nbytes = item.values[2]
        for label, (u, warps) in VARIANTS.items():
            kernel = emit_realigned_rows_kernel(f"{item.kernel.name}_{label}", item.kernel.batch_dims, u, warps)
            out[label] = [dataclasses.replace(item, kernel=kernel, ctas=kernel.tiles(1, nbytes + 2 * CHUNK_BYTES))]
        for label, (v, warps) in SPANS.items():
            if item.values[3] >= 16 * v:  # row bytes
                kernel = emit_realigned_span_kernel(f"ll_rows_span_{item.kernel.batch_dims}b_{label}",
                                                    item.kernel.batch_dims, v, warps)
                out[label] = [dataclasses.replace(item, kernel=kernel,
                                                  ctas=kernel.tiles(1, nbytes + 2 * CHUNK_BYTES))]
    return out


def prepare(seed: int, count: int, jobs: int) -> None:
    from linear_layouts.ops.kernels import GridShape

    device = GridShape(ops_cases.SMS, ops_cases.L2_BYTES)
    BUILD.joinpath("cache").mkdir(parents=True, mode=0o700, exist_ok=True)
    sources = ops_cases.launch_sources(
        items for shape, dims, dtype, so, do in cases(seed, count)
        for items in contenders(shape, dims, ops_cases.ITEMSIZE[dtype], 1 << 30 | so, 2 << 30 | do, device).values())
    n, seconds = ops_cases.compile_sources(sources, "sm_90", jobs)
    print(f"prepared {n} kernels for sm_90 in {seconds:.0f} s")


def _time(fn) -> float:
    import gpu_suite

    return gpu_suite._time(fn, repeats=REPEATS, inner=LAUNCHES)


def bench_case(shape, dims, dtype: str, src_offset: int, dst_offset: int, device, copy_tbs: float) -> dict:
    """One case at its offsets: the input and output copied into buffers that many bytes past aligned ones."""
    import torch

    w = ops_cases.ITEMSIZE[dtype]
    x = ops_cases.random_tensor(shape, dtype)
    numel = x.numel()
    expected = x.permute(dims).contiguous()
    src_buf = torch.empty(numel * w + 16, dtype=torch.uint8, device="cuda")
    dst_buf = torch.empty(numel * w + 16, dtype=torch.uint8, device="cuda")
    src_view = src_buf[src_offset:src_offset + numel * w]
    src_view.copy_(x.reshape(-1).view(torch.uint8))
    out = dst_buf[dst_offset:dst_offset + numel * w]
    row = dict(shape=list(shape), dims=list(dims), dtype=dtype, offsets=[src_offset, dst_offset],
               mib=round(numel * w / 2**20, 2), kernels={})
    fns = {}
    expected_bytes = expected.reshape(-1).view(torch.uint8)
    for label, items in contenders(shape, dims, w, src_view.data_ptr(), out.data_ptr(), device).items():
        run = ops_cases.runner(items)
        out.fill_(0xAB)
        run()
        torch.cuda.synchronize()
        fns[label] = run
        row["kernels"][label] = dict(correct=bool(torch.equal(out, expected_bytes)),
                                     kernel=items[0].kernel.name, vector=_vector_bytes(shape, dims, w, src_offset,
                                                                                      dst_offset))
    ops_cases.time_with_peers(_time, fns, x, dims, numel * w, copy_tbs, row["kernels"])
    return row


def run(seed: int, count: int, out: Path) -> None:
    env, copy_tbs, rows = ops_cases.run_cases([(cases(seed, count), bench_case)])
    taken = [r for r in rows if r["kernels"]["ops"]["kernel"].startswith("ll_rows_realigned")]
    gm = lambda v: math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")  # noqa: E731
    speedups = [r["kernels"]["tiled"]["us"] / r["kernels"]["ops"]["us"] for r in taken]
    by_vector = {}  # the kernel ops took against the tiled one, by the tiled kernel's vector
    for r, speedup in zip(taken, speedups):
        by_vector.setdefault(r["kernels"]["ops"]["vector"], []).append(speedup)
    correct = sum(all(v.get("correct", True) for v in r["kernels"].values()) for r in rows)
    lines = [f"# Row moves 16 bytes do not align: realigned rows kernel against the tiled one (seed {seed})", "",
             f"{env.get('date', '')}, {env.get('gpu', '')}; torch {env.get('torch', '')}. 1 GiB copy: {copy_tbs:.3f} "
             f"TB/s. {correct}/{len(rows)} bit-exact. Realigned: {len(taken)} of {len(rows)}; tiled / ops "
             f"{gm(speedups):.3f} in geomean" + (f" ({min(speedups):.2f}-{max(speedups):.2f})" if speedups else "")
             + "; by the tiled kernel's vector bytes, tiled / ops: "
             + ", ".join(f"{v}: {gm(s):.3f} ({len(s)})" for v, s in sorted(by_vector.items())) + ".", "",
             "| shape | dims | dtype | offsets | MiB | vector | tiled µs | ops µs (of copy) | tiled / ops | "
             + " | ".join(list(VARIANTS) + list(SPANS)) + " | eager µs | ops / eager |",
             "|---|---|---|---|---:|---:|---:|---:|---:|" + "---:|" * (len(VARIANTS) + len(SPANS)) + "---:|---:|"]
    for r in rows:
        k = r["kernels"]
        variants = " | ".join(str(k[v]["us"]) if v in k else "-" for v in list(VARIANTS) + list(SPANS))
        lines.append(f"| {tuple(r['shape'])} | {tuple(r['dims'])} | {r['dtype']} | {tuple(r['offsets'])} | {r['mib']} | "
                     f"{k['ops']['vector']} | {k['tiled']['us']} | {k['ops']['us']} ({100 * k['ops']['of_copy']:.1f}%) | "
                     f"{k['tiled']['us'] / k['ops']['us']:.2f}x | {variants} | {k['eager']['us']} | "
                     f"{k['eager']['us'] / k['ops']['us']:.2f}x |")
    write_outputs(out, f"realign_rows_{seed}", dict(environment=env, copy_tbs=copy_tbs, cases=rows),
                  "\n".join(lines) + "\n")
    print("\n".join(lines), flush=True)


def main() -> None:
    cli.seeded_main(__doc__.splitlines()[0], prepare, run, cases=24, out="realign_rows_out")


if __name__ == "__main__":
    main()
