"""The fp8 cast-transpose of odd shapes (rows that 16 bytes do not align) on the device, in one run: the two
kernels ``ops.cast_transpose`` can take for them (``ops.launches.MISALIGNED_CAST``): the realigned one
(``codegen.realign``), the scalar one (``codegen.cast_scalar``) and the chunked one (``codegen.cast_chunks``)
at several tiles, against the aligned
kernel (``codegen.permute``) on the shape rounded up to multiples of 16, PyTorch eager (``x * scale -> fp8``,
``.t().contiguous()``) and the device's copy bandwidth. Every kernel's ``C``, ``T`` and amax are checked bit
for bit against PyTorch's own cast ``(scale x).clamp(-max, max).to(float8)``. A steady-state check times the
same kernels on inputs and outputs rotated over sets holding more than three L2s (``ROTATE_BYTES``), so that
no launch finds what the previous one touched in L2.

    PYTHONPATH=src python3 benchmarks/cast_odd_bench.py --mode prepare    # CPU: cubins into benchmarks/build/cast_odd
    PYTHONPATH=src python3 benchmarks/cast_odd_bench.py --out DIR         # device: cast_odd.{json,md}

Bandwidth counts the bytes moved: ``X`` read once, ``C`` and ``T`` written once (``m n (w + 2)``); "of copy"
divides by a 1 GiB device-to-device copy's (bytes read + written) in the same run.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import harness  # noqa: E402  (puts src/ on the path)

HERE = harness.BENCHMARKS
ROOT = harness.ROOT
BUILD = harness.BUILD / "cast_odd"
#: The commit whose ``codegen/realign.py`` is the previous realigned kernel (windows 16 rows and columns larger
#: than the tile, every output chunk written whole; ``cast_odd_sass.py`` reads it).
PREVIOUS_COMMIT = "9707d1c"
SHAPES = ((4095, 11007), (4097, 11009), (8191, 8193), (1000, 3000))
FORMATS = ("bf16", "fp16", "fp32")
FP8 = "e4m3"
SCALE = 0.37
SMS = 132
#: Tiles of the scalar kernel: label -> (rows, columns, warps), for every input (the first is ``ops``' default).
SCALAR_VARIANTS = {"scalar 64x64/8w": (64, 64, 8), "scalar 64x128/8w": (64, 128, 8), "scalar 128x64/8w": (128, 64, 8)}
#: Tiles of the chunked kernel: label -> (rows, columns, warps) of 2-byte inputs, of fp32 (3 chunks a thread).
CHUNKED_VARIANTS = {"chunked 64x64": ((64, 64, 8), (64, 64, 16)), "chunked 128x64": ((128, 64, 16), (128, 64, 32)),
                    "chunked 64x128": ((64, 128, 16), (64, 128, 32)), "chunked 32x64": ((32, 64, 4), (32, 64, 8))}
#: The steady-state check: (input, shape) timed over sets of buffers holding more than ``ROTATE_BYTES``.
ROTATED = (("bf16", (4095, 11007)), ("bf16", (1000, 3000)))
#: Three L2s of an H200 (60 MiB).
ROTATE_BYTES = 3 * 60 * 2**20


def module_at(commit: str):
    """``codegen/realign.py`` as of ``commit``, imported as a module of its own."""
    text = subprocess.run(["git", "show", f"{commit}:src/linear_layouts/codegen/realign.py"], cwd=ROOT,
                          check=True, capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / f"realign_{commit}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(f"realign_{commit}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _aligned(m: int, n: int) -> tuple[int, int]:
    return -(-m // 16) * 16, -(-n // 16) * 16


def kernels() -> list[dict]:
    """Every (format, label, shape) kernel of the run: name, source, threads, shared bytes, tile."""
    from linear_layouts.codegen.cast_chunks import emit_chunked_cast_transpose_kernel
    from linear_layouts.codegen.cast_scalar import emit_scalar_cast_transpose_kernel
    from linear_layouts.ops.kernels import CHUNKED_TILES, GridShape, SCALAR_TILE
    from linear_layouts.ops.launches import cast_launches

    out = []
    for fmt in FORMATS:
        for m, n in SHAPES:
            (launch,) = cast_launches(fmt, FP8, m, n, 1 << 40, 2 << 40, 3 << 40, None, 1.0, 4 << 40, GridShape(SMS),
                                      misaligned="realigned")
            if not any(e["kernel"].name == launch.kernel.name for e in out):
                out.append(dict(fmt=fmt, label="realigned", kernel=launch.kernel, shapes=SHAPES))
        for label, (r, c, w) in SCALAR_VARIANTS.items():
            k = emit_scalar_cast_transpose_kernel(f"scalar_{fmt}_{r}x{c}x{w}", fmt, FP8, r, c, w)
            out.append(dict(fmt=fmt, label=label, kernel=k, shapes=SHAPES, ops=(r, c, w) == SCALAR_TILE))
        for label, tiles in CHUNKED_VARIANTS.items():
            r, c, w = tiles[fmt == "fp32"]
            k = emit_chunked_cast_transpose_kernel(f"chunked_{fmt}_{r}x{c}x{w}", fmt, FP8, r, c, w)
            out.append(dict(fmt=fmt, label=label, kernel=k, shapes=SHAPES, ops=(r, c, w) == CHUNKED_TILES[fmt]))
        for m, n in SHAPES:
            am, an = _aligned(m, n)
            (launch,) = cast_launches(fmt, FP8, am, an, 1 << 40, 2 << 40, 3 << 40, None, 1.0, 4 << 40, GridShape(SMS))
            out.append(dict(fmt=fmt, label="aligned", kernel=launch.kernel, shapes=((m, n),)))
    return out


def prepare(build: Path, arch: str, jobs_count: int = 1) -> None:
    """Compile every kernel to ``build/NAME.cubin`` (nvcc, ``jobs_count`` at a time) and write
    ``build/manifest.json``."""
    from concurrent.futures import ThreadPoolExecutor

    from linear_layouts.codegen.ptx import find_nvcc

    nvcc = find_nvcc()
    if nvcc is None:
        sys.exit("cast_odd_bench: nvcc not found")
    build.mkdir(parents=True, exist_ok=True)
    entries, jobs = [], {}
    for e in kernels():
        k = e["kernel"]
        bounds = re.search(r"__launch_bounds__\((\d+), (\d+)\)", k.source)
        entries.append(dict(fmt=e["fmt"], label=e["label"], name=k.name, threads=k.threads, shared=k.shared_bytes,
                            ctas_per_sm=int(bounds.group(2)) if bounds else 0,
                            tile=[k.tile_rows, k.tile_cols], shapes=[list(s) for s in e["shapes"]],
                            params=[list(p) for p in k.params]))
        jobs[k.name] = k.source

    def compile_one(item):
        name, source = item
        cu = build / f"{name}.cu"
        cu.write_text(source)
        subprocess.run([nvcc, f"-arch={arch}", "-cubin", "-O3", "-std=c++17", "-o", str(build / f"{name}.cubin"),
                        str(cu)], check=True, capture_output=True)
        return name

    start = time.time()
    with ThreadPoolExecutor(jobs_count) as pool:
        done = list(pool.map(compile_one, jobs.items()))
    (build / "manifest.json").write_text(json.dumps(dict(arch=arch, sms=SMS, kernels=entries), indent=1))
    # the kernel cache of benchmarks/ops_sanitize.py's cases (its misaligned casts are these kernels), for a run
    # with LINEAR_LAYOUTS_CACHE=build/cache
    import os

    os.environ["LINEAR_LAYOUTS_CACHE"] = str(build / "cache")
    (build / "cache").mkdir(mode=0o700, exist_ok=True)
    from harness.ops_cases import sanitize_cases
    from linear_layouts.codegen.ptx import compile_cubin_bytes

    sources = {item.kernel.source for case in sanitize_cases() for item in case["launches"]
               if hasattr(item, "kernel")}
    with ThreadPoolExecutor(jobs_count) as pool:
        list(pool.map(lambda source: compile_cubin_bytes(source, arch), sorted(sources)))
    print(f"prepared {len(done)} cubins and {len(sources)} cached kernels for {arch} in {time.time() - start:.0f} s "
          f"into {build}")


def _time(fn, repeats: int, inner: int = 10) -> float:
    """Median over ``repeats`` of the mean µs per call of ``inner`` back-to-back calls (CUDA events)."""
    from harness.timing import time_back_to_back

    return time_back_to_back(fn, repeats, inner)


def _copy_bandwidth(nbytes: int, repeats: int) -> float:
    """TB/s of a device-to-device copy of ``nbytes`` (bytes read + written)."""
    import torch

    a, b = torch.empty(nbytes, dtype=torch.uint8, device="cuda"), torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    return 2 * nbytes / _time(lambda: b.copy_(a), max(3, repeats // 2), 3) / 1e6


def _launcher(f, e: dict, x, c, t, scale, amax, m: int, n: int):
    """A call launching kernel ``f`` (manifest entry ``e``) on ``x`` into ``c``, ``t`` (``m x n``)."""
    import numpy as np

    tm, tn = -(-m // e["tile"][0]), -(-n // e["tile"][1])
    args = (np.uint64(x.data_ptr()), np.uint64(c.data_ptr()), np.uint64(t.data_ptr()), np.uint64(scale.data_ptr()),
            np.float32(0.0), np.uint64(amax.data_ptr()), np.uint32(m), np.uint32(n), np.uint32(tn), np.uint32(tm))

    def launch():
        f((tm * tn,), (e["threads"],), args, shared_mem=e["shared"])

    return launch


def run(build: Path, out: Path, repeats: int) -> None:
    import cupy as cp
    import torch

    from linear_layouts.codegen.runtime import allow_dynamic_shared

    manifest = json.loads((build / "manifest.json").read_text())
    fp8_dtype, top = torch.float8_e4m3fn, 448.0
    functions = {}
    for e in manifest["kernels"]:
        if e["name"] not in functions:
            module = cp.RawModule(path=str(build / f"{e['name']}.cubin"))
            f = module.get_function(e["name"])
            if e["shared"] > 48 * 1024:
                allow_dynamic_shared(f, e["shared"])
            functions[e["name"]] = (module, f)
    props = torch.cuda.get_device_properties(0)
    copy_bw = _copy_bandwidth(1 << 30, repeats)
    rows, rotated = [], []
    env = dict(device=props.name, sms=props.multi_processor_count, date=datetime.datetime.now().isoformat(timespec="seconds"),
               torch=torch.__version__, cupy=cp.__version__, cuda=torch.version.cuda, python=platform.python_version(),
               arch=manifest["arch"], kernels=manifest["kernels"], copy_tbps=copy_bw, scale=SCALE, fp8=FP8,
               rotate_bytes=ROTATE_BYTES)
    torch_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
    scale = torch.full((1,), SCALE, dtype=torch.float32, device="cuda")
    amax = torch.zeros(1, dtype=torch.float32, device="cuda")
    for fmt in FORMATS:
        wi = 4 if fmt == "fp32" else 2
        for m, n in SHAPES:
            gen = torch.Generator(device="cuda").manual_seed(m * 7 + n)
            for label_shape, (mm, nn) in (("odd", (m, n)), ("aligned", _aligned(m, n))):
                x = (torch.randn(mm, nn, device="cuda", generator=gen) * 300).to(torch_dtype[fmt])
                ref = (x.float() * SCALE).clamp(-top, top).to(fp8_dtype).view(torch.uint8)
                ref_t = ref.t().contiguous()
                ref_amax = x.float().abs().max().item()
                c = torch.empty(mm, nn, dtype=torch.uint8, device="cuda")
                t = torch.empty(nn, mm, dtype=torch.uint8, device="cuda")
                moved = mm * nn * (wi + 2)
                for e in manifest["kernels"]:
                    if e["fmt"] != fmt or [m, n] not in e["shapes"] or (e["label"] == "aligned") != (label_shape == "aligned"):
                        continue
                    launch = _launcher(functions[e["name"]][1], e, x, c, t, scale, amax, mm, nn)
                    try:
                        c.fill_(0xAB)
                        t.fill_(0xAB)
                        amax.zero_()
                        torch.cuda.synchronize()
                        launch()
                        torch.cuda.synchronize()
                        exact = bool(torch.equal(c, ref) and torch.equal(t, ref_t) and amax.item() == ref_amax)
                        us = _time(launch, repeats)
                        rows.append(dict(format=fmt, shape=[m, n], run_shape=[mm, nn], kernel=e["label"], name=e["name"],
                                         tile=e["tile"], threads=e["threads"], shared=e["shared"], exact=exact, us=us,
                                         tbps=moved / us / 1e6, of_copy=moved / us / 1e6 / copy_bw))
                        print(f"{fmt} {m}x{n} {e['label']:>20}: {us:8.1f} us {rows[-1]['of_copy']:6.1%} of copy "
                              f"{'exact' if exact else 'WRONG'}", flush=True)
                    except Exception as error:  # one kernel's failure is a row, not the end of the run
                        rows.append(dict(format=fmt, shape=[m, n], run_shape=[mm, nn], kernel=e["label"],
                                         name=e["name"], exact=False, us=float("nan"), tbps=0.0, of_copy=0.0,
                                         error=repr(error)))
                        print(f"{fmt} {m}x{n} {e['label']}: {error!r}", flush=True)
                if label_shape == "odd":
                    def eager(x=x):
                        cast = (x.float() * SCALE).clamp(-top, top).to(fp8_dtype)
                        return cast, cast.t().contiguous()
                    us = _time(eager, repeats)
                    rows.append(dict(format=fmt, shape=[m, n], run_shape=[mm, nn], kernel="PyTorch eager", exact=True,
                                     us=us, tbps=moved / us / 1e6, of_copy=moved / us / 1e6 / copy_bw))
                del x, ref, ref_t, c, t
        save(out, env, rows, rotated)  # after each input type: a run cut short keeps what it measured
    for fmt, (m, n) in ROTATED:  # steady state: each launch on the next of K buffer sets (> 3 L2s in all)
        wi = 4 if fmt == "fp32" else 2
        moved = m * n * (wi + 2)
        k = -(-ROTATE_BYTES // moved) + 1
        sets = [((torch.randn(m, n, device="cuda") * 300).to(torch_dtype[fmt]),
                 torch.empty(m, n, dtype=torch.uint8, device="cuda"), torch.empty(n, m, dtype=torch.uint8, device="cuda"))
                for _ in range(k)]
        for e in manifest["kernels"]:
            if e["fmt"] != fmt or [m, n] not in e["shapes"] or e["label"] == "aligned":
                continue
            launches = [_launcher(functions[e["name"]][1], e, x, c, t, scale, amax, m, n) for x, c, t in sets]
            turn = [0]

            def rotate(launches=launches, turn=turn):
                launches[turn[0] % len(launches)]()
                turn[0] += 1

            try:
                us = _time(rotate, repeats, inner=2 * k)
                x, c, _ = sets[(turn[0] - 1) % k]
                exact = bool(torch.equal(c, (x.float() * SCALE).clamp(-top, top).to(fp8_dtype).view(torch.uint8)))
            except Exception as error:
                us, exact = float("nan"), False
                print(f"rotated {fmt} {m}x{n} {e['label']}: {error!r}", flush=True)
            rotated.append(dict(format=fmt, shape=[m, n], kernel=e["label"], sets=k, exact=exact, us=us,
                                tbps=moved / us / 1e6, of_copy=moved / us / 1e6 / copy_bw))
            print(f"rotated x{k} {fmt} {m}x{n} {e['label']:>20}: {us:8.1f} us {rotated[-1]['of_copy']:6.1%} of copy",
                  flush=True)
        del sets
        save(out, env, rows, rotated)
    print(markdown(env, rows, rotated))


def save(out: Path, env: dict, rows: list[dict], rotated: list[dict]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "cast_odd.json").write_text(json.dumps(dict(environment=env, rows=rows, rotated=rotated), indent=1))
    (out / "cast_odd.md").write_text(markdown(env, rows, rotated))


def _cell(r: dict | None) -> str:
    return "" if r is None else f"{r['us']:.1f} ({r['of_copy']:.1%}){'' if r['exact'] else ' ✗'}"


def markdown(env: dict, rows: list[dict], rotated: list[dict]) -> str:
    labels = list(dict.fromkeys(r["kernel"] for r in rows))
    scalar = [label for label in labels if label.startswith("scalar")]
    lines = [f"# Odd-shape fp8 cast-transpose ({env['fp8']}, scale {env['scale']}) — {env['device']}, {env['date']}",
             "", f"torch {env['torch']}, CuPy {env['cupy']}, CUDA {env['cuda']}, cubins {env['arch']}; copy "
             f"{env['copy_tbps']:.2f} TB/s (1 GiB, read + written). Cells: µs, % of copy bandwidth of the bytes "
             "moved (X once, C and T once); `aligned`: the aligned kernel on the shape rounded up to 16; "
             "✗: not bit-exact against PyTorch. Last columns: the realigned kernel's time and the best chunked tile's over "
             "the best scalar tile's.",
             "", "| input | shape | " + " | ".join(labels) + " | realigned / best scalar | best chunked / best scalar |",
             "|---|---|" + "---|" * (len(labels) + 2)]
    for fmt in FORMATS:
        for shape in SHAPES:
            cells, by = [], {}
            for label in labels:
                r = next((r for r in rows if r["format"] == fmt and tuple(r["shape"]) == shape and r["kernel"] == label),
                         None)
                by[label] = r
                cells.append(_cell(r))
            times = [by[label]["us"] for label in scalar if by.get(label) and by[label]["exact"]]
            chunked = [by[label]["us"] for label in labels if label.startswith("chunked") and by.get(label)
                       and by[label]["exact"]]
            ratio = (f"{by['realigned']['us'] / min(times):.2f}x" if times and by.get("realigned") else "")
            ratio_c = f"{min(chunked) / min(times):.2f}x" if times and chunked else ""
            lines.append(f"| {fmt} | {shape[0]}x{shape[1]} | " + " | ".join(cells) + f" | {ratio} | {ratio_c} |")
    if rotated:
        rlabels = list(dict.fromkeys(r["kernel"] for r in rotated))
        lines += ["", f"Steady state: each launch on the next of K sets of X, C and T (> {env['rotate_bytes'] >> 20} MiB "
                  "in all: nothing a launch reads is in L2 from the launch before); C of the last launch checked.", "",
                  "| input | shape | K | " + " | ".join(rlabels) + " |", "|---|---|---|" + "---|" * len(rlabels)]
        for fmt, shape in dict.fromkeys((r["format"], tuple(r["shape"])) for r in rotated):
            by = {r["kernel"]: r for r in rotated if r["format"] == fmt and tuple(r["shape"]) == shape}
            k = next(iter(by.values()))["sets"]
            lines.append(f"| {fmt} | {shape[0]}x{shape[1]} | {k} | " + " | ".join(_cell(by.get(label)) for label in rlabels)
                         + " |")
    lines += ["", "Tiles (bf16; `in flight`: the X bytes a CTA loads at once x the CTAs an SM holds by its launch bounds):",
              "", "| kernel | tile | threads | CTAs/SM | shared | KiB in flight / SM |", "|---|---|---|---|---|---|"]
    for e in env.get("kernels", []):
        if e["fmt"] == "bf16" and e["label"] != "aligned":
            rows_, cols_ = e["tile"]
            loaded = (rows_ * (cols_ * 2 + 16) if e["label"].startswith("realigned") else
                      (rows_ + 7) * (cols_ * 2 + 16) if e["label"].startswith("chunked") else rows_ * cols_ * 2)
            lines.append(f"| {e['label']} | {rows_}x{cols_} | {e['threads']} | {e['ctas_per_sm']} | "
                         f"{e['shared']} | {loaded * e['ctas_per_sm'] / 1024:.0f} |")
    wrong = [r for r in rows + rotated if not r["exact"]]
    lines += ["", f"Bit-exact: {len(rows) + len(rotated) - len(wrong)} of {len(rows) + len(rotated)} runs" +
              ("" if not wrong else ": WRONG " + ", ".join(f"{r['format']} {r['shape']} {r['kernel']}" for r in wrong)), ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=("prepare", "run"), default="run")
    parser.add_argument("--build", type=Path, default=BUILD)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--jobs", type=int, default=1, help="nvcc processes at a time (prepare)")
    args = parser.parse_args()
    if args.mode == "prepare":
        prepare(args.build, args.arch, args.jobs)
    else:
        if args.out is None:
            parser.error("--out is required in run mode")
        run(args.build, args.out, args.repeats)


if __name__ == "__main__":
    main()
