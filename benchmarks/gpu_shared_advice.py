"""The shared-layout advice on the GPU: Gluon kernels built from ``suggest_shared_layout``'s answer, against
Gluon's default (``NVMMASharedLayout.get_default_for``) and Triton's own choice, with ncu's wavefronts.

Two steps (the device needs no JIT and no PyTorch: Triton 3.6, the device's, compiles on this CPU)::

    PYTHONPATH=src:/tmp/triton-3.6.0 python3 benchmarks/gpu_shared_advice.py --mode prepare   # CPU, ~40 s
    PYTHONPATH=src python3 benchmarks/gpu_shared_advice.py --mode measure --budget 100 --out $OUT   # GPU

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

``--mode prepare`` (CPU) builds every pair's advice, compiles every Gluon kernel with Triton 3.6 for
sm_90 (``triton.compile`` with the JIT's specialization: the cubin the device's JIT would build), reads the
emitted shared-memory instructions from its PTX and predicts their wavefronts with the project's bank model
(``st.shared`` / ``ld.shared`` vector width, or ``stmatrix`` / ``ldmatrix``); it writes
``benchmarks/build/advice/plan.json``, the cubins and ``prepare.md`` (the predicted table).
``--mode measure`` (GPU) loads the cubins with CuPy, checks every kernel (the output tile equals the
input, bit for bit), then one ncu process launches every kernel ``--repeats`` times (default 3, fresh inputs each time) and reads
``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum`` / ``_ld.sum`` of each launch (the kernel's
``measured`` is the minimum over its launches, per metric; all are kept; the ranking is given on the
predictions and on the minima); it stops at ``--budget`` seconds
and writes ``gpu_shared_advice.json`` and ``gpu_shared_advice.md`` under ``--out``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
import harness  # noqa: E402, F401  (puts src/ on the path)

import linear_layouts.layouts as C  # noqa: E402
from harness.ncu import METRIC_LD, METRIC_ST, launches, run_ncu  # noqa: E402
from harness.results import write_outputs  # noqa: E402
from harness.workflow import TritonCubin, prepare_build, save_cubin, start_measure, triton_compile  # noqa: E402

BUILD = HERE / "build" / "advice"


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
    from linear_layouts.triton_model.interop import _gluon_class

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
            if choice.matrices == x and choice.trans == trans:
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


def _model_key(instruction: str, nbytes: int) -> str:
    """The model's instruction in ``shared_instructions``' naming (``st.shared.128``, ``ldmatrix.x4.trans``)."""
    if "matrix" in instruction:
        op, shape = instruction.split(".")[0], re.search(r"\.(x\d)", instruction).group(1)
        return f"{op}.{shape}" + (".trans" if ".trans" in instruction else "")
    return f"{instruction[:2]}.shared.{nbytes * 8}"


def predict_convert(variant: Variant) -> tuple[tuple | None, dict]:
    """Triton's own choice (``gl.convert_layout``): the project's model of Triton's convert_layout lowering
    (``kernels.triton_lowering``, equal to Triton 3.6's and 3.9's PTX on the corpus): (store, load)
    wavefronts and its static instructions per warp, to set beside the PTX's."""
    from linear_layouts.core.element_type import element_type
    from linear_layouts.target import named_target
    from linear_layouts.triton_model.lowering import convert_lowering

    pair = variant.pair
    shape = list(pair.shape)
    lowering = convert_lowering(pair.store.to_linear(shape), pair.load.to_linear(shape),
                                element_type(pair.dtype).bits, named_target("sm_90"))
    instructions: dict[str, int] = {}
    for ins in lowering.stores + lowering.loads:
        key = _model_key(ins.instruction, ins.bytes)
        instructions[key] = instructions.get(key, 0) + ins.count // pair.warps
    if not lowering.stores and not lowering.loads:
        return None, instructions
    return (lowering.store_wavefronts, lowering.load_wavefronts), instructions


def predict(variant: Variant) -> tuple | None:
    if variant.smem is None:
        predicted, model = predict_convert(variant)
        return predicted if model == variant.instructions else None
    pair = variant.pair
    shape = list(pair.shape)
    from linear_layouts.core.element_type import element_type

    bits = element_type(pair.dtype).bits
    layout = variant.smem.to_linear(shape)
    padding = tuple(variant.smem.interval_padding_pairs) if isinstance(variant.smem, C.PaddedSharedLayout) else ()
    store = _side_prediction(layout, padding, pair.store.to_linear(shape), bits, "store", variant.instructions)
    load = _side_prediction(layout, padding, pair.load.to_linear(shape), bits, "load", variant.instructions)
    return store, load


