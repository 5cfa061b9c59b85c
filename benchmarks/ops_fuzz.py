"""Seeded random calls of ``linear_layouts.ops`` against PyTorch, bit for bit: any rank, size, dtype, permutation,
source offset and ``out=`` offset (device only; the CPU compiles the kernels first).

Each seed draws ``--cases`` calls:

- ``permute(x, dims)`` / ``transpose(x)``: rank 1 to 5, sizes from a list of edges (1, primes, powers of two and
  their neighbours), at most ``MAX_BYTES``; every element size (bool, uint8, fp16, bf16, fp32, int64, complex128);
  ``x`` a view 0 to 7 elements into a larger buffer (a source at any element offset); ``out=`` None or a view 0 to
  7 elements into a larger zeroed buffer, whose bytes around the output must stay zero;
- ``cast_transpose(x, fp8, scale)``: bf16 / fp16 / fp32 matrices (and a batch dim) of the same sizes, e4m3 or
  e5m2, a number or a tensor scale, the same offsets for ``x``, ``out`` and ``out_t``; against
  ``(x.float() * scale).clamp(-max, max).to(fp8)`` and ``x.abs().max()``;
- then ``count // 4`` ``permute`` calls on views (``view_cases``, their own random stream: the calls above stay
  as they were): ``x`` a slice of a larger tensor (any start, stop and step a dim), possibly transposed, and
  ``out=`` None or a slice of a larger zeroed buffer (a window with gaps); the whole buffer against PyTorch's
  ``window.copy_(x.permute(dims))``.

    PYTHONPATH=src python3 benchmarks/ops_fuzz.py --mode prepare --seed 1   # CPU: every kernel the calls launch
    PYTHONPATH=src python3 benchmarks/ops_fuzz.py --seed 1 --out DIR        # device: ops_fuzz_<seed>.{json,md}

``prepare`` plans each call at a made-up 512-byte-aligned base plus its offsets (PyTorch's allocations are
512-byte aligned: the plans depend on the addresses modulo 32 only) and compiles the kernels into
``benchmarks/build/ops_fuzz/cache``.
"""

from __future__ import annotations

import json
import os
import random
import time
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)

BUILD = harness.BUILD / "ops_fuzz"
os.environ.setdefault("LINEAR_LAYOUTS_CACHE", str(BUILD / "cache"))

from harness import cli, ops_cases  # noqa: E402

SIZES = (1, 2, 3, 5, 7, 8, 13, 16, 17, 31, 32, 33, 63, 64, 100, 127, 128, 129, 255, 256, 257, 1000, 1023, 4097)
DTYPES = {"bool": 1, "uint8": 1, "float16": 2, "bfloat16": 2, "float32": 4, "int64": 8, "complex128": 16}
CAST_INPUTS = {"bfloat16": ("bf16", 2), "float16": ("fp16", 2), "float32": ("fp32", 4)}
MAX_BYTES = 48 << 20
_BASE, _OTHER, _THIRD = 1 << 40, 2 << 40, 3 << 40


def _shape(rng: random.Random, rank: int, itemsize: int) -> tuple[int, ...]:
    while True:
        shape = tuple(rng.choice(SIZES) for _ in range(rank))
        n = 1
        for s in shape:
            n *= s
        if n * itemsize <= MAX_BYTES:
            return shape


