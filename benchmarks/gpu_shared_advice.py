"""The shared-layout advice on the GPU: Gluon kernels built from ``suggest_shared_layout``'s answer, against
Gluon's default (``NVMMASharedLayout.get_default_for``) and Triton's own choice, with ncu's wavefronts.

One script, one device call (well under 3 minutes on an H100)::

    PYTHONUNBUFFERED=1 PYTHONPATH=src python benchmarks/gpu_shared_advice.py --out $OUT

For each (store layout, consumer) pair of ``pairs()`` (fp8 / fp16 / fp32, 1 to 8 warps: the 128x128
transposes of Triton issue #7815, mma v2 operand loads, mma / wgmma accumulator epilogues, wgmma operands
and TMA tiles), three kernels of one CTA each load the tile from global memory in the store layout and
write it back from the consumer's layout:

* ``ours``: ``gl.allocate_shared_memory(dtype, shape, LAYOUT, value=x)`` then ``smem.load(CONSUMER)`` with
  LAYOUT the best row of ``suggest_shared_layout`` the installed Gluon can build (Triton 3.6 has no
  ``SharedLinearLayout``: the next row then, and the table says so);
* ``default``: the same with Gluon's ``NVMMASharedLayout.get_default_for(shape, dtype)``;
* ``triton``: ``gl.convert_layout(x, CONSUMER)``: the shared layout Triton picks itself for the same data
  movement (for wgmma / TMA consumers Triton's own choice is the NVMMA default: a ``tl.dot`` program
  allocates exactly that, so the row is the default's).

Every kernel is checked (the output tile equals the input, bit for bit); then one ncu process launches every
kernel once and reads ``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum`` / ``_ld.sum``. The prediction
is the project's bank model for the instructions Triton emitted (read from the kernel's PTX: the
``st.shared`` / ``ld.shared`` vector width, or ``stmatrix`` / ``ldmatrix``). Writes
``gpu_shared_advice.json`` and ``gpu_shared_advice.md`` (commit-ready) under ``--out``.

``--dry-run`` (CPU, no GPU): builds every pair's advice and compiles every Gluon kernel with the installed
Triton for sm_90, reporting the emitted shared-memory instructions and the predictions; nothing runs.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import platform
import re
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from triton.experimental import gluon  # noqa: E402
from triton.experimental.gluon import language as gl  # noqa: E402

import linear_layouts.catalog as C  # noqa: E402

METRIC_LD = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
METRIC_ST = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"
_BARRIER = getattr(gl, "barrier", None) or getattr(gl, "thread_barrier")  # Triton 3.9 / 3.6


# ------------------------------------------------------------------------------------------ kernels
@gluon.jit
def gsa_roundtrip(src, dst, M: gl.constexpr, N: gl.constexpr, STORE: gl.constexpr, LOAD: gl.constexpr,
                  SMEM: gl.constexpr):
    rows = gl.arange(0, M, layout=gl.SliceLayout(1, STORE))
    cols = gl.arange(0, N, layout=gl.SliceLayout(0, STORE))
    x = gl.load(src + rows[:, None] * N + cols[None, :])
    smem = gl.allocate_shared_memory(x.dtype, [M, N], SMEM, value=x)
    _BARRIER()
    y = smem.load(LOAD)
    rows_l = gl.arange(0, M, layout=gl.SliceLayout(1, LOAD))
    cols_l = gl.arange(0, N, layout=gl.SliceLayout(0, LOAD))
    gl.store(dst + rows_l[:, None] * N + cols_l[None, :], y)


@gluon.jit
def gsa_convert(src, dst, M: gl.constexpr, N: gl.constexpr, STORE: gl.constexpr, LOAD: gl.constexpr):
    rows = gl.arange(0, M, layout=gl.SliceLayout(1, STORE))
    cols = gl.arange(0, N, layout=gl.SliceLayout(0, STORE))
    x = gl.load(src + rows[:, None] * N + cols[None, :])
    y = gl.convert_layout(x, LOAD)
    rows_l = gl.arange(0, M, layout=gl.SliceLayout(1, LOAD))
    cols_l = gl.arange(0, N, layout=gl.SliceLayout(0, LOAD))
    gl.store(dst + rows_l[:, None] * N + cols_l[None, :], y)


# ------------------------------------------------------------------------------------------ pairs
@dataclass(frozen=True)
class Pair:
    """A tile of ``shape`` ``dtype`` elements stored from ``store`` and read by ``consumer`` (``"load"``:
    a local_load into ``load``; ``"wgmma-a"`` / ``"wgmma-b"`` / ``"tma"``: that consumer, with a local_load
    into ``load`` to check the tile)."""

    name: str
    shape: tuple[int, int]
    dtype: str
    warps: int
    store: object
    consumer: str
    load: object
    note: str = ""


def _b(spt, tpw, wpc, order):
    return C.BlockedLayout(spt, tpw, wpc, order)


def _dot(operand, parent, k_width):
    return C.DotOperandLayout(operand, parent, k_width)


def _mma2(warps):
    return C.NVMMADistributedLayout([2, 0], warps, [16, 8])


def pairs() -> list[Pair]:
    """The pairs of the GPU check (module doc)."""
    row8, col8 = _b([1, 8], [4, 8], [4, 1], [1, 0]), _b([8, 1], [8, 4], [1, 4], [0, 1])
    row4, col4 = _b([1, 4], [4, 8], [4, 1], [1, 0]), _b([4, 1], [8, 4], [1, 4], [0, 1])
    row16, col16 = _b([1, 16], [8, 4], [4, 1], [1, 0]), _b([16, 1], [4, 8], [1, 4], [0, 1])
    return [
        Pair("transpose_128x128_fp16_4w", (128, 128), "fp16", 4, row8, "load", col8, "Triton issue #7815"),
        Pair("transpose_128x128_fp32_4w", (128, 128), "fp32", 4, row4, "load", col4, "#7815, fp32"),
        Pair("transpose_128x128_fp8_4w", (128, 128), "fp8", 4, row16, "load", col16, "#7815, fp8"),
        Pair("transpose_128x128_fp16_8w", (128, 128), "fp16", 8, _b([1, 8], [4, 8], [8, 1], [1, 0]), "load",
             _b([8, 1], [8, 4], [1, 8], [0, 1])),
        Pair("transpose_64x64_fp16_1w", (64, 64), "fp16", 1, _b([1, 8], [4, 8], [1, 1], [1, 0]), "load",
             _b([8, 1], [8, 4], [1, 1], [0, 1])),
        Pair("transpose_64x64_fp32_2w", (64, 64), "fp32", 2, _b([1, 4], [4, 8], [2, 1], [1, 0]), "load",
             _b([4, 1], [8, 4], [1, 2], [0, 1])),
        Pair("transpose_32x32_fp32_1w", (32, 32), "fp32", 1, _b([1, 1], [1, 32], [1, 1], [1, 0]), "load",
             _b([1, 1], [32, 1], [1, 1], [0, 1]), "lanes along columns -> rows"),
        Pair("transpose_64x128_fp8_2w", (64, 128), "fp8", 2, _b([1, 16], [8, 4], [2, 1], [1, 0]), "load",
             _b([16, 1], [4, 8], [1, 2], [0, 1])),
        Pair("mma2_operand_a_64x64_fp16_4w", (64, 64), "fp16", 4, row8, "load", _dot(0, _mma2([4, 1]), 2)),
        Pair("mma2_operand_b_64x64_fp16_4w", (64, 64), "fp16", 4, row8, "load", _dot(1, _mma2([4, 1]), 2)),
        Pair("mma2_operand_b_colmajor_64x64_fp16_4w", (64, 64), "fp16", 4, col8, "load", _dot(1, _mma2([4, 1]), 2)),
        Pair("mma2_operand_a_64x32_fp32_4w", (64, 32), "fp32", 4, row4, "load", _dot(0, _mma2([4, 1]), 1), "tf32"),
        Pair("mma2_operand_a_64x64_fp8_4w", (64, 64), "fp8", 4, row16, "load", _dot(0, _mma2([4, 1]), 4)),
        Pair("mma2_operand_b_128x64_fp16_8w", (128, 64), "fp16", 8, _b([1, 8], [4, 8], [8, 1], [1, 0]), "load",
             _dot(1, _mma2([2, 4]), 2)),
        Pair("mma2_acc_epilogue_64x64_fp16_4w", (64, 64), "fp16", 4, _mma2([4, 1]), "load", row8),
        Pair("wgmma_acc_epilogue_128x128_fp16_4w", (128, 128), "fp16", 4,
             C.NVMMADistributedLayout([3, 0], [4, 1], [16, 128, 16]), "load", row8),
        Pair("wgmma_acc_epilogue_128x64_fp32_4w", (128, 64), "fp32", 4,
             C.NVMMADistributedLayout([3, 0], [4, 1], [16, 64, 8]), "load", _b([1, 4], [2, 16], [4, 1], [1, 0])),
        Pair("wgmma_a_128x64_fp16_4w", (128, 64), "fp16", 4, row8, "wgmma-a",
             _dot(0, C.NVMMADistributedLayout([3, 0], [4, 1], [16, 64, 16]), 2), "the issue's question"),
        Pair("wgmma_b_64x128_fp16_4w", (64, 128), "fp16", 4, _b([1, 8], [8, 4], [4, 1], [1, 0]), "wgmma-b",
             _b([1, 8], [8, 4], [4, 1], [1, 0])),
        Pair("wgmma_a_128x128_fp8_4w", (128, 128), "fp8", 4, row16, "wgmma-a",
             _dot(0, C.NVMMADistributedLayout([3, 0], [4, 1], [16, 128, 32]), 4)),
        Pair("wgmma_b_kmajor_128x64_fp8_4w", (128, 64), "fp8", 4, col16, "wgmma-b", col16, "K-major B"),
        Pair("wgmma_a_64x32_fp32_4w", (64, 32), "fp32", 4, row4, "wgmma-a",
             _dot(0, C.NVMMADistributedLayout([3, 0], [4, 1], [16, 32, 8]), 1), "tf32"),
        Pair("tma_64x64_fp16_4w", (64, 64), "fp16", 4, row8, "tma", row8),
        Pair("tma_128x128_fp32_8w", (128, 128), "fp32", 8, _b([1, 4], [2, 16], [8, 1], [1, 0]), "tma",
             _b([1, 4], [2, 16], [8, 1], [1, 0])),
    ]


def advice_of(pair: Pair):
    """``suggest_shared_layout`` for the pair (the consumer's local_load layout included in the cost)."""
    from linear_layouts.analysis.shared_advice import Consumer, ConsumerKind, suggest_shared_layout

    shape = list(pair.shape)
    store, load = pair.store.to_linear(shape), pair.load.to_linear(shape)
    kind = {"load": ConsumerKind.LOCAL_LOAD, "wgmma-a": ConsumerKind.WGMMA, "wgmma-b": ConsumerKind.WGMMA,
            "tma": ConsumerKind.TMA}[pair.consumer]
    operand = {"wgmma-a": 0, "wgmma-b": 1}.get(pair.consumer)
    return suggest_shared_layout(store, Consumer(kind, load, operand), pair.dtype)


# ------------------------------------------------------------------------------------------ variants
@dataclass
class Variant:
    pair: Pair
    name: str  # ours | default | triton
    smem: object = None  # catalog descriptor (None: gl.convert_layout)
    row: str = ""  # the advice row's name
    predicted_model: tuple | None = None  # (store, load) of the ranking (widest ld/st.shared)
    ok: bool | None = None
    error: str = ""
    instructions: dict = field(default_factory=dict)
    predicted: tuple | None = None  # (store, load) for the instructions Triton emitted
    measured: tuple | None = None

    @property
    def key(self) -> str:
        return f"{self.pair.name}/{self.name}"


def _gluon_has(name: str) -> bool:
    from linear_layouts.triton import _gluon_class

    try:
        _gluon_class(name)
        return True
    except Exception:
        return False


def variants_of(pair: Pair) -> list[Variant]:
    advice = advice_of(pair)
    out = []
    ours = next((c for c in advice.candidates if c.accepted and _gluon_has(type(c.descriptor).__name__)), None)
    if ours is not None:
        note = "" if ours is advice.best else f" (best row {advice.best.name} needs a newer Gluon)"
        out.append(Variant(pair, "ours", ours.descriptor, ours.name + note,
                           (ours.store_wavefronts, ours.load_wavefronts)))
    default = advice.default
    if default is not None:
        out.append(Variant(pair, "default", default.descriptor, default.name,
                           (default.store_wavefronts, default.load_wavefronts)))
    if pair.consumer == "load":
        out.append(Variant(pair, "triton", None, "gl.convert_layout (Triton's own scratch layout)"))
    return out


# ------------------------------------------------------------------------------------------ PTX and predictions
_ST_LD = re.compile(r"\b(st|ld)\.shared(?:\.v(\d))?\.[bsuf](\d+)")
_MATRIX = re.compile(r"\b(stmatrix|ldmatrix)\.sync\.aligned\.(?:m8n8\.)?x(\d)(\.trans)?")


def shared_instructions(ptx: str) -> dict:
    """Counts of the shared-memory instructions in ``ptx``: ``st.shared.<bits>``, ``ldmatrix.x4.trans``, ..."""
    counts: dict[str, int] = {}
    for op, vec, width in _ST_LD.findall(ptx):
        key = f"{op}.shared.{int(vec or 1) * int(width)}"
        counts[key] = counts.get(key, 0) + 1
    for op, x, trans in _MATRIX.findall(ptx):
        key = f"{op}.x{x}{trans}"
        counts[key] = counts.get(key, 0) + 1
    return counts


def _side_prediction(layout, padding, dist, bits: int, op: str, instructions: dict) -> int | None:
    """Wavefronts of one side for the instructions Triton emitted (the widest emitted vector, or the
    ldmatrix / stmatrix choice of ``simd_tiles``)."""
    from linear_layouts.analysis.bank_simulator import simulate_wavefronts
    from linear_layouts.analysis.banks import access_wavefronts, shared_access
    from linear_layouts.analysis.simd_tiles import simd_choices

    prefix = "ld" if op == "load" else "st"
    matrix = [k for k in instructions if k.startswith(f"{prefix}matrix")]
    if matrix and not padding:
        x = max(int(k.split(".x")[1][0]) for k in matrix)
        trans = any(k.endswith(".trans") for k in matrix)
        for choice in simd_choices(layout, dist, bits, op=op):
            if choice.kind.endswith("matrix") and choice.matrices == x and choice.trans == trans:
                return choice.wavefronts
        return None
    widths = [int(k.rsplit(".", 1)[1]) for k in instructions if k.startswith(f"{prefix}.shared.")]
    if not widths:
        return None
    vector = max(w for w in widths if w >= bits) if any(w >= bits for w in widths) else bits
    if padding:
        return simulate_wavefronts(layout, dist, bits, op=op, padding=padding)
    access = shared_access(layout, dist, bits, max_vector_bits=max(vector, bits))
    return access_wavefronts(access, op=op)


def predict(variant: Variant) -> tuple | None:
    if variant.smem is None:
        return None
    pair = variant.pair
    shape = list(pair.shape)
    from linear_layouts.element_type import element_type

    bits = element_type(pair.dtype).bits
    layout = variant.smem.to_linear(shape)
    padding = tuple(variant.smem.interval_padding_pairs) if isinstance(variant.smem, C.PaddedSharedLayout) else ()
    store = _side_prediction(layout, padding, pair.store.to_linear(shape), bits, "store", variant.instructions)
    load = _side_prediction(layout, padding, pair.load.to_linear(shape), bits, "load", variant.instructions)
    return store, load


# ------------------------------------------------------------------------------------------ building kernels
_TORCH_DTYPES = {"fp8": "float8_e4m3fn", "fp16": "float16", "fp32": "float32"}
_POINTERS = {"fp8": "*fp8e4nv", "fp16": "*fp16", "fp32": "*fp32"}
_GL_DTYPES = {"fp8": "float8e4nv", "fp16": "float16", "fp32": "float32"}


def _gluon(descriptor):
    from linear_layouts.triton import to_gluon

    return to_gluon(descriptor)


def _constexprs(variant: Variant) -> dict:
    pair = variant.pair
    values = {"M": pair.shape[0], "N": pair.shape[1], "STORE": _gluon(pair.store), "LOAD": _gluon(pair.load)}
    if variant.smem is not None:
        if variant.name == "default":  # Gluon's own function, as an author would call it
            values["SMEM"] = gl.NVMMASharedLayout.get_default_for(list(pair.shape), getattr(gl, _GL_DTYPES[pair.dtype]))
        else:
            values["SMEM"] = _gluon(variant.smem)
    return values


def compile_ptx_sm90(variant: Variant) -> str:
    """PTX of the variant's kernel for sm_90 by the installed Triton, without a GPU."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    values = _constexprs(variant)
    kernel = gsa_roundtrip if variant.smem is not None else gsa_convert
    signature = {"src": _POINTERS[variant.pair.dtype], "dst": _POINTERS[variant.pair.dtype]}
    signature.update(dict.fromkeys(values, "constexpr"))
    source = GluonASTSource(kernel, signature, constexprs=values)
    compiled = triton.compile(source, target=GPUTarget("cuda", 90, 32), options={"num_warps": variant.pair.warps})
    return compiled.asm["ptx"]


def _launch(variant: Variant, torch, x, y):
    values = _constexprs(variant)
    kernel = gsa_roundtrip if variant.smem is not None else gsa_convert
    return kernel[(1,)](x, y, **values, num_warps=variant.pair.warps)


def _inputs(pair: Pair, torch, seed: int):
    n = pair.shape[0] * pair.shape[1]
    bytes_per = {"fp8": 1, "fp16": 2, "fp32": 4}[pair.dtype]
    gen = torch.Generator(device="cuda").manual_seed(seed)
    raw = torch.randint(0, 256, (n * bytes_per,), generator=gen, dtype=torch.uint8, device="cuda")
    if pair.dtype == "fp32":  # keep finite values (no NaN payload games in the copy)
        raw = raw.view(torch.int32).remainder(1 << 30).view(torch.uint8)
    x = raw.view(getattr(torch, _TORCH_DTYPES[pair.dtype]))
    return x, torch.empty_like(x)


def worker(specs: list[tuple[int, str, str]], plan_path: str) -> list[dict]:
    """Worker process: compile (JIT, Triton's cache), run and check each variant; return PTX instruction counts."""
    import torch

    plan = _load_plan(plan_path)
    out = []
    for index, pair_name, variant_name in specs:
        variant = plan[(pair_name, variant_name)]
        try:
            x, y = _inputs(variant.pair, torch, index)
            compiled = _launch(variant, torch, x, y)
            torch.cuda.synchronize()
            ok = bool(torch.equal(x.view(torch.uint8), y.view(torch.uint8)))
            ptx = compiled.asm.get("ptx", "") if hasattr(compiled, "asm") else ""
            out.append(dict(key=variant.key, ok=ok, instructions=shared_instructions(ptx)))
        except Exception as error:  # one bad kernel must not stop the others
            out.append(dict(key=variant.key, ok=False, error=f"{type(error).__name__}: {str(error)[:400]}"))
    return out


def launch_all(plan_path: str, keys_path: str) -> None:
    """Child of ncu: launch every compiled variant once, in the order of ``keys_path``."""
    import torch

    plan = _load_plan(plan_path)
    keys = json.loads(Path(keys_path).read_text())
    for index, key in enumerate(keys):
        pair_name, variant_name = key.split("/")
        variant = plan[(pair_name, variant_name)]
        x, y = _inputs(variant.pair, torch, index)
        _launch(variant, torch, x, y)
        torch.cuda.synchronize()


def _save_plan(path: Path, variants: list[Variant]) -> None:
    import pickle

    path.write_bytes(pickle.dumps([(v.pair, v.name, v.smem, v.row) for v in variants]))


def _load_plan(path: str) -> dict:
    import pickle

    return {(p.name, name): Variant(p, name, smem, row) for p, name, smem, row in pickle.loads(Path(path).read_bytes())}


# ------------------------------------------------------------------------------------------ ncu
def run_ncu(args, plan_path: Path, keys: list[str]) -> dict:
    keys_path = plan_path.with_suffix(".keys.json")
    keys_path.write_text(json.dumps(keys))
    cmd = ["ncu", "--csv", "--metrics", f"{METRIC_LD},{METRIC_ST}", "-k", "regex:^gsa_",
           sys.executable, str(Path(__file__).resolve()), "--mode", "launch", "--plan", str(plan_path),
           "--keys", str(keys_path)]
    start = time.time()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.ncu_timeout)
        out, rc = proc.stdout + proc.stderr, proc.returncode
    except (OSError, subprocess.TimeoutExpired) as error:
        return dict(rc=-1, error=repr(error), rows={})
    rows = read_ncu_csv(out, keys)
    return dict(rc=rc, seconds=round(time.time() - start, 1), rows=rows,
                tail="" if len(rows) == len(keys) and rc == 0 else out[-3000:])


def read_ncu_csv(out: str, keys: list[str]) -> dict[str, tuple]:
    """(store, load) wavefronts per kernel from ncu's ``--csv`` output: the profiled launches in ``ID``
    order are the kernels of ``keys`` in launch order."""
    lines = [line for line in out.splitlines() if line.startswith('"')]
    per_launch: dict[str, dict[str, float]] = {}
    for row in csv.DictReader(io.StringIO("\n".join(lines))):
        try:
            value = float(row.get("Metric Value", "nan").replace(",", ""))
        except ValueError:
            continue
        per_launch.setdefault(row.get("ID", ""), {})[row.get("Metric Name", "")] = value
    ordered = [per_launch[k] for k in sorted(per_launch, key=lambda s: int(s) if s.isdigit() else -1)]
    return {key: (metrics.get(METRIC_ST), metrics.get(METRIC_LD)) for key, metrics in zip(keys, ordered)}


# ------------------------------------------------------------------------------------------ report
def _environment() -> dict:
    env = dict(date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), python=platform.python_version())
    try:
        import triton

        env["triton"] = triton.__version__
    except ImportError:
        pass
    try:
        import torch

        env["torch"] = torch.__version__
        if torch.cuda.is_available():
            env["gpu"] = torch.cuda.get_device_name(0)
    except ImportError:
        pass
    for cmd, name in ((["ncu", "--version"], "ncu"),):
        try:
            env[name] = subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip().splitlines()[-1]
        except (OSError, subprocess.TimeoutExpired, IndexError):
            pass
    return env


