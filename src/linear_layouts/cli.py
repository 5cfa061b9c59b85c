"""The ``linear-layouts`` command.

argparse (standard library) keeps the core's only dependency NumPy; each subcommand is a small
function taking the parsed arguments and returning an exit code. Layout arguments are specs
(:mod:`linear_layouts.spec`): Gluon constructor calls such as ``BlockedLayout([1,4],[4,8],[4,1],[1,0])``,
or bases as JSON; ``@FILE`` reads the spec from a file. Bad input prints ``linear-layouts: error: ...``
and exits with status 2.

    show LAYOUT --shape 16,32 [--format text|svg|png|html|json]   who holds / where lives each element
    matrix LAYOUT [--shape ...]                                    the F2 matrix
    banks SHARED DIST --dtype fp16                                 wavefronts of one access, step by step
    swizzle STORE LOAD --dtype fp16                                optimal swizzle vs the baselines
    convert SRC DST --dtype fp16 [--emit cuda] [--run]             the conversion plan (and kernel)
    demo                                                           the seed transpose, end to end
    explore [--port N | --output FILE]                             the explorer page on 127.0.0.1
"""

from __future__ import annotations

import argparse
import sys
from typing import Callable, Sequence

from linear_layouts.errors import LayoutError
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


def _demo_layout_a() -> int:
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


# --------------------------------------------------------------------------------------------------
# Shared helpers of the subcommands


def _shape(text: str | None) -> list[int] | None:
    """``"16,32"`` / ``"16x32"`` / ``"[16, 32]"`` -> ``[16, 32]``."""
    if text is None:
        return None
    cleaned = text.strip().strip("[]()").replace("x", ",").replace("×", ",")
    try:
        shape = [int(part) for part in cleaned.split(",") if part.strip()]
    except ValueError:
        raise LayoutError(f"--shape: expected sizes like 16,32, got {text!r}") from None
    if not shape or any(s <= 0 or s & (s - 1) for s in shape):
        raise LayoutError(f"--shape: every size must be a power of two, got {text!r}")
    return shape


def _spec_text(text: str) -> str:
    if text.startswith("@"):
        try:
            with open(text[1:], encoding="utf-8") as handle:
                return handle.read()
        except OSError as error:
            raise LayoutError(f"spec file {text[1:]!r}: {error.strerror}") from None
    return text


def _layout(text: str, shape: list[int] | None, what: str = "LAYOUT") -> LinearLayout:
    from linear_layouts.spec import parse_spec

    try:
        return parse_spec(_spec_text(text)).to_linear(shape)
    except LayoutError as error:
        raise LayoutError(f"{what}: {error}") from None


def _bitwidth(dtype: str | None, default: int | None = None) -> int:
    from linear_layouts.analysis.dtypes import bitwidth

    if dtype is None:
        if default is None:
            raise LayoutError("--dtype: required (e.g. fp16, fp32, i8)")
        return default
    return bitwidth(int(dtype) if dtype.isdigit() else dtype)


def _spec_bitwidth(text: str) -> int | None:
    """The element width a shared spec names itself (``NVMMASharedLayout(element_bitwidth=16)``)."""
    from linear_layouts.spec import parse_spec

    value = parse_spec(_spec_text(text)).value
    width = getattr(value, "element_bitwidth", None)
    return width if isinstance(width, int) else None


def _write(args: argparse.Namespace, content: str | bytes) -> None:
    output = getattr(args, "output", None)
    if output:
        mode = "wb" if isinstance(content, bytes) else "w"
        with open(output, mode, **({} if isinstance(content, bytes) else {"encoding": "utf-8"})) as handle:
            handle.write(content)
        print(f"wrote {output}", file=sys.stderr)
    elif isinstance(content, bytes):
        if sys.stdout.isatty():
            raise LayoutError("--format png: binary output; use -o FILE.png (or redirect stdout)")
        sys.stdout.buffer.write(content)
    else:
        sys.stdout.write(content if content.endswith("\n") else content + "\n")


