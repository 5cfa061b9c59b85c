"""The memory instructions generated kernels call, as small inline functions: one definition for the
GPU (inline PTX) and one for the CPU emulator (``codegen.emulate``), so the very same kernel source
runs on both.

Shared memory is addressed by 32-bit shared-window byte addresses (``ll_smem_base()``).  Names:
``ll_sts{8,16,32,64,128}`` / ``ll_lds{8,16,32,64,128}`` (``st/ld.shared`` u8, u16, b32, v2.b32,
v4.b32; the 8/16-bit forms take and return the low bits of a 32-bit word),
``ll_stsm_x{1,2,4}[_t]`` / ``ll_ldsm_x{1,2,4}[_t]`` (``stmatrix``/``ldmatrix`` .m8n8[.trans].b16),
``ll_stg{8,16,32,64,128}`` (``st.global`` u8, u16 (the low bits of a 32-bit word), b32, v2, v4; inline
PTX keeps the stores in the emitted order: ``global_memory.store_order``), ``ll_bar_cta()`` (``bar.sync 0``),
``ll_bar_warp()`` (``bar.warp.sync``).  ``STREAMING_FUNCTIONS`` (kernels that use them put it after the
prelude; it defines both forms, the host one under ``LL_HOST``): ``ll_ldg128_na``
(``ld.global.nc.L1::no_allocate.v4.b32``), ``ll_stg128_cs`` (``st.global.cs.v4.b32``: streaming,
evict first).  ``prefetch_functions(N)`` (likewise after the prelude): ``ll_ldg128_l2p{N}``
(``ld.global.nc.L2::{N}B.v4.u32``: the 16-byte load also asks L2 to fetch the aligned ``N``-byte
block around it, N in ``L2_PREFETCH_BYTES``) and ``ll_ldg128_na_l2p{N}`` (with ``.L1::no_allocate``).
``ASYNC_COPY_FUNCTIONS`` (likewise): ``ll_cp_async16[_l2p{N}]<OFFSET>(a, p)`` (``cp.async.cg.shared.global``
16 bytes from global ``p + OFFSET`` to shared ``a``), ``ll_cp_async_commit()``, ``ll_cp_async_wait<N>()`` (until at most ``N``
of this thread's committed groups are pending).  ``__shfl_sync``, ``__shfl_xor_sync`` and ``__byte_perm`` (``prmt``) are CUDA's.

The prelude is a header: ``LL_DEV`` helpers are inline functions (``__device__ __forceinline__``, external
linkage), so a kernel that calls only some of them compiles without a warning about the others (a ``static``
one would be reported "declared but never referenced"); each is inlined where it is called, as before.

Example: ``DEVICE_PRELUDE + kernel_body`` is what nvcc / NVRTC compile.
"""

from __future__ import annotations

from linear_layouts.target import DEFAULT_TARGET

__all__ = ["DEVICE_PRELUDE", "KERNEL_PROLOGUE", "HOST_PRELUDE", "STREAMING_FUNCTIONS", "MATRIX_FUNCTIONS",
           "vector_function", "matrix_function", "L2_PREFETCH_BYTES", "global_load_function", "prefetch_functions",
           "ASYNC_COPY_FUNCTIONS", "async_copy_function", "DEPENDENT_LAUNCH_FUNCTIONS", "DEPENDENT_LAUNCH_PROLOGUE",
           "OP_PRELUDE", "OP_PROLOGUE"]


def vector_function(store: bool, nbytes: int) -> str:
    """Name of the shared vector access helper, e.g. ``ll_sts128`` for a 16-byte store."""
    return f"ll_{'sts' if store else 'lds'}{8 * nbytes}"


def matrix_function(store: bool, matrices: int, trans: bool) -> str:
    """Name of the stmatrix/ldmatrix helper, e.g. ``ll_ldsm_x4_t``."""
    return f"ll_{'stsm' if store else 'ldsm'}_x{matrices}{'_t' if trans else ''}"


