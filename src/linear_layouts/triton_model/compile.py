"""Compile a kernel on the CPU with the installed Triton, stage by stage, stopping after TTGIR (no GPU,
no assembler or linker needed): Triton's own ``compile`` pipeline (``make_backend``, ``add_stages``,
``ASTSource.make_ir``) run for the ``ttir`` and ``ttgir`` stages only.

>>> from linear_layouts.pipeline import load_kernel_file  # doctest: +REQUIRES_TRITON
>>> compile_kernel(load_kernel_file("tests/data/triton_kernels/transpose.py"), "sm_90").ttgir  # doctest: +REQUIRES_TRITON
'#blocked = #ttg.blocked<...'
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from linear_layouts.core.arguments import checked
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import parse_int
from linear_layouts.core.mlir_text import DIGITS
from linear_layouts.triton_model.kernel_file import (TRITON_NEEDED, KernelSpec, check_target_options, parse_target,
                                                     triton_needed)

__all__ = ["CompiledIR", "compile_kernel", "strip_paths", "CompiledTTGIR", "compile_ttgir", "cubin_resources"]


@dataclass(frozen=True)
class CompiledIR:
    """The TTIR (layout-free, after Triton's TTIR passes) and TTGIR (with layouts) of one compile."""

    name: str
    target: str
    triton_version: str
    ttir: str
    ttgir: str


def strip_paths(text: str, directory: str | Path) -> str:
    """Source locations made relative: ``loc("/abs/dir/file.py":3:4)`` -> ``loc("file.py":3:4)``."""
    prefix = str(Path(directory).resolve()) + os.sep
    return text.replace(prefix, "")


@checked
def compile_kernel(spec: KernelSpec, target: str) -> CompiledIR:
    """TTIR and TTGIR of ``spec`` for ``target`` (``sm_80``, ``sm_90``, ``gfx942``, ...), compiled on the CPU.

    Raises ``LayoutError`` when Triton is missing or the kernel does not compile for the target
    (the message carries Triton's first error line)."""
    try:
        import triton
        from triton._C.libtriton import ir
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource
        from triton.compiler.compiler import make_backend
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise LayoutError(triton_needed(str(error))) from None
    found = tuple(int(p) for p in re.findall(r"\d+", triton.__version__)[:2])
    if found < TRITON_NEEDED:
        raise LayoutError(triton_needed(f"found Triton {triton.__version__}"))
    gpu_target = GPUTarget(*parse_target(target))
    check_target_options(spec, target)  # Triton's parse_options drops another backend's option unread
    signature, constexprs, attrs = spec.specialization()
    if gpu_target.backend == "hip":
        from triton import knobs

        if knobs.amd.use_buffer_ops:  # tensors under 2 GB: the JIT's "S" specialization
            for (i,), values in list(attrs.items()):
                if signature[spec.params[i]].startswith("*"):
                    attrs[(i,)] = values + [["tt.pointer_range", 32]]
    metadata: dict = {}
    texts: dict[str, str] = {}
    try:  # Triton checks the options (num_warps=3 is its AssertionError) and the kernel: all one error here
        src = ASTSource(fn=spec.kernel, signature=signature, constexprs=constexprs, attrs=attrs)
        backend = make_backend(gpu_target)
        opts = dict(spec.options)
        opts.setdefault("enable_fp_fusion", True)  # the JIT's default (stated, so Triton 3.9 does not warn)
        options = backend.parse_options(opts)
        stages: dict = {}
        backend.add_stages(stages, options, src.language)
        context = ir.context()
        ir.load_dialects(context)
        backend.load_dialects(context)
        module = src.make_ir(gpu_target, options, backend.get_codegen_implementation(options),
                             backend.get_module_map(), context)
        for stage in ("ttir", "ttgir"):
            module = stages[stage](module, metadata)
            texts[stage] = str(module)
    except Exception as error:  # Triton raises CompilationError, RuntimeError, AssertionError ...
        detail = _last_line(str(error))
        cause = error.__cause__
        if cause is not None and detail in ("", "^"):  # only the source excerpt's caret: the cause says why
            detail = f"{type(cause).__name__} {_last_line(str(cause))}".strip()
        raise LayoutError(f"{spec.name}: Triton {triton.__version__} cannot compile it for {target}: "
                          f"{detail or type(error).__name__}") from None
    directory = Path(spec.path).parent
    return CompiledIR(spec.name, target, triton.__version__,
                      strip_paths(texts["ttir"], directory), strip_paths(texts["ttgir"], directory))


def _last_line(text: str) -> str:
    """The last non-empty line of an error (Triton puts the source excerpt first, the message last)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return re.sub(r"\s+", " ", lines[-1]) if lines else ""


@dataclass(frozen=True)
class CompiledTTGIR:
    """What Triton's backend makes of a TTGIR on the CPU: its PTX, its cubin (Triton's bundled ptxas), and
    ptxas's ``registers`` per thread and ``stack`` bytes per thread (spilled registers live there)."""

    ptx: str
    cubin: bytes
    registers: int
    stack: int


