"""The fp8 cast of a matrix in its own flat order: ``C = fp8(scale X)`` and ``amax = max(amax, max |X|)``.

``C`` has ``X``'s flat layout, so the cast needs no tiles: element ``p`` of ``X`` (``rows x cols`` of them, any row
length) goes to byte ``p`` of ``C``. With ``G`` elements a 16-byte chunk (8 for 2-byte inputs, 4 for fp32), thread
``t`` of CTA ``b`` (``T`` threads, ``U`` chunks each) converts the chunks at positions ``G (U T b + T u + t)``: a
warp's loads and stores are contiguous. A chunk is one 16-byte load of ``X`` and one ``G``-byte store of ``C``; the
chunk across the end of ``X`` is read element by element (zeros past it: no ``|x|`` above the others) and stored
byte by byte. ``ops`` follows it with a transpose of ``C``'s bytes (``permute_bytes``) for ``T = C^T`` where the
rows of ``C`` or ``T`` 16 bytes do not align (``ops.launches.MISALIGNED_CAST``).

The amax: of 2-byte inputs on packed halves (``max.xorsign.abs``, exact), then a warp's by ``redux.sync`` and the
CTA's by one atomic (``permute.amax_epilogue``), as ``cast_chunks``. The parameters are every cast-transpose
kernel's (``permute.cast_params``; ``T``, ``tiles_n`` and ``tiles_m`` unused). Requires: ``X``'s address a multiple
of 16, ``C``'s of ``G``.

Example: ``emit_flat_cast_kernel("k", "bf16", "e4m3")``: 256 threads of 4 chunks, 8192 elements a CTA; a
``4095 x 11007`` matrix takes 5503 CTAs, the last chunk (elements ``45073657 .. 45073664``) read element by element.
"""

from __future__ import annotations

from linear_layouts.codegen.cast_chunks import (
    WARP_MAX, convert_lines, cvt4_function, load_function, maxabs_function, chunk_elements,
)
from linear_layouts.codegen.intrinsics import OP_PRELUDE, OP_PROLOGUE
from linear_layouts.codegen.permute import (
    CAST_FUNCTIONS, CAST_INPUTS, PermuteKernel, amax_epilogue, cast_params, check_cast_arguments, fitting_ctas,
    to_float,
)
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import quote
from linear_layouts.target import Target

__all__ = ["emit_flat_cast_kernel", "elements_per_cta", "MAX_CHUNKS"]

#: Chunks a thread holds in flight at most.
MAX_CHUNKS = 8


def elements_per_cta(input_format: str, warps: int = 8, chunks: int = 4) -> int:
    """Elements of ``X`` a CTA converts: ``32 W U G``. ``elements_per_cta("bf16") == 8192``."""
    return 32 * warps * chunks * chunk_elements(CAST_INPUTS[input_format])


def emit_flat_cast_kernel(name: str, input_format: str, fp8: str, warps: int = 8, chunks: int = 4,
                          target: Target | None = None) -> PermuteKernel:
    """CUDA C++ of the module doc's kernel for ``X`` of ``input_format`` (``permute.CAST_INPUTS``) into fp8 ``fp8``,
    CTAs of ``warps`` warps (1 to 32) and ``chunks`` chunks a thread (1 to ``MAX_CHUNKS``), launch bounds for the CTAs
    an SM of ``target`` holds. Its grid: ``ceil(rows cols / elements_per_cta)`` CTAs."""
    check_cast_arguments(name, input_format, fp8)
    for label, value, most in (("warps", warps, 32), ("chunks", chunks, MAX_CHUNKS)):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
            raise LayoutError(f"{label}: must be an int from 1 to {most}, got {quote(value)}")
    wi = CAST_INPUTS[input_format]
    g = chunk_elements(wi)
    threads = 32 * warps
    itype = {2: "unsigned short", 4: "unsigned"}[wi]
    shared = 4 * 32  # one float a warp for the amax
    ctas_per_sm = fitting_ctas(threads, shared, 24 + 8 * chunks, target)
    params = cast_params(itype)
    stg, words = ("ll_stg64", "c0, c1") if g == 8 else ("ll_stg32", "c0")
    byte = "(e < 4u ? c0 >> (8u * e) : c1 >> (8u * (e - 4u)))" if g == 8 else "(c0 >> (8u * e))"
    loads = [f"  const size_t p{u} = first + {threads * g * u}ull;" for u in range(chunks)]
    loads += [f"  const uint4 v{u} = ll_chunk_load(src_all, p{u}, p{u} < total, total);" for u in range(chunks)]
    converts = []
    for u in range(chunks):
        converts += ["  {", *[line[2:] for line in convert_lines(input_format, fp8, wi, f"v{u}")],
                     f"    if (p{u} + {g}u <= total) {stg}(cast_all + p{u}, {words});",
                     f"    else if (p{u} < total) for (unsigned e = 0u; e < {g}u; ++e) if (p{u} + e < total) "
                     f"ll_stg8(cast_all + p{u} + e, {byte});",
                     "  }"]
    body = [
        f"// {name}: C = fp8 {fp8}(scale X), amax = max(amax, max |X|); X rows x cols {input_format} at a 16-byte",
        f"//   aligned address, C at a multiple of {g}, both in X's flat order. launch: ceil(rows cols / "
        f"{threads * chunks * g}) CTAs, block = {threads}, dynamic shared = {shared} bytes.",
        f'extern "C" __global__ void __launch_bounds__({threads}, {ctas_per_sm}) {name}(',
        f"    {', '.join(f'{ty} {p}' for ty, p in params)}) {{",
        *OP_PROLOGUE,
        "  (void)trans_all; (void)tiles_n; (void)tiles_m;",
        "  const float scale = scale_ptr != nullptr ? *scale_ptr : scale_value;",
        "  float amax = 0.0f;",
        *(["  unsigned amax2 = 0u;  // the largest |x| of each half, packed (sign bits junk)"] if wi == 2 else []),
        "  const size_t total = (size_t)rows * cols;",
        f"  const size_t first = ((size_t)blockIdx.x * {threads * chunks}u + threadIdx.x) * {g}u;",
        *loads,
        *converts,
        *([f"  amax = fmaxf({to_float(input_format, 'amax2 & 0x7fffu')}, {to_float(input_format, '(amax2 >> 16) & 0x7fffu')});"]
          if wi == 2 else []),
        *amax_epilogue(0, warps, redux=True),
        "}",
    ]
    helpers = load_function(itype, wi, g) + WARP_MAX + cvt4_function(fp8) + (
        maxabs_function(input_format) if wi == 2 else [])
    source = OP_PRELUDE + CAST_FUNCTIONS + "\n".join(helpers + body) + "\n"
    return PermuteKernel(name, source, threads, shared, wi, 1, threads * chunks * g, g, g, False, 0, tuple(params))
