"""Write paired_cases.json: hand-written address tables that tell whether STORES pair like loads.

    python benchmarks/gpu_bank_check/make_paired_cases.py
    # on the GPU machine:
    cd benchmarks/gpu_bank_check && BANK_CHECK_CASES=paired_cases.json python3 run.py

"Pairing" (``bank_simulator.instruction_wavefronts``): an 8- or 16-byte access by all 32 lanes where
every lane asks for lane ``l ^ 1``'s address (or every lane for lane ``l ^ 2``'s) has phases of twice
as many lanes (16-byte: 2 phases of 16 lanes, 8-byte: 1 of 32). Measured on loads. Every table below
is one warp, one instruction, and is built so that the two readings -- "pairs" and "does not pair"
(16-byte: 4 phases of 8 lanes, 8-byte: 2 of 16) -- give different totals, except the controls
(``*_ctrl_*``), where both readings agree. Each table is emitted as a load and as a store (and three
stores again with equal data in every lane). Needs no package: the two readings are computed here.

Result (H100, 2026-11-22, results_paired_h100.json): loads take the paired reading, stores the
unpaired one, 33 / 33 -- stores never pair.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
LANES, BANKS = 32, 32
SAME_DATA = ("v4_l1_clean", "v4_quad", "v2_l1_clean")


def cost(starts: list[int], vector_bytes: int, paired: bool) -> int:
    """Wavefronts of one instruction: phases of 128 bytes (twice the lanes when ``paired``), each costing
    the most distinct 4-byte words asked of one bank."""
    lanes = LANES // max(vector_bytes // 4, 1) * (2 if paired else 1)
    total = 0
    for p in range(0, LANES, lanes):
        words = {w for a in starts[p:p + lanes] for w in range(a // 4, (a + vector_bytes) // 4)}
        total += max(Counter(w % BANKS for w in words).values())
    return total


def is_paired(starts: list[int]) -> bool:
    return any(all(starts[lane] == starts[lane ^ m] for lane in range(LANES)) for m in (1, 2))


def tables() -> list[tuple[str, int, list[int], str]]:
    """(name, vector bytes, lane -> byte address, what it tests)."""
    out = []
    # ---- 16-byte (v4.b32): 8 lanes per unpaired phase (32 words), 16 per paired phase
    # (a) l^1 pairs, the 16 distinct blocks of each merged phase on 32 distinct banks
    out.append(("v4_l1_clean", 16, [16 * (lane >> 1) for lane in range(LANES)],
                "l^1 pairs, no conflict in the 16-lane phase"))
    # (b) l^1 pairs; merged phase 0 (lanes 0-15): lanes 0-7 on banks 0-15 row 0, lanes 8-15 on banks 0-15
    # row 1 -> 2-way conflict; merged phase 1 clean; no 8-lane phase has a conflict
    b = []
    for lane in range(LANES):
        k = (lane >> 1) & 3  # block within the 8-lane phase
        b.append({0: 0, 1: 128, 2: 64, 3: 256}[lane >> 3] + 16 * k)
    out.append(("v4_l1_conflict", 16, b, "l^1 pairs, 2-way conflict in one 16-lane phase, none in 8-lane phases"))
    # (c) l^2 pairs: pair id = (l & 1) | (l >> 2) << 1
    out.append(("v4_l2_clean", 16, [16 * ((lane & 1) | (lane >> 2) << 1) for lane in range(LANES)],
                "l^2 pairs, no conflict in the 16-lane phase"))
    # (c') l^2 pairs with the same conflict as (b)
    c2 = []
    for lane in range(LANES):
        k = ((lane & 1) | ((lane >> 2) & 1) << 1)
        c2.append({0: 0, 1: 128, 2: 64, 3: 256}[lane >> 3] + 16 * k)
    out.append(("v4_l2_conflict", 16, c2, "l^2 pairs, 2-way conflict in one 16-lane phase, none in 8-lane phases"))
    # (d) quads: lanes 4q..4q+3 on one block
    out.append(("v4_quad", 16, [16 * (lane >> 2) for lane in range(LANES)], "l^1 and l^2: quads on one block"))
    # (e) every lane on one block
    out.append(("v4_all_same", 16, [0] * LANES, "all 32 lanes on one block"))
    # controls: duplicates along lane bit 4 only (never pair); all distinct
    out.append(("v4_ctrl_l16", 16, [16 * (lane & 15) for lane in range(LANES)], "l^16 duplicates: no pairing"))
    out.append(("v4_ctrl_distinct", 16, [16 * lane for lane in range(LANES)], "all distinct"))
    # ---- 8-byte (v2.b32): 16 lanes per unpaired phase, 32 per paired phase
    out.append(("v2_l1_clean", 8, [8 * (lane >> 1) for lane in range(LANES)],
                "l^1 pairs, no conflict in the 32-lane phase"))
    # (b) with no conflict inside either 16-lane phase the two readings cannot differ (2 = 1 + 1 or 2 x 1), so:
    # lanes 0-15 have one 2-way conflict (pair 7 on banks 0-1 one row down), lanes 16-31 sit on banks 16-31:
    # merged 32-lane phase 2-way -> paired 2, unpaired 2 + 1 = 3
    v2b = []
    for lane in range(LANES):
        k = (lane >> 1) & 7
        v2b.append(8 * k if lane < 16 and k < 7 else 128 if lane < 16 else 64 + 8 * k)
    out.append(("v2_l1_conflict", 8, v2b, "l^1 pairs, 2-way conflict in lanes 0-15 and in the 32-lane phase"))
    # both 16-lane halves with a 2-way conflict on different banks: merged 2-way -> paired 2, unpaired 4
    v2c = [a if lane < 16 else (64 + 8 * ((lane >> 1) & 7) if ((lane >> 1) & 7) < 7 else 192)
           for lane, a in enumerate(v2b)]
    out.append(("v2_l1_conflict_both", 8, v2c, "l^1 pairs, 2-way conflict in both 16-lane phases, other banks"))
    out.append(("v2_l2_clean", 8, [8 * ((lane & 1) | (lane >> 2) << 1) for lane in range(LANES)],
                "l^2 pairs, no conflict in the 32-lane phase"))
    out.append(("v2_quad", 8, [8 * (lane >> 2) for lane in range(LANES)], "l^1 and l^2: quads on one unit"))
    out.append(("v2_all_same", 8, [0] * LANES, "all 32 lanes on one unit"))
    out.append(("v2_ctrl_l16", 8, [8 * (lane & 15) for lane in range(LANES)], "l^16 duplicates: no pairing"))
    return out


def main() -> None:
    cases = []
    for name, vb, starts, what in tables():
        assert len(starts) == LANES and all(a % vb == 0 for a in starts)
        paired, unpaired = cost(starts, vb, True), cost(starts, vb, False)
        pairs = is_paired(starts)
        if name.split("_")[1] != "ctrl":
            assert pairs and paired != unpaired, (name, paired, unpaired)
        else:
            assert not pairs or paired == unpaired, name
        for op in ("load", "store"):
            # the model since this run: loads pair, stores never do (the H100 run was made with the old
            # model, which paired stores too: its "ours"/"sim" columns are the paired reading for every op)
            model = paired if pairs and op == "load" else unpaired
            cases.append({
                "name": f"{name}_{op}", "op": op, "bitwidth": 32, "vector_bytes": vb, "what": what,
                "num_warps": 1, "instructions_per_warp": 1, "padding": [],
                "smem_bytes": (max(starts) + vb + 15) // 16 * 16,
                "addresses": [[starts]],
                "predicted_ours": model, "predicted_simulator": model, "predicted_triton": None,
                "predicted_paired": paired if pairs else unpaired, "predicted_unpaired": unpaired,
            })
    # stores of equal data by every lane (as duplicated lanes store in a real kernel): does data matter?
    for c in [c for c in cases if c["op"] == "store" and c["name"][:-6] in SAME_DATA]:
        cases.append({**c, "name": c["name"].replace("_store", "_store_same"), "same_data": True})
    out = HERE / "paired_cases.json"
    out.write_text(json.dumps({"cases": cases}, indent=None))
    for c in cases:
        print(f"{c['name']:28s} paired {c['predicted_paired']:2d}  unpaired {c['predicted_unpaired']:2d}")
    print(f"wrote {len(cases)} kernels to {out}")


if __name__ == "__main__":
    main()
