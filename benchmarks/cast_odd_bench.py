"""The fp8 cast-transpose of odd shapes (rows that 16 bytes do not align) on the device, in one run: the
previous, windowed realigned kernel (its source read from git), the current one (``codegen.realign``, the
kernel ``ops.cast_transpose`` launches) and its tile variants, against the aligned kernel (``codegen.permute``) on the shape rounded up to multiples of 16, PyTorch eager
(``x * scale -> fp8``, ``.t().contiguous()``) and the device's copy bandwidth. Every kernel's ``C``, ``T``
and amax are checked bit for bit against PyTorch's own cast ``(scale x).clamp(-max, max).to(float8)``.

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
import statistics
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
#: than the tile, every output chunk written whole).
PREVIOUS_COMMIT = "9707d1c"
SHAPES = ((4095, 11007), (4097, 11009), (8191, 8193), (1000, 3000))
FORMATS = ("bf16", "fp16", "fp32")
FP8 = "e4m3"
SCALE = 0.37
SMS = 132
#: Variants of the current kernel: label -> (rows, warps, CTAs per SM; 0: as many as fit, wide stores), for every
#: input ("words": C and T stored as 32-bit words, two or four to a 32-byte sector, instead of 8- / 16-byte chunks).
VARIANTS = {"new 16/4w": (16, 4, 0, True), "new 32/4w": (32, 4, 0, True), "new 32/8w": (32, 8, 0, True),
            "new 64/8w words": (64, 8, 0, False), "new 32/4w words": (32, 4, 0, False)}


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
    from linear_layouts.codegen.realign import emit_realigned_cast_transpose_kernel
    from linear_layouts.ops.kernels import GridShape
    from linear_layouts.ops.launches import cast_launches

    previous = module_at(PREVIOUS_COMMIT)
    out = []
    for fmt in FORMATS:
        wi = 4 if fmt == "fp32" else 2
        rows, cols = (128, 64) if wi == 4 else (128, 128)
        k = previous.emit_realigned_cast_transpose_kernel(f"previous_realigned_{fmt}", fmt, FP8, rows, cols, 8)
        out.append(dict(fmt=fmt, label="windowed", kernel=k, shapes=SHAPES))
        for m, n in SHAPES:
            (launch,) = cast_launches(fmt, FP8, m, n, 1 << 40, 2 << 40, 3 << 40, None, 1.0, 4 << 40, GridShape(SMS))
            if not any(e["kernel"].name == launch.kernel.name for e in out):
                out.append(dict(fmt=fmt, label="new (ops)", kernel=launch.kernel, shapes=SHAPES))
            am, an = _aligned(m, n)
            (launch,) = cast_launches(fmt, FP8, am, an, 1 << 40, 2 << 40, 3 << 40, None, 1.0, 4 << 40, GridShape(SMS))
            out.append(dict(fmt=fmt, label="aligned", kernel=launch.kernel, shapes=((m, n),)))
        for label, (r, w, ctas, wide) in VARIANTS.items():
            k = emit_realigned_cast_transpose_kernel(f"variant_{fmt}_{r}x{w}x{ctas}{'' if wide else 'w'}", fmt, FP8, r, w,
                                                     ctas_per_sm=ctas, wide=wide)
            out.append(dict(fmt=fmt, label=label, kernel=k, shapes=SHAPES))
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
    (build / "manifest.json").write_text(json.dumps(dict(arch=arch, sms=SMS, previous_commit=PREVIOUS_COMMIT,
                                                         kernels=entries), indent=1))
    # the kernel cache of benchmarks/ops_sanitize.py's cases (its realigned casts are this kernel), for a run
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
    import torch

    fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(inner):
            fn()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) * 1000.0 / inner)
    return statistics.median(samples)


def _copy_bandwidth(nbytes: int, repeats: int) -> float:
    """TB/s of a device-to-device copy of ``nbytes`` (bytes read + written)."""
    import torch

    a, b = torch.empty(nbytes, dtype=torch.uint8, device="cuda"), torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    return 2 * nbytes / _time(lambda: b.copy_(a), max(3, repeats // 2), 3) / 1e6


def run(build: Path, out: Path, repeats: int) -> None:
    import cupy as cp
    import numpy as np
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
    rows = []
    env = dict(device=props.name, sms=props.multi_processor_count, date=datetime.datetime.now().isoformat(timespec="seconds"),
               torch=torch.__version__, cupy=cp.__version__, cuda=torch.version.cuda, python=platform.python_version(),
               arch=manifest["arch"], previous_commit=manifest["previous_commit"], kernels=manifest["kernels"],
               copy_tbps=copy_bw, scale=SCALE, fp8=FP8)
    torch_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
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
                amax = torch.zeros(1, dtype=torch.float32, device="cuda")
                scale = torch.full((1,), SCALE, dtype=torch.float32, device="cuda")
                moved = mm * nn * (wi + 2)
                for e in manifest["kernels"]:
                    if e["fmt"] != fmt or [m, n] not in e["shapes"] or (e["label"] == "aligned") != (label_shape == "aligned"):
                        continue
                    _, f = functions[e["name"]]
                    tm, tn = -(-mm // e["tile"][0]), -(-nn // e["tile"][1])
                    args = (np.uint64(x.data_ptr()), np.uint64(c.data_ptr()), np.uint64(t.data_ptr()),
                            np.uint64(scale.data_ptr()), np.float32(0.0), np.uint64(amax.data_ptr()), np.uint32(mm),
                            np.uint32(nn), np.uint32(tn), np.uint32(tm))

                    def launch(f=f, tm=tm, tn=tn, e=e, args=args):
                        f((tm * tn,), (e["threads"],), args, shared_mem=e["shared"])

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
        save(out, env, rows)  # after each input type: a run cut short keeps what it measured
    print(markdown(env, rows))


def save(out: Path, env: dict, rows: list[dict]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "cast_odd.json").write_text(json.dumps(dict(environment=env, rows=rows), indent=1))
    (out / "cast_odd.md").write_text(markdown(env, rows))


def markdown(env: dict, rows: list[dict]) -> str:
    labels = list(dict.fromkeys(r["kernel"] for r in rows))
    lines = [f"# Odd-shape fp8 cast-transpose ({env['fp8']}, scale {env['scale']}) — {env['device']}, {env['date']}",
             "", f"torch {env['torch']}, CuPy {env['cupy']}, CUDA {env['cuda']}, cubins {env['arch']}; copy "
             f"{env['copy_tbps']:.2f} TB/s (1 GiB, read + written). Cells: µs, % of copy bandwidth of the bytes "
             "moved (X once, C and T once); `aligned`: the aligned kernel on the shape rounded up to 16; "
             "✗: not bit-exact against PyTorch.", "",
             "| input | shape | " + " | ".join(labels) + " | new / windowed |", "|---|---|" + "---|" * (len(labels) + 1)]
    for fmt in FORMATS:
        for shape in SHAPES:
            cells, by = [], {}
            for label in labels:
                r = next((r for r in rows if r["format"] == fmt and tuple(r["shape"]) == shape and r["kernel"] == label),
                         None)
                by[label] = r
                cells.append("" if r is None else f"{r['us']:.1f} ({r['of_copy']:.1%}){'' if r['exact'] else ' ✗'}")
            ratio = (f"{by['windowed']['us'] / by['new (ops)']['us']:.2f}x"
                     if by.get("windowed") and by.get("new (ops)") else "")
            lines.append(f"| {fmt} | {shape[0]}x{shape[1]} | " + " | ".join(cells) + f" | {ratio} |")
    lines += ["", "Tiles (bf16; `in flight`: the X bytes a CTA loads at once x the CTAs an SM holds by its launch bounds):",
              "", "| kernel | tile | threads | CTAs/SM | shared | KiB in flight / SM |", "|---|---|---|---|---|---|"]
    for e in env.get("kernels", []):
        if e["fmt"] == "bf16" and e["label"].startswith("new"):
            chunk_bytes = e["tile"][0] * (e["tile"][1] * 2 + 16)  # a row's 33 chunks
            lines.append(f"| {e['label']} | {e['tile'][0]}x{e['tile'][1]} | {e['threads']} | {e['ctas_per_sm']} | "
                         f"{e['shared']} | {chunk_bytes * e['ctas_per_sm'] / 1024:.0f} |")
    wrong = [r for r in rows if not r["exact"]]
    lines += ["", f"Bit-exact: {len(rows) - len(wrong)} of {len(rows)} runs" +
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
