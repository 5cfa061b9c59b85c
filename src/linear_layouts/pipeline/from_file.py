"""The pipeline on a file: ``report_for_file`` reads a kernel file (compiled on the CPU) or an IR text
file, analyzes its TTGIR (``report``) and compares our engine on its TTIR (``engine_compare``).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from linear_layouts.core.arguments import checked
from linear_layouts.core.errors import LayoutError
from linear_layouts.pipeline.engine_compare import compare_with_engine
from linear_layouts.core.limits import quote
from linear_layouts.pipeline.report import KernelReport, analyze_module, check_has_layouts
from linear_layouts.triton_model.encodings import Resolver
from linear_layouts.triton_model.ir_text import last_module, parse_module
from linear_layouts.triton_model.trips import grid_op_counts
from linear_layouts.target import Target, named_target, target_for_module

__all__ = ["report_for_file", "read_ir", "analysis_target"]


@checked
def read_ir(path: "Path") -> str:
    """The UTF-8 text of an IR file, refused (LayoutError) above ``limits.MAX_IR_BYTES`` before it is read;
    read through :func:`linear_layouts.core.files.read_bytes` (one non-blocking open, a regular file only)."""
    from linear_layouts.core.files import read_bytes
    from linear_layouts.core.limits import MAX_IR_BYTES, check_ir_size, quote

    try:
        check_ir_size(path.stat().st_size, f"KERNEL_OR_FILE: {quote(str(path))}", keyword=None)
    except OSError as error:
        raise LayoutError(f"KERNEL_OR_FILE: cannot read {quote(str(path))}: {error.strerror or error}") from None
    data = read_bytes(path, "KERNEL_OR_FILE", max_bytes=MAX_IR_BYTES)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise LayoutError(f"KERNEL_OR_FILE: cannot read {quote(str(path))}: not UTF-8 text (byte {error.start + 1} "
                          "cannot be read)") from None


def analysis_target(module_target: str, target: str | Target | None = None, device: str | None = None) -> Target:
    """The target a module is analyzed for: the one its ``ttg.target`` names (``target_for_module``), on
    ``device`` (``named_target``); ``target`` (a name or a ``Target``), when given, must be that architecture."""
    named = target_for_module(module_target)
    if target is not None:
        given = target if isinstance(target, Target) else named_target(target, device)
        if module_target and given.arch != named.arch:
            raise LayoutError(f"target: {given.arch} given, but the kernel's TTGIR is for {module_target}")
        return given
    return named_target(named.arch, device) if device is not None else named


def report_for_file(path: str, *, target: str | Target | None = None, device: str | None = None,
                    resolver: Resolver | None = None, with_triton_estimate: bool = True,
                    with_engine: bool = True) -> KernelReport:
    """The report of a kernel file or an IR text file:

    * ``*.py``: a kernel file (``kernels.spec``), compiled on the CPU by the installed Triton for
      ``target`` (default: ``device``'s architecture, else ``sm_90``; ``device="MI300X"`` alone compiles for
      gfx942); its launch (grid, scalars) gives every op its execution count over the grid;
    * anything else: TTGIR text (``str(module)``, ``compiled.asm["ttgir"]``) or an
      ``MLIR_ENABLE_DUMP`` log (its last TTGIR module), analyzed for the target it names (``target``, when
      given, must agree). No Triton needed. A layout-free TTIR (or a dump whose last module is one) is
      refused (``report.check_has_layouts``).

    ``device``: the device of the target (``H200``: its cost table prices the plans, ``analysis_target``).
    ``with_engine``: also run our engine on the kernel's TTIR (the .py's compile, or the dump's last TTIR
    module) and compare (``engine_compare``); NVIDIA targets only (the engine lays out for NVIDIA).
    """
    p = Path(path)
    if not p.is_file():  # stat only: a FIFO or a device is never opened
        what = "not a regular file (a folder, FIFO or device)" if p.exists() else "no such file"
        raise LayoutError(f"KERNEL_OR_FILE: {what} {str(path)[:200]!r}")
    if p.suffix == ".py":
        from linear_layouts.triton_model.compile import compile_kernel
        from linear_layouts.triton_model.kernel_file import load_kernel_file

        chosen = target if isinstance(target, Target) else named_target(target, device)
        spec = load_kernel_file(p)
        ir = compile_kernel(spec, target if isinstance(target, str) else chosen.arch)
        module = parse_module(ir.ttgir)
        scalars = {f"%{k}": v for k, v in spec.scalars.items() if isinstance(v, int)}
        counts = grid_op_counts(module.functions[0], scalars, spec.grid)
        report = analyze_module(module, resolver=resolver, name=spec.name, counts=counts, target=chosen,
                                with_triton_estimate=with_triton_estimate, triton_version=ir.triton_version)
        if with_engine and chosen.backend == "cuda":
            engine = compare_with_engine(report, parse_module(ir.ttir), scalars=scalars, target=chosen)
            report = dataclasses.replace(report, engine=engine)
        return report
    text = read_ir(p)
    module = parse_module(last_module(text))
    check_has_layouts(module, f"KERNEL_OR_FILE: {quote(str(path))}")
    chosen = analysis_target(module.target, target, device)
    report = analyze_module(module, resolver=resolver, with_triton_estimate=with_triton_estimate, target=chosen)
    if with_engine and chosen.backend == "cuda":
        ttir = None
        if "// -----// IR Dump" in text:
            try:
                ttir = parse_module(last_module(text, layout_free=True))
            except LayoutError:
                ttir = None
        else:
            sibling = p.with_suffix(".ttir")
            if sibling.is_file():
                ttir = parse_module(read_ir(sibling))
        if ttir is not None:
            report = dataclasses.replace(report, engine=compare_with_engine(report, ttir, target=chosen))
    return report