# ------------------------------------------------------------------------------------------ building kernels (CPU)
_POINTERS = {"fp8": "*fp8e4nv", "fp16": "*fp16", "fp32": "*fp32"}
_GL_DTYPES = {"fp8": "float8e4nv", "fp16": "float16", "fp32": "float32"}
_BYTES = {"fp8": 1, "fp16": 2, "fp32": 4}


def _gluon(descriptor):
    from linear_layouts.triton_model.interop import to_gluon

    return to_gluon(descriptor)


def _constexprs(variant: Variant) -> dict:
    from triton.experimental.gluon import language as gl

    pair = variant.pair
    values = {"M": pair.shape[0], "N": pair.shape[1], "STORE": _gluon(pair.store), "LOAD": _gluon(pair.load)}
    if variant.smem is not None:
        if variant.name == "default":  # Gluon's own function, as an author would call it
            values["SMEM"] = gl.NVMMASharedLayout.get_default_for(list(pair.shape), getattr(gl, _GL_DTYPES[pair.dtype]))
        else:
            values["SMEM"] = _gluon(variant.smem)
    return values


def _source(variant: Variant):
    """The variant's kernel as the JIT specializes it (both pointers 16-byte aligned)."""
    from triton.experimental.gluon._runtime import GluonASTSource

    import gpu_shared_advice_kernels as K

    values = _constexprs(variant)
    kernel = K.gsa_roundtrip if variant.smem is not None else K.gsa_convert
    signature = {"src": _POINTERS[variant.pair.dtype], "dst": _POINTERS[variant.pair.dtype]}
    signature.update(dict.fromkeys(values, "constexpr"))
    attrs = {(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]]}
    return GluonASTSource(kernel, signature, constexprs=values, attrs=attrs)


def compile_ptx_sm90(variant: Variant) -> str:
    """PTX of the variant's kernel for sm_90 by the installed Triton, without a GPU."""
    return triton_compile(_source(variant), {"num_warps": variant.pair.warps})["ptx"]


def prepare(args) -> int:
    """CPU: the advice, every kernel compiled by Triton 3.6 (the device's) to a cubin, the predictions
    for the instructions it emitted; ``BUILD/plan.json`` + cubins, and a CPU report."""
    start = time.time()
    version, build = prepare_build(args.build, args.any_triton)
    chosen = [p for p in pairs() if not args.only or p.name in args.only.split(",")]
    variants = [v for p in chosen for v in variants_of(p)]
    print(f"{len(chosen)} pairs, {len(variants)} kernels ({time.time() - start:.1f} s to build the advice)", flush=True)
    rows = []
    for index, v in enumerate(variants):
        record = {}
        try:
            compiled = triton_compile(_source(v), {"num_warps": v.pair.warps})
            v.instructions = shared_instructions(compiled["ptx"])
            v.predicted = predict(v)
            record = save_cubin(build, f"k{index:03d}", compiled)
        except Exception as error:  # one kernel that does not build is reported, not fatal
            v.error = f"{type(error).__name__}: {str(error)[:300]}"
            traceback.print_exc()
        rows.append(dict(_row(v), **record))
        print(f"  {v.key}: {v.instructions or v.error} predicted {v.predicted} (ranking {v.predicted_model})", flush=True)
    plan = dict(compiled_by=f"Triton {version}", seconds=round(time.time() - start, 1), rows=rows)
    (build / "plan.json").write_text(json.dumps(plan, indent=1))
    env = dict(date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), triton=version)
    (build / "prepare.md").write_text(report(rows, env, dry_run=True))
    print(f"prepared {sum('cubin' in r for r in rows)} / {len(rows)} cubins in {time.time() - start:.1f} s -> {build}")
    return 0


def _row(v: Variant) -> dict:
    return dict(pair=v.pair.name, shape=list(v.pair.shape), dtype=v.pair.dtype, warps=v.pair.warps,
                consumer=v.pair.consumer, note=v.pair.note, variant=v.name, row=v.row, ok=v.ok, error=v.error,
                instructions=v.instructions, predicted=v.predicted, predicted_model=v.predicted_model,
                measured=v.measured)


