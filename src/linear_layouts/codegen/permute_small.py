"""A batch of small blocks permuted inside themselves: runs of whole blocks through shared memory.

``out = x.permute(dims)`` where the outermost dim stays outermost and every block of the other dims is dense on
both sides: ``count`` blocks of ``E`` elements of ``w`` bytes, block ``b`` at element ``b E`` of the input and of the
output. Inside a block the permutation is a fixed map ``f``: the block's dims ``(size_k, src_stride_k,
dst_stride_k)`` send the block's output element ``o = sum_k i_k dst_stride_k`` to its input element ``f(o) = sum_k
i_k src_stride_k`` (``0 <= i_k < size_k``). A ``3 x 5`` transpose: dims ``(3, 5, 1)``, ``(5, 1, 3)``; output
element ``o = 3 c + r`` reads input element ``5 r + c``.

CTA ``g`` takes runs ``g, g + G, ...`` (``G = gridDim.x``) of ``R`` blocks (``R E w`` bytes, the last run shorter):
one contiguous chunk ``[s, s + n)`` of the input, one ``[d, d + n)`` of the output, ``T`` threads:

=======  =======================================================================================================
step     what each thread does
=======  =======================================================================================================
load     the chunk's 16-byte slots at absolute aligned addresses (``floor(s / 16) 16 + 16 k``, ``k = t, t + T,
         ...``): whole slots by one 16-byte load, the two partial ones at the chunk's ends element by element;
         chunk byte ``p`` goes to shared byte ``layout(s mod 16 + p)`` (``SharedLayout``), so every whole slot is
         one aligned 16-byte shared store
gather   after a barrier, the output's 16-byte slots (``floor(d / 16) 16 + 16 k``): element ``e`` of slot ``k`` is
         output element ``j = (16 k - d mod 16) / w + e`` of the chunk, block ``j / E``, input element ``E (j / E)
         + f(j mod E)`` read from shared (``w`` bytes); ``E`` and the block's dims are compile-time constants,
         so each division is a multiply-high
store    a whole slot as one 16-byte store; a partial one element by element
=======  =======================================================================================================

No per-element 64-bit division: the run's base is ``64``-bit, every in-chunk index ``32``-bit, divided by
constants. Any element-aligned ``s`` and ``d`` work (the slots are absolute), so the launch needs no vector
alignment.

**Shared bank conflicts.** The gather's reads are ``w``-byte loads whose addresses follow ``f``: for a transpose
of ``r x c`` blocks, lanes reading ``c`` apart, which can put a warp's lanes on a few banks. The chunk's shared
layout is one of ``SHARED_LAYOUTS`` — ``linear`` (byte ``x`` at ``x``), ``padded`` (16 bytes after every 128:
``x + 16 floor(x / 128)``) or ``swizzled`` (the 16-byte slot XORed with the 128-byte row: ``x XOR 16 (floor(x /
128) mod 8)``) — each of which keeps the loads' 16-byte stores conflict-free (8 lanes a phase write 8 slots of
one 128-byte row); ``choose_shared_layout`` counts the wavefronts of every gather read of a chunk at aligned
addresses with THE bank rule (``analysis.bank_simulator.instruction_wavefronts``) and takes the layout with the
fewest (the first of the list on ties).

Example: ``emit_small_kernel("k", 4, ((3, 5, 1), (5, 1, 3)), 136)``: fp32 ``3 x 5`` transposes, 136 blocks (8160
bytes) a run; ``(100000, 3, 5)`` is 736 runs.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from linear_layouts.analysis.bank_simulator import instruction_wavefronts
from linear_layouts.codegen.elements import check_element_bytes, cpp_storage_type
from linear_layouts.codegen.intrinsics import OP_PRELUDE, OP_PROLOGUE
from linear_layouts.codegen.permute import PermuteKernel
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import quote

__all__ = ["SmallBlockKernel", "emit_small_kernel", "block_map", "check_block", "shared_address",
           "choose_shared_layout", "read_wavefronts", "SHARED_LAYOUTS", "SLOT_BYTES"]

#: The chunk's shared layouts (module doc), in order of preference on ties.
SHARED_LAYOUTS = ("linear", "padded", "swizzled")
#: The width of a global access and of a shared slot: 16 bytes.
SLOT_BYTES = 16
#: The largest block ``emit_small_kernel`` takes, in elements (its in-block indices are 32-bit).
MAX_BLOCK_ELEMENTS = 1 << 20
#: The shared load of ``w`` bytes at ``q`` (the 8- and 16-bit forms return the low bits of a word).
_SHARED_LOAD = {1: "ll_lds8({q})", 2: "ll_lds16({q})", 4: "ll_lds32({q})"}
_SHARED_STORE = {1: "ll_sts8", 2: "ll_sts16", 4: "ll_sts32"}


def check_block(element_bytes: int, block: tuple[tuple[int, int, int], ...]) -> int:
    """``E``, the block's elements, where ``block`` (``(size, src_stride, dst_stride)`` per dim, sizes >= 2) is a
    dense block on both sides: each side's strides, ordered, are the row-major strides of its sizes. LayoutError
    naming ``block`` otherwise. ``check_block(4, ((3, 5, 1), (5, 1, 3)))`` is 15."""
    check_element_bytes(element_bytes)
    if not isinstance(block, tuple) or not block or any(
            not isinstance(d, tuple) or len(d) != 3 or any(isinstance(x, bool) or not isinstance(x, int) for x in d)
            for d in block):
        raise LayoutError(f"block: must be a non-empty tuple of (size, src_stride, dst_stride) int triples, got "
                          f"{quote(block)}")
    if any(size < 2 for size, _, _ in block):
        raise LayoutError(f"block: every size must be 2 or more (size-1 dims move nothing), got {quote(block)}")
    elements = math.prod(size for size, _, _ in block)
    if elements > MAX_BLOCK_ELEMENTS:
        raise LayoutError(f"block: {elements} elements exceed the {MAX_BLOCK_ELEMENTS} of a block")
    for side in (1, 2):
        stride = 1
        for d in sorted(block, key=lambda d: d[side]):
            if d[side] != stride:
                raise LayoutError(f"block: the {('src', 'dst')[side - 1]} strides of {quote(block)} are not the "
                                  "row-major strides of a dense block")
            stride *= d[0]
    return elements


def block_map(block: tuple[tuple[int, int, int], ...]) -> list[int]:
    """``f``: for each output element ``o`` of a block, the input element it reads (module doc).

    >>> block_map(((2, 3, 1), (3, 1, 2)))   # a 2 x 3 transpose: output (c, r) = 2 c + r reads 3 r + c
    [0, 3, 1, 4, 2, 5]
    """
    out = [0]
    for size, src, _ in sorted(block, key=lambda d: -d[2]):  # output order: the outermost dim first
        out = [base + i * src for base in out for i in range(size)]
    return out


def shared_address(layout: str, x: int) -> int:
    """The shared byte of chunk byte ``x`` (counted from the aligned slot before the chunk) in ``layout``:
    ``shared_address("padded", 130) == 146``, ``shared_address("swizzled", 130) == 146``."""
    if layout == "linear":
        return x
    if layout == "padded":
        return x + SLOT_BYTES * (x >> 7)
    if layout == "swizzled":
        return x ^ (SLOT_BYTES * ((x >> 7) & 7))
    raise LayoutError(f"layout: must be one of {SHARED_LAYOUTS}, got {quote(layout)}")


def _c_address(layout: str, x: str) -> str:
    """C expression of the shared window address of ``shared_address(layout, x)`` (``smem +``) for an unsigned C
    expression ``x``."""
    if layout == "linear":
        return f"(smem + {x})"
    if layout == "padded":
        return f"(smem + {x} + (({x} >> 7) << 4))"
    return f"(smem + ({x} ^ ((({x} >> 7) & 7u) << 4)))"


def _shared_bytes(layout: str, chunk: int) -> int:
    """Shared bytes of a chunk of at most ``chunk`` bytes at any offset ``< 16`` in ``layout``."""
    top = -(-(chunk + SLOT_BYTES) // SLOT_BYTES) * SLOT_BYTES
    return top + SLOT_BYTES * (top >> 7) if layout == "padded" else top


def _rotation(element_bytes: int) -> tuple[int, int]:
    """``(groups, unit)``: a rotated gather's lane ``l`` starts its slot at element ``unit ((l / 8) mod groups)``
    (a 4-byte word, or one 8-byte element, per group of 8 lanes: the phase's lanes then ask for different banks
    where the plain order asks the same word offset of every slot)."""
    per = SLOT_BYTES // element_bytes
    return min(4, per), max(1, 4 // element_bytes)


def read_wavefronts(element_bytes: int, block: tuple[tuple[int, int, int], ...], run: int, threads: int,
                    layout: str, rotated: bool = False) -> int:
    """Wavefronts of every gather read (one ``w``-byte shared load per lane and slot element) of a whole chunk of
    ``run`` blocks at 16-byte aligned addresses, summed over the CTA's warps (THE bank rule:
    ``instruction_wavefronts``); ``rotated``: each lane's slot elements in the rotated order (``_rotation``)."""
    w, f = element_bytes, block_map(block)
    groups, unit = _rotation(w)
    e = len(f)
    total = run * e * w
    slots = -(-total // SLOT_BYTES)
    per = SLOT_BYTES // w
    count = 0
    for first in range(0, slots, 32):  # a warp's 32 lanes take 32 consecutive slots
        lanes = range(first, min(first + 32, slots))
        for k in range(per):
            starts, active = [], []
            for lane in range(32):
                j = (first + lane) * per + ((k + unit * (lane // 8 % groups)) % per if rotated else k)
                ok = first + lane in lanes and j < run * e
                starts.append(shared_address(layout, (j // e * e + f[j % e]) * w) if ok else 0)
                active.append(ok)
            if any(active):
                count += instruction_wavefronts(starts, w, active=active)
    return count


@functools.lru_cache(maxsize=1024)
def choose_shared_layout(element_bytes: int, block: tuple[tuple[int, int, int], ...], run: int,
                         threads: int) -> tuple[str, bool]:
    """``(layout, rotated)``: the ``SHARED_LAYOUTS`` entry and gather order whose reads take the fewest wavefronts
    (``read_wavefronts``; on ties the first layout, the plain order first). fp32 ``4 x 4`` transposes (lanes 16
    bytes apart on 8 banks): ``("padded", False)``; uint8 ``2 x 2`` ones (lanes 16 bytes apart, one word offset):
    ``("linear", True)``."""
    options = [(layout, rotated) for rotated in (False, True) for layout in SHARED_LAYOUTS]
    costs = {option: read_wavefronts(element_bytes, block, run, threads, *option) for option in options}
    return min(options, key=lambda option: costs[option])


@dataclass(frozen=True)
class SmallBlockKernel(PermuteKernel):
    """The module doc's kernel: ``run`` blocks of ``block_elements`` a CTA's iteration, shared layout ``layout``.
    Its parameters are ``(src_all, dst_all, count)``; ``runs(count)`` is the grid that gives each CTA one run."""

    run: int = 1
    block_elements: int = 1
    layout: str = "linear"
    rotated: bool = False

    def runs(self, count: int) -> int:
        """Runs of ``count`` blocks: ``ceil(count / run)``."""
        return -(-count // self.run)


def _element_lines(w: int, e: int, block, name: str) -> list[str]:
    """C lines setting ``unsigned {name}`` to the chunk's input element of output element ``j`` (an unsigned in
    scope): block ``j / E``, in-block ``f(j mod E)`` from the block's dims (module doc), constants folded."""
    dims = sorted(block, key=lambda d: d[2])  # innermost output dim first
    lines = [f"const unsigned b_ = j / {e}u;", "unsigned o_ = j - b_ * " f"{e}u;", f"unsigned {name} = b_ * {e}u;"]
    for k, (size, src, _) in enumerate(dims):
        if k == len(dims) - 1:
            lines.append(f"{name} += o_ * {src}u;")
        else:
            lines += [f"{{ const unsigned q_ = o_ / {size}u; {name} += (o_ - q_ * {size}u) * {src}u; o_ = q_; }}"]
    return lines


def _load_shared(w: int, address: str, out: str) -> list[str]:
    """C lines reading the ``w``-byte element at shared byte ``address`` into ``out`` (``unsigned``, or for 8 bytes
    ``unsigned {out}_lo, {out}_hi``)."""
    if w == 8:
        return [f"unsigned {out}_lo, {out}_hi; ll_lds64({address}, {out}_lo, {out}_hi);"]
    return [f"const unsigned {out} = {_SHARED_LOAD[w].format(q=address)};"]


def emit_small_kernel(name: str, element_bytes: int, block: tuple[tuple[int, int, int], ...], run: int,
                      warps: int = 8, layout: str | None = None, rotated: bool | None = None) -> SmallBlockKernel:
    """CUDA C++ of the module doc's kernel ``name(const T* src_all, T* dst_all, unsigned long long count)`` for
    ``element_bytes``-byte elements (1, 2, 4, 8), blocks ``block`` (``check_block``), ``run`` blocks a CTA's chunk
    (at most 64 KiB), ``warps`` warps (1 to 32), shared ``layout`` (``SHARED_LAYOUTS``; None:
    ``choose_shared_layout``), gather order ``rotated`` (``read_wavefronts``; None: ``choose_shared_layout``'s).
    Launch on any 1-D grid (``runs(count)`` CTAs: one run each) with
    ``shared_bytes`` of dynamic shared memory.

    Example: ``emit_small_kernel("k", 1, ((2, 2, 1), (2, 1, 2)), 2048)``: uint8 ``2 x 2`` transposes, 8 KiB a run."""
    w = check_element_bytes(element_bytes)
    if not isinstance(name, str) or not name.isidentifier():
        raise LayoutError(f"name: {quote(name)} is not a C identifier")
    e = check_block(w, block)
    if isinstance(warps, bool) or not isinstance(warps, int) or not 1 <= warps <= 32:
        raise LayoutError(f"warps: must be an int from 1 to 32, got {quote(warps)}")
    if isinstance(run, bool) or not isinstance(run, int) or run < 1 or run * e * w > 1 << 16:
        raise LayoutError(f"run: must be an int >= 1 with run * {e} elements * {w} bytes <= 64 KiB, got {quote(run)}")
    threads = 32 * warps
    chosen = choose_shared_layout(w, block, run, threads)
    layout = chosen[0] if layout is None else layout
    rotated = chosen[1] if rotated is None else rotated
    if not isinstance(rotated, bool):
        raise LayoutError(f"rotated: must be a bool or None, got {quote(rotated)}")
    if layout not in SHARED_LAYOUTS:
        raise LayoutError(f"layout: must be one of {SHARED_LAYOUTS} or None, got {quote(layout)}")
    t = cpp_storage_type(w)
    chunk = run * e * w
    per_thread = -(-(chunk // SLOT_BYTES + 2) // threads)  # slots of a chunk at any offset, per thread
    per = SLOT_BYTES // w
    words = SLOT_BYTES // 4
    groups, unit = _rotation(w)
    address = functools.partial(_c_address, layout)
    sts_element = (f"ll_sts64({address('a_')}, (unsigned)v_, (unsigned)(v_ >> 32));" if w == 8
                   else f"{_SHARED_STORE[w]}({address('a_')}, (unsigned)v_);")
    body = [
        f"// {name}: count blocks of {e} {8 * w}-bit elements, each permuted inside itself (output element o reads",
        f"//   input element f(o)); {run} blocks ({chunk} bytes) a run, runs blockIdx.x, + gridDim.x, ...; shared layout "
        f"{layout}{', rotated gather' if rotated else ''}.",
        f"//   launch: any 1-D grid (ceil(count / {run}) CTAs: one run each), block = {threads}, dynamic shared = "
        f"{_shared_bytes(layout, chunk)} bytes.",
        f'extern "C" __global__ void __launch_bounds__({threads}) {name}(',
        f"    const {t}* __restrict__ src_all, {t}* __restrict__ dst_all, unsigned long long count) {{",
        *OP_PROLOGUE,
        f"  const unsigned long long runs = (count + {run - 1}ull) / {run}ull;",
        "  for (unsigned long long r = blockIdx.x; r < runs; r += gridDim.x) {",
        f"    const unsigned long long first = r * {run}ull;",
        f"    const unsigned n = (count - first < {run}ull ? (unsigned)(count - first) : {run}u) * {e * w}u;  "
        "// the chunk's bytes",
        f"    const unsigned char* s = reinterpret_cast<const unsigned char*>(src_all) + first * {e * w}ull;",
        f"    unsigned char* d = reinterpret_cast<unsigned char*>(dst_all) + first * {e * w}ull;",
        "    const unsigned sm = (unsigned)((size_t)s & 15u), dm = (unsigned)((size_t)d & 15u);",
        "    const unsigned slots_in = (sm + n + 15u) >> 4, slots_out = (dm + n + 15u) >> 4;",
        "    const uint4* s16 = reinterpret_cast<const uint4*>(s - sm);",
        "    // load: the input slots, whole ones by 16-byte loads (all issued before the first shared store)",
        f"    uint4 {', '.join(f'x{i}' for i in range(per_thread))};",
    ]
    for i in range(per_thread):
        k = f"(threadIdx.x + {i * threads}u)"
        body.append(f"    if ({k} < slots_in && {k} * 16u >= sm && {k} * 16u + 16u <= sm + n) x{i} = s16[{k}];")
    for i in range(per_thread):
        k = f"(threadIdx.x + {i * threads}u)"
        body += [
            f"    if ({k} < slots_in) {{",
            f"      if ({k} * 16u >= sm && {k} * 16u + 16u <= sm + n) {{",
            f"        ll_sts128({address(f'({k} * 16u)')}, x{i}.x, x{i}.y, x{i}.z, x{i}.w);",
            "      } else {  // a slot across an end of the chunk: its elements inside, one by one",
            f"        for (unsigned a_ = {k} * 16u; a_ < {k} * 16u + 16u; a_ += {w}u)",
            f"          if (a_ >= sm && a_ < sm + n) {{ const unsigned long long v_ = "
            f"*reinterpret_cast<const {t}*>(s + (a_ - sm)); {sts_element} }}",
            "      }",
            "    }",
        ]
    body += ["    ll_bar_cta();", "    // gather and store: the output slots"]
    for i in range(per_thread):
        k = f"(threadIdx.x + {i * threads}u)"
        body += [
            f"    if ({k} < slots_out) {{",
            f"      const int p0 = (int)({k} * 16u) - (int)dm;  // the slot's first byte in the output chunk",
            "      if (p0 >= 0 && p0 + 16 <= (int)n) {",
            f"        unsigned y[{words}] = {{{', '.join('0u' for _ in range(words))}}};",
        ]
        if rotated:
            body.append(f"        const unsigned g_ = (lane >> 3) & {groups - 1}u;  // the rotated order's start")
        for el in range(per):
            step = f"((g_ * {unit}u + {el}u) & {per - 1}u)" if rotated else f"{el}u"
            inner = [f"const unsigned j = (unsigned)p0 / {w}u + {step};", *_element_lines(w, e, block, "i_"),
                     *_load_shared(w, address(f"(sm + i_ * {w}u)"), "v_")]
            if w == 8:
                inner += [f"y[{2 * el}] = v__lo; y[{2 * el + 1}] = v__hi;"]
            elif w == 4:
                inner += [f"y[{el}] = v_;"]
            else:
                inner += [f"y[{el * w // 4}] |= v_ << {8 * (el * w % 4)}u;"]
            body.append("        { " + " ".join(inner) + " }")
        if rotated:  # element el of the rotated order belongs g_ words (two for 8-byte elements) higher
            body += ["        if (g_ & 1u) { " + ("const unsigned t0 = y[0], t1 = y[1]; y[0] = y[2]; y[1] = y[3]; y[2] = t0; "
                                                   "y[3] = t1; }" if w == 8 else
                                                   "const unsigned t3 = y[3]; y[3] = y[2]; y[2] = y[1]; y[1] = y[0]; "
                                                   "y[0] = t3; }")]
            if groups == 4:
                body.append("        if (g_ & 2u) { const unsigned t0 = y[0], t1 = y[1]; y[0] = y[2]; y[1] = y[3]; "
                            "y[2] = t0; y[3] = t1; }")
        body += [
            f"        ll_stg128(d + p0, {', '.join(f'y[{q}]' for q in range(words))});",
            "      } else {  // a slot across an end: its elements inside, one by one",
            f"        for (int p = p0; p < p0 + 16; p += {w})",
            "          if (p >= 0 && p < (int)n) {",
            f"            const unsigned j = (unsigned)p / {w}u; " + " ".join(_element_lines(w, e, block, "i_")),
            f"            const unsigned a_ = sm + i_ * {w}u;",
            (f"            unsigned lo_, hi_; ll_lds64({address('a_')}, lo_, hi_); *reinterpret_cast<{t}*>(d + p) = "
             "(unsigned long long)lo_ | (unsigned long long)hi_ << 32;" if w == 8 else
             f"            *reinterpret_cast<{t}*>(d + p) = ({t}){_SHARED_LOAD[w].format(q=address('a_'))};"),
            "          }",
            "      }",
            "    }",
        ]
    body += ["    ll_bar_cta();  // the next run reuses the shared chunk", "  }", "}"]
    return SmallBlockKernel(name, OP_PRELUDE + "\n".join(body) + "\n", threads, _shared_bytes(layout, chunk), w,
                            1, 1, per, per, True, 0,
                            ((f"const {t}* __restrict__", "src_all"), (f"{t}* __restrict__", "dst_all"),
                             ("unsigned long long", "count")),
                            run=run, block_elements=e, layout=layout, rotated=rotated)
