"""Global-memory microbenchmark for the whole-kernel model: what a global load, store or atomic costs as a
function of what a layout decides -- the bytes each thread moves in one instruction (1, 2, 4, 8, 16), how
the 32 lanes of a warp group into contiguous segments, and whether the bytes of the sectors an
instruction leaves unused are the warp's next instructions' (``dense``: a tile stored in narrower
vectors) or nobody's (``sparse``: a gather) -- at a size that fills the chip (DRAM-resident and
L2-resident footprints) and at a latency-bound size (one warp per SM).

Every instruction is inline PTX spelled as Triton 3.6 / 3.9 emit it (``ld.global.v4.b32``,
``st.global.b16``, ``atom.global.gpu.acq_rel.add.v4.f32``, ``atom.global.gpu.acq_rel.add.noftz.v8.f16``,
``red.global.gpu.relaxed.add.v2.f32``, ...), so its width is the one named; ``--mode prepare`` compiles
the kernels with nvcc on the CPU and checks in the SASS (cuobjdump) that every load and store kernel has
exactly one global instruction of its width in its loop.

A warp's request (one warp-instruction, ``V`` bytes per lane, ``g`` lanes per segment):

=========  ======================================================================================
lane ``l``  byte offset ``(l // g) * row_pitch + (l % g) * V`` from the request's base
dense      rows of ``iters * g * V`` bytes (``row_pitch``: that rounded up to 128); the warp's next
           request is ``g * V`` bytes further along its ``32 / g`` rows: over the kernel every byte of
           a touched sector is used, once (``iters * g * V >= 32``)
sparse     each segment in its own 32-byte-aligned slot (``row_pitch = ceil(g * V / 32) * 32``), the
           next request in fresh slots: the unused bytes of a sector are never touched
=========  ======================================================================================

Sectors per request: ``(32 / g) * ceil(g * V / 32)`` (segments start sector-aligned); coalesced
fraction: ``32 * V / (32 * sectors)``.  Warps take consecutive regions; addresses wrap at the footprint
(``dram``: 1 GiB, far above the L2; ``l2``: 4 MiB, L2-resident after the first pass).

Units.  ``full`` (8 CTAs of 256 threads per SM, every warp streaming independent requests):
``ns_per_warp_instruction`` = SM-nanoseconds per warp-instruction = (kernel time - the same kernel's
time with no iterations) x SMs / warp-instructions -- the time one SM is busy with one instruction
when the whole chip does this, which a model multiplies by the instructions of a CTA's op and divides
by nothing else.  ``small`` (one warp per SM): nanoseconds per instruction of one warp; loads and
``atom`` are a dependent chain (the next address waits for the value: the latency), stores and
``red`` are issued back to back.  ``contended``: every warp adds into the same 4 KiB.

    PYTHONPATH=src python3 benchmarks/gpu_global_microbench.py --mode prepare          # CPU: nvcc, SASS check
    PYTHONPATH=src python3 benchmarks/gpu_global_microbench.py --mode run --out DIR    # GPU, ~30 s

Writes ``DIR/gpu_global_microbench.{json,md}`` (every configuration: time, GB/s, SASS opcode) and
``DIR/global/<device>.json`` (the table a cost model loads: ``table(rows)``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)
from harness.environment import environment

HERE = Path(__file__).resolve().parent
BUILD = HERE / "build" / "global_microbench"
RESULTS = HERE / "results"

LANES = 32
SECTOR = 32
VECTOR_BYTES = (1, 2, 4, 8, 16)
LANES_PER_SEGMENT = (32, 8, 4, 2, 1)
FOOTPRINTS = {"dram": 1 << 30, "l2": 4 << 20}
CONTENDED_BYTES = 4096
CTAS_PER_SM = 8
THREADS = 256
#: bytes of sector traffic a full-size load / store configuration moves, and useful bytes of an atomic one
TARGET_BYTES = 512 << 20
TARGET_ATOMIC_BYTES = 64 << 20
SMALL_ITERS = 256
UNROLL = 4
#: atomic element types: (element bytes, elements per instruction)
ATOMIC_ELEMENTS = {"f32": (4, (1, 2, 4)), "f16": (2, (1, 2, 4, 8)), "bf16": (2, (1, 2, 4, 8))}
#: atomic flavours as Triton spells them: default ``tl.atomic_add`` (acq_rel), ``sem="relaxed"`` in 3.6
#: (atom) and in 3.9 (red: no result)
ATOMIC_OPS = ("atom.acq_rel", "atom.relaxed", "red.relaxed")
#: the SASS suffix of a load / store of V bytes per lane (LDG.E.128, STG.E.U16, LDG.E = 4 bytes)
SASS_WIDTH = {1: ".U8", 2: ".U16", 4: "", 8: ".64", 16: ".128"}


# ------------------------------------------------------------------------------------------ the patterns
@dataclass(frozen=True)
class Pattern:
    """A warp's request: ``vector_bytes`` per lane, ``lanes_per_segment`` lanes contiguous, ``dense`` or
    sparse (module doc)."""

    vector_bytes: int
    lanes_per_segment: int
    dense: bool = True

    def __post_init__(self):
        if self.vector_bytes not in VECTOR_BYTES or self.lanes_per_segment not in (1, 2, 4, 8, 16, 32):
            raise ValueError(f"pattern: vector_bytes in {VECTOR_BYTES}, lanes_per_segment a power of two <= 32, "
                             f"got {self.vector_bytes}, {self.lanes_per_segment}")

    @property
    def segment_bytes(self) -> int:
        return self.lanes_per_segment * self.vector_bytes

    @property
    def segments(self) -> int:
        return LANES // self.lanes_per_segment

    @property
    def sectors_per_request(self) -> int:
        return self.segments * -(-self.segment_bytes // SECTOR)

    @property
    def coalesced_fraction(self) -> float:
        return LANES * self.vector_bytes / (SECTOR * self.sectors_per_request)

    @property
    def key(self) -> str:
        return f"{'dense' if self.dense else 'sparse'}/{self.lanes_per_segment}"

    def row_pitch(self, iters: int) -> int:
        """Bytes between two segments of a request: dense, a row of ``iters`` segments rounded up to 128
        bytes (rows far apart, as a tile's rows in a matrix); sparse, a sector-aligned slot."""
        if self.dense:
            return -(-iters * self.segment_bytes // 128) * 128
        return -(-self.segment_bytes // SECTOR) * SECTOR

    def step(self) -> int:
        """Bytes from one request of a warp to its next."""
        return self.segment_bytes if self.dense else self.segments * self.row_pitch(1)

    def warp_span(self, iters: int) -> int:
        """Bytes between two warps' regions."""
        return self.segments * self.row_pitch(iters) if self.dense else iters * self.step()

    def offsets(self, iteration: int, iters: int, warp: int = 0) -> list[int]:
        """Byte offset of each lane's access in request ``iteration`` of warp ``warp`` (before the wrap)."""
        g, v = self.lanes_per_segment, self.vector_bytes
        base = warp * self.warp_span(iters) + iteration * self.step()
        return [base + (lane // g) * self.row_pitch(iters) + (lane % g) * v for lane in range(LANES)]


def sectors(offsets: list[int], nbytes: int) -> int:
    """The distinct 32-byte sectors ``nbytes``-wide accesses at ``offsets`` touch."""
    return len({b // SECTOR for o in offsets for b in range(o, o + nbytes)})


def patterns() -> list[Pattern]:
    """Dense for every (V, g); sparse where a segment leaves part of a sector unused."""
    out = [Pattern(v, g) for v in VECTOR_BYTES for g in LANES_PER_SEGMENT]
    out += [Pattern(v, g, dense=False) for v in VECTOR_BYTES for g in LANES_PER_SEGMENT if g * v < SECTOR]
    return out


# ---------------------------------------------------------------------------------------- configurations
@dataclass(frozen=True)
class Config:
    """One measured configuration: ``op`` (``ld``, ``st``, ``atom.acq_rel``, ``atom.relaxed``,
    ``red.relaxed``), ``element`` (``b``: any type, a load / store moves bytes; ``f32`` / ``f16`` / ``bf16``
    for atomics), bytes per lane, pattern, footprint (``dram`` / ``l2`` / ``contended``), size
    (``full`` / ``small``)."""

    op: str
    element: str
    pattern: Pattern
    footprint: str
    size: str

    @property
    def vector_bytes(self) -> int:
        return self.pattern.vector_bytes

    @property
    def chained(self) -> bool:
        """Small-size loads and ``atom``s wait for their value (a latency chain)."""
        return self.size == "small" and (self.op == "ld" or self.op.startswith("atom"))

    @property
    def kernel(self) -> str:
        """The cubin's entry point."""
        width = f"{self.element}_{self.vector_bytes}" if self.element != "b" else str(self.vector_bytes)
        return f"gm_{self.op.replace('.', '_')}_{width}{'_chain' if self.chained else ''}"

    @property
    def name(self) -> str:
        return f"{self.op} {self.element} {self.vector_bytes}B {self.pattern.key} {self.footprint} {self.size}"

    def iters(self, warps: int) -> int:
        """Requests per warp: about ``TARGET_BYTES`` of sector traffic (``TARGET_ATOMIC_BYTES`` useful bytes
        for atomics) at full size, a multiple of ``UNROLL``; ``SMALL_ITERS`` at small size."""
        if self.size == "small":
            return SMALL_ITERS
        if self.op in ("ld", "st"):
            per_request = self.pattern.sectors_per_request * SECTOR
            target = TARGET_BYTES
        else:
            per_request = LANES * self.vector_bytes
            target = TARGET_ATOMIC_BYTES
        n = target // (warps * per_request)
        least = max(UNROLL * 4, SECTOR // self.pattern.segment_bytes)  # a dense row fills its sectors
        return int(min(4096, max(least, n // UNROLL * UNROLL)))

    def mask(self) -> int:
        return (CONTENDED_BYTES if self.footprint == "contended" else FOOTPRINTS[self.footprint]) - 1


def configs() -> list[Config]:
    """Every configuration the run measures, in order."""
    out: list[Config] = []
    for footprint in FOOTPRINTS:
        for op in ("ld", "st"):
            out += [Config(op, "b", p, footprint, "full") for p in patterns()]
    for op in ATOMIC_OPS:
        for element, (size, counts) in ATOMIC_ELEMENTS.items():
            for n in counts:
                v = size * n
                for p in (Pattern(v, 32), Pattern(v, 4), Pattern(v, 1), Pattern(v, 1, dense=False)):
                    out.append(Config(op, element, p, "dram", "full"))
                if op != "atom.relaxed" and v >= 4:  # (a 16-bit scalar add is a CAS loop: not under contention)
                    out.append(Config(op, element, Pattern(v, 32), "contended", "full"))
                    out.append(Config(op, element, Pattern(v, 32), "l2", "small"))
    for footprint in FOOTPRINTS:
        for op in ("ld", "st"):
            for v in VECTOR_BYTES:
                out += [Config(op, "b", Pattern(v, 32), footprint, "small"),
                        Config(op, "b", Pattern(v, 1, dense=False), footprint, "small")]
    return out


# ---------------------------------------------------------------------------------------- CUDA source
_REGS = {1: ("h", "unsigned short"), 2: ("h", "unsigned short"), 4: ("r", "unsigned"), 8: ("r", "unsigned"),
         16: ("r", "unsigned")}


def _ldst(op: str, v: int) -> tuple[str, int, str, str]:
    """(PTX, registers, constraint, C type) of a load / store of ``v`` bytes per lane, as Triton spells it."""
    kind = {1: "b8", 2: "b16", 4: "b32", 8: "v2.b32", 16: "v4.b32"}[v]
    regs = {8: 2, 16: 4}.get(v, 1)
    con, ctype = _REGS[v]
    return f"{op}.global.{kind}", regs, con, ctype


def _atomic(op: str, element: str, n: int) -> tuple[str, str, str]:
    """(PTX opcode, constraint, C type) of an atomic add of ``n`` elements (Triton 3.6 / 3.9 spelling)."""
    base, sem = op.split(".")
    vec = f".v{n}" if n > 1 else ""
    kind = f"add{vec}.f32" if element == "f32" else f"add.noftz{vec}.{element}"
    con, ctype = ("f", "float") if element == "f32" else ("h", "unsigned short")
    return f"{base}.global.gpu.{sem}.{kind}", con, ctype


_HEAD = r"""
// warp-request pattern (gpu_global_microbench.Pattern): lane offset, then one request per iteration
#define SETUP \
  const unsigned lane = threadIdx.x & 31u; \
  const unsigned long long warp = (blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x) >> 5; \
  unsigned long long off = warp * warp_span + (unsigned long long)(lane >> lg) * row_pitch \
                           + (unsigned long long)(lane & ((1u << lg) - 1u)) * VB;
#define PARAMS unsigned char* buf, unsigned long long mask, unsigned long long warp_span, \
  unsigned long long step, unsigned long long row_pitch, unsigned lg, int iters, unsigned zero, unsigned* sink
"""


def _kernel(cfg: Config) -> str:
    """The CUDA C++ of ``cfg``'s kernel (inline PTX, one global instruction per iteration)."""
    v, name = cfg.vector_bytes, cfg.kernel
    loop_head = (f"#pragma unroll {UNROLL}\n  for (int i = 0; i < iters; ++i) {{\n"
                 "    unsigned char* p = buf + (off & mask);")
    if cfg.op in ("ld", "st"):
        ptx, regs, con, ctype = _ldst(cfg.op, v)
        names = [f"x{j}" for j in range(regs)]
        if cfg.op == "ld":
            outs = ", ".join(f'"={con}"({n})' for n in names)
            args = "{" + ", ".join(f"%{j}" for j in range(regs)) + "}" if regs > 1 else "%0"
            body = (f"    {ctype} {', '.join(names)};\n"
                    f"    asm volatile(\"{ptx} {args}, [%{regs}];\" : {outs} : \"l\"(p) : \"memory\");\n"
                    f"    acc ^= (unsigned)({' ^ '.join(names)});\n")
        else:
            args = "{" + ", ".join(f"%{j + 1}" for j in range(regs)) + "}" if regs > 1 else "%1"
            ins = ", ".join(f'"{con}"(({ctype})(acc + {j}u))' for j in range(regs))
            body = (f"    asm volatile(\"{ptx} [%0], {args};\" :: \"l\"(p), {ins} : \"memory\");\n"
                    f"    acc += 1u;\n")
    else:
        size, _ = ATOMIC_ELEMENTS[cfg.element]
        n = v // size
        ptx, con, ctype = _atomic(cfg.op, cfg.element, n)
        value = "__uint_as_float(zero)" if cfg.element == "f32" else "(unsigned short)zero"
        src = ", ".join(f'"{con}"(({ctype}){value})' for _ in range(n))
        if cfg.op.startswith("red"):
            args = "{" + ", ".join(f"%{j + 1}" for j in range(n)) + "}" if n > 1 else "%1"
            body = f"    asm volatile(\"{ptx} [%0], {args};\" :: \"l\"(p), {src} : \"memory\");\n    acc += 1u;\n"
        else:
            names = [f"y{j}" for j in range(n)]
            outs = ", ".join(f'"={con}"({nm})' for nm in names)
            dst = "{" + ", ".join(f"%{j}" for j in range(n)) + "}" if n > 1 else "%0"
            srcs = "{" + ", ".join(f"%{n + 1 + j}" for j in range(n)) + "}" if n > 1 else f"%{n + 1}"
            as_bits = "__float_as_uint" if cfg.element == "f32" else "(unsigned)"
            body = (f"    {ctype} {', '.join(names)};\n"
                    f"    asm volatile(\"{ptx} {dst}, [%{n}], {srcs};\" : {outs} : \"l\"(p), {src} : \"memory\");\n"
                    f"    acc ^= {' ^ '.join(f'{as_bits}({nm})' for nm in names)};\n")
    chain = "    off += step + (unsigned long long)(acc & zero);\n" if cfg.chained else "    off += step;\n"
    return (f"extern \"C\" __global__ void {name}(PARAMS) {{\n#define VB {v}ull\n  SETUP\n#undef VB\n"
            f"  unsigned acc = threadIdx.x;\n  {loop_head}\n{body}{chain}  }}\n"
            f"  if (acc == 0x9E3779B9u) sink[0] = acc;\n}}\n")


def cuda_source(items: list[Config] | None = None) -> str:
    """One module with a kernel per distinct entry point of ``items`` (default: ``configs()``)."""
    seen: dict[str, str] = {}
    for cfg in items or configs():
        seen.setdefault(cfg.kernel, _kernel(cfg))
    return _HEAD + "".join(seen.values())


# ------------------------------------------------------------------------------------------------ prepare
_SASS_FUNC = re.compile(r"Function : (\w+)")
_SASS_GLOBAL = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?((?:LDG|STG|ATOMG|REDG|MEMBAR|CCTL)[A-Za-z0-9_.]*)")


def sass_inventory(text: str) -> dict[str, dict[str, int]]:
    """Per function of ``cuobjdump -sass`` output, the count of each global-memory opcode (with modifiers)."""
    out: dict[str, dict[str, int]] = {}
    current = None
    for line in text.splitlines():
        m = _SASS_FUNC.search(line)
        if m:
            current = out.setdefault(m.group(1), {})
            continue
        m = _SASS_GLOBAL.search(line)
        if m and current is not None:
            current[m.group(1)] = current.get(m.group(1), 0) + 1
    return out


def check_widths(inventory: dict[str, dict[str, int]], items: list[Config]) -> list[str]:
    """Kernels whose loads / stores are not all of their configuration's width (``SASS_WIDTH``): one
    line each, empty when every width is exact. Besides the loop's (unrolled ``UNROLL`` times, plus a
    remainder) a kernel has one ``STG.E``: the sink, written only if the checksum hits a constant."""
    bad = []
    for cfg in items:
        if cfg.op not in ("ld", "st"):
            continue
        ops = {k: n for k, n in inventory.get(cfg.kernel, {}).items() if k.startswith(("LDG", "STG"))}
        if ops.get("STG.E", 0) < 1:
            bad.append(f"{cfg.kernel}: {ops} (no sink store)")
            continue
        ops["STG.E"] -= 1
        want = ("LDG.E" if cfg.op == "ld" else "STG.E") + SASS_WIDTH[cfg.vector_bytes]
        if {k for k, n in ops.items() if n} != {want} or ops[want] < UNROLL:
            bad.append(f"{cfg.kernel}: {ops} (want only {want}, at least {UNROLL})")
    return sorted(set(bad))


def prepare(args) -> int:
    from linear_layouts.codegen.ptx import compile_cubin, compile_ptx, find_cuobjdump

    build = Path(args.build)
    build.mkdir(parents=True, exist_ok=True)
    items = configs()
    source = cuda_source(items)
    start = time.time()
    cubin = compile_cubin(source, "sm_90")
    ptx = compile_ptx(source, "sm_90")
    (build / "global_microbench.cubin").write_bytes(Path(cubin).read_bytes())
    (build / "global_microbench.cu").write_text(source)
    plan = {"configs": [_config_row(c) for c in items], "kernels": sorted({c.kernel for c in items}),
            "nvcc_seconds": round(time.time() - start, 1), "ptx_globals": _ptx_globals(ptx)}
    tool = find_cuobjdump()
    if tool:
        sass = subprocess.run([tool, "-sass", str(cubin)], capture_output=True, text=True, check=True).stdout
        plan["sass"] = sass_inventory(sass)
        plan["width_errors"] = check_widths(plan["sass"], items)
    else:
        plan["sass"], plan["width_errors"] = None, ["cuobjdump not found: SASS widths not checked"]
    (build / "plan.json").write_text(json.dumps(plan, indent=1))
    print(f"{len(items)} configurations, {len(plan['kernels'])} kernels, nvcc {plan['nvcc_seconds']} s -> {build}")
    for line in plan["width_errors"]:
        print("  WIDTH:", line)
    return 1 if plan["sass"] is not None and plan["width_errors"] else 0


def _ptx_globals(ptx: str) -> dict[str, dict[str, int]]:
    """Per entry of the PTX, each global-memory opcode's count (the spelling the cubin was built from)."""
    from linear_layouts.codegen.ptx import count_ptx, split_ptx_entries

    return {name: dict(count_ptx(text, ("ld.global", "st.global", "atom.global", "red.global")))
            for name, text in split_ptx_entries(ptx).items()}


def _config_row(cfg: Config) -> dict:
    p = cfg.pattern
    return {"op": cfg.op, "element": cfg.element, "vector_bytes": p.vector_bytes,
            "lanes_per_segment": p.lanes_per_segment, "dense": p.dense, "segment_bytes": p.segment_bytes,
            "sectors_per_request": p.sectors_per_request, "coalesced_fraction": round(p.coalesced_fraction, 4),
            "footprint": cfg.footprint, "size": cfg.size, "kernel": cfg.kernel, "chained": cfg.chained}


def config_from_row(row: dict) -> Config:
    return Config(row["op"], row["element"], Pattern(row["vector_bytes"], row["lanes_per_segment"], row["dense"]),
                  row["footprint"], row["size"])


# ---------------------------------------------------------------------------------------------------- run
def measure(args) -> int:
    import cupy as cp
    import numpy as np

    build = Path(args.build)
    plan_path = build / "plan.json"
    if not plan_path.is_file():
        sys.exit(f"no {plan_path}: run --mode prepare on the CPU and carry benchmarks/build/global_microbench")
    plan = json.loads(plan_path.read_text())
    deadline = time.time() + args.budget
    props = cp.cuda.runtime.getDeviceProperties(0)
    device = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    sms = props["multiProcessorCount"]
    module = cp.RawModule(path=str(build / "global_microbench.cubin"))
    buf = cp.zeros(FOOTPRINTS["dram"], dtype=cp.uint8)
    sink = cp.zeros(4, dtype=cp.uint32)
    rows: list[dict] = []
    start, stop = cp.cuda.Event(), cp.cuda.Event()

    def launch(fn, cfg: Config, iters: int, grid: int, threads: int) -> None:
        p = cfg.pattern
        fn((grid,), (threads,), (buf, np.uint64(cfg.mask()), np.uint64(p.warp_span(iters)), np.uint64(p.step()),
                                 np.uint64(p.row_pitch(iters)), np.uint32(int(math.log2(p.lanes_per_segment))),
                                 np.int32(iters), np.uint32(0), sink))

    def timed(fn, cfg, iters, grid, threads, repeats=5) -> float:
        launch(fn, cfg, iters, grid, threads)
        samples = []
        for _ in range(repeats):
            start.record()
            launch(fn, cfg, iters, grid, threads)
            stop.record()
            stop.synchronize()
            samples.append(cp.cuda.get_elapsed_time(start, stop) * 1e3)
        return statistics.median(samples)

    warm = module.get_function(Config("ld", "b", Pattern(16, 32), "dram", "full").kernel)
    warm_cfg = Config("ld", "b", Pattern(16, 32), "dram", "full")
    for _ in range(30):  # about 0.3 s: the clocks leave idle before anything is timed
        launch(warm, warm_cfg, 64, sms * CTAS_PER_SM, THREADS)
    cp.cuda.runtime.deviceSynchronize()
    for row in plan["configs"]:
        cfg = config_from_row(row)
        if time.time() > deadline:
            rows.append({**row, "error": "not run: budget"})
            continue
        fn = module.get_function(cfg.kernel)
        grid, threads = (sms * CTAS_PER_SM, THREADS) if cfg.size == "full" else (sms, LANES)
        warps = grid * threads // LANES
        iters = cfg.iters(warps)
        us = timed(fn, cfg, iters, grid, threads)
        empty = timed(fn, cfg, 0, grid, threads)
        rows.append({**row, **derived(cfg, us, empty, iters, warps, sms)})
    env = _environment()
    meta = {"device": device, "sms": sms, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "seconds": round(args.budget - (deadline - time.time()), 1), "environment": env,
            "ctas_per_sm": CTAS_PER_SM, "threads": THREADS, "footprints": FOOTPRINTS, "sass": plan.get("sass"),
            "width_errors": plan.get("width_errors")}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "gpu_global_microbench.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    (out / "gpu_global_microbench.md").write_text(markdown(meta, rows))
    device_table = table(rows, meta)
    (out / "global").mkdir(exist_ok=True)
    (out / "global" / f"{device_table['name']}.json").write_text(json.dumps(device_table, indent=1) + "\n")
    print(f"{sum('ns' in r for r in rows)} / {len(rows)} configurations in {meta['seconds']} s -> {out}")
    return 0


def derived(cfg: Config, us: float, empty_us: float, iters: int, warps: int, sms: int) -> dict:
    """The figures of one measured configuration (module doc): SM-ns per warp-instruction (``full``) or
    ns per instruction of a warp (``small``), useful and sector GB/s."""
    extra = max(us - empty_us, 1e-9)
    instructions = warps * iters
    useful = instructions * LANES * cfg.vector_bytes
    sector_bytes = instructions * cfg.pattern.sectors_per_request * SECTOR
    ns = extra * 1e3 * sms / instructions if cfg.size == "full" else extra * 1e3 / iters
    return {"iters": iters, "warps": warps, "us": round(us, 3), "empty_us": round(empty_us, 3), "ns": round(ns, 4),
            "useful_GBps": round(useful / (extra * 1e3), 1), "sector_GBps": round(sector_bytes / (extra * 1e3), 1)}


def device_name(full: str) -> str:
    """``NVIDIA H200`` -> ``H200``, ``NVIDIA H100 80GB HBM3`` -> ``H100`` (the cost tables' names)."""
    for token in full.replace("-", " ").split():
        if re.fullmatch(r"[A-Z]{1,3}\d{2,4}[A-Za-z]?", token) and token != "NVIDIA":
            return token
    return re.sub(r"\W+", "_", full).strip("_") or "device"


def table(rows: list[dict], meta: dict) -> dict:
    """The device's global-memory table from measured rows: ``ns[size][footprint][op][element][bytes][pattern]``
    (pattern ``dense/32``, ``sparse/1``, ...: ``Pattern.key``), each pattern's sectors per request
    (``sectors_per_request[bytes][pattern]``), the units and where it was measured.

    >>> t = table([{"op": "st", "element": "b", "vector_bytes": 16, "lanes_per_segment": 32, "dense": True,
    ...             "footprint": "dram", "size": "full", "ns": 1.5}], {"device": "NVIDIA H200", "sms": 132})
    >>> t["name"], t["ns"]["full"]["dram"]["st"]["b"]["16"]["dense/32"]
    ('H200', 1.5)
    """
    ns: dict = {}
    for r in rows:
        if "ns" not in r:
            continue
        key = Pattern(r["vector_bytes"], r["lanes_per_segment"], r["dense"]).key
        (ns.setdefault(r["size"], {}).setdefault(r["footprint"], {}).setdefault(r["op"], {})
         .setdefault(r["element"], {}).setdefault(str(r["vector_bytes"]), {}))[key] = r["ns"]
    return {"name": device_name(meta.get("device", "")), "device": meta.get("device"), "sms": meta.get("sms"),
            "measured": f"benchmarks/gpu_global_microbench.py, {meta.get('date')}",
            "units": {"full": "SM-ns per warp-instruction (8 CTAs x 256 threads per SM, all SMs streaming)",
                      "small": "ns per instruction of one warp (one warp per SM; ld / atom: dependent chain)"},
            "patterns": "dense/g, sparse/g: g lanes per contiguous segment (gpu_global_microbench.Pattern)",
            "sectors_per_request": {str(v): {p.key: p.sectors_per_request for p in patterns() if p.vector_bytes == v}
                                    for v in VECTOR_BYTES},
            "ns": ns}


def markdown(meta: dict, rows: list[dict]) -> str:
    lines = ["# Global memory by instruction width and coalescing", "",
             f"Device {meta.get('device')} ({meta.get('sms')} SMs), {meta.get('date')}; "
             f"script `benchmarks/gpu_global_microbench.py`. Full size: {CTAS_PER_SM} CTAs x {THREADS} threads per "
             "SM, cell = SM-ns per warp-instruction (useful GB/s). Small: one warp per SM, ns per instruction "
             "(ld and atom: dependent chain). Pattern g: lanes per contiguous segment; sparse: the unused bytes "
             "of a sector are never touched (module doc).", ""]
    measured = [r for r in rows if "ns" in r]
    groups: dict[tuple, list[dict]] = {}
    for r in measured:
        groups.setdefault((r["size"], r["footprint"]), []).append(r)
    for (size, footprint), group in groups.items():
        keys = sorted({Pattern(r["vector_bytes"], r["lanes_per_segment"], r["dense"]).key for r in group},
                      key=lambda k: (k.startswith("sparse"), -int(k.split("/")[1])))
        lines += [f"## {size}, {footprint}", "", "| op | element | bytes/lane | " + " | ".join(keys) + " |",
                  "|---|---|---|" + "---|" * len(keys)]
        by_row: dict[tuple, dict] = {}
        for r in group:
            by_row.setdefault((r["op"], r["element"], r["vector_bytes"]), {})[
                Pattern(r["vector_bytes"], r["lanes_per_segment"], r["dense"]).key] = r
        for (op, element, v), cells in by_row.items():
            text = [f"{cells[k]['ns']:.3g} ({cells[k]['useful_GBps']:.0f})" if k in cells else "" for k in keys]
            lines.append(f"| {op} | {element} | {v} | " + " | ".join(text) + " |")
        lines.append("")
    errors = [r for r in rows if "error" in r]
    if errors:
        lines.append(f"{len(errors)} configurations not run (budget).")
    return "\n".join(lines) + "\n"


def _environment() -> dict:
    return environment(("name", "driver_version", "clocks.max.sm", "clocks.max.mem"), ("nvcc",), ("cupy",), date=False)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", choices=["prepare", "run"], required=True)
    ap.add_argument("--build", default=str(BUILD))
    ap.add_argument("--out", default=str(RESULTS))
    ap.add_argument("--budget", type=float, default=100.0, help="run: seconds for all measurements")
    args = ap.parse_args(argv)
    if args.mode == "prepare":
        os.environ.setdefault("LINEAR_LAYOUTS_CACHE", str(HERE / "build" / "cubins"))
        return prepare(args)
    return measure(args)


if __name__ == "__main__":
    sys.exit(main())