# ------------------------------------------------------------------------------------------ device
def _inputs(row: dict, seed: int):
    """A random tile (finite values) as raw bytes on the host and on the device, and an output buffer."""
    import cupy
    import numpy as np

    n = row["shape"][0] * row["shape"][1]
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 256, n * _BYTES[row["dtype"]], dtype=np.uint8)
    if row["dtype"] == "fp32":
        raw = (raw.view(np.uint32) % (1 << 30)).view(np.uint8)
    elif row["dtype"] == "fp8":
        raw = raw & 0x77  # e4m3: never the NaN pattern
    return raw, cupy.asarray(raw), cupy.zeros(raw.size, dtype=cupy.uint8)


def _loaded(build: Path, rows: list[dict]) -> dict[str, TritonCubin]:
    return {r["key"]: TritonCubin(build, r) for r in rows if r.get("cubin")}


def launch_child(args) -> int:
    """Child of ncu: launch the kernels of ``--keys`` once each, in that order, until ``--until``."""
    import cupy

    build = Path(args.build)
    plan = {r["key"]: r for r in json.loads((build / "plan.json").read_text())["rows"] if r.get("key")}
    keys = args.keys.split(",")
    kernels = _loaded(build, [plan[k] for k in dict.fromkeys(keys)])
    for index, key in enumerate(keys):
        if args.until and time.time() > args.until:
            break
        _, x, y = _inputs(plan[key], index)
        kernels[key].launch((1,), [x, y])
        cupy.cuda.runtime.deviceSynchronize()
    return 0


def measure(args) -> int:
    """Device: correctness of every prepared kernel, then one ncu process over all of them; writes
    ``gpu_shared_advice.json`` / ``.md`` to ``--out`` within ``--budget`` seconds."""
    deadline, build, plan, env = start_measure(args)
    rows = plan["rows"]
    import cupy

    kernels = _loaded(build, rows)
    for index, r in enumerate(rows):
        if r.get("key") not in kernels:
            continue
        if deadline.left() < 15:
            r["error"] = "not run: budget"
            continue
        try:
            raw, x, y = _inputs(r, index)
            kernels[r["key"]].launch((1,), [x, y])
            cupy.cuda.runtime.deviceSynchronize()
            r["ok"] = bool((cupy.asnumpy(y) == raw).all())
        except Exception as error:  # noqa: BLE001 - one bad kernel must not stop the others
            r["ok"], r["error"] = False, f"{type(error).__name__}: {str(error)[:300]}"
    keys = [r["key"] for r in rows if r.get("ok")]
    print(f"checked {len(keys)} correct / {len(kernels)} kernels ({args.budget - deadline.left():.1f} s)", flush=True)
    ncu = dict(rc=None, launches=[], tail="no kernel to profile")
    if keys and deadline.left() > 10:
        sequence = [k for k in keys for _ in range(args.repeats)]
        child = [sys.executable, str(Path(__file__).resolve()), "--mode", "launch", "--build", str(build),
                 "--keys", ",".join(sequence), "--until", str(deadline.end - 8)]
        ncu = run_ncu(child, "regex:^gsa_", [METRIC_LD, METRIC_ST], len(sequence), deadline.left() - 4)
        record_repeats(rows, sequence, ncu["launches"])
    print(f"ncu: {len(ncu['launches'])} launches of {len(keys)} kernels x {args.repeats} ({ncu.get('seconds')} s), "
          f"rc {ncu.get('rc')}", flush=True)
    seconds = round(args.budget - deadline.left(), 1)
    text = report(rows, env, dry_run=False, ncu_tail=ncu.get("tail", ""))
    write_outputs(Path(args.out), "gpu_shared_advice", dict(environment=env, seconds=seconds, ncu_rc=ncu.get("rc"),
                                                            ncu_seconds=ncu.get("seconds"), rows=rows), text)
    print(text.split("## Ours")[1] if "## Ours" in text else text)
    print(f"total {seconds} s; wrote {args.out}/gpu_shared_advice.md and .json")
    return 0


