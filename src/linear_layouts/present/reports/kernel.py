"""The report of a real kernel (``linear-layouts report``), as text and as a self-contained HTML page
with pictures: every layout (TTGIR name, Gluon name, bases), every op that moves data through shared
memory with Triton's instructions and wavefronts and our plan beside them, the flags, the totals and
what the prediction leaves out. Built from ``linear_layouts.pipeline.report.KernelReport``."""

from __future__ import annotations

from html import escape

from linear_layouts.core.arguments import checked
from linear_layouts.core.errors import LayoutError
from linear_layouts.pipeline.report import KernelReport, SharedOp
from linear_layouts.triton_model.lowering import SHARED
from linear_layouts.core.layout import LinearLayout
from linear_layouts.present.viz.text import counted, table_text, wrap_text
from linear_layouts.target import Target, cost_table, target_for_module

__all__ = ["kernel_report_text", "kernel_report_html", "op_rows", "edit_lines"]


def _shape(shape: tuple[int, ...]) -> str:
    return "x".join(map(str, shape)) if shape else "scalar"


def _bases(layout: LinearLayout) -> str:
    return "  ".join(f"{d}={layout.bases[d]}" for d in layout.in_dim_names if layout.bases[d])


def _instructions(op: SharedOp) -> str:
    t = op.triton
    if t.kind != SHARED:
        return t.kind + (f" ({t.note})" if t.note else "")
    parts = [f"{i.instruction}×{i.count} ({i.wavefronts} wf)" for i in t.stores + t.loads]
    reps = f", {t.reps} rounds" if t.reps > 1 else ""
    return " + ".join(parts) + reps


def _ours(op: SharedOp) -> str:
    p = op.ours
    if p is None:
        return "-"
    if p.kind == SHARED:
        return f"shared: {p.wavefronts} wf"
    return p.kind


