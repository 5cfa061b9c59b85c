"""Replay the ncu wavefront measurements on the CPU: analysis prediction and codegen model vs ncu.

    PYTHONPATH=src python benchmarks/check_wavefronts_vs_ncu.py [--results benchmarks/results/gpu_suite.json]

No GPU needed. It rebuilds every kernel of the GPU suite through the suite's own preparation path
(``gpu_suite.build_variants(gpu_suite.suite_cases(...))``: deterministic, the very kernels the
device ran), which recomputes with the current code

* the analysis prediction: ``plan_conversion``'s (or, for forced shared-memory kernels,
  ``plan_shared_memory``'s) ``store.wavefronts`` + ``load.wavefronts``;
* codegen's model of its emitted instructions (``codegen.model.emitted_wavefronts``);

and compares both with ncu's ``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{st,ld}.sum`` stored
in the results file (key ``ncu`` -> ``rows``). A kernel whose rebuilt instructions differ from the
measured one (the planner changed since the run) is reported apart, not compared. It also replays
benchmarks/gpu_bank_check (address tables stored from every lane, ``results_h100.json``) through
``analysis.bank_simulator`` and, for the unpadded cases, ``analysis.banks.wavefronts``.

Prints every mismatch and the totals; ``--json PATH`` writes them. Exit status 1 on any mismatch.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
import harness  # noqa: E402, F401  (puts src/ on the path)

import gpu_suite  # noqa: E402  (the suite's preparation path)

from linear_layouts import LinearLayout  # noqa: E402
from linear_layouts.analysis.bank_simulator import instruction_wavefronts, simulate_wavefronts  # noqa: E402
from linear_layouts.analysis.banks import wavefronts  # noqa: E402


def _pair(x) -> tuple[int, int] | None:
    return None if x is None or x[0] is None else (int(x[0]), int(x[1]))


def _prepared_sources(path: Path) -> dict:
    """(case, variant) -> kernel source of the ``--mode prepare`` cache the device run used, if present."""
    if not path.exists():
        return {}
    return {(r["case"]["name"], r["variant"]): r["kernel"]["source"] for r in json.loads(path.read_text())}


def _rebuild(case, variant: str):
    """One measured kernel through the suite's step functions, whatever the planner picks today:
    (instructions, analysis prediction, codegen model). ``ours`` measured as a shared-memory kernel
    is the plan's shared-memory step (``plan_shared_memory``, what ``plan_conversion`` returns when it
    picks shared memory)."""
    s, d, bits = case.src, case.dst, case.bits
    if variant in ("unswizzled", "padded"):
        step, predicted = gpu_suite.baseline_step(s, d, bits, padded=variant == "padded"), None
    else:
        step = gpu_suite.conversion_step(s, d, bits, force_shared=True)
        try:
            predicted = gpu_suite._plan_prediction(s, d, bits, force_shared=True)
        except Exception:
            predicted = None
    return step, predicted, gpu_suite.emitted_wavefronts(step)


def check_suite(results_path: Path, baselines_for: int, quick: bool, prepared: Path) -> dict:
    data = json.loads(results_path.read_text())
    rows = data["ncu"]["rows"]
    measured_kernels = {(v["case"], v["variant"]): v for v in data.get("variants", [])}
    variants = gpu_suite.build_variants(gpu_suite.suite_cases(quick), baselines_for)
    rebuilt = {(v.case.name, v.variant): v for v in variants}
    cases = {c.name: c for c in gpu_suite.suite_cases(quick)}
    sources = _prepared_sources(prepared)
    out: dict = dict(ours=0, ours_match=0, kernels=0, model_match=0, rederived=[], changed=[], mismatches=[],
                     source_checked=0)
    for row in rows:
        key = (row["case"], row["variant"])
        measured = _pair(row["measured"])
        if measured is None:
            continue
        v = rebuilt.get(key)
        forward = _rebuild(cases[key[0]], key[1])[0]
        if v is not None and v.instructions == row["instructions"] and v.modelled is not None and (
            key not in measured_kernels or measured_kernels[key]["kernel"] == v.kernel.name
        ):
            instructions, predicted, modelled = v.instructions, _pair(v.predicted), _pair(v.modelled)
        else:  # the planner's choice moved since the run (e.g. shuffle vs shared memory): rebuild that kernel
            _, predicted, modelled = _rebuild(cases[key[0]], key[1])
            predicted, modelled = _pair(predicted), _pair(modelled)
            instructions = forward.instruction_counts()
            if instructions != row["instructions"]:
                out["changed"].append(dict(case=key[0], variant=key[1], measured_instructions=row["instructions"],
                                           rebuilt_instructions=instructions))
                continue
            out["rederived"].append(f"{key[0]}/{key[1]}")
        if key in sources:  # the strongest identity check: the measured kernel's very source
            rebuilt_kernel = v.kernel.source if v is not None else ""
            if instructions != forward.instruction_counts() or rebuilt_kernel != sources[key]:
                out["changed"].append(dict(case=key[0], variant=key[1], measured_instructions=row["instructions"],
                                           rebuilt_instructions=instructions, note="conversion code differs"))
                continue
            out["source_checked"] += 1
        out["kernels"] += 1
        ok_model = modelled == measured
        out["model_match"] += ok_model
        ok_pred = True
        if key[1] == "ours":
            out["ours"] += 1
            ok_pred = predicted == measured
            out["ours_match"] += ok_pred
        elif predicted is not None:
            ok_pred = predicted == measured
        if not (ok_model and ok_pred):
            out["mismatches"].append(dict(case=key[0], variant=key[1], instructions=instructions,
                                          measured=measured, predicted=predicted, modelled=modelled))
    out["forced_shared"] = sum(1 for r in rows if r["variant"] == "shared")
    return out


def check_bank_cases(folder: Path) -> dict:
    cases = json.loads((folder / "cases.json").read_text())["cases"]
    measured = {r["name"]: r["measured"] for r in json.loads((folder / "results_h100.json").read_text())["rows"]}
    out: dict = dict(cases=0, simulator_match=0, replay_match=0, formula=0, formula_match=0, mismatches=[])
    for c in cases:
        m = measured.get(c["name"])
        if m is None:
            continue
        m = int(m)
        shared = LinearLayout(c["shared"]["bases"], c["shared"]["out_dims"])
        dist = LinearLayout(c["distributed"]["bases"], c["distributed"]["out_dims"])
        padding = tuple(tuple(p) for p in c["padding"])
        sim = simulate_wavefronts(shared, dist, c["bitwidth"], op=c["op"], padding=padding)
        # the table the device replayed: every lane of every warp issues every instruction
        replay = sum(instruction_wavefronts(starts, c["vector_bytes"], op=c["op"])
                     for warp in c["addresses"] for starts in warp)
        formula = None if padding else wavefronts(shared, dist, c["bitwidth"], op=c["op"])
        out["cases"] += 1
        out["simulator_match"] += sim == m
        out["replay_match"] += replay == m
        if formula is not None:
            out["formula"] += 1
            out["formula_match"] += formula == m
        if sim != m or replay != m or (formula is not None and formula != m):
            out["mismatches"].append(dict(name=c["name"], op=c["op"], measured=m, simulator=sim, replay=replay,
                                          formula=formula))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", default=str(HERE / "results" / "gpu_suite.json"))
    ap.add_argument("--bank-check", default=str(HERE / "gpu_bank_check"))
    ap.add_argument("--baselines-for", type=int, default=24, help="as gpu_suite.py's option (default 24)")
    ap.add_argument("--quick", action="store_true", help="the results come from gpu_suite.py --quick")
    ap.add_argument("--prepared", default=str(HERE / "build" / "variants_full.json"),
                    help="gpu_suite.py --mode prepare's kernel list: kernel sources are compared when present")
    ap.add_argument("--json", default="", help="write the comparison here")
    args = ap.parse_args()

    suite = check_suite(Path(args.results), args.baselines_for, args.quick, Path(args.prepared))
    for r in suite["mismatches"]:
        print(f"MISMATCH {r['case']:12s} {r['variant']:10s} ncu {r['measured']} analysis {r['predicted']} "
              f"model {r['modelled']}  {r['instructions']}")
    for r in suite["changed"]:
        print(f"CHANGED  {r['case']:12s} {r['variant']:10s} measured {r['measured_instructions']} "
              f"rebuilt {r['rebuilt_instructions']} (not compared)")
    bank = check_bank_cases(Path(args.bank_check))
    for r in bank["mismatches"]:
        print(f"MISMATCH bank check {r['name']} ({r['op']}): ncu {r['measured']} simulator {r['simulator']} "
              f"replayed table {r['replay']} formula {r['formula']}")
    print(f"GPU suite: analysis prediction = ncu on {suite['ours_match']} / {suite['ours']} of our shared-memory "
          f"kernels; codegen model = ncu on {suite['model_match']} / {suite['kernels']} measured kernels "
          f"({len(suite['rederived'])} rebuilt outside build_variants because today's plan differs; "
          f"{len(suite['changed'])} could not be rebuilt identically and were not compared; "
          f"{suite['source_checked']} checked: the measured kernel's source equals the rebuilt kernel's)")
    print(f"bank check: simulator = ncu on {bank['simulator_match']} / {bank['cases']}, replayed address tables "
          f"{bank['replay_match']} / {bank['cases']}, closed form {bank['formula_match']} / {bank['formula']}")
    if args.json:
        Path(args.json).write_text(json.dumps(dict(suite=suite, bank_check=bank), indent=1))
    failed = suite["mismatches"] or bank["mismatches"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