def _matrix_defs() -> list[str]:
    out = []
    for store in (True, False):
        for n in (1, 2, 4):
            for trans in (False, True):
                name = matrix_function(store, n, trans)
                op = f"{'stmatrix' if store else 'ldmatrix'}.sync.aligned.m8n8.x{n}{'.trans' if trans else ''}.shared.b16"
                regs = ", ".join(f"%{i + 1}" if store else f"%{i}" for i in range(n))
                if store:
                    params = ", ".join(f"unsigned x{i}" for i in range(n))
                    ins = ", ".join(f'"r"(x{i})' for i in range(n))
                    out.append(f'LL_DEV void {name}(unsigned a, {params}) {{ asm volatile("{op} [%0], {{{regs}}};" :: "r"(a), {ins} : "memory"); }}')
                else:
                    params = ", ".join(f"unsigned& x{i}" for i in range(n))
                    outs = ", ".join(f'"=r"(x{i})' for i in range(n))
                    out.append(f'LL_DEV void {name}(unsigned a, {params}) {{ asm volatile("{op} {{{regs}}}, [%{n}];" : {outs} : "r"(a) : "memory"); }}')
    return out


#: PTX of ``ll_stg{bits}`` (the 8- and 16-bit forms store the low bits of a 32-bit register).
_STORE_PTX = {8: "st.global{hint}.u8", 16: "st.global{hint}.u16", 32: "st.global{hint}.b32",
              64: "st.global{hint}.v2.b32", 128: "st.global{hint}.v4.b32"}


