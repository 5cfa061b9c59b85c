"""ncu's per-instruction shared-memory wavefronts (``--section SourceCounters``), as the GPU suite reads
them (``benchmarks/harness/ncu.source_wavefronts``), on the source page ncu wrote for the kernels whose
aggregate load counter exceeds the prediction by 1 to 3 (H100, 2026-11-26:
benchmarks/results/ncu_unattributed): summed over the kernel's STS and LDS they are exactly the
prediction, 128 + 128 wavefronts, for both kernels (their first profiled launch)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _source_wavefronts():
    from harness.ncu import source_wavefronts  # noqa: PLC0415

    return source_wavefronts


def test_per_instruction_wavefronts_of_the_unattributed_kernels():
    text = (ROOT / "benchmarks/results/ncu_unattributed/source_shared_rows.csv").read_text()
    assert _source_wavefronts()(text) == {"gsa_roundtrip": [128, 128], "gsa_convert": [128, 128]}


def test_predicates_repeats_and_other_instructions():
    page = "\n".join([
        "Kernel Name,ll_a(unsigned const*),", "Address,Source,L1 Wavefronts Shared",
        '0x0,"  @P0 STS.64 [R2], R4",2', '0x8,"  STSM.16.MT88.4 [R3], R8",4', '0x10,"  LDSM.16.M88.2 R6, [R5]",2',
        '0x18,"  LDG.E.128 R8, [R10.64]",0', '0x20,"  LDGSTS.E.128 [R1], [R2.64]",16', '0x28,"  BAR.SYNC 0x0",0',
        "Kernel Name,ll_a(unsigned const*),", "Address,Source,L1 Wavefronts Shared", '0x0,"  STS.64 [R2], R4",99',
    ])
    assert _source_wavefronts()(page) == {"ll_a": [6, 2]}
