"""The Triton peer of our transposes: a ``tl.trans`` kernel at each of several tile shapes, compiled ahead of
time on the CPU by Triton 3.6 (the device's; ``harness.workflow.triton_compile``: the cubin the device's
JIT would build, with its specialization) and launched on the device through CuPy, so the device never
waits on Triton's compiler.

``transpose_kernel``: program ``(j, i, b)`` loads the ``BM x BN`` tile ``(i, j)`` of matrix ``b`` of ``X``
(``B`` row-major ``M x N`` matrices, masked at the edges), ``tl.trans``-es it (Triton's layout conversion
through shared memory) and stores it at tile ``(j, i)`` of ``Y`` (``N x M`` each).

    PYTHONPATH=src:/tmp/triton-3.6.0 python3 benchmarks/triton_transpose.py   # CPU: compiles TILES for the suite
    PYTHONPATH=src:/tmp/triton-3.6.0 python3 benchmarks/triton_transpose.py --mode inspect   # CPU: static table
"""

from __future__ import annotations

import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)

import triton
import triton.language as tl

HERE = Path(__file__).resolve().parent
BUILD = HERE / "build" / "triton_transpose"

#: (BM, BN, warps) tried per element size; the best is the peer ("Triton at its best tile"). Tiles whose
#: shared-memory conversion would exceed the SM are left out for wide elements.
TILES = ((32, 32, 4), (64, 64, 4), (64, 64, 8), (128, 64, 4), (64, 128, 4), (128, 128, 4), (128, 128, 8),
         (256, 128, 8), (128, 256, 8), (256, 256, 8))
#: Bytes of a tile beyond which a tile is skipped (Triton's conversion scratch holds the whole tile).
MAX_TILE_BYTES = 128 * 1024
#: Triton pointer types by element bytes (bits are bits: integers move every dtype).
POINTER = {1: "*i8", 2: "*i16", 4: "*i32", 8: "*i64"}


@triton.jit
def transpose_kernel(X, Y, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pid_n = tl.program_id(0)
    pid_m = tl.program_id(1)
    batch = tl.program_id(2).to(tl.int64) * M * N
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(X + batch + rm[:, None].to(tl.int64) * N + rn[None, :], mask=mask)
    y = tl.trans(x)
    tl.store(Y + batch + rn[:, None].to(tl.int64) * M + rm[None, :], y, mask=tl.trans(mask))


def tiles_for(element_bytes: int) -> list[tuple[int, int, int]]:
    return [t for t in TILES if t[0] * t[1] * element_bytes <= MAX_TILE_BYTES]


def key(element_bytes: int, m_div16: bool, n_div16: bool, tile: tuple[int, int, int]) -> str:
    return f"tt_{8 * element_bytes}b_{int(m_div16)}{int(n_div16)}_{tile[0]}x{tile[1]}w{tile[2]}"


def _compile(job: tuple[int, bool, bool, tuple[int, int, int], str]) -> dict:
    """One cubin (CPU, Triton 3.6), with the JIT's specialization: pointers 16-byte aligned, ``M`` / ``N``
    divisible by 16 where the shapes are."""
    from triton.compiler import ASTSource

    from harness.workflow import save_cubin, triton_compile

    w, m16, n16, tile, build = job
    signature = {"X": POINTER[w], "Y": POINTER[w], "M": "i32", "N": "i32", "BM": "constexpr", "BN": "constexpr"}
    attrs = {(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]]}
    if m16:
        attrs[(2,)] = [["tt.divisibility", 16]]
    if n16:
        attrs[(3,)] = [["tt.divisibility", 16]]
    source = ASTSource(fn=transpose_kernel, signature=signature, constexprs={"BM": tile[0], "BN": tile[1]},
                       attrs=attrs)
    name = key(w, m16, n16, tile)
    try:
        compiled = triton_compile(source, {"num_warps": tile[2]})
    except Exception as error:  # noqa: BLE001 - a tile Triton cannot build is left out, and said
        return dict(key=name, error=f"{type(error).__name__}: {str(error)[-300:]}")
    return save_cubin(Path(build), name, compiled, element_bytes=w, m_div16=m16, n_div16=n16, tile=list(tile))


def prepare(needs: set[tuple[int, bool, bool]], build: Path = BUILD, workers: int = 2) -> dict:
    """Compile the tiles of every ``(element bytes, M % 16 == 0, N % 16 == 0)`` in ``needs`` into ``build``
    (with an ``index.json``), skipping those already there. Needs Triton 3.6 (the device's)."""
    if not triton.__version__.startswith("3.6"):
        sys.exit(f"the Triton peer is compiled by Triton 3.6 (the device's); found {triton.__version__}: "
                 "put /tmp/triton-3.6.0 first on PYTHONPATH (pip install --target /tmp/triton-3.6.0 triton==3.6.0)")
    build.mkdir(parents=True, exist_ok=True)
    index_path = build / "index.json"
    index = json.loads(index_path.read_text()) if index_path.exists() else {}
    jobs = [(w, m16, n16, tile, str(build)) for w, m16, n16 in sorted(needs) for tile in tiles_for(w)
            if key(w, m16, n16, tile) not in index]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for record in pool.map(_compile, jobs):
            index[record["key"]] = record
            print(f"  triton {record['key']}: {record.get('error', 'ok')}", flush=True)
    index_path.write_text(json.dumps(index, indent=1))
    return index


