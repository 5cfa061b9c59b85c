"""One row move of misaligned byte rows for Nsight Compute: the realigned chunk kernel (one chunk a thread, 8 warps)
and the tiled kernel, each launched 3 times and then once more inside an NVTX range (device only).

    ncu --launch-skip 3 --launch-count 1 -k regex:ll_rows --section SpeedOfLight --section Occupancy \\
        --section WarpStateStats python3 benchmarks/realign_rows_ncu_probe.py

(``benchmarks/results/realign_rows.md``: the chunk kernel on ``[431, 382, 240]`` uint8 at offsets 13 and 1 ran at
75% of the SMs' issue throughput and 27% of DRAM's.)
"""

from __future__ import annotations

import harness  # noqa: F401  (puts src/ on the path)

import realign_rows_bench as bench
from harness import ops_cases

SHAPE, DIMS, SRC_OFFSET, DST_OFFSET = (431, 382, 240), (1, 0, 2), 13, 1


def main() -> None:
    import torch

    from linear_layouts.ops import launch

    x = ops_cases.random_tensor(SHAPE, "uint8")
    n = x.numel()
    source = torch.empty(n + 64, dtype=torch.uint8, device="cuda")
    target = torch.empty(n + 64, dtype=torch.uint8, device="cuda")
    view = source[SRC_OFFSET:SRC_OFFSET + n]
    view.copy_(x.reshape(-1))
    out = target[DST_OFFSET:DST_OFFSET + n]
    contenders = bench.contenders(SHAPE, DIMS, 1, view.data_ptr(), out.data_ptr(), launch.grid_shape(0))
    for label in ("u1", "tiled"):
        run = ops_cases.runner(contenders[label])
        for _ in range(3):
            run()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_push(label)
        run()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()


if __name__ == "__main__":
    main()
