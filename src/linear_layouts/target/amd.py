"""AMD targets: MI300X (``gfx942``, CDNA3): 64-lane wavefronts, shared memory as LDS.

LDS, from AMD's public material (the CDNA3 ISA guide, ROCm's LDS bank-conflict notes, Composable
Kernel's documentation, Triton's AMD backend): 64 KiB per CU, all of it for one workgroup; 32 banks of
4 bytes, a bank serving one 4-byte word per cycle, lanes asking for one address served by broadcast.
A wavefront's access is cut into phases of 128 bytes:

* ``ds_read/ds_write_b32`` (and narrower): 2 phases of 32 lanes, ``0-31`` then ``32-63``;
* ``_b64``: 4 phases of 16 consecutive lanes;
* ``ds_write_b128``: 8 phases of 8 consecutive lanes;
* ``ds_read_b128``: 8 phases of 8 lanes that are not consecutive: ``0-3`` with ``20-23``, ``4-7`` with
  ``16-19``, ``8-11`` with ``28-31``, ``12-15`` with ``24-27``, and the same 32 lanes up. Phase 0 is the
  span of lanes 1, 2 and ``4 ^ 16``; the others are its translates by lanes 4, 8 and 32.

A phase costs the most distinct words its lanes ask of one bank, as on NVIDIA; nothing pairs lanes.
This is the model of the public description, not measured here (no AMD GPU); ``analysis.banks`` and
``analysis.bank_simulator`` apply it, and the tests check the two agree on it.

>>> MI300X.lanes, MI300X.shared.phase_lanes(64, "load", 16), MI300X.shared.phase_lanes(64, "store", 16)
(64, (1, 2, 20), (1, 2, 4))
"""

from __future__ import annotations

from linear_layouts.target.target import SharedMemory, Target

__all__ = ["LDS", "MI300X", "amd_target"]

#: CDNA3's LDS: 32 banks of 4 bytes, phases of 128 bytes; ds_read_b128's phases are lanes 0-3 + 20-23, ...
LDS = SharedMemory(32, 4, 128, pairs_loads=False, phase_groups=(("load", 16, (1, 2, 4 | 16)),), name="LDS")

#: MI300X: 304 CUs; per CU 64 KiB of LDS (a workgroup may use all of it), 32 wavefronts of 64 lanes
#: (2048 threads), 4 SIMDs x 512 VGPRs x 64 lanes of registers, up to 512 VGPRs (arch + acc) a lane; 4 MiB of L2,
#: one XCD's, as HIP's ``hipDeviceAttributeL2CacheSize`` reports it (the CDNA3 white paper: 4 MB per XCD, 8 XCDs,
#: and 256 MB of Infinity Cache behind them, which is not counted).
MI300X = Target("gfx942", "MI300X", "hip", 64, LDS, 64 * 1024, 0, 64 * 1024, 2048, 4 * 512 * 64, 512, 304,
                frozenset(), 4 << 20)


def amd_target(arch: str) -> Target:
    """The target of AMD architecture ``arch``: MI300X for gfx942; for another the MI300X's facts under that
    architecture's name (a stand-in, so that a kernel compiled for it is still read: its own LDS, wave size
    and capacity are not modelled).

    >>> amd_target("gfx90a").arch, amd_target("gfx90a").lanes
    ('gfx90a', 64)
    """
    if arch == MI300X.arch:
        return MI300X
    return Target(arch, MI300X.device, "hip", MI300X.lanes, MI300X.shared, MI300X.sm_shared_bytes,
                  MI300X.cta_reserved_shared_bytes, MI300X.cta_shared_bytes, MI300X.sm_threads, MI300X.sm_registers,
                  MI300X.thread_registers, MI300X.sms, MI300X.features, MI300X.l2_bytes)