class TritonTransposes:
    """The precompiled tiles (device side): ``launchers(element_bytes, M, N)`` -> ``{tile: launch(x, y, batch)}``."""

    def __init__(self, build: Path = BUILD):
        from harness.workflow import TritonCubin

        self.build = Path(build)
        index_path = self.build / "index.json"
        self.index = json.loads(index_path.read_text()) if index_path.exists() else {}
        self._cubin = TritonCubin
        self._loaded: dict = {}

    def launchers(self, element_bytes: int, m: int, n: int) -> dict:
        """One launcher per compiled tile for ``M x N`` matrices: ``launch(x_ptr, y_ptr, batch)``."""
        import numpy as np

        out = {}
        for tile in tiles_for(element_bytes):
            record = self.index.get(key(element_bytes, m % 16 == 0, n % 16 == 0, tile))
            if record is None or "error" in record:
                continue
            if record["key"] not in self._loaded:
                self._loaded[record["key"]] = self._cubin(self.build, record)
            cubin = self._loaded[record["key"]]
            grid = (-(-n // tile[1]), -(-m // tile[0]))

            def launch(x, y, batch=1, cubin=cubin, grid=grid):
                cubin.launch(grid + (batch,), [np.uint64(x), np.uint64(y), np.int32(m), np.int32(n)])

            out[f"{tile[0]}x{tile[1]}/{tile[2]}w"] = launch
        return out


def _resources(cubin: Path) -> tuple[int, int]:
    """(registers per thread, spilled bytes) of a cubin's one kernel (``cuobjdump -res-usage``)."""
    from harness.sass import dump, resources

    registers, stack = resources(dump(cubin, "-res-usage"))
    return (-1 if registers is None else registers), (-1 if stack is None else stack)


def inspect(out: Path, n: int = 8192) -> str:
    """CPU, static: each Triton tile (Triton 3.6, sm_90) beside the suite's kernels of the same width: layouts'
    global and shared instructions per thread (PTX), shared bytes per CTA, registers, spills, and the CTAs an
    SM holds by those; written to ``out/transpose_tiles_cpu.md``."""
    import re
    from collections import Counter

    from triton.compiler import ASTSource

    import gpu_suite
    from harness.workflow import triton_compile
    from linear_layouts.target import named_target
    from linear_layouts.codegen.ptx import compile_cubin, compile_ptx

    op = re.compile(r"^\s*(?:@%p\d+\s+)?((?:ld|st)\.(?:global|shared)[\w.:]*|(?:ld|st)matrix[\w.:]*)", re.M)

    sm90 = named_target("sm_90")

    def resident(threads: int, shared: int, registers: int) -> int:
        by_regs = sm90.sm_registers // max(1, registers * threads) if registers > 0 else 99
        return min(sm90.sm_threads // threads, sm90.sm_shared_bytes // (shared + sm90.cta_reserved_shared_bytes),
                   by_regs, 32)

    lines = [f"# {n}^2 transposes, statically: Triton `tl.trans` tiles and our suite's kernels (sm_90, on the CPU)", "",
             f"Triton {triton.__version__} (`triton_transpose.transpose_kernel`, the JIT's specialization) and nvcc; "
             "per thread: the PTX memory instructions (static counts; ours: one loop body for persistent kernels, "
             "whose next tile's loads add one more load per vector). CTAs per SM: by threads, shared memory "
             "(+1 KiB reserved) and registers (65536 per SM).", "",
             "| width | kernel | tile | warps | shared bytes | registers | spill bytes | CTAs/SM | PTX memory instructions |",
             "|---|---|---|---|---|---|---|---|---|"]
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        for w in (1, 2, 4):
            for tile in tiles_for(w):
                sig = {"X": POINTER[w], "Y": POINTER[w], "M": "i32", "N": "i32", "BM": "constexpr", "BN": "constexpr"}
                attrs = {(i,): [["tt.divisibility", 16]] for i in range(4)}
                c = triton_compile(ASTSource(fn=transpose_kernel, signature=sig, constexprs={"BM": tile[0], "BN": tile[1]},
                                             attrs=attrs), {"num_warps": tile[2]})
                path = Path(tmp) / f"t{w}_{tile[0]}_{tile[1]}_{tile[2]}.cubin"
                path.write_bytes(c["cubin"])
                regs, spill = _resources(path)
                counts = Counter(op.findall(c["ptx"]))
                shared = c["meta"]["shared"]
                lines.append(f"| {8 * w}-bit | Triton | {tile[0]}x{tile[1]} | {tile[2]} | {shared} | {regs} | {spill} | "
                             f"{resident(32 * tile[2], shared, regs)} | "
                             f"{', '.join(f'{k} x{v}' for k, v in sorted(counts.items()))} |")
            for width, tag, _, k in gpu_suite.transpose_kernels(n):
                if width != w:
                    continue
                regs, spill = _resources(compile_cubin(k.source))
                counts = Counter(op.findall(compile_ptx(k.source)))
                lines.append(f"| {8 * w}-bit | ours {tag} | {k.tile_rows}x{k.tile_cols} | {k.threads // 32} | "
                             f"{k.shared_bytes} | {regs} | {spill} | {resident(k.threads, k.shared_bytes, regs)} | "
                             f"{', '.join(f'{a} x{b}' for a, b in sorted(counts.items()))} |")
    text = "\n".join(lines) + "\n"
    out.mkdir(parents=True, exist_ok=True)
    (out / "transpose_tiles_cpu.md").write_text(text)
    return text


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", default="prepare", choices=["prepare", "inspect"])
    ap.add_argument("--out", default=str(HERE / "results"))
    args = ap.parse_args()
    if args.mode == "inspect":
        print(inspect(Path(args.out)))
    else:
        prepare({(w, True, True) for w in (1, 2, 4)})