def cases(seed: int, count: int) -> list[dict]:
    """The seed's calls (module doc), as plain values."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        if rng.random() < 0.2:
            dtype = rng.choice(sorted(CAST_INPUTS))
            shape = _shape(rng, rng.choice((1, 2, 2, 2, 3)), 4)
            out.append(dict(op="cast", shape=shape, dtype=dtype, fp8=rng.choice(("e4m3", "e5m2")),
                            scale=rng.choice((0.37, 1.0, 3.0, "tensor")), x_offset=rng.choice((0, 0, rng.randrange(8))),
                            out_offset=rng.choice((None, 0, rng.randrange(8))),
                            out_t_offset=rng.choice((None, 0, rng.randrange(8)))))
            continue
        dtype = rng.choice(sorted(DTYPES))
        rank = rng.choice((1, 2, 2, 3, 3, 4, 5))
        shape = _shape(rng, rank, DTYPES[dtype])
        transpose = rank >= 2 and rng.random() < 0.25
        dims = tuple(range(rank - 2)) + (rank - 1, rank - 2) if transpose else tuple(rng.sample(range(rank), rank))
        out.append(dict(op="transpose" if transpose else "permute", shape=shape, dims=dims, dtype=dtype,
                        x_offset=rng.choice((0, 0, rng.randrange(8))), out_offset=rng.choice((None, 0, rng.randrange(8)))))
    return out


def view_cases(seed: int, count: int) -> list[dict]:
    """The seed's calls on views (module doc), from a stream of their own."""
    rng = random.Random(f"views {seed}")
    out = []
    for _ in range(count):
        dtype = rng.choice(sorted(d for d in DTYPES if d != "bool"))
        rank = rng.choice((1, 2, 2, 3, 3, 4))
        base = _shape(rng, rank, DTYPES[dtype])
        index = []
        for size in base:
            start = rng.randrange(size) if rng.random() < 0.5 else 0
            index.append((start, rng.randrange(start + 1, size + 1), rng.choice((1, 1, 1, 2, 3))))
        order = tuple(rng.sample(range(rank), rank)) if rng.random() < 0.3 else tuple(range(rank))
        dims = tuple(rng.sample(range(rank), rank))
        window = None
        if rng.random() < 0.5:
            window = (rng.randrange(3), rng.choice((1, 1, 2)))  # (pad, step) of each output dim in its buffer
        out.append(dict(op="permute view", base=base, index=index, order=order, dims=dims, dtype=dtype,
                        window=window))
    return out


