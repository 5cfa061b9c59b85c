"""The GPU suite's transpose stage alone (``gpu_suite.transposes``: 8192^2, 8/16/32-bit, every
variant of ``gpu_suite.transpose_kernels``, against the 1 GiB device copy), its peers timed in the same
run the same way (CUDA graphs of ``gpu_suite.TRANSPOSE_GRAPH_LAUNCHES`` launches): Triton's ``tl.trans`` at
each of its tiles (``triton_transpose.py``, cubins compiled ahead by Triton 3.6) and PyTorch's
``x.t().contiguous()``, plus compute-sanitizer memcheck and racecheck of the new transpose kernels
(persistent, hinted, grouped; ``--sanitize-all``: every one) on a small matrix, persistent kernels on a
grid of 3 CTAs so each loops over several tiles.  About a minute of device time.

    # CPU (compiles our cubins into benchmarks/build/cubins, Triton's into benchmarks/build/triton_transpose):
    PYTHONPATH=src:/tmp/triton-3.6.0 python3 benchmarks/transpose_bench.py --mode prepare
    # device (carry benchmarks/build):
    PYTHONUNBUFFERED=1 PYTHONPATH=src python3 benchmarks/transpose_bench.py --out $OUT

Writes ``transposes.json`` (the copy, the transpose rows, the peers, the sanitizer summaries) and
``transposes.md`` (per width: our best kernel against Triton's best tile and PyTorch; then every kernel:
µs, TB/s, fraction of the copy bandwidth, of torch's and of our same-size copy) under ``--out``;
``--only persist256x16w,blocks256x16w`` times the named variants only; ``--mode ncu --only ...`` profiles them
once each under ncu (``ncu_check``: shared wavefronts against the prediction, DRAM bytes).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
import harness  # noqa: E402, F401  (puts src/ on the path)

import gpu_suite  # noqa: E402  (sets LINEAR_LAYOUTS_CACHE to benchmarks/build/cubins)

#: Matrix size of the sanitizer runs: every tile shape of the suite divides it, 4 or more tiles.
SANITIZE_SIZE = 512
#: CTAs of a persistent kernel under the sanitizers (fewer than the tiles: each CTA loops).
SANITIZE_CTAS = 3


def _sources(n: int, only: str = "", new: bool = False) -> list[str]:
    """The cubins a run needs at ``n``: the ``only`` variants (all when empty), or ``new``: those sanitized."""
    tags = set(only.split(",")) if only else None
    return [k.source for _, tag, _, k in gpu_suite.transpose_kernels(n)
            if (not new or _new(tag, k)) and (new or tags is None or tag in tags)] + [gpu_suite.SAME_SIZE_COPY_SOURCE]


def _ops_sources(n: int) -> list[str]:
    """The sources ``ops.transpose`` launches for ``n x n`` 8/16/32-bit matrices on the device the cubins are
    prepared for (``ops_cases.SMS``, ``L2_BYTES``)."""
    from harness.ops_cases import L2_BYTES, SMS
    from linear_layouts.ops.kernels import GridShape
    from linear_layouts.ops.launches import Launch, permute_launches

    return [item.kernel.source for w in (1, 2, 4)
            for item in permute_launches((n, n), (1, 0), w, 1 << 40, 2 << 40, GridShape(SMS, L2_BYTES))
            if isinstance(item, Launch)]


def _new(tag: str, kernel) -> bool:
    """The variants of issue 12's last step (persistent kernels, the hinted or grouped one-tile ones) and of
    issue 29 (``gpu_suite.PEER_TILE_TRANSPOSES``)."""
    peer_tiles = {t for variants in gpu_suite.PEER_TILE_TRANSPOSES.values() for t, *_ in variants}
    return kernel.persistent or tag in gpu_suite.ONE_TILE_OPTIONS or tag in peer_tiles


def launch_child(every: bool) -> None:
    """The new transpose kernels (``every``: all of them) once on a ``SANITIZE_SIZE`` matrix, checked
    element by element."""
    import cupy as cp
    import numpy as np

    from linear_layouts.codegen.runtime import compile_kernel

    n, wrong = SANITIZE_SIZE, 0
    rng = np.random.default_rng(0)
    for w, tag, _, k in gpu_suite.transpose_kernels(n):
        if not (every or _new(tag, k)):
            continue
        dt = {1: np.uint8, 2: np.uint16, 4: np.uint32}[w]
        a = cp.asarray(rng.integers(0, np.iinfo(dt).max, size=(n, n), dtype=dt, endpoint=True))
        b = cp.zeros_like(a)
        grid = (min(SANITIZE_CTAS, k.tiles),) if k.persistent else k.grid(1)
        extra = (cp.zeros(2, dtype=cp.uint32),) if k.dynamic else ()
        compile_kernel(k)(grid, (k.threads,), (a, b) + extra, shared_mem=k.shared_bytes)
        cp.cuda.runtime.deviceSynchronize()
        ok = bool(cp.array_equal(b, a.T))
        wrong += not ok
        print(f"  {8 * w}-bit {tag}: grid {grid} {'ok' if ok else 'WRONG'}", flush=True)
    print(f"TRANSPOSE SUMMARY: {wrong} wrong", flush=True)


def profile_child(only: str, n: int = 8192) -> None:
    """The ``only`` transposes once each on an ``n x n`` matrix (grid as ``gpu_suite.transposes``:
    persistent kernels on every resident slot, balanced), for ncu; checked element by element."""
    import cupy as cp
    import numpy as np

    from linear_layouts.codegen.runtime import compile_kernel, function_pointer, prefer_shared_carveout

    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    for w, tag, _, k in gpu_suite.transpose_kernels(n):
        if tag not in only.split(","):
            continue
        dt = {1: np.uint8, 2: np.uint16, 4: np.uint32}[w]
        a = cp.asarray(np.random.default_rng(0).integers(0, 255, size=(n, n), dtype=np.uint8).astype(dt))
        b = cp.zeros_like(a)
        fn = compile_kernel(k)
        grid = k.grid(sms)
        if k.persistent:
            prefer_shared_carveout(fn, 100)
            slots = int(cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
                function_pointer(fn), k.threads, k.shared_bytes))
            grid = k.grid(sms, True, slots)
        extra = (cp.zeros(2, dtype=cp.uint32),) if k.dynamic else ()
        fn(grid, (k.threads,), (a, b) + extra, shared_mem=k.shared_bytes)
        cp.cuda.runtime.deviceSynchronize()
        print(f"  {8 * w}-bit {tag} ({k.name}): grid {grid} {'ok' if bool(cp.array_equal(b, a.T)) else 'WRONG'}",
              flush=True)


#: What ``ncu_check`` reads of each transpose: shared wavefronts (stores, loads) as the data stage processed them,
#: DRAM bytes, the duration, and the shared wavefronts its executed instructions required
#: (``smsp__sass_...``: from each instruction's addresses, whatever else the data stage was serving).
NCU_METRICS = ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
               "dram__bytes_read.sum", "dram__bytes_write.sum", "gpu__time_duration.sum",
               "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
               "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum")


def ncu_check(only: str, out: Path, n: int = 8192, timeout: float = 300) -> dict:
    """The ``only`` transposes under ncu, one launch each (``profile_child``): their shared store and load
    wavefronts against the prediction (``codegen.model.emitted_wavefronts`` of the kernel's conversion, per tile,
    times its tiles), and their DRAM bytes; ``transpose_ncu_<tags>.json`` and a table into ``out``."""
    from harness.ncu import run_ncu
    from linear_layouts.codegen.kernel import _canonical
    from linear_layouts.codegen.model import emitted_wavefronts

    tags = only.split(",")
    kernels = {k.name: (w, tag, step, k) for w, tag, step, k in gpu_suite.transpose_kernels(n) if tag in tags}
    run = run_ncu([sys.executable, __file__, "--mode", "profile-child", "--only", only], "regex:ll_transpose",
                  list(NCU_METRICS), len(kernels), timeout)
    rows = []
    for launch in run["launches"]:
        w, tag, step, k = kernels[launch["kernel"]]
        store, load = emitted_wavefronts(_canonical(step))
        tiles = (n // k.tile_rows) * (n // k.tile_cols)
        m = launch["metrics"]
        rows.append(dict(width=8 * w, tag=tag, kernel=k.name, predicted=[store * tiles, load * tiles],
                         measured=[int(m[NCU_METRICS[0]]), int(m[NCU_METRICS[1]])],
                         instructions=[int(m[NCU_METRICS[5]]), int(m[NCU_METRICS[6]])],
                         dram_mb=[round(m[NCU_METRICS[2]] / 1e6, 1), round(m[NCU_METRICS[3]] / 1e6, 1)],
                         us=round(m[NCU_METRICS[4]] / 1e3, 1)))
    result = dict(environment=gpu_suite.environment(), rc=run["rc"], tail=run["tail"], rows=rows)
    out.mkdir(parents=True, exist_ok=True)
    (out / "transpose_ncu_order.json").write_text(json.dumps(result, indent=1))
    (out / "transpose_ncu_order.md").write_text(ncu_markdown(result))
    print(ncu_markdown(result), flush=True)
    return result


def ncu_markdown(result: dict) -> str:
    """``ncu_check``'s table: per transpose its shared store / load wavefronts predicted and measured (and their
    ratio), those its instructions required, DRAM bytes and duration."""
    env = result["environment"]
    lines = [f"# 8192^2 transposes under ncu ({env.get('gpu', '')}, {env.get('date', '')})", "",
             "One cold launch each (`transpose_bench.py --mode ncu`). Predicted: `codegen.model.emitted_wavefronts` of "
             "the kernel's conversion per tile, times its tiles. Instructions: the wavefronts the executed shared "
             "instructions required (`smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_{st,ld}`); data stage: "
             "those the L1TEX data stage processed (`l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{st,ld}`).", "",
             "| width | kernel | shared st / ld wavefronts, predicted | instructions | instructions = predicted | "
             "data stage | data stage / predicted | DRAM read / write MB | µs |", "|---|---|---|---|---|---|---|---|---|"]
    for r in result["rows"]:
        ratio = " / ".join(f"{m / p:.3f}" for m, p in zip(r["measured"], r["predicted"]))
        sass = r.get("instructions")
        sass_cells = (f"{sass[0]:,} / {sass[1]:,} | {'yes' if sass == r['predicted'] else 'NO'}" if sass else "- | -")
        lines.append(f"| {r['width']}-bit | {r['tag']} | {r['predicted'][0]:,} / {r['predicted'][1]:,} | {sass_cells} | "
                     f"{r['measured'][0]:,} / {r['measured'][1]:,} | {ratio} | {r['dram_mb'][0]} / {r['dram_mb'][1]} | "
                     f"{r['us']} |")
    return "\n".join(lines) + "\n"


def sanitize(tool: str, timeout: int, every: bool) -> dict:
    cmd = ["compute-sanitizer", "--tool", tool, "--print-limit", "20"]
    if tool == "racecheck":
        cmd += ["--racecheck-report", "all"]
    cmd += [sys.executable, __file__, "--mode", "launch-child"] + (["--sanitize-all"] if every else [])
    start = time.time()
    rc, out = gpu_suite._tool(cmd, timeout)
    summary = [line for line in out.splitlines() if "SUMMARY" in line or "ERROR" in line.upper() or "WRONG" in line]
    return dict(tool=tool, rc=rc, seconds=round(time.time() - start, 1), summary=summary[-10:], tail=out[-1500:])


def peers(n: int, repeats: int) -> list[dict]:
    """Per width (8/16/32-bit): Triton's ``tl.trans`` kernel at each precompiled tile and PyTorch's
    ``x.t().contiguous()`` on an ``n x n`` matrix, timed like our transposes, each checked against torch."""
    import torch

    from triton_transpose import TritonTransposes

    triton = TritonTransposes()
    rows = []
    for w in (1, 2, 4):
        tdt = {1: torch.int8, 2: torch.int16, 4: torch.int32}[w]
        a = torch.randint(-100, 100, (n, n), dtype=tdt, device="cuda")
        b = torch.empty_like(a)
        expected = a.t().contiguous()
        tiles = {}
        for tile, launch in triton.launchers(w, n, n).items():
            b.zero_()
            us = gpu_suite._time(lambda launch=launch: launch(a.data_ptr(), b.data_ptr()), repeats=repeats,
                                 inner=gpu_suite.TRANSPOSE_GRAPH_LAUNCHES)
            tiles[tile] = dict(us=us, tb_per_s=2 * n * n * w / (us * 1e-6) / 1e12, correct=bool(torch.equal(b, expected)))
            print(f"  triton {8 * w}-bit {tile}: {tiles[tile]}", flush=True)
        torch_us = gpu_suite._time(lambda: a.t().contiguous(), repeats=repeats, inner=gpu_suite.TRANSPOSE_GRAPH_LAUNCHES)
        good = {t: v for t, v in tiles.items() if v["correct"]}
        best = min(good, key=lambda t: good[t]["us"]) if good else None
        rows.append(dict(bits=8 * w, size=n, triton_tiles=tiles, triton_best_tile=best,
                         triton_us=good[best]["us"] if best else None, torch_us=torch_us,
                         torch_tb_per_s=2 * n * n * w / (torch_us * 1e-6) / 1e12))
        del a, b, expected
    return rows


def together(n: int, repeats: int, rows: list[dict]) -> list[dict]:
    """Per width: every correct kernel of ``rows`` (the transpose stage's, at its grid), ``ops.transpose`` (the
    layout op's own tile, kernel cache ``LINEAR_LAYOUTS_CACHE``), Triton's ``tl.trans`` at
    each tile, PyTorch's ``x.t().contiguous()`` and a same-size ``copy_`` timed together on one pair of buffers
    (``harness.timing.time_together``: in order and in reverse order, the faster median kept), each output
    checked; the best of ours against the best of Triton."""
    import cupy as cp
    import torch

    from harness.timing import time_together
    from linear_layouts import ops
    from linear_layouts.codegen.runtime import compile_kernel
    from triton_transpose import TritonTransposes

    kernels = {(w, tag): k for w, tag, _, k in gpu_suite.transpose_kernels(n)}  # tags repeat across widths
    triton = TritonTransposes()
    out = []
    for w in (1, 2, 4):
        tdt = {1: torch.int8, 2: torch.int16, 4: torch.int32}[w]
        a = torch.randint(-100, 100, (n, n), dtype=tdt, device="cuda")
        b, c = torch.empty_like(a), torch.empty_like(a)
        expected = a.t().contiguous()
        fns, checks = {}, {}
        for row in rows:
            if row["bits"] != 8 * w or not row.get("correct"):
                continue
            k = kernels[w, row["layouts"].split("/")[0]]
            fn, grid = compile_kernel(k), tuple(row["grid"])
            counter = (cp.zeros(2, dtype=cp.uint32),) if k.dynamic else ()

            def launch(fn=fn, k=k, grid=grid, args_=(cp.asarray(a), cp.asarray(b)) + counter):
                fn(grid, (k.threads,), args_, shared_mem=k.shared_bytes)
            fns["ours " + row["layouts"]], checks["ours " + row["layouts"]] = launch, b
        fns["ours ops.transpose"] = lambda a=a, b=b: ops.transpose(a, out=b)  # the op users call: the ops' tile
        checks["ours ops.transpose"] = b
        for tile, launch in triton.launchers(w, n, n).items():
            fns["triton " + tile] = lambda launch=launch, a=a, b=b: launch(a.data_ptr(), b.data_ptr())
            checks["triton " + tile] = b
        fns["torch"] = lambda a=a, c=c: c.copy_(a.t())
        checks["torch"] = c
        fns["copy"], checks["copy"] = (lambda a=a, c=c: c.copy_(a)), None
        us = time_together(lambda fn: gpu_suite._time(fn, repeats=repeats, inner=gpu_suite.TRANSPOSE_GRAPH_LAUNCHES), fns)
        correct = {}
        for label, fn in fns.items():
            if checks[label] is None:
                continue
            checks[label].zero_()
            fn()
            torch.cuda.synchronize()
            correct[label] = bool(torch.equal(checks[label], expected))
        good = {label: t for label, t in us.items() if correct.get(label)}
        ours = min((lb for lb in good if lb.startswith("ours ")), key=good.get, default=None)
        peer = min((lb for lb in good if lb.startswith("triton ")), key=good.get, default=None)
        tb = {label: 2 * n * n * w / (t * 1e-6) / 1e12 for label, t in us.items()}
        out.append(dict(bits=8 * w, size=n, us=us, tb_per_s=tb, correct=correct, ours=ours, triton=peer,
                        ours_vs_triton=good[peer] / good[ours] if ours and peer else None,
                        ours_vs_torch=us["torch"] / good[ours] if ours else None))
        print(f"  together {8 * w}-bit: ours {ours} {good.get(ours)}, triton {peer} {good.get(peer)}", flush=True)
        del a, b, c, expected
    return out


def compile_state(n: int) -> float:
    """Seconds of one ``torch.compile`` of an ``n x n`` transpose, compiled and run: the process state the
    ops' sweep times in (``ops_l2_regimes.py --state``: it speeds every L2-sized kernel alike)."""
    import torch

    start = time.time()
    x = torch.randint(-100, 100, (n, n), dtype=torch.int16, device="cuda")
    torch.compile(lambda t: t.t().contiguous())(x)
    torch.cuda.synchronize()
    return time.time() - start


def comparison(results: dict) -> list[dict]:
    """Per width: our best correct kernel (plain launches, and with programmatic dependent launch) against
    Triton's best tile and PyTorch, and the fraction of the 1 GiB copy bandwidth."""
    copy = (results.get("copy") or {}).get("tb_per_s")
    out = []
    for peer in results.get("peers", []):
        ours = [r for r in results.get("transpose", []) if r["bits"] == peer["bits"] and r.get("correct")]
        if not ours:
            continue
        best = min(ours, key=lambda r: r["us"])
        pdl = [r for r in ours if r.get("correct_pdl") and r.get("us_pdl")]
        best_pdl = min(pdl, key=lambda r: r["us_pdl"]) if pdl else None
        row = dict(bits=peer["bits"], ours=best["layouts"], ours_us=best["us"], ours_tb_per_s=best["tb_per_s"],
                   triton_tile=peer["triton_best_tile"], triton_us=peer["triton_us"], torch_us=peer["torch_us"])
        if copy:
            row["ours_of_copy"] = best["tb_per_s"] / copy
        if peer["triton_us"]:
            row["ours_vs_triton"] = peer["triton_us"] / best["us"]
            row["triton_of_copy"] = (2 * peer["size"] ** 2 * peer["bits"] / 8 / (peer["triton_us"] * 1e-6) / 1e12 / copy
                                     if copy else None)
        row["ours_vs_torch"] = peer["torch_us"] / best["us"]
        if best_pdl:
            row.update(ours_pdl=best_pdl["layouts"], ours_pdl_us=best_pdl["us_pdl"],
                       ours_pdl_vs_triton=peer["triton_us"] / best_pdl["us_pdl"] if peer["triton_us"] else None,
                       ours_pdl_of_copy=best_pdl.get("fraction_of_copy_pdl"))
        out.append(row)
    return out


def _cell(value, fmt: str = "{:.3f}") -> str:
    return "-" if value is None else fmt.format(value)


def report(results: dict) -> str:
    c = results.get("copy") or {}
    lines = [f"# 8192^2 transposes ({results['environment'].get('gpu', '?')}, {results['environment']['date']})", "",
             f"Device copy (1 GiB): {c.get('tb_per_s', float('nan')):.3f} TB/s.", ""]
    if results.get("comparison"):
        lines += ["Our best kernel per width against its peers, timed in this run the same way (CUDA graphs of "
                  f"{gpu_suite.TRANSPOSE_GRAPH_LAUNCHES} launches): Triton `tl.trans` at its best of "
                  "`triton_transpose.TILES`, PyTorch `x.t().contiguous()`. Targets: >= 1.03x Triton, >= 93% of the "
                  "copy bandwidth.", "",
                  "| width | ours (plain launches) | µs | of copy | Triton best tile | µs | of copy | ours / Triton "
                  "| PyTorch µs | ours / PyTorch | ours with PDL | µs | of copy | / Triton |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in results["comparison"]:
            lines.append(f"| {r['bits']}-bit | {r['ours']} | {r['ours_us']:.1f} | {_cell(r.get('ours_of_copy'), '{:.1%}')} "
                         f"| {r['triton_tile']} | {_cell(r['triton_us'], '{:.1f}')} | {_cell(r.get('triton_of_copy'), '{:.1%}')} "
                         f"| {_cell(r.get('ours_vs_triton'), '{:.3f}x')} | {r['torch_us']:.1f} | {r['ours_vs_torch']:.2f}x "
                         f"| {r.get('ours_pdl', '-')} | {_cell(r.get('ours_pdl_us'), '{:.1f}')} "
                         f"| {_cell(r.get('ours_pdl_of_copy'), '{:.1%}')} | {_cell(r.get('ours_pdl_vs_triton'), '{:.3f}x')} |")
        lines += ["", "Triton's tiles (µs; `BMxBN/warps`):", ""]
        for p in results.get("peers", []):
            cells = ", ".join(f"{t} {v['us']:.1f}{'' if v['correct'] else ' WRONG'}" for t, v in p["triton_tiles"].items())
            lines.append(f"- {p['bits']}-bit: {cells}")
        lines.append("")
    for state, label in (("together", "in a clean process"), ("together_after_compile", "after a `torch.compile` call")):
        if not results.get(state):
            continue
        c1 = c.get("tb_per_s")
        lines += [f"All contenders timed together ({label}; in order and in reverse, the faster median kept): "
                  "our best kernel, Triton's best tile, PyTorch (`c.copy_(x.t())`, the kernel of `x.t().contiguous()`), a same-size copy.", "",
                  "| width | ours | µs | of copy | Triton best tile | µs | of copy | ours / Triton | same-size copy µs "
                  "| ours / same-size copy | PyTorch µs | ours / PyTorch | every output correct |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in results[state]:
            u, o, t = r["us"], r["ours"], r["triton"]
            frac = (lambda lb: _cell(r["tb_per_s"][lb] / c1 if lb and c1 else None, "{:.1%}"))
            lines.append(f"| {r['bits']}-bit | {o} | {_cell(u.get(o), '{:.1f}')} | {frac(o)} | {t} "
                         f"| {_cell(u.get(t), '{:.1f}')} | {frac(t)} | {_cell(r['ours_vs_triton'], '{:.3f}x')} "
                         f"| {u['copy']:.1f} | {_cell(u['copy'] / u[o] if o else None, '{:.1%}')} "
                         f"| {u['torch']:.1f} | {_cell(r['ours_vs_torch'], '{:.2f}x')} "
                         f"| {all(r['correct'].values())} |")
        lines.append("")
    lines += ["| element | layouts | tile | grid | µs | µs PDL | TB/s | of copy bandwidth | of a same-size copy "
              "| of our same-size copy | cold µs (copy) | correct |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results.get("transpose", []):
        frac = f"{100 * r['fraction_of_copy']:.1f}%" if "fraction_of_copy" in r else "-"
        lines.append(f"| {r['bits']}-bit | {r['layouts']} | {r['tile']} | {r.get('grid')} | {r['us']:.1f} | "
                     f"{_cell(r.get('us_pdl'), '{:.1f}')} | "
                     f"{r['tb_per_s']:.3f} | {frac} | {100 * r['fraction_of_same_size_copy']:.1f}% | "
                     f"{gpu_suite.own_copy_cell(r)} | "
                     f"{r.get('cold_us', float('nan')):.1f} ({r.get('same_size_copy_cold_us', float('nan')):.1f}) | "
                     f"{r['correct']} |")
    for s in results.get("sanitizers", []):
        lines += ["", f"{s['tool']}: rc {s['rc']}, {s['seconds']} s: " + " / ".join(s["summary"])]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", default="measure", choices=["prepare", "measure", "launch-child", "profile-child", "ncu"])
    ap.add_argument("--out", default=str(HERE / "build" / "transposes"))
    ap.add_argument("--only", default="", help="comma-separated variant tags to time (default: all)")
    ap.add_argument("--repeats", type=int, default=15, help="graph replays (of gpu_suite.TRANSPOSE_GRAPH_LAUNCHES launches) per median (suite: 5)")
    ap.add_argument("--no-sanitize", action="store_true")
    ap.add_argument("--no-peers", action="store_true", help="leave out Triton's tl.trans tiles and PyTorch")
    ap.add_argument("--no-together", action="store_true", help="leave out the stage timing all contenders together")
    ap.add_argument("--sanitize-all", action="store_true", help="sanitize every transpose (default: the new ones)")
    ap.add_argument("--sanitizer-timeout", type=int, default=150)
    args = ap.parse_args()
    if args.mode == "launch-child":
        launch_child(args.sanitize_all)
        return
    if args.mode == "profile-child":  # e.g. under ncu: ncu -k regex:ll_transpose ... --mode profile-child --only X
        profile_child(args.only)
        return
    if args.mode == "ncu":  # the --only transposes under ncu against the predicted shared wavefronts
        ncu_check(args.only, Path(args.out))
        return
    sources = _sources(8192, args.only) + _sources(SANITIZE_SIZE, new=not args.sanitize_all) + _ops_sources(8192)
    print(f"compiled (or found cached) {len(sources)} cubins in {gpu_suite.compile_all(sources):.1f} s", flush=True)
    if args.mode == "prepare":
        if not args.no_peers:
            import triton_transpose  # noqa: PLC0415 - needs Triton 3.6 (the device's) on the path

            triton_transpose.prepare({(w, True, True) for w in (1, 2, 4)})
        return
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results: dict = dict(environment=gpu_suite.environment())
    results["copy"] = gpu_suite.copy_bandwidth()
    print("copy", results["copy"], flush=True)
    ns = argparse.Namespace(transpose_size=8192, transpose_only=args.only, transpose_repeats=args.repeats)
    results["transpose"] = gpu_suite.transposes(ns, results["copy"])
    if not args.no_peers:
        results["peers"] = peers(8192, args.repeats)
        results["comparison"] = comparison(results)
        if not args.no_together:
            results["together"] = together(8192, args.repeats, results["transpose"])
            results["compile_s"] = compile_state(8192)
            results["together_after_compile"] = together(8192, args.repeats, results["transpose"])
    if not args.no_sanitize:
        results["sanitizers"] = [sanitize(tool, args.sanitizer_timeout, args.sanitize_all)
                                 for tool in ("memcheck", "racecheck")]
    (out / "transposes.json").write_text(json.dumps(results, indent=1, default=str))
    text = report(results)
    (out / "transposes.md").write_text(text)
    print(text, flush=True)


if __name__ == "__main__":
    main()