def _table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(x)) for x in column) for column in zip(header, *rows)]
    line = lambda cells: "  ".join(str(c).rjust(w) if i else str(c).ljust(w)  # noqa: E731
                                   for i, (c, w) in enumerate(zip(cells, widths)))
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])


# --------------------------------------------------------------------------------------------------
# show / matrix


def cmd_show(args: argparse.Namespace) -> int:
    """Picture one layout: Triton's text view, SVG, PNG, HTML, or its bases as JSON."""
    import json

    from linear_layouts.viz.text import is_shared_layout, layout_view

    layout = _layout(args.layout, _shape(args.shape))
    shared = is_shared_layout(layout)
    width = _bitwidth(args.dtype, _spec_bitwidth(args.layout) or 32) if shared else 32
    title = args.title or args.layout.strip()
    if args.format == "text":
        _write(args, layout_view(layout, args.hw))
    elif args.format == "json":
        _write(args, json.dumps({"bases": layout.bases, "out_dims": layout.out_dims}))
    elif args.format == "svg":
        from linear_layouts.viz.svg import distributed_svg, shared_svg

        _write(args, shared_svg(layout, width, view=args.view, title=title) if shared
               else distributed_svg(layout, title=title))
    elif args.format == "png":
        from linear_layouts.viz.png import distributed_png, shared_png

        _write(args, shared_png(layout, width, title=title) if shared else distributed_png(layout, title=title))
    else:
        from linear_layouts.viz.page import layout_html

        _write(args, layout_html(layout, title=title, element_bitwidth=width))
    return 0


def cmd_matrix(args: argparse.Namespace) -> int:
    """The layout's F2 matrix (rows: output bits, columns: input bits, least significant first)."""
    from linear_layouts.viz.text import matrix_text

    layout = _layout(args.layout, _shape(args.shape))
    if args.format == "svg":
        from linear_layouts.viz.svg import matrix_svg

        _write(args, matrix_svg(layout, title=args.layout.strip()))
    else:
        _write(args, matrix_text(layout))
    return 0


# --------------------------------------------------------------------------------------------------
# banks / swizzle


def _access_summary(shared: LinearLayout, dist: LinearLayout, bits: int, op: str) -> list[str]:
    from linear_layouts.analysis.bank_simulator import simulate_wavefronts
    from linear_layouts.analysis.banks import bank_conflicts, shared_access, wavefronts, wavefronts_per_phase

    access = shared_access(shared, dist, bits)
    total = wavefronts(shared, dist, bits, op=op)
    simulated = simulate_wavefronts(shared, dist, bits, op=op)
    return [
        f"{op}: {total} wavefronts "
        f"({access.instructions} instructions × {access.phases_of(op)} phase{'s' if access.phases_of(op) > 1 else ''} × "
        f"{wavefronts_per_phase(access, op=op)} per phase); brute-force simulation: {simulated}",
        f"  vector: {access.vector_elements} element{'s' if access.vector_elements > 1 else ''} = "
        f"{access.vector_bits} bits per lane; bank conflicts (Triton's measure): "
        f"{bank_conflicts(shared, dist, bits)}",
    ]


def cmd_banks(args: argparse.Namespace) -> int:
    """Wavefronts of DIST storing to / loading from SHARED, with the per-step bank hits."""
    shape = _shape(args.shape)
    dist = _layout(args.dist, shape, "DIST")
    shared = _layout(args.shared, shape or list(dist.out_dims.values()), "SHARED")
    bits = _bitwidth(args.dtype, _spec_bitwidth(args.shared))
    from linear_layouts.viz.bank_steps import bank_steps

    steps = bank_steps(shared, dist, bits, op=args.op)
    if args.format == "svg":
        from linear_layouts.viz.svg import bank_hits_svg

        _write(args, bank_hits_svg(steps, title=f"{args.op}: bank hits per step ({bits}-bit)"))
        return 0
    lines = _access_summary(shared, dist, bits, args.op)
    lines.append("")
    lines.append("per step: wavefronts, then lanes on each bank 0..31 ('.' = none, '*' = the bank serves several words)")
    for step in steps[: args.steps]:
        cells = "".join(". " if n == 0 else (str(n) if n < 10 else "+") + ("*" if w > 1 else " ")
                        for n, w in zip(step.lanes_per_bank, step.words_per_bank))
        lines.append(f"  {step.label:<28} {step.wavefronts:>3}  {cells}".rstrip())
    if len(steps) > args.steps:
        lines.append(f"  ... {len(steps) - args.steps} more steps (--steps N shows more)")
    _write(args, "\n".join(lines))
    return 0


