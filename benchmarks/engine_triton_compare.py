"""(f) Conversions our layout engine leaves vs. Triton's own choice, for the engine's example programs.

Each example is also written as a plain Triton kernel, compiled on the CPU to TTGIR for sm_90
(and sm_80) with ``triton.compile(ASTSource(...), target=GPUTarget("cuda", cc, 32))``; we count
``ttg.convert_layout`` ops (and, for context, ``ttg.local_alloc``: Hopper's wgmma reads its operands
from shared memory, so Triton stages a loaded dot operand with a local_alloc instead of a convert).
Our engine's count is of ``convert_layout`` ops left after propagation (mma v3 for sm_90, v2 for sm_80).

Run: ``python benchmarks/engine_triton_compare.py [--out benchmarks/results/engine_triton.json]``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import time
import warnings

import harness  # noqa: F401  (puts src/ on the path)

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
warnings.filterwarnings("ignore")

import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

from linear_layouts.engine import naive_conversions, propagate  # noqa: E402
from linear_layouts.engine import examples  # noqa: E402


@triton.jit
def dot_trans_store(A, B, Out, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(A + rm[:, None] * K + rk[None, :])
    b = tl.load(B + rk[:, None] * N + rn[None, :])
    c = tl.dot(a, b)
    tl.store(Out + rn[:, None] * M + rm[None, :], tl.trans(c))


@triton.jit
def row_softmax(X, Out, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(X + offs)
    e = tl.exp2(x - tl.max(x, 1)[:, None])
    tl.store(Out + offs, e / tl.sum(e, 1)[:, None])


@triton.jit
def _fp4_to_fp(x):
    e = ((x >> 1) & 3).to(tl.float32)
    m = (x & 1).to(tl.float32)
    mag = tl.where(e == 0, m * 0.5, (1.0 + m * 0.5) * tl.exp2(e - 1.0))
    return tl.where((x >> 3) != 0, -mag, mag).to(tl.bfloat16)


@triton.jit
def mxfp4_matmul(A, Bp, S, Out, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(A + rm[:, None] * K + rk[None, :])
    packed = tl.load(Bp + tl.arange(0, K // 2)[:, None] * N + rn[None, :])
    nibbles = tl.reshape(tl.permute(tl.join(packed & 15, packed >> 4), (0, 2, 1)), (K, N))
    values = _fp4_to_fp(nibbles)
    s = tl.load(S + rn[:, None] * (K // 32) + tl.arange(0, K // 32)[None, :])
    sf = tl.exp2(s.to(tl.float32) - 127.0).to(tl.bfloat16)
    sf = tl.trans(tl.reshape(tl.broadcast_to(tl.reshape(sf, (N, K // 32, 1)), (N, K // 32, 32)), (N, K)))
    c = tl.dot(a, values * sf)
    tl.store(Out + rm[:, None] * N + rn[None, :], c)


@triton.jit
def welford(X, Mean, Var, M: tl.constexpr, N: tl.constexpr):
    x = tl.load(X + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    mean = tl.sum(x, 1) / N
    d = x - mean[:, None]
    tl.store(Mean + tl.arange(0, M), mean)
    tl.store(Var + tl.arange(0, M), tl.sum(d * d, 1) / N)


@triton.jit
def split_join(X, Out, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    even, odd = tl.split(tl.reshape(tl.load(X + offs), (M, N // 2, 2)))
    tl.store(Out + offs, tl.reshape(tl.join(odd, even), (M, N)))


@triton.jit
def gather_rows(X, Idx, Out, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    g = tl.gather(tl.load(X + offs), tl.load(Idx + offs), 1)
    tl.store(Out + offs, g * tl.sum(g, 1)[:, None])


# name -> (kernel, pointer signature, constexprs, our program builder kwargs)
CASES = {
    "dot_trans_store": (dot_trans_store, {"A": "*fp16", "B": "*fp16", "Out": "*fp32"}, {"M": 64, "N": 64, "K": 32}),
    "row_softmax": (row_softmax, {"X": "*fp32", "Out": "*fp32"}, {"M": 64, "N": 128}),
    "mxfp4_matmul": (mxfp4_matmul, {"A": "*bf16", "Bp": "*u8", "S": "*u8", "Out": "*fp32"}, {"M": 64, "N": 64, "K": 128}),
    "welford": (welford, {"X": "*fp32", "Mean": "*fp32", "Var": "*fp32"}, {"M": 64, "N": 64}),
    "split_join": (split_join, {"X": "*fp16", "Out": "*fp16"}, {"M": 64, "N": 64}),
    "gather_rows": (gather_rows, {"X": "*fp32", "Idx": "*i32", "Out": "*fp32"}, {"M": 32, "N": 32}),
}


def triton_ttgir(kernel, pointers: dict, constexprs: dict, cc: int, num_warps: int = 4) -> str:
    signature = dict(pointers)
    signature.update(dict.fromkeys(constexprs, "constexpr"))
    attrs = {(i,): [["tt.divisibility", 16]] for i in range(len(pointers))}  # as the JIT specializes
    src = ASTSource(fn=kernel, signature=signature, constexprs=constexprs, attrs=attrs)
    return triton.compile(src, target=GPUTarget("cuda", cc, 32), options={"num_warps": num_warps}).asm["ttgir"]


def count(ttgir: str, op: str) -> int:
    return len(re.findall(rf"= {re.escape(op)} ", ttgir))


def ours(name: str, cc: int):
    build = examples.EXAMPLES[name]
    kwargs = {"mma_version": 3 if cc >= 90 else 2} if name in ("dot_trans_store", "mxfp4_matmul") else {}
    program = build(**kwargs)
    from linear_layouts.target import named_target

    result = propagate(program, target=named_target(f"sm_{cc}"))  # the kernel's target: its plans, its ISA
    return program, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="benchmarks/results/engine_triton.json")
    args = parser.parse_args()
    rows = []
    for name, (kernel, pointers, constexprs) in CASES.items():
        for cc in (90, 80):
            t0 = time.time()
            ttgir = triton_ttgir(kernel, pointers, constexprs, cc)
            program, result = ours(name, cc)
            row = {
                "program": name, "target": f"sm_{cc}",
                "triton_convert_layout": count(ttgir, "ttg.convert_layout"),
                "triton_local_alloc": count(ttgir, "ttg.local_alloc"),
                "ours_convert_layout": len(result.conversions),
                "ours_kinds": [c.plan.kind if c.plan else "?" for c in result.conversions],
                "ours_cost": round(result.total_cost, 2),
                "blocked_everywhere": naive_conversions(program),
                "seconds": round(time.time() - t0, 2),
            }
            rows.append(row)
            print(json.dumps(row))
    meta = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "triton": triton.__version__, "python": platform.python_version(), "machine": platform.machine(),
        "device": "none (TTGIR compiled on the CPU)",
    }
    with open(args.out, "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
    print("| program | target | Triton convert_layout | Triton local_alloc | ours | our kinds | blocked everywhere |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['program']} | {r['target']} | {r['triton_convert_layout']} | {r['triton_local_alloc']} | "
              f"{r['ours_convert_layout']} | {', '.join(r['ours_kinds']) or '-'} | {r['blocked_everywhere']} |")


if __name__ == "__main__":
    main()
