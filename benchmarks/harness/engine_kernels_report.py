"""The results of ``gpu_engine_kernels.py``'s run, our engine's layouts against Triton's on the device:
the file stem for the target whose layouts were compiled (``results_name``) and the JSON + Markdown table
(``write_results``: conversions, predicted and ncu-counted shared wavefronts, correctness, times, ratio).
"""

from __future__ import annotations

from pathlib import Path

from harness.results import write_outputs


def write_results(out: Path, meta: dict, rows: list[dict]) -> None:
    """``gpu_engine_kernels.json`` and ``.md`` under ``out``."""
    measured = [r for r in rows if "triton_us" in (r.get("result") or {})]
    correct = [r for r in measured if r["result"]["correct"]]
    target = meta.get("layouts_for", "sm_90")
    lines = ["# Our engine's layouts vs Triton's, on the device (issue 15, item 6)" +
             ("" if target == "sm_90" else f": the layouts both pick for {target}"), "",
             f"Date {meta.get('date')}; device {meta.get('device')}; cubins by {meta.get('compiled_by')} (sm_90, from "
             f"the two TTGIRs, each Triton's or the engine's for {target}); CuPy {meta.get('cupy')}; "
             f"Python {meta.get('python')}. Script: `benchmarks/gpu_engine_kernels.py`"
             + ("." if target == "sm_90" else f" `--layouts-for {target}` (layout choices for {target}, timed on "
                                              "this device: not that GPU's timing).") , "",
             f"**{len(correct)} / {len(measured)} rewritten kernels produce Triton's output; "
             f"{sum(1 for r in measured if r['result']['ratio'] and r['result']['ratio'] < 0.98)} faster (ratio < 0.98), "
             f"{sum(1 for r in measured if r['result']['ratio'] and r['result']['ratio'] > 1.02)} slower (> 1.02).**", "",
             "Conversions: `convert_layout` ops between different layouts in Triton's TTGIR / in ours (the engine's own "
             "count on the TTIR in brackets). Time: median of "
             f"{meta.get('repeats')} launches (CUDA events), each side on the same inputs; ratio = ours / Triton.", "",
             "Predicted shared traffic: the report's conversions + stagings and their wavefronts per CTA (each op "
             "once) of each TTGIR, Triton's -> ours. `same layouts`: every value has Triton's layout (the rewrite "
             "only moved a conversion): its ratio shows the timing noise.", "",
             "ncu: `l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum` + `_op_st.sum` of one full launch of each "
             "side (fresh inputs)." + (f" ncu rc {meta.get('ncu_rc')}: {meta.get('ncu_tail', '')[-300:]}"
                                       if meta.get("ncu_rc") not in (None, 0) else ""), "",
             "| kernel | status | conversions Triton / ours (engine) | predicted wavefronts per CTA Triton -> ours | "
             "ncu shared wavefronts per launch Triton -> ours | correct | Triton µs | ours µs | ratio |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        res = r.get("result") or {}
        conv = (f"{r['triton_conversions']} / {r['ours_conversions']} ({r['engine_conversions']})"
                if "triton_conversions" in r else "-")
        status = res.get("error") or r.get("status", "")
        if r.get("same_layouts") and "ours" in r:
            status += " (same layouts)"
        pred = r.get("predicted") or {}
        wave = ("-" if not pred or "wavefronts" not in pred.get("triton", {}) or "wavefronts" not in pred.get("ours", {})
                else f"{pred['triton']['wavefronts']} -> {pred['ours']['wavefronts']}")
        correct_text = "-" if "correct" not in res else ("yes" if res["correct"] else
                                                         "NO: " + ", ".join(c["arg"] for c in res["checks"] if not c["equal"]))
        lines.append(f"| {r['kernel']} | {status[:200]} | {conv} | {wave} | {_ncu_text(r.get('ncu'))} | {correct_text} | "
                     f"{res.get('triton_us', '-')} | {res.get('ours_us', '-')} | {res.get('ratio', '-')} |")
    write_outputs(out, results_name(target), {"meta": meta, "rows": rows}, "\n".join(lines) + "\n")


def results_name(layouts_for: str) -> str:
    """The results' file stem for layouts picked for ``layouts_for``: ``gpu_engine_kernels`` for the
    device's own sm_90, ``gpu_engine_kernels_sm_80`` for sm_80."""
    return "gpu_engine_kernels" if layouts_for == "sm_90" else f"gpu_engine_kernels_{layouts_for}"


def _ncu_text(ncu: dict | None) -> str:
    if not ncu or "triton" not in ncu or "ours" not in ncu:
        return "-"

    def total(side: dict) -> str:
        if side.get("ld") is None or side.get("st") is None:
            return "?"
        return f"{side['ld'] + side['st']:g}"

    return f"{total(ncu['triton'])} -> {total(ncu['ours'])}"
