"""A kernel file: a Python module with one ``@triton.jit`` kernel and the facts needed to compile and
launch it, as module-level names (the corpus in ``tests/data/triton_kernels/`` follows this form; the
user's guide is docs/kernel-files.md). Reading one needs Triton >= 3.6 (:data:`TRITON_NEEDED`).

:func:`load_kernel_file` **executes** the file: it is imported as Python (as ``python KERNEL.py`` would run
it, with its own imports and top-level code), only when the caller names it (``linear-layouts report
KERNEL.py``); then the names below are checked, and any mistake in them is a ``LayoutError`` naming the
name and the rule.

=============  ===========================================================================================
name           meaning
=============  ===========================================================================================
``KERNEL``     the ``@triton.jit`` function to compile
``SIGNATURE``  Triton type of every runtime parameter: ``"*fp16"`` (pointer), ``"i32"``, ``"fp32"``, ...
``CONSTEXPRS`` value of every ``tl.constexpr`` parameter
``SCALARS``    value of every non-pointer runtime parameter at the kernel's realistic problem size
``TENSORS``    per pointer parameter: its shape in elements, or ``(shape, init)`` with init ``"zeros"``
               or ``("randint", low, high)`` (default: random normal / random bytes)
``GRID``       the launch grid (1 to 3 positive ints, a list or a tuple; or one int)
``OPTIONS``    compile options, e.g. ``{"num_warps": 8, "num_stages": 3}`` (``num_warps``: a power of two,
               at most ``MAX_NUM_WARPS``): Triton's (:func:`triton_option_names`); compiled for a target, an
               option of its backend (:func:`check_target_options`)
=============  ===========================================================================================

Every key must name what its dict holds: a parameter (``SIGNATURE``, ``CONSTEXPRS``), a pointer parameter
(``TENSORS``), a scalar one (``SCALARS``), a compile option of the installed Triton (``OPTIONS``); and every
``SIGNATURE`` type must be one Triton reads (:func:`triton_type_problem`).

Integer scalars are specialized as Triton's JIT specializes them: a value of 1 becomes a constexpr,
a multiple of 16 gets ``tt.divisibility = 16``; pointers are 16-byte aligned (as PyTorch allocates).

>>> parse_target("sm_90")
('cuda', 90, 32)
>>> parse_target("gfx942")
('hip', 'gfx942', 64)
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import importlib.util
import inspect
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from linear_layouts.core.arguments import checked
from linear_layouts.core.errors import LayoutError, did_you_mean
from linear_layouts.core.limits import parse_int, quote, shorten

__all__ = ["KernelSpec", "load_kernel_file", "parse_target", "TARGETS", "TRITON_NEEDED", "TRITON_INSTALL",
           "FORMAT_DOC", "triton_option_names", "triton_type_problem", "check_target_options"]

#: The targets the corpus is compiled for (Ampere, Hopper, MI300).
TARGETS = ("sm_80", "sm_90", "gfx942")

#: The oldest Triton that compiles kernel files (the ``triton`` extra of pyproject.toml), and how to get it.
TRITON_NEEDED = (3, 6)
TRITON_INSTALL = "pip install 'linear_layouts[triton]'"
#: Where the kernel-file format is documented.
FORMAT_DOC = "docs/kernel-files.md"

#: What each required name of a kernel file holds (the error for a missing one says it).
_REQUIRED = {"KERNEL": "the @triton.jit function", "SIGNATURE": "the Triton type of each runtime parameter",
             "CONSTEXPRS": "the value of each tl.constexpr parameter", "GRID": "the launch grid"}


def triton_needed(reason: str) -> str:
    """The message for a missing or too old Triton: the version needed and how to install it."""
    return (f"reading a kernel file needs Triton >= {'.'.join(map(str, TRITON_NEEDED))} ({TRITON_INSTALL}); "
            f"{reason}")

_TENSOR_INITS = ("zeros", "randint")
#: Warps of a CTA: a GPU runs at most 1024 threads per CTA (32 warps of 32 lanes).
MAX_NUM_WARPS = 32


@checked
def parse_target(target: str) -> tuple[str, int | str, int]:
    """``"sm_90"`` -> ``("cuda", 90, 32)``; ``"gfx942"`` -> ``("hip", "gfx942", 64)`` (the arguments of
    Triton's ``GPUTarget``: backend, arch, threads per warp). A ``gfx`` name with a letter in its number
    (``gfx90a``) is not a known target: a LayoutError listing :data:`TARGETS`."""
    if not isinstance(target, str):
        raise LayoutError(f"target must be a string like sm_90 or gfx942, got {quote(target)}")
    m = re.fullmatch(r"sm_(\d{2,3})a?", target)
    if m:
        return ("cuda", parse_int(m.group(1), f"target {quote(target)}: the compute capability"), 32)
    if re.fullmatch(r"gfx(9[0-9][0-9]|1[012][0-9][0-9])", target):
        return ("hip", target, 32 if target.startswith("gfx1") else 64)
    if re.fullmatch(r"gfx[0-9a-f]{3,4}", target):
        raise LayoutError(f"target: {quote(target)} is not a known target; known: {', '.join(TARGETS)} (and "
                          "sm_<cc>, gfx<3 or 4 digits> for other architectures)")
    raise LayoutError(f"target must be sm_<cc> (e.g. sm_80, sm_90) or gfx<arch> (e.g. gfx942), got {quote(target)}")


@dataclass(frozen=True)
class KernelSpec:
    """A kernel with everything needed to compile and launch it (module doc). ``kernel`` is the
    ``triton.runtime.JITFunction``; ``params`` its parameter names in order."""

    name: str
    path: str
    kernel: Any = field(repr=False, compare=False)
    params: tuple[str, ...]
    signature: Mapping[str, str]
    constexprs: Mapping[str, Any]
    scalars: Mapping[str, Any]
    tensors: Mapping[str, Any]
    grid: tuple[int, ...]
    options: Mapping[str, Any]
    needs_allocator: bool = False

    @property
    def num_warps(self) -> int:
        return int(self.options.get("num_warps", 4))

    def specialization(self) -> tuple[dict[str, str], dict[str, Any], dict[tuple[int, ...], list]]:
        """(signature, constexprs, attrs) for ``triton.compiler.ASTSource`` as the JIT would build them:
        integer scalars equal to 1 become constexprs, multiples of 16 and pointers get divisibility 16."""
        signature: dict[str, str] = {}
        constexprs: dict[str, Any] = dict(self.constexprs)
        attrs: dict[tuple[int, ...], list] = {}
        for i, p in enumerate(self.params):
            if p in self.constexprs:
                signature[p] = "constexpr"
                continue
            ty = self.signature[p]
            if ty.startswith("*"):
                signature[p] = ty
                attrs[(i,)] = [["tt.divisibility", 16]]
            elif ty.startswith(("i", "u")) and ty != "i1":
                value = self.scalars[p]
                if value == 1:
                    signature[p] = "constexpr"
                    constexprs[p] = 1
                    continue
                signature[p] = ty
                if value % 16 == 0:
                    attrs[(i,)] = [["tt.divisibility", 16]]
            else:
                signature[p] = ty
        return signature, constexprs, attrs


#: Triton's option dataclass of each backend (``GPUTarget.backend`` -> module, class): the keys its
#: ``backend.parse_options`` reads (it drops any other key unread).
_TRITON_OPTIONS = {"cuda": ("triton.backends.nvidia.compiler", "CUDAOptions"),
                   "hip": ("triton.backends.amd.compiler", "HIPOptions")}


def _options_class(backend: str) -> str:
    """The dotted name of ``backend``'s option dataclass, e.g. ``"hip"`` ->
    ``triton.backends.amd.compiler.HIPOptions``."""
    return ".".join(_TRITON_OPTIONS[backend])


@functools.lru_cache(maxsize=len(_TRITON_OPTIONS) + 1)
def triton_option_names(backend: str | None = None) -> tuple[str, ...]:
    """The compile options the installed Triton accepts for ``backend`` (``"cuda"``, ``"hip"``; None: for either,
    as a kernel file is read before its target is known), sorted: the fields of that backend's option
    dataclass (``CUDAOptions``, ``HIPOptions``), which ``compile_kernel`` hands to ``backend.parse_options``.
    Empty when Triton has no such backend here. E.g. ``"waves_per_eu"`` is among ``"hip"``'s only."""
    names: set[str] = set()
    for key, (module_name, class_name) in _TRITON_OPTIONS.items():
        if backend is not None and key != backend:
            continue
        try:
            options = getattr(importlib.import_module(module_name), class_name)
        except (ImportError, AttributeError):  # a Triton built without this backend
            continue
        names.update(f.name for f in dataclasses.fields(options))
    return tuple(sorted(names))


def check_target_options(spec: KernelSpec, target: str) -> None:
    """Every ``OPTIONS`` key of ``spec`` is an option of ``target``'s Triton backend (its ``parse_options``
    would drop another unread): a LayoutError naming the file, the option and the backend otherwise. E.g.
    ``{"waves_per_eu": 2}`` (``HIPOptions``) is refused for ``sm_90`` (the cuda backend)."""
    backend = parse_target(target)[0]
    accepted = triton_option_names(backend)
    if not accepted:  # a Triton without this backend: the compile says so
        return
    for key in spec.options:
        if key not in accepted:
            owners = [other for other in _TRITON_OPTIONS if other != backend and key in triton_option_names(other)]
            what = (f"an option of Triton's {owners[0]} backend only ({_options_class(owners[0])})" if owners
                    else "not a compile option of Triton")
            raise LayoutError(f"{Path(spec.path).name}: OPTIONS[{quote(key)}] is {what}; {target} compiles with "
                              f"its {backend} backend, whose options ({_options_class(backend)}) do not include it")


def triton_type_problem(ty: str) -> str | None:
    """Why Triton does not read ``ty`` as a parameter type (``"*fp16"``, ``"i32"``, ...), with the type it likely
    means (``"*float16"``: ``'*fp16'``); None when Triton reads it, or when Triton is not importable (the compile
    says so). Triton's own parser decides (``triton.language.str_to_ty``, what the compile calls)."""
    try:
        from triton.language import str_to_ty
    except ImportError:
        return None
    try:
        str_to_ty(ty, None)
        return None
    except Exception:  # Triton raises KeyError, IndexError, ValueError ... for a name it does not read
        pass
    prefix = re.match(r"(\*k?)?", ty)[0]
    base = ty[len(prefix):]
    try:
        from triton._utils import type_canonicalisation_dict as canonical
    except ImportError:
        canonical = {}
    if base in canonical:
        return f"not a Triton type (did you mean {quote(prefix + canonical[base])}?)"
    names = sorted({v for v in canonical.values() if v != "void"})
    hint = did_you_mean(ty, [prefix + n for n in names]) if names else ""
    return (f"not a Triton type{hint}; Triton's types: *T (a pointer) or T, for T in "
            f"{', '.join(names) or 'fp16, i32, ...'}")


def _check_keys(name: str, label: str, keys: Iterable[Any], valid: Iterable[str], what: str,
                listed: str | None = None) -> None:
    """A LayoutError for the first key of the dict ``label`` not among ``valid`` (``what`` says what a key
    names): it names the file, the dict and the key, with the closest valid names and all of them (or
    ``listed``, where they are too many for one line)."""
    valid = list(valid)
    for key in keys:
        if key not in valid:
            hint = did_you_mean(key, valid) if isinstance(key, str) else ""
            listed = listed or f"they are: {', '.join(valid) if valid else 'none'}"
            raise LayoutError(f"{name}: {label}[{quote(key)}] is not {what}{hint}; {listed}")


def _check_spec(name: str, module: Any, params: tuple[str, ...]) -> None:
    sig, cx, sc, te = (getattr(module, k) for k in ("SIGNATURE", "CONSTEXPRS", "SCALARS", "TENSORS"))
    options = getattr(module, "OPTIONS", {})
    for label, value in (("SIGNATURE", sig), ("CONSTEXPRS", cx), ("SCALARS", sc), ("TENSORS", te),
                         ("OPTIONS", options)):
        if type(value) is not dict:
            raise LayoutError(f"{name}: {label} must be a dict, got {type(value).__name__}")
    for p, ty in sig.items():
        if not isinstance(ty, str) or not ty:
            raise LayoutError(f"{name}: SIGNATURE[{quote(p)}] must be a Triton type such as \"*fp16\" or \"i32\", "
                              f"got {quote(ty)}")
    for label, value in (("SIGNATURE", sig), ("CONSTEXPRS", cx)):
        _check_keys(name, label, value, params, "a parameter of the kernel")
    for p, ty in sig.items():
        problem = triton_type_problem(ty)
        if problem:
            raise LayoutError(f"{name}: SIGNATURE[{quote(p)}] is {quote(ty)}, {problem}")
    for p in params:  # before SCALARS / TENSORS, whose keys name the parameters SIGNATURE types
        if p not in cx and p not in sig:
            raise LayoutError(f"{name}: parameter {quote(p)} is in neither SIGNATURE nor CONSTEXPRS")
    runtime = [p for p in params if p not in cx]
    _check_keys(name, "TENSORS", te, [p for p in runtime if sig[p].startswith("*")],
                "a pointer parameter of the kernel")
    _check_keys(name, "SCALARS", sc, [p for p in runtime if not sig[p].startswith("*")],
                "a scalar parameter of the kernel")
    accepted = triton_option_names()
    if accepted:
        _check_keys(name, "OPTIONS", options, accepted, "a compile option of Triton",
                    f"they are the fields of {' and '.join(map(_options_class, _TRITON_OPTIONS))} "
                    f"({len(accepted)} names, num_warps and num_stages among them)")
    for p, value in sc.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise LayoutError(f"{name}: SCALARS[{quote(p)}] must be a number, got {quote(value)}")
    warps = options.get("num_warps", 4)
    if isinstance(warps, bool) or not isinstance(warps, int) or not 1 <= warps <= MAX_NUM_WARPS \
            or warps & (warps - 1):
        raise LayoutError(f"{name}: OPTIONS['num_warps'] must be a power of two from 1 to {MAX_NUM_WARPS} (a CTA "
                          f"runs at most 1024 threads), got {quote(warps)}")
    for p in params:
        if p in cx:
            continue
        if sig[p].startswith("*"):
            if p not in te:
                raise LayoutError(f"{name}: pointer parameter {quote(p)} needs a shape in TENSORS")
        elif p not in sc:
            raise LayoutError(f"{name}: scalar parameter {quote(p)} needs a value in SCALARS")
    for p, t in te.items():
        if isinstance(t, list):
            shape, init = t, None
        elif isinstance(t, tuple) and len(t) == 2:
            shape, init = t
        else:
            raise LayoutError(f"{name}: TENSORS[{quote(p)}] must be a shape (list of positive ints) or a pair "
                              f"(shape, init), got {quote(t)}")
        if not isinstance(shape, list) or not all(isinstance(s, int) and not isinstance(s, bool) and s > 0
                                                  for s in shape):
            raise LayoutError(f"{name}: TENSORS[{quote(p)}] must be a shape (list of positive ints), got {quote(t)}")
        if init is not None and init != "zeros" and not (isinstance(init, tuple) and init[:1] == ("randint",)):
            raise LayoutError(f"{name}: TENSORS[{quote(p)}] init must be one of {_TENSOR_INITS}, got {quote(init)}")


@checked
def load_kernel_file(path: str | Path) -> KernelSpec:
    """Import (execute) a kernel file (module doc) and return its :class:`KernelSpec` (needs Triton to import
    it). Only call it on a file you would run yourself.

    Raises ``LayoutError`` naming the missing or inconsistent module-level name."""
    path = Path(path)
    if path.suffix != ".py" or not path.is_file():
        raise LayoutError(f"path must be an existing .py kernel file, got {quote(str(path))}")
    mod_name = f"_ll_kernel_{path.stem}_{abs(hash(str(path.resolve()))):x}"
    spec = importlib.util.spec_from_file_location(mod_name, path)
    if spec is None or spec.loader is None:  # never for a .py file: Python's source loader reads it
        raise LayoutError(f"path: Python must have a loader for the kernel file {quote(str(path))}, and has none")
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module  # Triton's JIT resolves the kernel's globals through its module
    try:
        spec.loader.exec_module(module)
    except ImportError as error:
        missing = getattr(error, "name", "") or ""
        if missing.split(".")[0] == "triton":
            raise LayoutError(f"{path.name}: {triton_needed(str(error))}") from None
        raise LayoutError(f"{path.name}: cannot import the kernel file: {error}") from None
    except SyntaxError as error:  # also a file that is not UTF-8 text
        raise LayoutError(f"{path.name}: not a valid Python file: {shorten(str(error.msg))} (line {error.lineno})") \
            from None
    except Exception as error:  # the file's own code failed: say what it raised, in one line
        raise LayoutError(f"{path.name}: running the kernel file raised {type(error).__name__}: "
                          f"{shorten(str(error))}") from None
    missing = [f"{k} ({what})" for k, what in _REQUIRED.items() if not hasattr(module, k)]
    signature, constexprs = getattr(module, "SIGNATURE", None), getattr(module, "CONSTEXPRS", {})
    if isinstance(signature, Mapping) and isinstance(constexprs, Mapping):
        for name, kind, holds in (("SCALARS", False, "values of"), ("TENSORS", True, "shapes of")):
            needed = [p for p, t in signature.items()
                      if p not in constexprs and isinstance(t, str) and t.startswith("*") == kind]
            if needed and not hasattr(module, name):
                missing.append(f"{name} ({holds} {', '.join(needed)})")
    if missing:
        raise LayoutError(f"{path.name}: a kernel file must define {' and '.join(missing)}; the format: {FORMAT_DOC}")
    for k in ("SCALARS", "TENSORS"):
        if not hasattr(module, k):
            setattr(module, k, {})
    kernel = module.KERNEL
    fn = getattr(kernel, "fn", None)
    if fn is None:
        raise LayoutError(f"{path.name}: KERNEL must be a @triton.jit function, got {type(kernel).__name__}")
    try:
        params = tuple(inspect.signature(fn).parameters) if inspect.isfunction(fn) else None
    except (TypeError, ValueError):
        params = None
    if params is None:
        raise LayoutError(f"{path.name}: KERNEL must be a @triton.jit function (its .fn a Python function), got "
                          f"KERNEL.fn = {quote(fn)}")
    _check_spec(path.name, module, params)
    grid = module.GRID  # a list, a tuple or an int: never iterated blindly (an endless iterator)
    grid = (grid,) if isinstance(grid, int) and not isinstance(grid, bool) else grid
    if not isinstance(grid, (list, tuple)) or not 1 <= len(grid) <= 3 \
            or not all(isinstance(g, int) and not isinstance(g, bool) and g > 0 for g in grid):
        raise LayoutError(f"{path.name}: GRID must be 1 to 3 positive ints (a tuple or a list), got {quote(module.GRID)}")
    grid = tuple(grid)
    return KernelSpec(
        name=path.stem, path=str(path), kernel=kernel, params=params,
        signature=dict(module.SIGNATURE), constexprs=dict(module.CONSTEXPRS), scalars=dict(module.SCALARS),
        tensors=dict(module.TENSORS), grid=grid, options=dict(getattr(module, "OPTIONS", {})),
        needs_allocator=bool(getattr(module, "NEEDS_ALLOCATOR", False)),
    )
