"""A corpus kernel file's launch as Triton's JIT sees it, without a GPU: its keyword arguments, the scalars
our engine is given at the first launch, every parameter's value in order, the JIT's ``ASTSource`` and
options for it, and the warm compile of its three variants (Triton's, model mode's, the measured
choice's) for ``sm_<arch>`` -- the device run then finds them in the caches; on the GPU, its arguments as
PyTorch values and the comparison of two outputs.
"""

from __future__ import annotations

import math
import time

#: float outputs agree when |hooked - Triton's| <= ATOL + RTOL * |Triton's| (atomics may add in another order)
RTOL = ATOL = 1e-2
#: the PyTorch dtype of each Triton element type of a kernel's pointer arguments
TORCH_DTYPES = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64",
                 "fp8e5": "float8_e5m2", "fp8e4nv": "float8_e4m3fn", "i8": "int8", "u8": "uint8", "i16": "int16",
                 "i32": "int32", "i64": "int64", "i1": "bool"}


def launch_kwargs(spec) -> dict:
    """The keyword arguments of the kernel file's launch: its constexprs and options (one dict: a kernel
    may take an option, such as ``num_stages``, as a constexpr parameter too)."""
    return {**spec.constexprs, **spec.options}


def launch_scalars(spec) -> dict[str, int]:
    """The integer arguments the JIT does not make constexprs (a value of 1 it does), by TTIR name: what
    the measured choice gives our engine at the first launch."""
    return {f"%{name}": value for name, value in spec.scalars.items()
            if isinstance(value, int) and not isinstance(value, bool) and value != 1}


class _StandIn:
    """A tensor argument for Triton's binder: a 16-byte aligned pointer (as PyTorch's allocations are) of a dtype."""

    def __init__(self, pointer: int, dtype: str) -> None:
        self.pointer, self.dtype = pointer, f"torch.{dtype}"

    def data_ptr(self) -> int:
        return self.pointer


def jit_source(spec, backend):
    """(ASTSource, options) exactly as Triton's JIT builds them for the kernel file's launch: its own binder
    and ``_pack_args`` on the file's scalars and stand-ins for the tensors (the same specialization, hence
    the same cache key, as the device's first call)."""
    from triton import knobs
    from triton.compiler import ASTSource
    from triton.runtime.jit import create_function_from_signature

    jit = spec.kernel
    binder = create_function_from_signature(jit.signature, jit.params, backend)
    args = [_StandIn((i + 1) << 20, TORCH_DTYPES[spec.signature[p][1:]]) if spec.signature[p].startswith("*")
            else spec.scalars[p] for i, p in enumerate(spec.params) if p not in spec.constexprs]
    kwargs = launch_kwargs(spec)
    kwargs["debug"] = jit.debug or knobs.runtime.debug  # what JITFunction.run adds
    kwargs["instrumentation_mode"] = knobs.compilation.instrumentation_mode
    if hasattr(knobs.compilation, "fpsan_homomorphic_casts"):
        kwargs["fpsan_homomorphic_casts"] = knobs.compilation.fpsan_homomorphic_casts
    bound, specialization, options = binder(*args, **kwargs)
    options, signature, constexprs, attrs = jit._pack_args(backend, kwargs, bound, specialization, options)
    return ASTSource(jit, signature, constexprs, attrs), options