def _global_store(bits: int, host: bool, hint: str = "") -> str:
    """``template <unsigned OFFSET = 0u> void ll_stg{bits}[_{hint}](void* p, unsigned x0, ...)``: store
    the words ``x0 ...`` (the low ``bits`` of ``x0`` below 32) at byte ``p + OFFSET``.  ``OFFSET`` is
    the instruction's immediate (an address computed outside the asm costs an add and two registers
    per store: 102 registers instead of 64-odd for a 16-store tile); ``asm volatile`` keeps the stores
    in the emitted order (``global_memory.store_order``).  ``host``: the emulator's memcpy.

    Example: ``_global_store(32, False)`` emits ``st.global.b32 [%0+%2], %1;``."""
    words = max(1, bits // 32)
    name = f"ll_stg{bits}" + (f"_{hint}" if hint else "")
    params = ", ".join(f"unsigned x{i}" for i in range(words))
    head = f"template <unsigned OFFSET = 0u> LL_DEV void {name}(void* p, {params}) "
    if host:
        ctype = {8: "unsigned char", 16: "unsigned short"}.get(bits, "unsigned")
        values = ", ".join(f"({ctype})x{i}" for i in range(words))
        return (head + f"{{ {ctype} v[{words}] = {{{values}}}; "
                f"std::memcpy(static_cast<unsigned char*>(p) + OFFSET, v, {bits // 8}); }}")
    regs = ", ".join(f"%{i + 1}" for i in range(words))
    operands = ", ".join(f'"r"(x{i})' for i in range(words))
    data = regs if words == 1 else "{" + regs + "}"
    ptx = _STORE_PTX[bits].format(hint=f".{hint}" if hint else "")
    return head + (f'{{ asm volatile("{ptx} [%0+%{words + 1}], {data};" :: "l"(p), {operands}, "n"(OFFSET) '
                   ': "memory"); }')


MATRIX_FUNCTIONS = tuple(matrix_function(s, n, t) for s in (True, False) for n in (1, 2, 4) for t in (False, True))

#: First lines of every generated kernel body (conversion, transpose and gather kernels): the thread's
#: ``lane`` and ``warp`` and the shared window's base address ``smem``, each marked used.
KERNEL_PROLOGUE = (
    "  const unsigned lane = threadIdx.x & 31u;",
    "  const unsigned warp = threadIdx.x >> 5;",
    "  const unsigned smem = ll_smem_base();",
    "  (void)smem; (void)lane; (void)warp;",
)

DEVICE_PRELUDE = "\n".join([
    "#ifndef LL_PRELUDE",
    "#define LL_PRELUDE",
    "#define LL_DEV __device__ __forceinline__",
    "LL_DEV unsigned ll_smem_base() { extern __shared__ __align__(16) unsigned char ll_smem[]; "
    "return (unsigned)__cvta_generic_to_shared(ll_smem); }",
    'LL_DEV void ll_sts8(unsigned a, unsigned x) { asm volatile("st.shared.u8 [%0], %1;" :: "r"(a), "r"(x) : "memory"); }',
    'LL_DEV void ll_sts16(unsigned a, unsigned x) { asm volatile("st.shared.u16 [%0], %1;" :: "r"(a), "r"(x) : "memory"); }',
    'LL_DEV void ll_sts32(unsigned a, unsigned x) { asm volatile("st.shared.b32 [%0], %1;" :: "r"(a), "r"(x) : "memory"); }',
    'LL_DEV void ll_sts64(unsigned a, unsigned x, unsigned y) { asm volatile("st.shared.v2.b32 [%0], {%1, %2};" '
    ':: "r"(a), "r"(x), "r"(y) : "memory"); }',
    'LL_DEV void ll_sts128(unsigned a, unsigned x, unsigned y, unsigned z, unsigned w) { asm volatile('
    '"st.shared.v4.b32 [%0], {%1, %2, %3, %4};" :: "r"(a), "r"(x), "r"(y), "r"(z), "r"(w) : "memory"); }',
    'LL_DEV unsigned ll_lds8(unsigned a) { unsigned x; asm volatile("ld.shared.u8 %0, [%1];" : "=r"(x) : "r"(a) : "memory"); return x; }',
    'LL_DEV unsigned ll_lds16(unsigned a) { unsigned x; asm volatile("ld.shared.u16 %0, [%1];" : "=r"(x) : "r"(a) : "memory"); return x; }',
    'LL_DEV unsigned ll_lds32(unsigned a) { unsigned x; asm volatile("ld.shared.b32 %0, [%1];" : "=r"(x) : "r"(a) : "memory"); return x; }',
    'LL_DEV void ll_lds64(unsigned a, unsigned& x, unsigned& y) { asm volatile("ld.shared.v2.b32 {%0, %1}, [%2];" '
    ': "=r"(x), "=r"(y) : "r"(a) : "memory"); }',
    'LL_DEV void ll_lds128(unsigned a, unsigned& x, unsigned& y, unsigned& z, unsigned& w) { asm volatile('
    '"ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];" : "=r"(x), "=r"(y), "=r"(z), "=r"(w) : "r"(a) : "memory"); }',
    *_matrix_defs(),
    *(_global_store(bits, False) for bits in _STORE_PTX),
    "#define ll_bar_cta() __syncthreads()",
    "#define ll_bar_warp() __syncwarp()",
    "#endif",
    "",
])

#: Global accesses with cache hints (``ll_ldg128_na``, ``ll_stg128_cs``), for the GPU and, under
#: ``LL_HOST`` (``HOST_PRELUDE``), for the CPU emulator; not in ``DEVICE_PRELUDE`` so that the source,
#: hence the cached cubin, of every other kernel stays as it was.
STREAMING_FUNCTIONS = "\n".join([
    "#ifndef LL_STREAMING",
    "#define LL_STREAMING",
    "#ifdef LL_HOST",
    "LL_DEV uint4 ll_ldg128_na(const void* p) { uint4 v; std::memcpy(&v, p, 16); return v; }",
    _global_store(128, True, "cs"),
    "#else",
    'LL_DEV uint4 ll_ldg128_na(const void* p) { uint4 v; asm volatile('
    '"ld.global.nc.L1::no_allocate.v4.b32 {%0, %1, %2, %3}, [%4];" '
    ': "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p)); return v; }',
    _global_store(128, False, "cs"),
    "#endif",
    "#endif",
    "",
])

#: Programmatic dependent launch (PDL, sm_90 and later): ``griddepcontrol.wait`` blocks until the
#: grid this one depends on (the previous kernel of the stream, when launched with programmatic stream
#: serialization: ``runtime.launch_programmatic``) has finished and its memory is visible;
#: ``griddepcontrol.launch_dependents`` lets the next such grid be scheduled already.  Both are no-ops in a
#: grid launched the ordinary way, before sm_90, and on the host (``LL_HOST``).
DEPENDENT_LAUNCH_FUNCTIONS = "\n".join([
    "#ifndef LL_DEPENDENT_LAUNCH",
    "#define LL_DEPENDENT_LAUNCH",
    "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900",
    'LL_DEV void ll_grid_dependency_wait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }',
    'LL_DEV void ll_launch_dependents() { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }',
    "#else",
    "LL_DEV void ll_grid_dependency_wait() {}",
    "LL_DEV void ll_launch_dependents() {}",
    "#endif",
    "#endif",
    "",
])

#: The kernel body's lines after ``KERNEL_PROLOGUE`` in a kernel that takes part in programmatic dependent
#: launch: wait for the previous grid before the first global access, then let the next grid launch (its
#: CTAs wait in turn until this grid is done, so only launch latency overlaps, never data).
DEPENDENT_LAUNCH_PROLOGUE = (
    "  ll_grid_dependency_wait();  // PDL: the previous grid's writes are visible (no-op otherwise)",
    "  ll_launch_dependents();     // PDL: the next grid may be scheduled; it waits for this one to finish",
)

#: The prelude of a layout-op kernel (the kernels ``linear_layouts.ops`` launches): ``DEVICE_PRELUDE`` and the
#: grid-dependency controls.
OP_PRELUDE = DEVICE_PRELUDE + DEPENDENT_LAUNCH_FUNCTIONS
#: The first lines of a layout-op kernel's body: ``KERNEL_PROLOGUE``, then ``DEPENDENT_LAUNCH_PROLOGUE`` (the ops
#: launch their kernels with programmatic stream serialization from sm_90 on: ``ops.launch.DEPENDENT_LAUNCH``).
OP_PROLOGUE = KERNEL_PROLOGUE + DEPENDENT_LAUNCH_PROLOGUE

#: The L2 prefetch sizes of PTX's ``ld`` (``.L2::64B``, ``.L2::128B``, ``.L2::256B``; sm_80 and later).
L2_PREFETCH_BYTES = (64, 128, 256)


def global_load_function(no_allocate: bool, l2_prefetch_bytes: int) -> str:
    """Name of the hinted 16-byte global load, e.g. ``ll_ldg128_na_l2p256`` (``no_allocate``: from
    ``STREAMING_FUNCTIONS``; ``l2_prefetch_bytes`` > 0: from ``prefetch_functions``)."""
    return "ll_ldg128" + ("_na" if no_allocate else "") + (f"_l2p{l2_prefetch_bytes}" if l2_prefetch_bytes else "")


def prefetch_functions(l2_prefetch_bytes: int) -> str:
    """Definitions of ``ll_ldg128_l2p{N}<OFFSET>(p)`` and ``ll_ldg128_na_l2p{N}<OFFSET>(p)`` (N =
    ``l2_prefetch_bytes``, one of ``L2_PREFETCH_BYTES``): ``ld.global.nc[.L1::no_allocate].L2::{N}B.v4.u32
    [p+OFFSET]``, the read-only load nvcc makes of a ``const __restrict__`` uint4 plus the prefetch size;
    on the host (``LL_HOST``) memcpy.  The byte offset ``OFFSET`` (default 0) is a template argument so
    it stays the load's immediate, as nvcc makes it of a plain load (a pointer computed outside the asm
    costs an add and registers per load); non-volatile asm, scheduled as freely as that plain load.

    Example: ``prefetch_functions(256)`` defines ``ll_ldg128_l2p256`` (SASS ``LDG.E.LTC256B.128.CONSTANT``)."""
    n = l2_prefetch_bytes
    out = [f"#ifndef LL_PREFETCH_{n}", f"#define LL_PREFETCH_{n}", "#ifdef LL_HOST"]
    for na in (False, True):
        out.append(f"template <unsigned OFFSET = 0u> LL_DEV uint4 {global_load_function(na, n)}(const void* p) "
                   "{ uint4 v; std::memcpy(&v, static_cast<const unsigned char*>(p) + OFFSET, 16); return v; }")
    out.append("#else")
    for na in (False, True):
        op = f"ld.global.nc{'.L1::no_allocate' if na else ''}.L2::{n}B.v4.u32"
        out.append(f"template <unsigned OFFSET = 0u> LL_DEV uint4 {global_load_function(na, n)}(const void* p) "
                   f'{{ uint4 v; asm("{op} {{%0, %1, %2, %3}}, [%4+%5];" '
                   ': "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p), "n"(OFFSET)); return v; }')
    return "\n".join(out + ["#endif", "#endif", ""])


def async_copy_function(l2_prefetch_bytes: int = 0) -> str:
    """Name of the 16-byte cp.async helper, e.g. ``ll_cp_async16_l2p256`` (``ASYNC_COPY_FUNCTIONS``)."""
    return "ll_cp_async16" + (f"_l2p{l2_prefetch_bytes}" if l2_prefetch_bytes else "")


def _async_copy_defs() -> list[str]:
    host, device = [], []
    for n in (0,) + L2_PREFETCH_BYTES:
        head = f"template <unsigned OFFSET = 0u> LL_DEV void {async_copy_function(n)}(unsigned a, const void* p) "
        host.append(head + "{ std::memcpy(ll_shared + a, static_cast<const unsigned char*>(p) + OFFSET, 16); }")
        op = "cp.async.cg.shared.global" + (f".L2::{n}B" if n else "")
        device.append(head + f'{{ asm volatile("{op} [%0], [%1+%2], 16;" :: "r"(a), "l"(p), "n"(OFFSET) : "memory"); }}')
    return (["#ifndef LL_ASYNC_COPY", "#define LL_ASYNC_COPY", "#ifdef LL_HOST", *host,
             "LL_DEV void ll_cp_async_commit() {}", "template <int N> LL_DEV void ll_cp_async_wait() {}", "#else",
             *device, 'LL_DEV void ll_cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }',
             'template <int N> LL_DEV void ll_cp_async_wait() { asm volatile("cp.async.wait_group %0;" :: "n"(N) : "memory"); }',
             "#endif", "#endif", ""])


#: Asynchronous global -> shared copies (sm_80+) for multi-stage kernels: ``ll_cp_async16[_l2p{N}]<OFFSET>(a,
#: p)`` copies 16 bytes from global ``p + OFFSET`` (the byte offset a template argument, so it stays the
#: instruction's immediate) to shared ``a``, with the L2 prefetch size ``N``; on the host (``LL_HOST``)
#: the copy happens at once (a valid schedule: completion is only promised by the wait), waits are no-ops.
ASYNC_COPY_FUNCTIONS = "\n".join(_async_copy_defs())

#: CUDA as C++20 threads: one std::thread per CUDA thread of a CTA, CTAs one after another; shared
#: memory one byte array; barriers std::barrier; shuffles and ldmatrix/stmatrix exchange through
#: per-warp slots between two warp barriers.  Semantics as in the PTX ISA (prmt: the default mode).
HOST_PRELUDE = r"""
#include <barrier>
#include <cstdint>
#include <cstring>
#include <cstddef>
#include <thread>
#include <vector>
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define LL_DEV static inline
#define LL_HOST 1
struct ll_dim3 { unsigned x = 0, y = 0, z = 0; };
struct uint1 { unsigned x; };
struct uint2 { unsigned x, y; };
struct uint4 { unsigned x, y, z, w; };
static thread_local ll_dim3 threadIdx, blockIdx, gridDim;
static unsigned char ll_shared[LL_CTA_SHARED_BYTES];
static std::barrier<>* ll_cta_barrier;
static std::barrier<>* ll_warp_barrier[32];
static unsigned ll_slot[32][32][4];
LL_DEV unsigned ll_smem_base() { return 0u; }
LL_DEV void ll_warp_sync() { ll_warp_barrier[threadIdx.x >> 5]->arrive_and_wait(); }
LL_DEV void __syncthreads() { ll_cta_barrier->arrive_and_wait(); }
LL_DEV void __syncwarp(unsigned = 0xffffffffu) { ll_warp_sync(); }
#define ll_bar_cta() __syncthreads()
#define ll_bar_warp() __syncwarp()
LL_DEV unsigned __shfl_sync(unsigned, unsigned v, unsigned src) {
  unsigned w = threadIdx.x >> 5, l = threadIdx.x & 31u;
  ll_slot[w][l][0] = v; ll_warp_sync();
  unsigned r = ll_slot[w][src & 31u][0]; ll_warp_sync();
  return r;
}
LL_DEV unsigned atomicAdd(unsigned* p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
LL_DEV void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
LL_DEV unsigned __shfl_xor_sync(unsigned m, unsigned v, unsigned mask) {
  return __shfl_sync(m, v, (threadIdx.x & 31u) ^ mask);
}
LL_DEV unsigned __byte_perm(unsigned a, unsigned b, unsigned s) {
  unsigned long long x = ((unsigned long long)b << 32) | a; unsigned r = 0;
  for (int i = 0; i < 4; ++i) {
    unsigned n = (s >> (4 * i)) & 15u; unsigned byte = (unsigned)(x >> (8 * (n & 7u))) & 0xffu;
    r |= byte << (8 * i);
  }
  return r;
}
template <class T> LL_DEV T ll_get(unsigned a) { T v; std::memcpy(&v, ll_shared + a, sizeof(T)); return v; }
template <class T> LL_DEV void ll_put(unsigned a, T v) { std::memcpy(ll_shared + a, &v, sizeof(T)); }
LL_DEV void ll_sts8(unsigned a, unsigned x) { ll_put<unsigned char>(a, (unsigned char)x); }
LL_DEV void ll_sts16(unsigned a, unsigned x) { ll_put<unsigned short>(a, (unsigned short)x); }
LL_DEV void ll_sts32(unsigned a, unsigned x) { ll_put<unsigned>(a, x); }
LL_DEV void ll_sts64(unsigned a, unsigned x, unsigned y) { ll_put(a, x); ll_put(a + 4, y); }
LL_DEV void ll_sts128(unsigned a, unsigned x, unsigned y, unsigned z, unsigned w) { ll_put(a, x); ll_put(a + 4, y); ll_put(a + 8, z); ll_put(a + 12, w); }
LL_DEV unsigned ll_lds8(unsigned a) { return ll_get<unsigned char>(a); }
LL_DEV unsigned ll_lds16(unsigned a) { return ll_get<unsigned short>(a); }
LL_DEV unsigned ll_lds32(unsigned a) { return ll_get<unsigned>(a); }
LL_DEV void ll_lds64(unsigned a, unsigned& x, unsigned& y) { x = ll_get<unsigned>(a); y = ll_get<unsigned>(a + 4); }
LL_DEV void ll_lds128(unsigned a, unsigned& x, unsigned& y, unsigned& z, unsigned& w) { x = ll_get<unsigned>(a); y = ll_get<unsigned>(a + 4); z = ll_get<unsigned>(a + 8); w = ll_get<unsigned>(a + 12); }
// ldmatrix: lane t gives row t % 8 of matrix t / 8; lane l receives, per matrix i, row l / 4 words l % 4
// (.trans: the b16 elements at rows 2 (l % 4) + j, column l / 4).
LL_DEV void ll_ldsm(int n, bool trans, unsigned a, unsigned* x) {
  unsigned w = threadIdx.x >> 5, l = threadIdx.x & 31u;
  ll_slot[w][l][0] = a; ll_warp_sync();
  for (int i = 0; i < n; ++i) {
    if (!trans) x[i] = ll_get<unsigned>(ll_slot[w][8 * i + l / 4][0] + 4 * (l % 4));
    else {
      unsigned lo = ll_get<unsigned short>(ll_slot[w][8 * i + 2 * (l % 4)][0] + 2 * (l / 4));
      unsigned hi = ll_get<unsigned short>(ll_slot[w][8 * i + 2 * (l % 4) + 1][0] + 2 * (l / 4));
      x[i] = lo | (hi << 16);
    }
  }
  ll_warp_sync();
}
LL_DEV void ll_stsm(int n, bool trans, unsigned a, const unsigned* x) {
  unsigned w = threadIdx.x >> 5, l = threadIdx.x & 31u;
  static unsigned data[32][32][4];
  ll_slot[w][l][0] = a;
  for (int i = 0; i < n; ++i) data[w][l][i] = x[i];
  ll_warp_sync();
  if ((int)l < 8 * n) {  // lane l writes row l % 8 of matrix l / 8
    int i = l / 8, row = l % 8; unsigned base = ll_slot[w][l][0];
    for (int c = 0; c < 4; ++c) {
      if (!trans) ll_put<unsigned>(base + 4 * c, data[w][4 * row + c][i]);
    }
    if (trans) {  // row `row` of the stored matrix: element c from lane 4 c + row / 2, half row % 2
      for (int c = 0; c < 8; ++c) ll_put<unsigned short>(base + 2 * c, (unsigned short)(data[w][4 * c + row / 2][i] >> (16 * (row % 2))));
    }
  }
  ll_warp_sync();
}
""".replace("LL_CTA_SHARED_BYTES", str(DEFAULT_TARGET.cta_shared_bytes)) + "\n".join(
    f"LL_DEV void {matrix_function(s, n, t)}(unsigned a, "
    + ", ".join(("unsigned x" if s else "unsigned& x") + str(i) for i in range(n))
    + ") { unsigned v[4] = {"
    + (", ".join(f"x{i}" for i in range(n)) if s else "0")
    + f"}}; {'ll_stsm' if s else 'll_ldsm'}({n}, {'true' if t else 'false'}, a, v); "
    + ("" if s else " ".join(f"x{i} = v[{i}];" for i in range(n)))
    + " }"
    for s in (True, False) for n in (1, 2, 4) for t in (False, True)
) + r"""
""" + "\n".join(_global_store(bits, True) for bits in _STORE_PTX) + "\n"
