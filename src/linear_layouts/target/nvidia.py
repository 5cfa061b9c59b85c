"""NVIDIA targets: A100 (``sm_80``), H100 and H200 (``sm_90``: one SM, separate cost tables), B200 (``sm_100``).

Facts from NVIDIA's public documents: the CUDA C++ Programming Guide's table of compute capabilities
(shared memory per SM and per block, 1 KB reserved per block, resident threads, 64K 32-bit registers
per SM and 255 per thread), the architecture whitepapers (SMs and L2 per device) and the PTX ISA (which
instruction needs which ``sm_``: ``ldmatrix`` sm_75, ``cp.async`` sm_80, ``stmatrix`` and the tensor
memory accelerator sm_90, ``wgmma`` sm_90a only). Shared memory: 32 banks of 4 bytes, phases of 128
bytes, 8- and 16-byte loads pair lanes (the bank model, ``analysis.banks``; validated with ncu on
H100 and H200).

>>> H100.cta_shared_bytes, A100.has("stmatrix"), B200.has("wgmma"), H200.l2_bytes >> 20
(232448, False, False, 60)
"""

from __future__ import annotations

from linear_layouts.target.target import CP_ASYNC, LDMATRIX, SHFL, STMATRIX, TMA, VECTOR_ATOMICS, WGMMA, SharedMemory, \
    Target

__all__ = ["LANES", "SHARED", "A100", "H100", "H200", "B200", "features_of", "nvidia_target"]

LANES = 32  #: threads of an NVIDIA warp
#: 32 banks of 4 bytes, 128 bytes a phase; loads of 8 or 16 bytes whose lanes pair move two lanes a slot
SHARED = SharedMemory(32, 4, 128, pairs_loads=True)
_KIB = 1024


def features_of(capability: int) -> frozenset[str]:
    """The ISA features of compute capability ``capability`` (PTX ISA: the first ``sm_`` of each).

    >>> sorted(features_of(80))
    ['cp.async', 'ldmatrix', 'shfl.sync']
    """
    found = {SHFL}
    if capability >= 75:
        found.add(LDMATRIX)
    if capability >= 80:
        found.add(CP_ASYNC)
    if capability >= 90:
        found |= {STMATRIX, TMA, VECTOR_ATOMICS}
    if capability == 90:  # wgmma is sm_90a's; Blackwell's tensor cores read shared memory by tcgen05
        found.add(WGMMA)
    return frozenset(found)


def _sm(capability: int, device: str, sm_shared_kib: int, sms: int, l2_mib: int) -> Target:
    """An NVIDIA target: ``sm_shared_kib`` KiB of shared memory per SM, 1 KiB of it reserved per CTA (a CTA
    may allocate the rest), 2048 threads and 64K registers per SM, 255 registers per thread, ``l2_mib`` MiB of L2."""
    return Target(f"sm_{capability}", device, "cuda", LANES, SHARED, sm_shared_kib * _KIB, _KIB,
                  (sm_shared_kib - 1) * _KIB, 2048, 65536, 255, sms, features_of(capability), l2_mib << 20)


A100 = _sm(80, "A100", 164, 108, 40)  #: A100 SXM4: 164 KiB per SM (163 KiB per CTA), 108 SMs, 40 MiB of L2
H100 = _sm(90, "H100", 228, 132, 50)  #: H100 SXM5: 228 KiB per SM (227 KiB per CTA), 132 SMs, 50 MiB of L2
#: H200 SXM: the H100's SM and SMs; 60 MiB of L2 as its driver reports it (NVIDIA publishes no figure); more HBM
H200 = _sm(90, "H200", 228, 132, 60)
#: B200: 228 KiB per SM (227 KiB per CTA), 148 SMs; 126 MiB of L2 over its two dies (a measured figure, Chips and
#: Cheese's: NVIDIA publishes none)
B200 = _sm(100, "B200", 228, 148, 126)

_BY_ARCH = {80: A100, 90: H100, 100: B200}


def nvidia_target(capability: int) -> Target:
    """The target of compute capability ``capability``: a known one (80, 90, 100), or for another the
    capacity facts and device of the nearest known one below it (the lowest above for older parts) with
    this capability's own ISA features (``features_of``).

    >>> t = nvidia_target(86)
    >>> t.arch, t.device, t.has("cp.async")
    ('sm_86', 'A100', True)
    """
    if capability in _BY_ARCH:
        return _BY_ARCH[capability]
    below = [cc for cc in _BY_ARCH if cc <= capability]
    base = _BY_ARCH[max(below)] if below else _BY_ARCH[min(_BY_ARCH)]
    return Target(f"sm_{capability}", base.device, "cuda", base.lanes, base.shared, base.sm_shared_bytes,
                  base.cta_reserved_shared_bytes, base.cta_shared_bytes, base.sm_threads, base.sm_registers,
                  base.thread_registers, base.sms, features_of(capability), base.l2_bytes)