def swizzle_report(store: LinearLayout, load: LinearLayout, bits: int) -> str:
    """The optimal-swizzle construction and a wavefront table against the baselines (text)."""
    import json

    from linear_layouts.analysis.banks import shared_access, wavefronts
    from linear_layouts.analysis.swizzle import optimal_swizzle, padded_baseline
    from linear_layouts.viz.algorithm import steps_text
    from linear_layouts.viz.scenarios import row_major_shared

    result = optimal_swizzle(store, load, bits)
    lines = ["Optimal swizzle (paper §5.4 / §9.2), step by step:", steps_text(result, store, load), ""]
    rows = []
    plain = row_major_shared(list(store.out_dims.values()))
    candidates = [("unswizzled (row-major)", plain, None)]
    try:
        candidates.append(("padded (legacy)", None, padded_baseline(store, load, bits)))
    except LayoutError:
        pass
    candidates.append(("optimal (this algorithm)", result.layout, None))
    for name, layout, baseline in candidates:
        if baseline is not None:
            st, ld = baseline.store_wavefronts, baseline.load_wavefronts
            sv, lv, size = baseline.store_vector_bits, baseline.load_vector_bits, baseline.shared_bytes
        else:
            st, ld = wavefronts(layout, store, bits, op="store"), wavefronts(layout, load, bits, op="load")
            sv, lv = shared_access(layout, store, bits).vector_bits, shared_access(layout, load, bits).vector_bits
            size = layout.in_dim_size("offset") * bits // 8
        rows.append([name, str(st), str(ld), str(st + ld), str(sv), str(lv), str(size)])
    lines.append(_table(rows, ["shared layout", "store", "load", "total", "st bits", "ld bits", "bytes"]))
    lines.append("")
    lines.append(f"Lemma 9.5 bound on conflict-free segment bits: {result.lemma_9_5_bound} "
                 f"(needed: {result.segment_bits})")
    lines.append("Optimal layout (paste into `linear-layouts show`):")
    lines.append(json.dumps({"bases": result.layout.bases, "out_dims": result.layout.out_dims}))
    return "\n".join(lines)


def cmd_swizzle(args: argparse.Namespace) -> int:
    """The optimal shared layout for STORE then LOAD, with its wavefronts against the baselines."""
    shape = _shape(args.shape)
    store = _layout(args.store, shape, "STORE")
    load = _layout(args.load, shape or list(store.out_dims.values()), "LOAD")
    _write(args, swizzle_report(store, load, _bitwidth(args.dtype)))
    return 0


# --------------------------------------------------------------------------------------------------
# convert