def _total(pair_measure) -> float | None:
    if pair_measure is None or any(v is None for v in pair_measure):
        return None
    return pair_measure[0] + pair_measure[1]


def report(variants: list[Variant], env: dict, dry_run: bool) -> str:
    by_pair: dict[str, dict[str, Variant]] = {}
    for v in variants:
        by_pair.setdefault(v.pair.name, {})[v.name] = v
    lines = ["# Shared-layout advice on the GPU: ours vs Gluon's default vs Triton's choice", ""]
    lines.append(f"Device: {env.get('gpu', 'none (dry run: compiled for sm_90 on the CPU)')}; date {env['date']}; "
                 f"Triton {env.get('triton')}; PyTorch {env.get('torch', '-')}; ncu {env.get('ncu', '-')}.")
    lines += ["", "Wavefronts of one CTA (ncu: shared st + ld; prediction: the bank model for the instructions "
              "Triton emitted). `ours` is the best row of `suggest_shared_layout` the installed Gluon builds; "
              "`default` is `NVMMASharedLayout.get_default_for`; `triton` is `gl.convert_layout` (Triton's own "
              "scratch layout; for wgmma / TMA consumers Triton's choice is the default).", ""]
    header = ("| pair | dtype | warps | consumer | variant | shared layout | shared instructions in the PTX (static) | "
              "predicted st + ld | ncu st + ld | correct |")
    lines += [header, "|---" * (header.count("|") - 1) + "|"]
    verdicts = []
    for pair_name, vs in by_pair.items():
        for name in ("ours", "default", "triton"):
            v = vs.get(name)
            if v is None:
                continue
            pred = "-" if v.predicted is None else f"{v.predicted[0]} + {v.predicted[1]}"
            meas = "-" if v.measured is None else f"{v.measured[0]:g} + {v.measured[1]:g}"
            ins = ", ".join(f"{k} ×{n}" for k, n in sorted(v.instructions.items())) or (v.error[:80] or "-")
            ok = "-" if v.ok is None else ("yes" if v.ok else "**NO**")
            lines.append(f"| {pair_name} | {v.pair.dtype} | {v.pair.warps} | {v.pair.consumer} | {name} | "
                         f"{v.row} | {ins} | {pred} | {meas} | {ok} |")
        ours, default, triton = vs.get("ours"), vs.get("default"), vs.get("triton")
        key = (lambda v: _total(v.measured)) if not dry_run else (lambda v: _total(v.predicted))
        if ours is not None and key(ours) is not None:
            peers = [p for p in (default, triton) if p is not None and key(p) is not None]
            verdicts.append((pair_name, key(ours), [(p.name, key(p)) for p in peers]))
    lines += ["", "## Ours against the peers (" + ("predicted" if dry_run else "measured") + " st + ld)", ""]
    not_worse = sum(all(t <= o for _, o in peers) for _, t, peers in verdicts)
    strictly = [(n, t, peers) for n, t, peers in verdicts if any(n2 == "default" and t < o for n2, o in peers)]
    lines.append(f"- ours ≤ every peer on **{not_worse} / {len(verdicts)}** pairs; strictly better than the "
                 f"default on {len(strictly)} pairs (where the default conflicts).")
    for name, total, peers in verdicts:
        if not all(total <= o for _, o in peers):
            lines.append(f"- worse on {name}: ours {total:g} vs " + ", ".join(f"{n} {o:g}" for n, o in peers))
    if not dry_run:
        exact = [v for v in variants if v.predicted and v.measured and v.predicted == tuple(int(m) for m in v.measured)]
        measured = [v for v in variants if v.predicted and v.measured]
        lines.append(f"- ncu = prediction (st and ld) on **{len(exact)} / {len(measured)}** kernels with a prediction.")
        correct = [v for v in variants if v.ok]
        lines.append(f"- correct (output = input, bit for bit): {len(correct)} / {len(variants)} kernels.")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------ main
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(HERE / "build" / "gpu_shared_advice"))
    ap.add_argument("--dry-run", action="store_true", help="CPU: compile every kernel for sm_90, run nothing")
    ap.add_argument("--mode", choices=["all", "launch"], default="all", help=argparse.SUPPRESS)
    ap.add_argument("--plan", help=argparse.SUPPRESS)
    ap.add_argument("--keys", help=argparse.SUPPRESS)
    ap.add_argument("--jobs", type=int, default=min(16, os.cpu_count() or 2))
    ap.add_argument("--ncu-timeout", type=int, default=120)
    ap.add_argument("--only", default="", help="comma list of pair names (default: all)")
    args = ap.parse_args(argv)
    if args.mode == "launch":
        launch_all(args.plan, args.keys)
        return 0

    start = time.time()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    chosen = [p for p in pairs() if not args.only or p.name in args.only.split(",")]
    variants = [v for p in chosen for v in variants_of(p)]
    print(f"{len(chosen)} pairs, {len(variants)} kernels ({time.time() - start:.1f} s to build the advice)", flush=True)
    env = _environment()

    if args.dry_run:
        for v in variants:
            try:
                v.instructions = shared_instructions(compile_ptx_sm90(v))
                v.predicted = predict(v)
            except Exception as error:
                v.error = f"{type(error).__name__}: {str(error)[:300]}"
                traceback.print_exc()
            print(f"  {v.key}: {v.instructions or v.error} predicted {v.predicted} (ranking: {v.predicted_model})",
                  flush=True)
    else:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        plan_path = out / "plan.pkl"
        _save_plan(plan_path, variants)
        specs = [(i, v.pair.name, v.name) for i, v in enumerate(variants)]
        jobs = max(1, min(args.jobs, len(specs)))
        results = []
        with ProcessPoolExecutor(max_workers=jobs, mp_context=mp.get_context("spawn")) as pool:
            for part in pool.map(worker, [specs[i::jobs] for i in range(jobs)], [str(plan_path)] * jobs):
                results += part
        by_key = {r["key"]: r for r in results}
        for v in variants:
            r = by_key.get(v.key, {})
            v.ok, v.error, v.instructions = r.get("ok"), r.get("error", ""), r.get("instructions", {})
            if v.ok is not None and not v.error:
                v.predicted = predict(v)
        print(f"compiled and checked {sum(bool(v.ok) for v in variants)} / {len(variants)} "
              f"({time.time() - start:.1f} s)", flush=True)
        keys = [v.key for v in variants if v.ok]
        ncu = run_ncu(args, plan_path, keys)
        for v in variants:
            v.measured = ncu["rows"].get(v.key)
        print(f"ncu: {len(ncu['rows'])} kernels ({ncu.get('seconds')} s), rc {ncu.get('rc')}", flush=True)
        if ncu.get("tail"):
            print(ncu["tail"][-1500:])
    text = report(variants, env, args.dry_run)
    data = dict(environment=env, dry_run=args.dry_run, seconds=round(time.time() - start, 1), variants=[
        dict(pair=v.pair.name, dtype=v.pair.dtype, warps=v.pair.warps, consumer=v.pair.consumer, variant=v.name,
             row=v.row, ok=v.ok, error=v.error, instructions=v.instructions, predicted=v.predicted,
             predicted_model=v.predicted_model, measured=v.measured) for v in variants])
    (out / "gpu_shared_advice.json").write_text(json.dumps(data, indent=1, default=str))
    (out / "gpu_shared_advice.md").write_text(text)
    print(text)
    print(f"total {time.time() - start:.1f} s; wrote {out}/gpu_shared_advice.md and .json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