def _ns(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def _times(op: SharedOp, target: Target | None = None) -> str:
    """Predicted SM-ns per CTA (calibrated cost model on ``target``'s table): Triton's lowering / our plan."""
    triton, ours = op.triton_time(target), op.ours_time(target)
    return _ns(triton) if ours is None else f"{_ns(triton)} / {_ns(ours)}"


def _estimate(pair: tuple | None) -> str:
    """Triton's ``get_shared_bank_conflicts`` for the store and the load side ("-": not applicable or
    Triton not installed)."""
    if pair is None or pair == (None, None):
        return "-"
    return "/".join("-" if v is None else str(v) for v in pair)


def _count(op) -> str:
    return "?" if op.count is None else str(op.count)


def _target(report: KernelReport, target: Target | None) -> Target:
    """The target the report was made for: ``target``, else the one its kernel names."""
    return target if target is not None else target_for_module(report.target)


def _table(target: Target) -> str:
    """The cost table that priced the times: ``H100``, or ``H100 table, nearest to B200``."""
    table = cost_table(target)
    return table.costs.name if table.exact else table.label


def op_rows(report: KernelReport, target: Target | None = None) -> list[list[str]]:
    """One row per shared-memory op: #, op, source line, shape, dtype, src -> dst, Triton's instructions
    (wavefronts), store / load wavefronts, our plan, predicted times (``target``'s table; default the
    target the kernel names), executions, flags. Ops that differ only in their executions (a pipelined
    ``cp.async`` issued in the prologue and in the loop) share one row: ``op ×n``, their runs summed."""
    target = _target(report, target)
    rows: list[list[str]] = []
    merged: dict[tuple[str, ...], tuple[int, int | None]] = {}   # the row's columns -> (its index, runs)
    for n, op in enumerate(report.ops, 1):
        row = [str(n), op.kind, str(op.loc), _shape(op.shape), op.element, f"{op.src} -> {op.dst}",
               _instructions(op), str(op.triton.store_wavefronts), str(op.triton.load_wavefronts),
               _ours(op), _times(op, target), _estimate(op.triton_estimate), "", "; ".join(op.flags)]
        key = tuple(row[1:])
        if key in merged:
            index, runs = merged[key]
            merged[key] = (index, None if runs is None or op.count is None else runs + op.count)
            copies = rows[index][1].split(" ×")
            rows[index][1] = f"{op.kind} ×{int(copies[1]) + 1 if len(copies) > 1 else 2}"
            continue
        merged[key] = (len(rows), op.count)
        rows.append(row)
    if report.counted:
        for index, runs in merged.values():
            rows[index][12] = "?" if runs is None else str(runs)
    return rows


_HEADER = ["#", "op", "source", "shape", "dtype", "layouts", "Triton's lowering (instructions, wavefronts)",
           "st wf", "ld wf", "our plan", "ns Triton / ours", "Triton conflicts st/ld", "runs", "flags"]

#: pictures above this many elements are left out of the HTML page (a 64x64 tile draws in ~0.3 MB)
PICTURE_ELEMENTS = 4096


def _totals(report: KernelReport, target: Target | None = None) -> list[str]:
    target = _target(report, target)
    if target.backend != "cuda":  # no op is predicted: say so, print no number
        listed = " (the ops that use it are listed below)" if report.unmodeled else ""
        return [f"Shared memory ({target.shared.name}): no wavefront or time is predicted on {report.target}: "
                f"Triton's AMD lowering is not modelled{listed}."]
    st, ld = report.total("store_wavefronts"), report.total("load_wavefronts")
    lines = [f"Per execution of each op once (one CTA): {st} store + {ld} load wavefronts."]
    if report.counted:
        dst = report.total("store_wavefronts", dynamic=True)
        dld = report.total("load_wavefronts", dynamic=True)
        unknown = sum(1 for op in report.ops if op.count is None)
        lines.append(f"Per launch (each op times its executions over the grid): {dst} store + {dld} load wavefronts"
                     + (f" ({counted(unknown, 'op')} with a data-dependent count left out)" if unknown else "")
                     + ".")
    conv = report.conversions
    shared = [op for op in conv if op.triton.kind == SHARED]
    better = [op for op in report.ops if any(f.startswith("cheaper") for f in op.flags)]
    times = {id(op): (op.triton_time(target), op.ours_time(target)) for op in conv}
    worse = [op for op in conv if None not in times[id(op)] and times[id(op)][1] > 1.05 * times[id(op)][0]]
    conflicts = [op for op in report.ops if any(f.startswith("bank conflicts") for f in op.flags)]
    lines.append(f"convert_layout: {len(conv)} that move data ({len(shared)} through shared memory); "
                 f"{counted(len(conflicts), 'op')} with bank conflicts; our plan is cheaper on {len(better)} and "
                 f"costlier on {len(worse)} (calibrated cost model, {_table(target)}).")
    return lines


def _bases_lines(shape: tuple[int, ...], layout: LinearLayout, width: int | None) -> list[str]:
    """``    128x64: register=[...]  lane=[...]``, or, where that is wider than ``width``, the shape alone
    and each in dim's bases on its own line (wrapped)."""
    whole = f"    {_shape(shape)}: {_bases(layout)}"
    if width is None or len(whole) <= width:
        return [whole]
    return [f"    {_shape(shape)}:"] + [wrap_text(f"      {d}={layout.bases[d]}", width)
                                       for d in layout.in_dim_names if layout.bases[d]]


def edit_lines(report: KernelReport, target: Target | None = None) -> list[str]:
    """``kernels.advice.suggest_edits`` as report lines: per flagged op, what it is, the edit in source
    terms, and its predicted wavefronts and time before -> after (per launch too, with execution counts;
    ``target``'s table, default the target the kernel names)."""
    from linear_layouts.pipeline.advice import suggest_edits

    lines = []
    for edit in suggest_edits(report, target=_target(report, target)):
        lines.append(f"#{edit.row} {edit.subject}.")
        if edit.after_wavefronts is None:
            lines.append(f"   {edit.change} ({edit.before_wavefronts} wavefronts).")
            continue
        saving = ""
        if edit.saving_ns is not None:
            saving = f", {_ns(edit.before_ns)} -> {_ns(edit.after_ns)} ns"
            if edit.runs:
                saving += f", {edit.saving_ns * edit.runs / 1000:.0f} SM-µs saved per launch ({edit.runs} runs)"
        lines.append(f"   Change: {edit.change}: {edit.before_wavefronts} -> {edit.after_wavefronts} wavefronts"
                     f"{saving}.")
        if edit.also:
            lines.append(f"   Or {edit.also}.")
    return lines


@checked
def kernel_report_text(report: KernelReport, *, layouts: bool = True, width: int | None = None,
                       target: Target | None = None) -> str:
    """The report as plain text (module doc), every line at most ``width`` characters (``None``: whole
    lines; a wider op table keeps its first columns and puts the others under each row); ``target``: the
    one it was made for (default: the one the kernel names), whose cost table prices the times."""
    head = (f"Kernel {report.name}: target {report.target or '?'}, {counted(report.num_warps, 'warp')} x "
            f"{report.threads_per_warp} threads" + (f", Triton {report.triton_version}" if report.triton_version else ""))
    lines = [head, ""]
    if layouts:
        lines.append(f"Layouts ({len(report.layouts)})")
        for entry in report.layouts:
            lines.append(f"  {entry.name}{' (shared)' if entry.shared else ''}")
            if entry.name != entry.attribute:
                lines.append(f"    TTGIR: {entry.attribute}")
            lines.append(f"    Gluon: {entry.gluon}")
            if entry.recognized is not None:
                lines.append(f"    the same layout as: {entry.recognized!r}")
            for shape, ll in entry.linear:
                lines += _bases_lines(shape, ll, width)
        lines.append("")
    rows = op_rows(report, target) if report.ops else []
    merged = f" in {len(rows)} rows: ops that differ only in their executions share one, op ×n" if len(rows) < len(
        report.ops) else ""
    lines.append(f"Shared-memory traffic and layout conversions ({counted(len(report.ops), 'op')}{merged}; "
                 f"wavefronts per CTA per execution)")
    if report.ops:
        lines.append(table_text(rows, _HEADER, max_width=width))
    lines.append("")
    lines += _totals(report, target)
    changes = edit_lines(report, target)
    if changes:
        lines += ["", "What to change (each flagged op; predicted SM-ns per CTA, calibrated cost model, "
                      f"{_table(_target(report, target))})"]
        lines += ["  " + line for line in changes]
    if report.engine is not None:
        from linear_layouts.pipeline.engine_compare import comparison_lines
        from linear_layouts.pipeline.rewrite import MIN_GAIN

        lines.append("")
        lines.append("The engine's alternative")
        lines += ["  " + line for line in comparison_lines(report.engine, MIN_GAIN)]
    if report.unmodeled:
        lines.append("")
        lines.append("Not counted in the prediction:")
        seen: dict[tuple[str, str], int] = {}
        for u in report.unmodeled:
            seen[(u.op, u.reason)] = seen.get((u.op, u.reason), 0) + 1
        for (op, reason), n in seen.items():
            lines.append(f"  {op} ×{n}: {reason}")
    return wrap_text("\n".join(lines), width)


# --------------------------------------------------------------------------------------------------
_STYLE = """body{font-family:DejaVu Sans,Helvetica,Arial,sans-serif;margin:18px;color:#1d1d1f;max-width:1400px}
h1{font-size:20px;color:#1f3b73}h2{font-size:16px;color:#1f3b73;margin-top:26px}h3{font-size:13px;margin:14px 0 4px}
table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccd;padding:3px 6px;vertical-align:top}
th{background:#eef2fa}td.num{text-align:right}.flag{color:#b3261e}code,pre{font-size:11px}
pre{background:#f6f8fc;padding:6px;overflow:auto;max-height:260px}
.figure{overflow:auto;border:1px solid #ddd;padding:4px;max-width:100%;max-height:520px;margin:4px 0}
details{margin:6px 0}"""


def _picture(layout: LinearLayout, bits: int, title: str) -> str:
    from linear_layouts.present.viz.svg import distributed_svg, shared_svg

    try:
        if layout.has_in_dim("offset"):
            return shared_svg(layout, bits, title=title)
        return distributed_svg(layout, title=title)
    except LayoutError as error:
        return f"<p>(no picture: {escape(str(error))})</p>"


@checked
def kernel_report_html(report: KernelReport, *, pictures: bool = True,
                       max_picture_elements: int = PICTURE_ELEMENTS, target: Target | None = None) -> str:
    """The report as one self-contained HTML page: the tables of the text report, each layout's picture
    (distributed: owners by lane and warp; shared: banks) and each conversion's scratch layout
    (``target``: as ``kernel_report_text``'s)."""
    out = ["<!doctype html><html><head><meta charset='utf-8'>",
           f"<title>{escape(report.name)}: layouts and shared memory</title><style>{_STYLE}</style></head><body>",
           f"<h1>{escape(report.name)}</h1>",
           f"<p>target {escape(report.target or '?')}, {counted(report.num_warps, 'warp')} × "
           f"{report.threads_per_warp} threads"
           + (f", Triton {escape(report.triton_version)}" if report.triton_version else "") + "</p>",
           "<h2>Shared-memory traffic and layout conversions</h2>",
           "<p>Wavefronts per CTA for one execution of each op, from the ncu-validated bank model applied to the "
           "instructions Triton emits; <i>our plan</i> is the library's plan for the same conversion.</p>",
           "<table><tr>" + "".join(f"<th>{escape(h)}</th>" for h in _HEADER) + "</tr>"]
    for row in op_rows(report, target):
        cells = []
        for k, cell in enumerate(row):
            cls = ' class="num"' if k in (0, 7, 8, 10, 11, 12) else (' class="flag"' if k == 13 else "")
            cells.append(f"<td{cls}>{escape(cell)}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</table>")
    out.append("<ul>" + "".join(f"<li>{escape(line)}</li>" for line in _totals(report, target)) + "</ul>")
    changes = edit_lines(report, target)
    if changes:
        out.append("<h2>What to change</h2><pre>" + escape("\n".join(changes)) + "</pre>")
    if report.unmodeled:
        out.append("<h3>Not counted in the prediction</h3><ul>")
        seen: dict[tuple[str, str], int] = {}
        for u in report.unmodeled:
            seen[(u.op, u.reason)] = seen.get((u.op, u.reason), 0) + 1
        out += [f"<li><code>{escape(op)}</code> ×{n}: {escape(reason)}</li>" for (op, reason), n in seen.items()]
        out.append("</ul>")
    if report.engine is not None:
        from linear_layouts.pipeline.engine_compare import comparison_lines
        from linear_layouts.pipeline.rewrite import MIN_GAIN

        out.append("<h2>The engine's alternative</h2><ul>")
        out += [f"<li>{escape(line.strip())}</li>" for line in comparison_lines(report.engine, MIN_GAIN)]
        out.append("</ul>")
        if report.engine.program_text:
            out.append("<details><summary>the engine's program with its layouts</summary>"
                       f"<pre>{escape(report.engine.program_text)}</pre></details>")
    if pictures:
        conv = [op for op in report.ops if op.triton.kind == SHARED and op.triton.layout is not None
                and op.kind == "convert_layout"]
        if conv:
            out.append("<h2>Triton's scratch layouts for the conversions</h2>")
        for op in conv:
            layout = op.triton.layout
            out.append(f"<details><summary>{escape(op.src)} → {escape(op.dst)} at {escape(str(op.loc))} "
                       f"({escape(_instructions(op))})</summary>")
            if layout is not None and layout.total_out_dim_size <= max_picture_elements:
                out.append(f"<div class='figure'>{_picture(layout, op.bits, 'scratch layout (banks)')}</div>")
            out.append(f"<pre>{escape(_bases(layout) if layout is not None else '')}</pre></details>")
    out.append(f"<h2>Layouts ({len(report.layouts)})</h2>")
    for entry in report.layouts:
        out.append(f"<h3><code>{escape(entry.name)}</code>{' (shared)' if entry.shared else ''}</h3>")
        same = (f"<br>the same layout as: <code>{escape(repr(entry.recognized))}</code>"
                if entry.recognized is not None else "")
        out.append(f"<p>TTGIR: <code>{escape(entry.attribute)}</code><br>Gluon: <code>{escape(entry.gluon)}</code>{same}</p>")
        drawn = False
        for shape, ll in entry.linear:
            out.append(f"<details><summary>{escape(_shape(shape))}: {escape(_bases(ll))[:160]}</summary>")
            if pictures and not drawn and ll.total_out_dim_size <= max_picture_elements:
                drawn = True
                bits = 16
                out.append(f"<div class='figure'>{_picture(ll, bits, f'{entry.name} on {_shape(shape)}')}</div>")
            out.append(f"<pre>{escape(_bases(ll))}</pre></details>")
    out.append("</body></html>")
    return "\n".join(out)