def _view_shape(case: dict) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(shape, output buffer shape)`` of a view case."""
    sizes = [len(range(*i)) for i in case["index"]]
    shape = tuple(sizes[d] for d in case["order"])
    out_shape = tuple(shape[d] for d in case["dims"])
    pad, step = case["window"] or (0, 1)
    return shape, tuple(n * step + pad for n in out_shape)


def _window(buffer, case: dict, out_shape):
    pad, step = case["window"]
    return buffer[tuple(slice(pad, pad + n * step, step) for n in out_shape)]


def _launches(case: dict, device) -> list:
    from linear_layouts.ops.launches import cast_launches, permute_launches

    if case["op"] == "permute view":
        import numpy as np

        w = DTYPES[case["dtype"]]
        base = np.empty(case["base"], np.dtype(f"V{w}"))
        view = base[tuple(slice(*i) for i in case["index"])].transpose(case["order"])
        offset = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
        shape, buffer = _view_shape(case)
        out_strides, out_offset = None, 0
        if case["window"]:
            out_buffer = np.empty(buffer, np.dtype(f"V{w}"))
            window = _window(out_buffer, case, tuple(shape[d] for d in case["dims"]))
            out_strides = tuple(st // w for st in window.strides)
            out_offset = window.__array_interface__["data"][0] - out_buffer.__array_interface__["data"][0]
        return ops_cases.view_launches(view, case["dims"], _BASE + offset, _OTHER + out_offset, device,
                                       out_strides=out_strides)
    if case["op"] == "cast":
        fmt, w = CAST_INPUTS[case["dtype"]]
        shape = case["shape"]
        n = shape[-1]
        m = 1
        for s in shape[:-1]:
            m *= s
        if not (m and n):
            return []
        x = _BASE + case["x_offset"] * w
        out = _OTHER + (case["out_offset"] or 0)
        out_t = _THIRD + (case["out_t_offset"] or 0)
        return cast_launches(fmt, case["fp8"], m, n, x, out, out_t, 4 << 40, 1.0, 5 << 40, device)
    w = DTYPES[case["dtype"]]
    return permute_launches(case["shape"], case["dims"], w, _BASE + case["x_offset"] * w,
                            _OTHER + (case["out_offset"] or 0) * w, device)


def prepare(seed: int, count: int, jobs: int) -> None:
    from linear_layouts.ops.kernels import GridShape

    device = GridShape(ops_cases.SMS, ops_cases.L2_BYTES)
    (BUILD / "cache").mkdir(parents=True, mode=0o700, exist_ok=True)
    sources = ops_cases.launch_sources(_launches(c, device) for c in cases(seed, count) + view_cases(seed, count // 4))
    n, seconds = ops_cases.compile_sources(sources, "sm_90", jobs)
    print(f"prepared {n} kernels for sm_90 in {seconds:.0f} s into {BUILD / 'cache'}")


def _random(torch, shape, dtype_name: str, offset: int):
    """Random bits of ``dtype_name`` in ``shape``, ``offset`` elements into a larger buffer (bool: 0 or 1)."""
    dtype = getattr(torch, dtype_name)
    n = 1
    for s in shape:
        n *= s
    itemsize = torch.empty((), dtype=dtype).element_size()
    if dtype == torch.bool:
        raw = torch.randint(0, 2, (n + offset,), dtype=torch.uint8, device="cuda")
    else:
        raw = torch.randint(0, 256, ((n + offset) * itemsize,), dtype=torch.uint8, device="cuda")
    return raw.view(dtype)[offset:offset + n].view(shape)


def run_case(torch, ops, case: dict) -> dict:
    """One call checked (``ok``), with what went wrong where not."""
    result = dict(case, ok=False)
    try:
        if case["op"] == "cast":
            _cast(torch, ops, case)
        elif case["op"] == "permute view":
            _permute_view(torch, ops, case)
        else:
            _permute(torch, ops, case)
        result["ok"] = True
    except AssertionError as error:
        result["error"] = f"wrong: {error}"
    except Exception as error:  # noqa: BLE001 - a row, not the end of the run
        result["error"] = f"{type(error).__name__}: {str(error)[:300]}"
    return result


def _bytes(torch, t):
    return ops_cases.flat_bytes(t)


def _permute(torch, ops, case: dict) -> None:
    shape, dims, dtype = case["shape"], case["dims"], case["dtype"]
    x = _random(torch, shape, dtype, case["x_offset"])
    expected = x.permute(dims).contiguous()
    out = None
    if case["out_offset"] is not None:
        k = case["out_offset"]
        buffer = torch.zeros(expected.numel() + k + 8, dtype=expected.dtype, device="cuda")
        out = buffer[k:k + expected.numel()].view(expected.shape)
    y = ops.transpose(x, out=out) if case["op"] == "transpose" else ops.permute(x, dims, out=out)
    torch.cuda.synchronize()
    assert y.shape == expected.shape and y.dtype == expected.dtype, "shape or dtype"
    assert torch.equal(_bytes(torch, y), _bytes(torch, expected)), "values"
    if out is not None:
        assert y is out, "not out"
        k = case["out_offset"]
        outside = torch.cat([buffer[:k].reshape(-1), buffer[k + expected.numel():].reshape(-1)])
        assert not _bytes(torch, outside).any(), "wrote outside out"


def _permute_view(torch, ops, case: dict) -> None:
    base = _random(torch, case["base"], case["dtype"], 0)
    x = base[tuple(slice(*i) for i in case["index"])].permute(*case["order"])
    expected = x.permute(case["dims"]).contiguous()
    if case["window"] is None:
        y = ops.permute(x, case["dims"])
        torch.cuda.synchronize()
        assert y.shape == expected.shape and torch.equal(_bytes(torch, y), _bytes(torch, expected)), "values"
        return
    _, buffer_shape = _view_shape(case)
    ours = torch.zeros(buffer_shape, dtype=expected.dtype, device="cuda")
    want = ours.clone()
    _window(want, case, expected.shape).copy_(expected)
    y = ops.permute(x, case["dims"], out=_window(ours, case, expected.shape))
    torch.cuda.synchronize()
    assert torch.equal(_bytes(torch, ours), _bytes(torch, want)), "values, or wrote outside the window"
    assert y.data_ptr() == _window(ours, case, expected.shape).data_ptr(), "not out"


_FP8 = {"e4m3": ("float8_e4m3fn", 448.0), "e5m2": ("float8_e5m2", 57344.0)}


def _cast(torch, ops, case: dict) -> None:
    shape, dtype = case["shape"], getattr(torch, case["dtype"])
    n_all = 1
    for s in shape:
        n_all *= s
    k = case["x_offset"]
    x = (torch.randn(n_all + k, device="cuda") * 300).to(dtype)[k:k + n_all].view(shape)
    fp8_name, top = _FP8[case["fp8"]]
    fp8 = getattr(torch, fp8_name)
    scale = torch.tensor([0.37], device="cuda") if case["scale"] == "tensor" else case["scale"]
    value = 0.37 if case["scale"] == "tensor" else case["scale"]
    expected = (x.float() * value).clamp(-top, top).to(fp8)
    n = shape[-1]
    m = n_all // n if n else 0
    buffers, outs = [], []
    for key, out_shape in (("out_offset", shape), ("out_t_offset", (n, m))):
        if case[key] is None:
            outs.append(None)
            buffers.append(None)
            continue
        off = case[key]
        buffer = torch.zeros(n_all + off + 8, dtype=torch.uint8, device="cuda")
        buffers.append((buffer, off))
        outs.append(buffer[off:off + n_all].view(fp8).view(out_shape))
    c, ct, amax = ops.cast_transpose(x, fp8, scale, out=outs[0], out_t=outs[1])
    torch.cuda.synchronize()
    assert torch.equal(_bytes(torch, c), _bytes(torch, expected)), "cast values"
    assert torch.equal(_bytes(torch, ct), _bytes(torch, expected.reshape(m, n).t())), "transposed values"
    want = float(x.float().abs().max()) if n_all else 0.0
    assert float(amax[0]) == want, f"amax {float(amax[0])} != {want}"
    for item in buffers:
        if item is not None:
            buffer, off = item
            assert not buffer[:off].any() and not buffer[off + n_all:].any(), "wrote outside out"


def run(seed: int, count: int, out: Path) -> None:
    import torch

    from harness.environment import environment
    from linear_layouts import ops

    start = time.time()
    env = environment(modules=("torch", "cupy", "numpy"), device=True)
    rows = []
    for case in cases(seed, count) + view_cases(seed, count // 4):
        rows.append(run_case(torch, ops, case))
        if not rows[-1]["ok"]:
            print(f"FAILED {rows[-1]}", flush=True)
    env["seconds"] = round(time.time() - start, 1)
    wrong = [r for r in rows if not r["ok"]]
    out.mkdir(parents=True, exist_ok=True)
    (out / f"ops_fuzz_{seed}.json").write_text(json.dumps(dict(environment=env, seed=seed, cases=rows), indent=1))
    by_op: dict[str, list[int]] = {}
    for r in rows:
        by_op.setdefault(r["op"], [0, 0])[0] += r["ok"]
        by_op[r["op"]][1] += 1
    lines = [f"# ops against PyTorch on seeded random calls (seed {seed})", "",
             f"{env.get('date', '')}, {env.get('gpu', '')}; torch {env.get('torch', '')}. {len(rows) - len(wrong)} of "
             f"{len(rows)} calls bit-exact ({', '.join(f'{op}: {a}/{b}' for op, (a, b) in sorted(by_op.items()))}); "
             f"{env['seconds']} s.", ""]
    lines += [f"- {json.dumps(r)}" for r in wrong] or ["No failures."]
    (out / f"ops_fuzz_{seed}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines), flush=True)


def main() -> None:
    cli.seeded_main(__doc__.splitlines()[0], prepare, run, cases=400, out="ops_fuzz_out")


if __name__ == "__main__":
    main()