def plan_report(src: LinearLayout, dst: LinearLayout, bits: int, *, force_shared: bool = False) -> str:
    """The conversion plan ``src -> dst`` explained step by step (text); ``force_shared`` skips the
    in-warp strategies (register renaming, warp shuffles)."""
    import json

    from linear_layouts.codegen.plan import conversion_step

    step = conversion_step(src, dst, bits, force_shared=force_shared)
    kind = type(step).__name__
    lines = [f"Conversion of a {list(src.out_dims.values())} tensor of {bits}-bit elements:"]
    if kind == "RegisterCopy":
        lines.append("1. Every thread already holds the elements it needs: no data moves between threads.")
        moved = [f"b[{r}] = a[{s}]" for r, s in enumerate(step.source)]
        same = all(r == s for r, s in enumerate(step.source))
        lines.append("2. " + ("Nothing to do (the layouts agree)." if same else
                              "Registers are renamed: " + ", ".join(moved[:16]) + (" ..." if len(moved) > 16 else "")))
    elif kind == "ShuffleConversion":
        plan = step.plan
        lines.append("1. Every warp already holds the data it needs: exchange it with warp shuffles (§5.4).")
        lines.append(f"2. {len(plan.rounds)} round{'s' if len(plan.rounds) != 1 else ''} of shfl.sync.idx, "
                     f"{plan.words_per_shuffle} 32-bit word(s) per shuffle.")
        lines.append("3. Every thread keeps what it receives in its destination registers.")
    else:
        from linear_layouts.analysis.banks import wavefronts

        lines.append("1. Go through shared memory, laid out by the optimal swizzle (§5.4) so both accesses avoid conflicts.")
        lines.append(f"   shared layout (offset -> tensor): {json.dumps(step.shared.bases['offset'])}")
        lines.append(f"2. store from the source layout: {step.store.description}; "
                     f"{wavefronts(step.shared, src, bits, op='store', skip_duplicates=True)} wavefronts")
        lines.append("3. __syncthreads()")
        lines.append(f"4. load into the destination layout: {step.load.description}; "
                     f"{wavefronts(step.shared, dst, bits, op='load')} wavefronts")
        lines.append(f"   shared memory: {step.shared_bytes} bytes")
    counts = step.instruction_counts()
    if counts:
        lines.append("Instructions per thread: " + ", ".join(f"{k} × {v}" for k, v in sorted(counts.items())))
    if not force_shared:
        from linear_layouts.analysis.conversion import plan_conversion

        plan = plan_conversion(src, dst, bits)
        others = "".join(f"; {kind}: {cost:g}" for kind, cost in plan.alternatives)
        lines.append(f"Model cost per warp (analysis.conversion): {plan.kind}: {plan.cost:g}{others}")
    return "\n".join(lines)


def cmd_convert(args: argparse.Namespace) -> int:
    """Plan the conversion SRC -> DST; --emit cuda prints the kernel; --run verifies it on a GPU."""
    shape = _shape(args.shape)
    src = _layout(args.src, shape, "SRC")
    dst = _layout(args.dst, shape or list(src.out_dims.values()), "DST")
    if dict(src.out_dims) != dict(dst.out_dims):
        raise LayoutError(f"DST: tensor {dict(dst.out_dims)} differs from SRC's {dict(src.out_dims)}")
    bits = _bitwidth(args.dtype)
    out = [plan_report(src, dst, bits)]
    if args.emit == "cuda":
        from linear_layouts.codegen.plan import conversion_kernel

        kernel = conversion_kernel(src, dst, bits)
        out += ["", f"// kernel {kernel.name}: {kernel.threads} threads, {kernel.shared_bytes} bytes of shared "
                    f"memory per {kernel.tile_elements}-element tile", kernel.source]
    _write(args, "\n".join(out))
    if args.run:
        from linear_layouts.codegen.runtime import verify_conversion

        try:
            result = verify_conversion(src, dst, bits, list(src.out_dims.values()))
        except (ImportError, RuntimeError, OSError) as error:
            print(f"linear-layouts: --run needs an NVIDIA GPU with CuPy: {error}", file=sys.stderr)
            return 3
        verdict = "ok" if result.ok else "WRONG"
        print(f"ran {result.kernel} on the GPU: {result.checked} elements checked, {result.wrong} wrong: {verdict}")
        return 0 if result.ok else 1
    return 0


# --------------------------------------------------------------------------------------------------
# demo / explore


