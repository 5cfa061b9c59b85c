"""Host time per call of the layout ops as PyTorch sees them (device): ``ops.transpose`` called directly, the
registered custom operator ``torch.ops.linear_layouts.transpose`` (``ops.register_torch_ops``) in eager mode and
inside ``torch.compile(fullgraph=True)``, and PyTorch's ``x.t().contiguous()``, on small tensors (launch-bound: the
host's cost is the call's cost), same process, interleaved rounds, the median kept; outputs checked bit for bit.

    PYTHONPATH=src:benchmarks python3 benchmarks/torch_ops_bench.py --out DIR      # device
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)

SHAPES = ((64, 64), (256, 512), (1024, 1024))
CALLS, ROUNDS = 200, 7


def measure(out: Path, compiled_too: bool = True) -> dict:
    import torch

    from harness.environment import environment
    from harness.ops_cases import bit_equal
    from linear_layouts import ops
    from ops_bench import _host_us

    lib = ops.register_torch_ops()
    rows = []
    for shape in SHAPES:
        x = torch.randn(shape, device="cuda")
        fns = {"ops.transpose": lambda: ops.transpose(x), "torch.ops (eager)": lambda: lib.transpose(x),
               "x.t().contiguous()": lambda: x.t().contiguous()}
        if compiled_too:  # a process that has used torch.compile
            compiled = torch.compile(lambda t: lib.transpose(t), fullgraph=True)
            eager_compiled = torch.compile(lambda t: t.t().contiguous(), fullgraph=True)
            fns.update({"torch.ops in torch.compile": lambda: compiled(x),
                        "x.t().contiguous() in torch.compile": lambda: eager_compiled(x)})
        want = x.t().contiguous()
        correct = {label: bit_equal(fn(), want) for label, fn in fns.items()}
        us = {label: round(v, 2) for label, v in _host_us(fns, CALLS, ROUNDS).items()}
        rows.append(dict(shape=list(shape), host_us=us, correct=correct))
        print(rows[-1], flush=True)
    result = dict(environment=environment(modules=("torch",), device=True), calls=CALLS, rounds=ROUNDS,
                  compiled_too=compiled_too, rows=rows)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"torch_ops{'' if compiled_too else '_no_compile'}.json").write_text(json.dumps(result, indent=1))
    return result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="/tmp/torch_ops")
    ap.add_argument("--no-compile", action="store_true", help="leave torch.compile out of the process")
    args = ap.parse_args(argv)
    measure(Path(args.out), not args.no_compile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
