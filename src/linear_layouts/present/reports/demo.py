"""The ``linear-layouts demo`` text: the paper's Layout A, then the 16x32 transpose of docs/tutorial.md §4 end to end, in six
steps that each fit one screen (``width`` columns; wide views show their first columns and say so)."""

from __future__ import annotations

__all__ = ["layout_a_report", "demo_report", "DEMO_STEPS"]

DEMO_STEPS = ("Layout A of the paper: a layout is a matrix over F2",
              "The 16x32 transpose: who holds what before and after",
              "Three shared-memory layouts for it, and their cost",
              "The optimal swizzle, constructed (paper §5.4 / §9.2)",
              "The conversion plan",
              "The generated CUDA kernel")


def layout_a_report(width: int | None = None) -> str:
    """The paper's Layout A (§4.1, Fig. 1a): its bases, its F2 matrix in the paper's row order
    (``j`` = dim1 bits, then ``i`` = dim0 bits), the owner of every element (first columns only
    when ``width`` is too narrow for all 16), and ``A(r1, t9, w0)``."""
    from linear_layouts.present.viz.scenarios import layout_a
    from linear_layouts.present.viz.text import matrix_text, owner_table

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
        owner_table(a, max_width=width),
        "",
        f"A(r1, t9, w0) = (i, j) = ({out['dim0']}, {out['dim1']})",
    ])


def _heading(number: int, width: int | None) -> str:
    title = f"── Step {number} of {len(DEMO_STEPS)}: {DEMO_STEPS[number - 1]} "
    return "\n" + title + "─" * max(3, min(width or 100, 100) - len(title))


def demo_report(width: int | None = 100) -> str:
    """:func:`layout_a_report`, then the 16x32 one-warp transpose (docs/tutorial.md §4-6): both layouts, the three
    swizzles' wavefronts (16 + 256, 16 + 32, 16 + 16) and the optimal layout, the optimal-swizzle
    construction against the baselines, the planner's choice and the generated CUDA kernel's head — six
    steps (:data:`DEMO_STEPS`), every line at most ``width`` characters but the kernel's code
    (``None``: no fitting)."""
    from linear_layouts.analysis.banks import wavefronts
    from linear_layouts.analysis.swizzle import optimal_swizzle
    from linear_layouts.codegen.plan import conversion_kernel
    from linear_layouts.present.reports.conversion import plan_report
    from linear_layouts.present.reports.swizzle import swizzle_report
    from linear_layouts.present.viz.scenarios import seed_transpose
    from linear_layouts.present.viz.text import distributed_view, shared_view, table_text, wrap_text

    seed = seed_transpose()
    rows = []
    for name, shared in seed.shared:
        st = wavefronts(shared, seed.store, 32, op="store")
        ld = wavefronts(shared, seed.load, 32, op="load")
        rows.append([name, str(st), str(ld), f"{st} + {ld}"])
    optimal = optimal_swizzle(seed.store, seed.load, 32).layout
    kernel = conversion_kernel(seed.store, seed.load, 32, force_shared=True)
    code = kernel.source.splitlines()
    start = next(i for i, line in enumerate(code) if line.startswith(f"// {kernel.name}"))
    signature = next(i for i in range(start, len(code)) if code[i].startswith('extern "C"'))
    swizzle = swizzle_report(seed.store, seed.load, 32, width=width).splitlines()[1:-2]   # no title, no JSON
    return "\n".join([
        _heading(1, width).lstrip("\n"),
        layout_a_report(width),
        _heading(2, width),
        wrap_text("One warp moves a 16x32 fp32 tensor (m, n): it holds it in layout A (thread t's register r holds "
                  "(r, t)) and needs it in layout B (thread t's register r holds (t mod 16, 2r + t/16)). Each "
                  "element is shown as T<thread>:<register>.", width),
        f"Store layout A ({seed.store_name}):",
        distributed_view(seed.store, max_width=width).rstrip("\n"),
        f"Load layout B ({seed.load_name}):",
        distributed_view(seed.load, max_width=width).rstrip("\n"),
        _heading(3, width),
        wrap_text("Through shared memory: store in A, load in B. The cost is in wavefronts (one per 128-byte "
                  "bank access; docs/tutorial.md §4 derives 16+256, 16+32, 16+16):", width),
        table_text(rows, ["shared layout", "store", "load", "full pass"]),
        "",
        "The best, offset by offset (the (m:n) element each offset of shared memory holds):",
        shared_view(optimal, max_width=width).rstrip("\n"),
        f"It is offset = 32·m + (n ⊕ 2m): {optimal == seed.shared[2][1]}",
        _heading(4, width),
        "\n".join(swizzle),
        _heading(5, width),
        wrap_text("The planner's choice for this pair (one warp: warp shuffles could do it too; the cost model "
                  "weighs them against shared memory with the optimal swizzle, and shared memory wins):", width),
        plan_report(seed.store, seed.load, 32, width=width),
        _heading(6, width),
        wrap_text(f"Kernel {kernel.name}: {kernel.threads} threads, {kernel.shared_bytes} bytes of shared memory. "
                  "Its head, then the body's first lines:", width),
        "\n".join(code[start:signature + 2]),
        "  ...",
        wrap_text(f"({len(code) - signature - 2} more lines: `linear-layouts convert A B --dtype fp32 --emit cuda` "
                  "prints it all, `--run` compiles, runs and checks it on a GPU.)", width),
    ])