def cmd_demo(args: argparse.Namespace) -> int:
    """Layout A of the paper, then the seed transpose end to end."""
    _demo_layout_a()
    print()
    print("=" * 100)
    from linear_layouts.analysis.banks import wavefronts
    from linear_layouts.codegen.plan import conversion_kernel
    from linear_layouts.viz.scenarios import seed_transpose
    from linear_layouts.viz.text import distributed_view, shared_view

    seed = seed_transpose()
    print("The seed transpose (seeds 003/004): one warp moves a 16x32 fp32 tensor through shared memory.")
    print()
    print(f"Store layout A ({seed.store_name}): who holds each element, T<thread>:<register>")
    print(distributed_view(seed.store))
    print(f"Load layout B ({seed.load_name}):")
    print(distributed_view(seed.load))
    rows = []
    for name, shared in seed.shared:
        st = wavefronts(shared, seed.store, 32, op="store")
        ld = wavefronts(shared, seed.load, 32, op="load")
        rows.append([name, str(st), str(ld), f"{st} + {ld}"])
    print("Three swizzles, wavefronts for the full pass (seed 004 expects 16+256, 16+32, 16+16):")
    print(_table(rows, ["shared layout", "store", "load", "full pass"]))
    print()
    print(swizzle_report(seed.store, seed.load, 32))
    print()
    from linear_layouts.analysis.swizzle import optimal_swizzle

    optimal = optimal_swizzle(seed.store, seed.load, 32).layout
    print("The optimal layout, offset by offset (Triton's shared view: the (m:n) stored at each offset):")
    print(shared_view(optimal))
    print("It is 32·m + (n ⊕ 2m):", optimal == seed.shared[2][1])
    print()
    print("The planner's choice for this pair (one warp: warp shuffles could do it too; the cost model")
    print("weighs them against shared memory with the optimal swizzle, and shared memory wins):")
    print(plan_report(seed.store, seed.load, 32))
    print()
    kernel = conversion_kernel(seed.store, seed.load, 32, force_shared=True)
    print(f"Generated kernel {kernel.name} ({kernel.threads} threads, {kernel.shared_bytes} bytes of shared memory):")
    print(kernel.source)
    return 0


def _explorer_page(args: argparse.Namespace) -> str:
    from linear_layouts.viz.explorer import default_catalog, default_scenarios, explorer_html
    from linear_layouts.viz.scenarios import Scenario, row_major_shared

    scenarios = default_scenarios()
    catalog = default_catalog()
    for spec in args.layout or []:
        catalog.append((spec.strip(), _layout(spec, _shape(args.shape), "--layout")))
    if args.store or args.load:
        if not (args.store and args.load):
            raise LayoutError("--store and --load go together")
        shape = _shape(args.shape)
        store = _layout(args.store, shape, "--store")
        load = _layout(args.load, shape or list(store.out_dims.values()), "--load")
        bits = _bitwidth(args.dtype, 32)
        mine = Scenario(f"{args.store} -> {args.load} ({bits}-bit)", store, load, bits,
                        (("unswizzled (row-major)", row_major_shared(list(store.out_dims.values()))),),
                        args.store, args.load)
        scenarios = [mine] + scenarios
    return explorer_html(scenarios, catalog)


def cmd_explore(args: argparse.Namespace) -> int:
    """Write the explorer page (--output) or serve it on 127.0.0.1 only."""
    page = _explorer_page(args).encode("utf-8")
    if args.output:
        with open(args.output, "wb") as handle:
            handle.write(page)
        print(f"wrote {args.output} (open it in a browser; it works offline)")
        return 0
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            if self.path not in ("/", "/index.html"):
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            """``/api/swizzle``: the optimal swizzle of a pair the page built (see ``swizzle_api``)."""
            import json

            from linear_layouts.viz.explorer import swizzle_api

            length = int(self.headers.get("Content-Length") or 0)
            if self.path != "/api/swizzle" or not 0 < length <= 1 << 18:
                self.send_error(404 if self.path != "/api/swizzle" else 413)
                return
            try:
                answer = swizzle_api(json.loads(self.rfile.read(length)))
            except ValueError:
                answer = {"error": "request: not JSON"}
            body = json.dumps(answer).encode("utf-8")
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *values: object) -> None:  # noqa: A002
            pass

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"serving the explorer on http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


