"""The ``linear-layouts demo`` text: the paper's Layout A, then the 16x32 transpose of docs/tutorial.md §4 end to end, in six
steps that each fit one screen (``width`` columns; wide views show their first columns and say so)."""

from __future__ import annotations

__all__ = ["layout_a_report", "demo_report", "DEMO_STEPS", "demo_commands"]

DEMO_STEPS = ("Layout A of the paper: a layout is a matrix over F2",
              "The 16x32 transpose: who holds what before and after",
              "Three shared-memory layouts for it, and their cost",
              "The optimal swizzle, constructed (paper §5.4 / §9.2)",
              "The conversion plan",
              "The generated CUDA kernel")


#: Layout A of the paper as the Gluon class that builds it (docs/tutorial.md §2)
LAYOUT_A = "BlockedLayout([2,2],[4,8],[2,1],[1,0])"
#: the transpose's two layouts (docs/tutorial.md §4) on its 16x32 tensor, as Gluon classes
TRANSPOSE_STORE = "BlockedLayout([16,1],[1,32],[1,1],[1,0])"
TRANSPOSE_LOAD = "BlockedLayout([1,1],[16,2],[1,1],[0,1])"


def layout_a_report(width: int | None = None) -> str:
    """The paper's Layout A (§4.1, Fig. 1a): its bases, its F2 matrix (rows ``i`` = dim0 bits, then
    ``j`` = dim1 bits, as ``linear-layouts matrix`` prints them), the owner of every element (first
    columns only when ``width`` is too narrow for all 16), and ``A(r1, t9, w0)``."""
    from linear_layouts.present.viz.scenarios import layout_a
    from linear_layouts.present.viz.text import matrix_text, owner_table, wrap_text

    a = layout_a()
    out = a.apply({"register": 1, "lane": 9, "warp": 0})
    return "\n".join([
        wrap_text(f"Layout A of the paper (§4.1, Fig. 1a; Gluon: {LAYOUT_A}): a 16x16 tensor (i, j), 2x2 "
                  "registers per thread, 4x8 threads per warp, 2x1 warps. Each input bit maps to one tensor "
                  "coordinate:", width),
        a.to_string().lstrip("\n"),
        "",
        wrap_text("As a matrix over F2 (rows: i = dim0 bits then j = dim1 bits, least significant first, as the "
                  "matrix command prints them; columns: register bits r, thread bits t, warp bit w):", width),
        matrix_text(a, [f"i{k}" for k in range(4)] + [f"j{k}" for k in range(4)]),
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
    from linear_layouts.analysis.conversion import plan_conversion
    from linear_layouts.present.viz.text import distributed_view, shared_view, table_text, wrap_code, wrap_text

    seed = seed_transpose()
    rows = []
    for name, shared in seed.shared:
        st = wavefronts(shared, seed.store, 32, op="store")
        ld = wavefronts(shared, seed.load, 32, op="load")
        rows.append([name, str(st), str(ld), f"{st} + {ld}"])
    optimal = optimal_swizzle(seed.store, seed.load, 32).layout
    kernel = conversion_kernel(seed.store, seed.load, 32)
    code = kernel.source.splitlines()
    start = next(i for i, line in enumerate(code) if line.startswith(f"// {kernel.name}"))
    signature = next(i for i in range(start, len(code)) if code[i].startswith('extern "C"'))
    swizzle = swizzle_report(seed.store, seed.load, 32, width=width, title=False)
    plan_bytes = plan_conversion(seed.store, seed.load, 32).shared_layout.in_dim_size("offset") * 32 // 8

    def command(text: str) -> str:
        return wrap_code("    linear-layouts " + text, width, "shell")
    return "\n".join([
        _heading(1, width).lstrip("\n"),
        layout_a_report(width),
        _heading(2, width),
        wrap_text("One warp moves a 16x32 fp32 tensor (m, n): it holds it in layout A (thread t's register r holds "
                  "(r, t)) and needs it in layout B (thread t's register r holds (t mod 16, 2r + t/16)). Each "
                  "element is shown as T<thread>:<register>.", width),
        wrap_text(f"Store layout A ({seed.store_name}; Gluon: {TRANSPOSE_STORE}):", width),
        distributed_view(seed.store, max_width=width).rstrip("\n"),
        wrap_text(f"Load layout B ({seed.load_name}; Gluon: {TRANSPOSE_LOAD}):", width),
        distributed_view(seed.load, max_width=width).rstrip("\n"),
        _heading(3, width),
        wrap_text("Through shared memory: store in A, load in B. The cost is in wavefronts (one per 128-byte "
                  "bank access; docs/tutorial.md §4 derives 16+256, 16+32, 16+16):", width),
        table_text(rows, ["shared layout", "store", "load", "full pass"]),
        "",
        wrap_text("The best, offset by offset (the (m:n) element each offset of shared memory holds):", width),
        shared_view(optimal, max_width=width).rstrip("\n"),
        f"It is offset = 32·m + (n ⊕ 2m): {optimal == seed.shared[2][1]}",
        _heading(4, width),
        wrap_text("How that layout is found, for any pair of layouts. Words used: a direction is one bit of the "
                  "tensor index (m_i: bit i of the row m, n_i: bit i of the column n); A_Reg / A_Thr are the "
                  "directions layout A moves through a thread's registers / across the lanes (B_Reg, B_Thr the "
                  "same for B). The construction picks which directions become the low offset bits (the bank "
                  "bits, within one 128-byte row) and which pick the row (the segment bits, M_Seg):", width),
        swizzle,
        _heading(5, width),
        wrap_text("The planner's choice for this pair (one warp: warp shuffles could do it too; the cost model "
                  "weighs them against shared memory with the optimal swizzle, and shared memory wins):", width),
        plan_report(seed.store, seed.load, 32, width=width),
        _heading(6, width),
        wrap_text(f"Kernel {kernel.name}: {kernel.threads} threads, {kernel.shared_bytes} bytes of shared memory: "
                  f"the plan's {plan_bytes} for A -> B, and a second {kernel.shared_bytes - plan_bytes}-byte buffer "
                  "for the way back B -> A, which its `iterations` benchmark knob runs (two buffers: no barrier "
                  "between one round's load and the next round's store). Its head, then the body's first lines:",
                  width),
        wrap_code("\n".join(code[start:signature + 2]), width, "c"),
        "  ...",
        wrap_text(f"({len(code) - signature - 2} more lines.) Go on with these commands; each runs as printed. "
                  "The whole kernel (--run also compiles, runs and checks it on a GPU with CuPy):", width),
        command(f"convert '{TRANSPOSE_STORE}' '{TRANSPOSE_LOAD}' --shape 16,32 --dtype fp32 --emit cuda"),
        wrap_text("  Step 4 in full: every shared layout a Gluon kernel can use, ranked, and the one recommended:",
                  width),
        command(f"swizzle '{TRANSPOSE_STORE}' '{TRANSPOSE_LOAD}' --shape 16,32 --dtype fp32"),
        "  Layout A's F2 matrix:",
        command(f"matrix '{LAYOUT_A}' --shape 16,16"),
        "  All of this in a browser (http://127.0.0.1:8000/): linear-layouts explore",
    ])


def demo_commands(text: str) -> list[str]:
    r"""Every ``linear-layouts ...`` command a demo text prints (from ``linear-layouts`` to the end of its
    line; a line ending in ``\`` continues on the next), as one shell line each.

    >>> demo_commands("\n".join(["Try: linear-layouts show X \\", "    --shape 4"]))
    ['linear-layouts show X --shape 4']
    """
    out, lines = [], text.splitlines()
    for k, line in enumerate(lines):
        if "linear-layouts " in line and "`linear-layouts" not in line:
            command, j = line[line.index("linear-layouts "):].strip(), k
            while command.endswith("\\") and j + 1 < len(lines):
                j += 1
                command = command[:-1].rstrip() + " " + lines[j].strip()
            out.append(command)
    return out
