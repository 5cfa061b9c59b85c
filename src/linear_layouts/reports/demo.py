"""The ``linear-layouts demo`` text: the paper's Layout A, then the seed transpose end to end."""

from __future__ import annotations

__all__ = ["layout_a_report", "demo_report"]


def layout_a_report() -> str:
    """The paper's Layout A (§4.1, Fig. 1a): its bases, its F2 matrix in the paper's row order
    (``j`` = dim1 bits, then ``i`` = dim0 bits), the owner of every element, and ``A(r1, t9, w0)``."""
    from linear_layouts.viz.scenarios import layout_a
    from linear_layouts.viz.text import matrix_text, owner_table

    a = layout_a()
    paper_order = a.transpose_outs(["dim1", "dim0"])
    out = a.apply({"register": 1, "lane": 9, "warp": 0})
    return "\n".join([
        "Layout A of the paper (§4.1, Fig. 1a): 16x16 tensor, 2x2 registers, 4x8 threads, 2x1 warps",
        a.to_string().lstrip("\n"),
        "",
        "As a matrix over F2 (rows: j = dim1 bits then i = dim0 bits, least significant first;",
        "columns: register bits r, thread bits t, warp bit w):",
        matrix_text(paper_order, [f"j{k}" for k in range(4)] + [f"i{k}" for k in range(4)]),
        "",
        "Owner of each element (warp w, thread t, register r):",
        owner_table(a),
        "",
        f"A(r1, t9, w0) = (i, j) = ({out['dim0']}, {out['dim1']})",
    ])


def demo_report() -> str:
    """:func:`layout_a_report`, then the seed transpose (seeds 003/004): both layouts, the three
    swizzles' wavefronts (16 + 256, 16 + 32, 16 + 16), the optimal-swizzle report, the planner's
    choice and the generated CUDA kernel."""
    from linear_layouts.analysis.banks import wavefronts
    from linear_layouts.analysis.swizzle import optimal_swizzle
    from linear_layouts.codegen.plan import conversion_kernel
    from linear_layouts.reports.conversion import plan_report
    from linear_layouts.reports.swizzle import swizzle_report
    from linear_layouts.viz.scenarios import seed_transpose
    from linear_layouts.viz.text import distributed_view, shared_view, table_text

    seed = seed_transpose()
    rows = []
    for name, shared in seed.shared:
        st = wavefronts(shared, seed.store, 32, op="store")
        ld = wavefronts(shared, seed.load, 32, op="load")
        rows.append([name, str(st), str(ld), f"{st} + {ld}"])
    optimal = optimal_swizzle(seed.store, seed.load, 32).layout
    kernel = conversion_kernel(seed.store, seed.load, 32, force_shared=True)
    return "\n".join([
        layout_a_report(),
        "",
        "=" * 100,
        "The seed transpose (seeds 003/004): one warp moves a 16x32 fp32 tensor through shared memory.",
        "",
        f"Store layout A ({seed.store_name}): who holds each element, T<thread>:<register>",
        distributed_view(seed.store),
        f"Load layout B ({seed.load_name}):",
        distributed_view(seed.load),
        "Three swizzles, wavefronts for the full pass (seed 004 expects 16+256, 16+32, 16+16):",
        table_text(rows, ["shared layout", "store", "load", "full pass"]),
        "",
        swizzle_report(seed.store, seed.load, 32),
        "",
        "The optimal layout, offset by offset (Triton's shared view: the (m:n) stored at each offset):",
        shared_view(optimal),
        f"It is 32·m + (n ⊕ 2m): {optimal == seed.shared[2][1]}",
        "",
        "The planner's choice for this pair (one warp: warp shuffles could do it too; the cost model",
        "weighs them against shared memory with the optimal swizzle, and shared memory wins):",
        plan_report(seed.store, seed.load, 32),
        "",
        f"Generated kernel {kernel.name} ({kernel.threads} threads, {kernel.shared_bytes} bytes of shared memory):",
        kernel.source,
    ])