# --------------------------------------------------------------------------------------------------
# The parser


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, Callable[[argparse.Namespace], int]]]:
    parser = argparse.ArgumentParser(
        prog="linear-layouts",
        description="Tensor layouts as linear maps over F2: see them, cost them, convert between them.",
        epilog="LAYOUT specs: Gluon syntax, e.g. 'BlockedLayout([1,4],[4,8],[4,1],[1,0])', or JSON bases "
               "'{\"bases\": {\"register\": [[0,1]], ...}, \"out_dims\": {\"dim0\": 16, ...}}'; @FILE reads a file.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    handlers: dict[str, Callable[[argparse.Namespace], int]] = {}

    def add(name: str, handler: Callable[[argparse.Namespace], int], help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        handlers[name] = handler
        return p

    def shape_and_output(p: argparse.ArgumentParser) -> None:
        p.add_argument("--shape", help="tensor shape, e.g. 16,32 (needed by Gluon descriptors)")
        p.add_argument("-o", "--output", help="write to this file instead of stdout")

    p = add("show", cmd_show, "picture a layout: who holds each element (distributed) or where it lives (shared)")
    p.add_argument("layout", metavar="LAYOUT")
    shape_and_output(p)
    p.add_argument("--format", choices=["text", "svg", "png", "html", "json"], default="text")
    p.add_argument("--hw", action="store_true", help="text: the hardware point of view (per warp / per offset)")
    p.add_argument("--dtype", help="shared layouts: element type for the bank colours (default: the spec's or 32-bit)")
    p.add_argument("--view", choices=["logical", "physical"], default="logical",
                   help="shared SVG: the tensor grid, or memory rows x banks")
    p.add_argument("--title", help="picture title")

    p = add("matrix", cmd_matrix, "the layout's matrix over F2")
    p.add_argument("layout", metavar="LAYOUT")
    shape_and_output(p)
    p.add_argument("--format", choices=["text", "svg"], default="text")

    p = add("banks", cmd_banks, "shared-memory wavefronts of one access (Lemma 9.4 and the brute-force model)")
    p.add_argument("shared", metavar="SHARED")
    p.add_argument("dist", metavar="DIST")
    shape_and_output(p)
    p.add_argument("--dtype", help="element type: fp8, fp16, bf16, fp32, i32, fp64, ... (or the bit width)")
    p.add_argument("--op", choices=["load", "store"], default="load")
    p.add_argument("--steps", type=int, default=16, help="text: how many steps to list")
    p.add_argument("--format", choices=["text", "svg"], default="text")

    p = add("swizzle", cmd_swizzle, "the optimal swizzled shared layout for STORE then LOAD, against the baselines")
    p.add_argument("store", metavar="STORE")
    p.add_argument("load", metavar="LOAD")
    shape_and_output(p)
    p.add_argument("--dtype", required=True)

    p = add("convert", cmd_convert, "plan the conversion SRC -> DST step by step (and emit / run its kernel)")
    p.add_argument("src", metavar="SRC")
    p.add_argument("dst", metavar="DST")
    shape_and_output(p)
    p.add_argument("--dtype", required=True)
    p.add_argument("--emit", choices=["cuda"], help="also print the generated CUDA kernel")
    p.add_argument("--run", action="store_true", help="compile, run and verify the kernel (needs a GPU and CuPy)")

    add("demo", cmd_demo, "the paper's Layout A, then the seed transpose end to end")

    p = add("explore", cmd_explore, "the interactive explorer page, served on 127.0.0.1 (or written with -o)")
    p.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (0: any free port)")
    p.add_argument("-o", "--output", help="write the page to this file instead of serving it")
    p.add_argument("--layout", action="append", metavar="LAYOUT",
                   help="add a layout to the distributed-view picker (repeatable; shown with scenarios of its shape)")
    p.add_argument("--store", help="add a scenario: the layout that writes shared memory")
    p.add_argument("--load", help="... and the layout that reads it")
    p.add_argument("--shape")
    p.add_argument("--dtype")
    return parser, handlers


def main(argv: Sequence[str] | None = None) -> int:
    parser, handlers = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return handlers[args.command](args)
    except LayoutError as error:
        print(f"linear-layouts: error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `linear-layouts demo | head`
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