def record_repeats(rows: list[dict], sequence: list[str], launches: list[dict]) -> None:
    """Each row's ``measured_all`` ([st, ld] of every profiled launch of its kernel, in order) and
    ``measured`` = [min st, min ld] over them: the repeat least disturbed by anything else on the SM."""
    counts: dict[str, list[list[float]]] = {}
    for key, launch in zip(sequence, launches):
        m = launch.get("metrics", {})
        if METRIC_ST in m and METRIC_LD in m:
            counts.setdefault(key, []).append([m[METRIC_ST], m[METRIC_LD]])
    for r in rows:
        if r.get("key") in counts:
            r["measured_all"] = counts[r["key"]]
            r["measured"] = [min(c[0] for c in counts[r["key"]]), min(c[1] for c in counts[r["key"]])]


def read_ncu_csv(out: str, keys: list[str]) -> dict[str, tuple]:
    """(store, load) wavefronts per kernel from ncu's ``--csv`` output: the profiled launches in ``ID``
    order are the kernels of ``keys`` in launch order."""
    ordered = [metrics for _, metrics in launches(out)]
    return {key: (metrics.get(METRIC_ST), metrics.get(METRIC_LD)) for key, metrics in zip(keys, ordered)}


# ------------------------------------------------------------------------------------------ report
def _total(pair_measure) -> float | None:
    if pair_measure is None or any(v is None for v in pair_measure):
        return None
    return pair_measure[0] + pair_measure[1]


def _ranking(by_pair: dict, key) -> list[tuple[str, float, list[tuple[str, float]]]]:
    """(pair, ours, [(peer, its total)]) for every pair where ``key`` gives ours a total."""
    verdicts = []
    for pair_name, vs in by_pair.items():
        ours = vs.get("ours")
        if ours is not None and key(ours) is not None:
            peers = [p for p in (vs.get("default"), vs.get("triton")) if p is not None and key(p) is not None]
            verdicts.append((pair_name, key(ours), [(p["variant"], key(p)) for p in peers]))
    return verdicts


def _spread(v: dict) -> str:
    counts = v.get("measured_all") or []
    if len(counts) < 2:
        return ""
    st, ld = (max(c[i] for c in counts) - min(c[i] for c in counts) for i in (0, 1))
    return f" (spread {st:g} / {ld:g})" if st or ld else ""


