"""Does what the bytes hold change a memory-bound kernel's time? (device)

The GPU suite times its 8192^2 transposes on ``torch.randint(-100, 100)`` int8 data, the ops sweep on random
bits; the same copy of the same size took 6% longer in the first (``gpu_transposes_together.md``: 33.3 µs, against
31.4 µs in ``ops_bench.md``). This script times, in one process and together (``ops_bench._time_together``), a
``copy_`` and ``ops.transpose`` of the same buffers holding each of ``PATTERNS``, at 64 MiB (8192^2 bytes) and
1 GiB, so that the data is the only difference.

    PYTHONPATH=src:benchmarks python3 benchmarks/data_pattern_bench.py --out DIR     # device
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)

#: name -> how the uint8 buffer is filled.
PATTERNS = ("zeros", "randint(-100, 100)", "random bits", "0x55")


def fill(x, pattern: str) -> None:
    import torch

    if pattern == "zeros":
        x.zero_()
    elif pattern == "randint(-100, 100)":
        x.copy_(torch.randint(-100, 100, x.shape, dtype=torch.int8, device=x.device).view(torch.uint8))
    elif pattern == "random bits":
        x.copy_(torch.randint(0, 256, x.shape, dtype=torch.uint8, device=x.device))
    else:
        x.fill_(0x55)


def measure(out: Path) -> dict:
    import torch

    from ops_bench import _time_together
    from linear_layouts import ops

    rows = []
    for n, label in ((8192, "64 MiB"), (32768, "1 GiB")):
        x = torch.empty((n, n), dtype=torch.uint8, device="cuda")
        y, t = torch.empty_like(x), torch.empty_like(x)
        fns = {}
        for pattern in PATTERNS:
            src = torch.empty_like(x)
            fill(src, pattern)
            fns[f"copy {pattern}"] = lambda src=src: y.copy_(src)
            if n == 8192:
                fns[f"ops.transpose {pattern}"] = lambda src=src: ops.transpose(src, out=t)
        us = _time_together(fns)
        for name, value in us.items():
            rows.append(dict(size=label, contender=name, us=value, tb_per_s=2 * n * n / (value * 1e-6) / 1e12))
            print(label, name, round(value, 2), flush=True)
        torch.cuda.empty_cache()
    result = dict(device=torch.cuda.get_device_name(0), torch=torch.__version__, rows=rows)
    out.mkdir(parents=True, exist_ok=True)
    (out / "data_pattern.json").write_text(json.dumps(result, indent=1))
    return result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="/tmp/data_pattern")
    args = ap.parse_args(argv)
    measure(Path(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
