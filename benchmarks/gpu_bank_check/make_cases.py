"""Write cases.json: (shared, distributed) pairs where our wavefront formula and Triton 3.9 disagree.

Runs on a CPU machine with linear_layouts and triton==3.9.0 installed:
    python benchmarks/gpu_bank_check/make_cases.py [--pairs 3000] [--seed 0]
Each case carries what run.py needs to replay it on a GPU without this package: every lane's byte
address per instruction, the vector width, and the three predictions (our formula, our brute-force
simulator, Triton's ``get_shared_bank_conflicts`` converted to wavefronts). A few agreeing cases
(the seed transpose, vectorized accesses, stores) are added as controls.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # benchmarks/: this folder's scripts reach the harness from one level down

import harness  # noqa: E402, F401  (puts src/ on the path)
from harness.smem_cases import random_pair, triton_bank_conflicts, triton_crashes  # noqa: E402

from linear_layouts import LinearLayout  # noqa: E402
from linear_layouts.analysis.bank_simulator import lane_addresses, simulate_wavefronts  # noqa: E402
from linear_layouts.analysis.banks import shared_access, wavefronts  # noqa: E402


def seed_layouts() -> list[tuple[str, LinearLayout, LinearLayout, int]]:
    """Seed 004's 16x32 fp32 transpose with the three swizzles (controls with known answers)."""
    dims = {"dim0": 16, "dim1": 32}
    store = LinearLayout({"register": [[1, 0], [2, 0], [4, 0], [8, 0]],
                          "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]], "warp": []}, dims)
    load = LinearLayout({"register": [[0, 2], [0, 4], [0, 8], [0, 16]],
                         "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 1]], "warp": []}, dims)
    cols = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]]
    out = []
    for name, shift in (("unswizzled", None), ("xor_m", 0), ("xor_2m", 1)):
        rows = [[1 << i, 0 if shift is None else (1 << (i + shift))] for i in range(4)]
        shared = LinearLayout({"offset": cols + rows}, dims)
        out.append((f"seed_{name}_store", shared, store, 32))
        out.append((f"seed_{name}_load", shared, load, 32))
    return out


def case_record(name: str, shared: LinearLayout, dist: LinearLayout, bitwidth: int, op: str,
                padding: tuple[tuple[int, int], ...] = ()) -> dict:
    access = shared_access(shared, dist, bitwidth)
    addresses, vec_bytes = lane_addresses(shared, dist, bitwidth, padding=padding)
    min_wavefronts = access.instructions * access.phases
    sim = simulate_wavefronts(shared, dist, bitwidth, op=op, padding=padding)
    # padded layouts are not linear: the simulator is the only prediction (Triton has no padded model here)
    ours = sim if padding else wavefronts(shared, dist, bitwidth, op=op)
    tri = None
    if not padding and not triton_crashes(shared, access.vector_elements, bitwidth):
        tri = triton_bank_conflicts(shared, dist, bitwidth)
    return {
        "name": name,
        "op": op,
        "bitwidth": bitwidth,
        "shared": {"bases": shared.bases, "out_dims": shared.out_dims},
        "distributed": {"bases": dist.bases, "out_dims": dist.out_dims},
        "vector_bytes": vec_bytes,
        "num_warps": int(addresses.shape[0]),
        "instructions_per_warp": int(addresses.shape[1]),
        "padding": [list(p) for p in padding],
        "smem_bytes": (int(addresses.max()) + vec_bytes + 15) // 16 * 16,
        "addresses": addresses.tolist(),  # [warp][instruction][lane] -> byte address of the lane's vector
        "predicted_ours": ours,
        "predicted_simulator": sim,
        "triton_conflicts": tri,
        "predicted_triton": None if tri is None else (tri + 1) * min_wavefronts,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--pairs", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-disagreements", type=int, default=14)
    ap.add_argument("--out", default=str(HERE / "cases.json"))
    args = ap.parse_args()
    rng = random.Random(args.seed)
    cases: list[dict] = []
    for name, shared, dist, w in seed_layouts():
        cases.append(case_record(name, shared, dist, w, "store" if name.endswith("store") else "load"))
    for name, shared, dist, w in seed_layouts()[:2]:  # row-major + row padding of 1 and 2 elements
        for pad in (1, 2):
            op = "store" if name.endswith("store") else "load"
            cases.append(case_record(f"seed_padded{pad}_{op}", shared, dist, w, op, padding=((32, pad),)))
    seen: set[tuple] = set()
    controls = 0
    for i in range(args.pairs):
        shared, dist, w = random_pair(rng)
        access = shared_access(shared, dist, w)
        if triton_crashes(shared, access.vector_elements, w) or shared.in_dim_size("offset") * w // 8 > 32768:
            continue
        ours = wavefronts(shared, dist, w)
        tri = triton_bank_conflicts(shared, dist, w)
        per_phase = ours // (access.instructions * access.phases)
        key = (w, access.vector_bits, per_phase - 1, tri)
        disagree = per_phase - 1 != tri
        if disagree and key not in seen and sum(c["name"].startswith("disagree") for c in cases) < 2 * args.max_disagreements:
            seen.add(key)
            for op in ("load", "store"):
                cases.append(case_record(f"disagree_{i}_{op}", shared, dist, w, op))
        elif not disagree and controls < 8 and (access.vector_bits, per_phase > 1) not in seen:
            seen.add((access.vector_bits, per_phase > 1))
            controls += 1
            for op in ("load", "store"):
                cases.append(case_record(f"agree_{i}_{op}", shared, dist, w, op))
    Path(args.out).write_text(json.dumps({"cases": cases}, indent=None))
    n_dis = sum(c["name"].startswith("disagree") for c in cases) // 2
    print(f"wrote {len(cases)} kernels ({n_dis} disagreeing pairs, {controls} agreeing controls, 6 seed, 4 padded seed) to {args.out}")


if __name__ == "__main__":
    main()