def report(rows: list[dict], env: dict, dry_run: bool, ncu_tail: str = "") -> str:
    by_pair: dict[str, dict[str, dict]] = {}
    for r in rows:
        by_pair.setdefault(r["pair"], {})[r["variant"]] = r
    title = "Shared-layout advice on the GPU: ours vs Gluon's default vs Triton's choice"
    repeats = max((len(r.get("measured_all") or []) for r in rows), default=0)
    lines = [f"# {title}" + (" (CPU prepare: predictions only)" if dry_run else ""), ""]
    lines.append(f"Device: {env.get('gpu', 'none (prepare: compiled for sm_90 on the CPU)')}; date {env.get('date')}; "
                 f"cubins by {env.get('cubins_compiled_by', 'Triton ' + str(env.get('triton')))} "
                 f"(sm_90, the JIT's specialization); CuPy {env.get('cupy', '-')}; ncu {env.get('ncu', '-')}.")
    lines += ["", "Wavefronts of one CTA (ncu: `l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum` + `_op_ld.sum`; "
              "prediction: the bank model for the instructions Triton emitted). "
              + (f"Each kernel is launched {repeats} times under ncu (fresh inputs); `ncu` is the minimum over the "
                 "launches, per metric, and `spread` max - min where the launches differ. " if repeats > 1 else "")
              + "`ours` is the best row of `suggest_shared_layout` the installed Gluon builds; "
              "`default` is `NVMMASharedLayout.get_default_for`; `triton` is `gl.convert_layout` (Triton's own "
              "scratch layout; for wgmma / TMA consumers Triton's choice is the default).",
              "Reproduce: `bash benchmarks/gpu_workflow_prepare.sh` (CPU), then "
              "`bash benchmarks/gpu_workflow_run.sh OUT 180` (GPU).", ""]
    header = ("| pair | dtype | warps | consumer | variant | shared layout | shared instructions in the PTX (static) | "
              "predicted st + ld | ncu st + ld | correct |")
    lines += [header, "|---" * (header.count("|") - 1) + "|"]
    for pair_name, vs in by_pair.items():
        for name in ("ours", "default", "triton"):
            v = vs.get(name)
            if v is None:
                continue
            pred = "-" if not v.get("predicted") else f"{v['predicted'][0]} + {v['predicted'][1]}"
            meas = "-" if not v.get("measured") else f"{v['measured'][0]:g} + {v['measured'][1]:g}{_spread(v)}"
            if v.get("measured") and v.get("predicted") and list(v["predicted"]) != [int(m) for m in v["measured"]]:
                meas += " **≠**"
            ins = ", ".join(f"{k} ×{n}" for k, n in sorted((v.get("instructions") or {}).items())) or \
                ((v.get("error") or "")[:80] or "-")
            ok = "-" if v.get("ok") is None else ("yes" if v["ok"] else "**NO**")
            lines.append(f"| {pair_name} | {v['dtype']} | {v['warps']} | {v['consumer']} | {name} | "
                         f"{v['row']} | {ins} | {pred} | {meas} | {ok} |")
    predicted = _ranking(by_pair, lambda v: _total(v.get("predicted")))
    verdicts = predicted if dry_run else _ranking(by_pair, lambda v: _total(v.get("measured")))
    lines += ["", "## Ours against the peers (" + ("predicted" if dry_run else "min measured") + " st + ld)", ""]
    not_worse = sum(all(t <= o for _, o in peers) for _, t, peers in verdicts)
    strictly = [n for n, t, peers in verdicts if any(n2 == "default" and t < o for n2, o in peers)]
    with_triton = [(t, o) for n, t, peers in verdicts for n2, o in peers if n2 == "triton"]
    exact = [r for r in rows if r.get("predicted") and r.get("measured")
             and list(r["predicted"]) == [int(m) for m in r["measured"]]]
    measured = [r for r in rows if r.get("predicted") and r.get("measured")]
    summary = (f"**Summary: {len(by_pair)} pairs; ours ≤ every peer on {not_worse} / {len(verdicts)}"
               + ("" if dry_run else " measured (min over the launches)") + "; strictly "
               f"better than the default on {len(strictly)} (the pairs where the default conflicts) and than "
               f"Triton's gl.convert_layout on {sum(t < o for t, o in with_triton)} / {len(with_triton)}")
    if not dry_run:
        not_worse_predicted = sum(all(t <= o for _, o in peers) for _, t, peers in predicted)
        correct = sum(bool(r.get("ok")) for r in rows)
        summary += (f"; ours ≤ every peer predicted on {not_worse_predicted} / {len(predicted)}"
                    f"; ncu = prediction (st and ld) on {len(exact)} / {len(measured)} kernels with a prediction; "
                    f"correct {correct} / {len(rows)} kernels")
    lines.append(summary + ".**")
    for name, total, peers in verdicts:
        if not all(total <= o for _, o in peers):
            lines.append(f"- worse on {name}: ours {total:g} vs " + ", ".join(f"{n} {o:g}" for n, o in peers))
    for r in rows:
        if r.get("measured") and r.get("predicted") and r not in exact:
            lines.append(f"- ncu ≠ prediction: {r['pair']}/{r['variant']}: ncu {r['measured']} vs {r['predicted']}"
                         + (f", every launch {r['measured_all']}" if r.get("measured_all") else ""))
        if r.get("error"):
            lines.append(f"- {r['pair']}/{r['variant']}: {r['error'][:200]}")
    if ncu_tail:
        lines += ["", "ncu (tail):", "", "```", ncu_tail[-1500:], "```"]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------ main
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mode", choices=["prepare", "measure", "launch"], required=True)
    ap.add_argument("--out", default=str(HERE / "build" / "advice_out"))
    ap.add_argument("--build", default=str(BUILD), help="where prepare writes the plan and cubins")
    ap.add_argument("--budget", type=float, default=100.0, help="measure: seconds for everything")
    ap.add_argument("--only", default="", help="prepare: comma list of pair names (default: all)")
    ap.add_argument("--repeats", type=int, default=3, help="measure: launches of each kernel under ncu")
    ap.add_argument("--any-triton", action="store_true", help="prepare with a Triton other than 3.6 (tests)")
    ap.add_argument("--keys", help=argparse.SUPPRESS)
    ap.add_argument("--until", type=float, default=0.0, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    return {"prepare": prepare, "measure": measure, "launch": launch_child}[args.mode](args)


if __name__ == "__main__":
    sys.exit(main())