def warm_one(path: str, arch: int) -> dict:
    """Compile one kernel file for ``sm_<arch>`` as the JIT will: Triton's, model mode's, and the measured
    choice's variant (where our engine rewrites it for the file's scalars). Seconds of each step."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler.compiler import make_backend

    import linear_layouts.triton as lt
    from linear_layouts.kernels.spec import load_kernel_file
    from linear_layouts.pipeline.triton_hook.measure import MEASURE_FLOOR, compile_variant
    from linear_layouts.pipeline.triton_hook.settings import settings_for
    from linear_layouts.pipeline.triton_hook.stage import engine_ttgir, text_digest

    spec = load_kernel_file(path)
    row: dict = {"kernel": spec.name}
    target = GPUTarget("cuda", arch, 32)
    try:
        start = time.time()
        source, options = jit_source(spec, make_backend(target))
        plain = triton.compile(source, target=target, options=options.__dict__)
        row["triton_s"] = round(time.time() - start, 2)
        start = time.time()
        with lt.enabled("model"):
            model = triton.compile(source, target=target, options=options.__dict__)
        row["model_s"] = round(time.time() - start, 2)
        row["model"] = getattr(model.metadata, "linear_layouts", None)
        start = time.time()
        settings = settings_for("measured")
        outcome = engine_ttgir(plain.asm["ttir"], plain.asm["ttgir"], timeout_s=settings.timeout_s,
                               max_ops=settings.max_ops, scalars=launch_scalars(spec), min_gain=MEASURE_FLOOR,
                               narrowing=True)  # measured mode's own call (triton_hook.measure)
        row["engine_s"] = round(time.time() - start, 2)
        row["measured_candidate"] = outcome.ttgir is not None
        if outcome.ttgir is not None:
            start = time.time()
            with lt.enabled("measured"):
                ours = compile_variant(plain, outcome.ttgir, text_digest(plain.asm["ttgir"]), options, settings)
            row["variant_s"] = round(time.time() - start, 2)
            row["variant_compiled"] = ours is not None
    except Exception as error:  # noqa: BLE001 - recorded: the JIT will meet the same error on the device
        row["error"] = why(error)
    return row


def why(error: BaseException) -> str:
    """One line for an exception: its last line, or its cause's where the last line is a source caret."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    text = lines[-1] if lines else ""
    if text in ("", "^") and error.__cause__ is not None:
        return why(error.__cause__)
    return f"{type(error).__name__}: {text[:300]}"


def full_args(spec, args: list) -> list:
    """Every parameter's value in order (constexprs included), as a compiled kernel's launcher takes them."""
    runtime = iter(args)
    return [spec.constexprs[p] if p in spec.constexprs else next(runtime) for p in spec.params]


def torch_args(spec, seed: int = 0) -> list:
    """The kernel's runtime arguments in order (constexprs left out) as PyTorch values on the GPU: tensors as
    TENSORS says (zeros, integers in a range, else random normal x 0.5, small fp8 bit patterns, integers
    in [0, 64)), scalars as SCALARS says."""
    import torch

    generator = torch.Generator(device="cuda").manual_seed(seed)
    args = []
    for name in spec.params:
        if name in spec.constexprs:
            continue
        kind = spec.signature[name]
        if not kind.startswith("*"):
            args.append(spec.scalars[name])
            continue
        entry = spec.tensors[name]
        shape, init = (entry, None) if not (isinstance(entry, (list, tuple)) and len(entry) == 2
                                            and isinstance(entry[0], list)) else entry
        shape = tuple(int(n) for n in shape)
        element = kind[1:]
        dtype = getattr(torch, TORCH_DTYPES[element])
        if init == "zeros":
            tensor = torch.zeros(shape, dtype=dtype, device="cuda")
        elif isinstance(init, (list, tuple)) and init and init[0] == "randint":
            tensor = torch.randint(int(init[1]), int(init[2]), shape, generator=generator, device="cuda").to(dtype)
        elif element.startswith("fp8"):
            tensor = torch.randint(0, 64, shape, generator=generator, device="cuda", dtype=torch.uint8).view(dtype)
        elif element in ("fp16", "bf16", "fp32", "fp64"):
            tensor = (torch.randn(shape, generator=generator, device="cuda") * 0.5).to(dtype)
        elif element == "i1":
            tensor = torch.randint(0, 2, shape, generator=generator, device="cuda").bool()
        else:
            tensor = torch.randint(0, 64, shape, generator=generator, device="cuda").to(dtype)
        args.append(tensor)
    return args


def compare(a, b) -> tuple[bool, float]:
    """(equal within the tolerance, largest difference) of two tensors of one dtype."""
    import torch

    if not (a.dtype.is_floating_point or a.dtype in (torch.float8_e5m2, torch.float8_e4m3fn)):
        diff = (a.long() - b.long()).abs() if a.dtype != torch.bool else (a != b).long()
        worst = float(diff.max()) if diff.numel() else 0.0
        return worst == 0.0, worst
    x, y = a.double(), b.double()
    same = (x == y) | (x.isnan() & y.isnan())
    diff = torch.where(same, torch.zeros_like(x), (x - y).abs())
    worst = float(diff.nan_to_num(math.inf).max()) if diff.numel() else 0.0
    ok = bool((same | (diff <= ATOL + RTOL * y.abs())).all())
    return ok, worst