@checked
def compile_ttgir(ttgir: str, cc: int | None = None, options: dict | None = None) -> CompiledTTGIR:
    """``ttgir`` (TTGIR text) compiled by the installed Triton for ``cuda:cc`` (default: the module's
    ``ttg.target``) to PTX and a cubin, on the CPU, with Triton's compile ``options`` (default: the JIT's
    floating-point fusion; warps and CTAs come from the module). Raises ``LayoutError`` when Triton is
    missing or refuses the text (its last error line)."""
    import tempfile

    try:
        import triton
        from triton.backends.compiler import GPUTarget
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise LayoutError(f"compiling a TTGIR needs triton: {error}") from None
    if cc is None:
        m = re.search(rf'ttg\.target = "cuda:({DIGITS})', ttgir)
        cc = parse_int(m.group(1), "ttg.target's compute capability") if m else 90
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "kernel.ttgir"
        path.write_text(ttgir)
        try:
            asm = triton.compile(str(path), target=GPUTarget("cuda", int(cc), 32),
                                 options={"enable_fp_fusion": True, **dict(options or {})}).asm
        except Exception as error:  # Triton raises RuntimeError, CompilationError, ...
            raise LayoutError(f"ttgir: Triton {triton.__version__} cannot compile it for sm_{cc}: "
                              f"{_last_line(str(error)) or type(error).__name__}") from None
    resources = cubin_resources(asm["cubin"])
    return CompiledTTGIR(asm["ptx"], asm["cubin"], resources["registers"], resources["stack"])


@checked
def cubin_resources(cubin: bytes) -> dict[str, int]:
    """``{"registers": .., "stack": ..}`` of the (first) kernel of ``cubin``: registers per thread and stack
    bytes per thread as ptxas allocated them (``cuobjdump --dump-resource-usage``; Triton's bundled
    cuobjdump, else the CUDA toolkit's). ``LayoutError`` where no cuobjdump is found."""
    import subprocess
    import tempfile

    tool = _cuobjdump()
    if tool is None:
        raise LayoutError("cubin: no cuobjdump found (Triton's bundled one or the CUDA toolkit's) to read its registers")
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        out = subprocess.run([tool, "--dump-resource-usage", f.name], capture_output=True, text=True,
                             timeout=60).stdout
    m = re.search(r"REG:(\d+) STACK:(\d+)", out)
    if m is None:
        raise LayoutError(f"cubin: cuobjdump printed no resource usage ({out.strip()[:120]!r})")
    return {"registers": int(m.group(1)), "stack": int(m.group(2))}


def _cuobjdump() -> str | None:
    try:
        import triton

        bundled = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
        if bundled.is_file():
            return str(bundled)
    except ImportError:  # pragma: no cover - depends on the environment
        pass
    from linear_layouts.codegen.ptx import find_cuobjdump

    return find_cuobjdump()
