"""The ``linear-layouts`` command.

argparse (standard library) keeps the core's only dependency NumPy; each subcommand is a small
function taking the parsed arguments and returning an exit code.
"""

from __future__ import annotations

import argparse
import sys
from typing import Callable, Sequence

from linear_layouts.layout import LinearLayout

# The paper's Layout A (§4.1, Fig. 1a): 16x16 tensor, 2x2 registers, 4x8 threads, 2x1 warps.
LAYOUT_A = LinearLayout(
    {
        "register": [[0, 1], [1, 0]],
        "lane": [[0, 2], [0, 4], [0, 8], [2, 0], [4, 0]],
        "warp": [[8, 0]],
    },
    ["dim0", "dim1"],
)


def _matrix_text(layout: LinearLayout, row_labels: Sequence[str]) -> str:
    """The F2 matrix with one labeled row per out bit and a header naming the in bits."""
    cols = [f"{n[0]}{i}" for n, k in layout.in_dims.items() for i in range(k.bit_length() - 1)]
    m = layout.to_matrix()
    lines = ["      " + " ".join(f"{c:>3}" for c in cols)]
    for label, row in zip(row_labels, m):
        lines.append(f"{label:>5} " + " ".join(f"{int(v):>3}" for v in row))
    return "\n".join(lines)


def _owner_table(layout: LinearLayout) -> str:
    """For each element (i, j) of a 2-D distributed layout: 'w.t.r' of the (first) owner."""
    n_rows, n_cols = layout.out_dims["dim0"], layout.out_dims["dim1"]
    owner: dict[tuple[int, int], str] = {}
    sizes = layout.in_dims
    for w in range(sizes.get("warp", 1)):
        for t in range(sizes.get("lane", 1)):
            for r in range(sizes.get("register", 1)):
                out = layout.apply({"register": r, "lane": t, "warp": w})
                owner.setdefault((out["dim0"], out["dim1"]), f"w{w}t{t}r{r}")
    width = max(len(v) for v in owner.values())
    head = "      " + " ".join(f"{j:>{width}}" for j in range(n_cols))
    rows = [head] + [f"{i:>4}  " + " ".join(f"{owner[(i, j)]:>{width}}" for j in range(n_cols)) for i in range(n_rows)]
    return "\n".join(rows)


def cmd_demo(args: argparse.Namespace) -> int:
    """The paper's Layout A: its matrix, who owns each element, and the (r1, t9, w0) example."""
    A = LAYOUT_A
    print("Layout A of the paper (§4.1, Fig. 1a): 16x16 tensor, 2x2 registers, 4x8 threads, 2x1 warps")
    print(A.to_string().lstrip("\n"))
    print()
    print("As a matrix over F2 (rows: j = dim1 bits then i = dim0 bits, least significant first;")
    print("columns: register bits r, thread bits l, warp bit w):")
    paper_order = A.transpose_outs(["dim1", "dim0"])
    print(_matrix_text(paper_order, [f"j{k}" for k in range(4)] + [f"i{k}" for k in range(4)]))
    print()
    print("Owner of each element (warp w, thread t, register r):")
    print(_owner_table(A))
    print()
    out = A.apply({"register": 1, "lane": 9, "warp": 0})
    print(f"A(r1, t9, w0) = (i, j) = ({out['dim0']}, {out['dim1']})")
    return 0


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, Callable[[argparse.Namespace], int]]]:
    parser = argparse.ArgumentParser(
        prog="linear-layouts",
        description="Tensor layouts as linear maps over F2: see them, cost them, convert between them.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    handlers: dict[str, Callable[[argparse.Namespace], int]] = {}
    sub.add_parser("demo", help="the paper's Layout A: matrix, owners, and the (r1, t9, w0) example")
    handlers["demo"] = cmd_demo
    return parser, handlers


def main(argv: Sequence[str] | None = None) -> int:
    parser, handlers = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    return handlers[args.command](args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
