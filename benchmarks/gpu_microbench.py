"""Microbenchmarks of the building blocks of generated conversions, for the cost model
(``linear_layouts.analysis.cost_model``): a shared-memory wavefront (ld/st.shared, conflict-free and
n-way conflicted, 32/128-bit, ldmatrix/stmatrix x4), ``shfl.sync``, ``prmt``, ``selp``, a CTA
barrier (``bar.sync``) and a warp barrier (``bar.warp.sync``).

Every kernel runs ``ITER`` iterations of its block in 8 independent chains per thread (the conversion
code has many independent words), 8 CTAs per SM of ``W`` warps (the conversion benchmark's occupancy);
the cost of one block is the kernel time over the warp-instructions (or CTA barriers) one SM executes:
SM-nanoseconds per warp-instruction.  The empty loop's time is subtracted.

    PYTHONPATH=src python benchmarks/gpu_microbench.py --out OUT        # on the GPU machine
    PYTHONPATH=src python benchmarks/gpu_microbench.py --prepare        # CPU: compile the cubin

Writes ``OUT/microbench.json``: the device (its full name and its short one, ``device_name``: ``H200``, the
name of the cost table ``fit_cost_model.py`` makes of it), per block and warps per CTA, ns per
warp-instruction per SM. Runs on whichever device the run gets.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)

HERE = Path(__file__).resolve().parent
os.environ.setdefault("LINEAR_LAYOUTS_CACHE", str(HERE / "build" / "cubins"))

ITER = 1024
CHAINS = 8

_HEAD = r"""
#define ITER %(iter)d
#define CH %(chains)d
static __device__ __forceinline__ unsigned sbase() { extern __shared__ __align__(16) unsigned char s[]; return (unsigned)__cvta_generic_to_shared(s); }
""" % {"iter": ITER, "chains": CHAINS}


def _kernel(name: str, init: str, body: str, smem_init: bool = False) -> str:
    """A kernel running ``body`` (uses x[0..CH), lane, warp, base, i) ITER times; x summed to out."""
    # shared memory all zeros: loads chase "pointers" p += value (0 at run time, unknown to the
    # compiler), so no load can be hoisted out of the loop
    fill = ('for (unsigned o = threadIdx.x * 4u; o < 16384u; o += blockDim.x * 4u) '
            'asm volatile("st.shared.b32 [%0], %1;" :: "r"(base + o), "r"(0u)); __syncthreads();') if smem_init else ""
    return f"""
extern "C" __global__ void {name}(unsigned* out, unsigned seed) {{
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  const unsigned base = sbase();
  (void)lane; (void)warp; (void)base;
  unsigned x[CH];
  #pragma unroll
  for (int c = 0; c < CH; ++c) x[c] = seed * (c + 1) ^ threadIdx.x;
  {fill}
  {init}
  #pragma unroll 2
  for (int i = 0; i < ITER; ++i) {{
    {body}
  }}
  unsigned acc = 0;
  #pragma unroll
  for (int c = 0; c < CH; ++c) acc ^= x[c];
  if (acc == 0x12345678u) out[blockIdx.x] = acc;
}}
"""


def _each(stmt: str) -> str:
    return " ".join(stmt.replace("C_", str(c)).replace("N_", str((c + 1) % CHAINS)) for c in range(CHAINS))


#: (kernel, instructions of the block per thread per iteration, block, description)
BLOCKS = [
    ("mb_empty", 0, "empty", _kernel("mb_empty", "", _each("x[C_] ^= (unsigned)i;"))),
    ("mb_prmt", CHAINS, "prmt", _kernel("mb_prmt", "", _each("x[C_] = __byte_perm(x[C_], x[N_], (i & 1) ? 0x5410u : 0x1076u);") + _each("x[C_] ^= (unsigned)i;"))),
    ("mb_selp", CHAINS, "selp", _kernel("mb_selp", "const bool odd = lane & 1u;",
                                        _each("x[C_] = odd ? x[N_] : x[C_];") + _each("x[C_] ^= (unsigned)i;"))),
    ("mb_shfl", CHAINS, "shfl", _kernel("mb_shfl", "const unsigned src = lane ^ 5u;",
                                        _each("x[C_] = __shfl_sync(0xffffffffu, x[C_], src);") + _each("x[C_] ^= (unsigned)i;"))),
]


def _lds(width: int, stride_words: int, tag: str) -> tuple:
    """ld.shared of ``width`` bits by every lane at word ``lane * stride`` (+ chain offset)."""
    regs = {32: 1, 64: 2, 128: 4}[width]
    op = {32: "ld.shared.b32 %0, [%1];", 64: "ld.shared.v2.b32 {%0, %1}, [%2];", 128: "ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];"}[width]
    outs = ", ".join(f'"=r"(y{j})' for j in range(regs))
    decl = " ".join(f"unsigned y{j};" for j in range(regs))
    use = " ^ ".join(f"y{j}" for j in range(regs))
    stmt = (f"{{ {decl} asm volatile(\"{op}\" : {outs} : \"r\"(p[C_]) : \"memory\"); p[C_] += y0; x[C_] += {use}; }}")
    init = (f"unsigned p[CH]; for (int c = 0; c < CH; ++c) p[c] = base + lane * {stride_words}u * 4u + c * 16u * {regs}u;")
    name = f"mb_lds{width}_{tag}"
    return (name, CHAINS, f"ld.shared.b{width} {tag}", _kernel(name, init, _each(stmt), smem_init=True))


def _sts(width: int, stride_words: int, tag: str) -> tuple:
    regs = {32: 1, 64: 2, 128: 4}[width]
    op = {32: "st.shared.b32 [%0], %1;", 64: "st.shared.v2.b32 [%0], {%1, %2};", 128: "st.shared.v4.b32 [%0], {%1, %2, %3, %4};"}[width]
    ins = ", ".join(f'"r"(x[C_] + {j}u)' for j in range(regs))
    stmt = f"asm volatile(\"{op}\" :: \"r\"(base + addr + C_ * 16u * {regs}u), {ins} : \"memory\"); x[C_] += 1u;"
    init = f"const unsigned addr = (lane * {stride_words}u * 4u);"
    name = f"mb_sts{width}_{tag}"
    return (name, CHAINS, f"st.shared.b{width} {tag}", _kernel(name, init, _each(stmt), smem_init=True))


def _matrix(store: bool) -> tuple:
    if store:
        stmt = ("asm volatile(\"stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\" :: "
                "\"r\"(base + row + C_ * 512u), \"r\"(x[C_]), \"r\"(x[C_] + 1u), \"r\"(x[C_] + 2u), \"r\"(x[C_] + 3u) : \"memory\"); x[C_] += 1u;")
    else:
        stmt = ("{ unsigned y0, y1, y2, y3; asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\" : "
                "\"=r\"(y0), \"=r\"(y1), \"=r\"(y2), \"=r\"(y3) : \"r\"(p[C_]) : \"memory\"); p[C_] += y0; x[C_] += y0 ^ y1 ^ y2 ^ y3; }")
    # 32 rows of 16 bytes: conflict-free, 4 wavefronts per x4
    init = "const unsigned row = lane * 16u; unsigned p[CH]; for (int c = 0; c < CH; ++c) p[c] = base + row + c * 512u;"
    if store:
        init = "const unsigned row = lane * 16u;"
    name = "mb_stsm_x4" if store else "mb_ldsm_x4"
    return (name, CHAINS, "stmatrix.x4" if store else "ldmatrix.x4", _kernel(name, init, _each(stmt), smem_init=True))


BLOCKS += [
    _lds(32, 1, "1wf"), _lds(32, 2, "2wf"), _lds(32, 4, "4wf"), _lds(32, 8, "8wf"),
    _lds(128, 4, "4wf"),
    _sts(32, 1, "1wf"), _sts(32, 4, "4wf"), _sts(128, 4, "4wf"),
    _matrix(False), _matrix(True),
    ("mb_bar_cta", 1, "bar.sync", _kernel("mb_bar_cta", "", "__syncthreads(); " + _each("x[C_] ^= (unsigned)i;"))),
    ("mb_bar_warp", 1, "bar.warp.sync", _kernel("mb_bar_warp", "", "__syncwarp(); " + _each("x[C_] ^= (unsigned)i;"))),
]

#: wavefronts per warp-instruction of each shared block (conflict-free 32-bit: 1; 128-bit: 4; ...)
WAVEFRONTS = {"ld.shared.b32 1wf": 1, "ld.shared.b32 2wf": 2, "ld.shared.b32 4wf": 4, "ld.shared.b32 8wf": 8,
              "ld.shared.b128 4wf": 4, "st.shared.b32 1wf": 1, "st.shared.b32 4wf": 4, "st.shared.b128 4wf": 4,
              "ldmatrix.x4": 4, "stmatrix.x4": 4}

SOURCE = _HEAD + "".join(b[3] for b in BLOCKS)
WARPS = (1, 2, 4, 8)
CTAS_PER_SM = 8


def compile_module() -> Path:
    from linear_layouts.codegen.ptx import compile_cubin

    return compile_cubin(SOURCE)


def run(out: Path | None = None) -> dict:
    import cupy as cp

    path = compile_module()
    module = cp.RawModule(path=str(path))
    dev = cp.cuda.Device()
    props = cp.cuda.runtime.getDeviceProperties(dev.id)
    sms = props["multiProcessorCount"]
    from linear_layouts.target import device_name

    full = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    res = dict(device=full, device_name=device_name(full), sms=sms, date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
               iterations=ITER, chains=CHAINS, ctas_per_sm=CTAS_PER_SM, blocks={})
    sink = cp.zeros(sms * CTAS_PER_SM, dtype=cp.uint32)
    times: dict = {}
    # warm up: ~0.3 s of work so the clocks have left idle before anything is timed
    warm = module.get_function("mb_prmt")
    for _ in range(200):
        warm((sms * CTAS_PER_SM,), (256,), (sink, cp.uint32(3)), shared_mem=16384)
    cp.cuda.runtime.deviceSynchronize()
    for name, per_iter, block, _ in BLOCKS:
        fn = module.get_function(name)
        for w in WARPS:
            grid = (sms * CTAS_PER_SM,)
            args = (sink, cp.uint32(7))
            fn(grid, (32 * w,), args, shared_mem=16384)
            cp.cuda.runtime.deviceSynchronize()
            samples = []
            for _ in range(5):
                start, stop = cp.cuda.Event(), cp.cuda.Event()
                start.record()
                for _ in range(5):
                    fn(grid, (32 * w,), args, shared_mem=16384)
                stop.record()
                stop.synchronize()
                samples.append(cp.cuda.get_elapsed_time(start, stop) * 1e3 / 5)
            times[(block, w)] = sorted(samples)[2]
    for name, per_iter, block, _ in BLOCKS:
        if block == "empty":
            continue
        row = {}
        for w in WARPS:
            extra_us = max(times[(block, w)] - times[("empty", w)], 0.0)
            per_sm = CTAS_PER_SM * ITER * (w if not block.startswith("bar.sync") else 1) * per_iter
            # ns of one SM per warp-instruction (bar.sync: per CTA barrier)
            row[str(w)] = dict(us=round(times[(block, w)], 3), ns=round(extra_us * 1e3 / per_sm, 4))
            if block in WAVEFRONTS:
                row[str(w)]["ns_per_wavefront"] = round(extra_us * 1e3 / per_sm / WAVEFRONTS[block], 4)
        res["blocks"][block] = row
    res["empty_us"] = {str(w): round(times[("empty", w)], 3) for w in WARPS}
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "microbench.json").write_text(json.dumps(res, indent=1))
    return res


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(HERE / "build" / "out"))
    ap.add_argument("--prepare", action="store_true", help="compile the cubin only (no GPU)")
    args = ap.parse_args()
    if args.prepare:
        t = time.time()
        print(compile_module(), f"{time.time() - t:.1f} s")
        return
    res = run(Path(args.out))
    for block, row in res["blocks"].items():
        print(f"{block:22s}", "  ".join(f"w{w}: {v['ns']:.3f}" for w, v in row.items()))


if __name__ == "__main__":
    main()
