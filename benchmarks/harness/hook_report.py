"""The rows of a run of the Triton hook over the corpus and their report: the hook's decision for a
compiled kernel and its trace as a row keeps them, the summary over the rows (``summary``: correct,
rewritten, ratios per mode, measured mode's bases), a row in one line and the Markdown report.
"""

from __future__ import annotations

import math
import statistics

def _quartiles(values) -> list[float] | None:
    if len(values) < 2:
        return None
    return [round(q, 3) for q in statistics.quantiles(values, n=4, method="inclusive")]


#: the measured column where the hook recorded nothing for the kernel
NO_DECISION = {"choice": "triton", "basis": "no decision",
               "reason": "the hook recorded no decision for this kernel (never armed: see its trace)"}


def decision_record(kernel) -> dict | None:
    """The hook's decision for a compiled kernel as JSON: choice, basis, reason, predicted gain, and where
    measured every sample of both variants, their quartiles and the samples' launches (``inner``)."""
    import linear_layouts.triton as lt

    found = lt.decision(kernel)
    if found is None:
        return None
    return {"choice": found.choice, "basis": found.basis.value, "reason": found.reason,
            "predicted_gain": found.predicted_gain, "triton_us": found.triton_us, "ours_us": found.ours_us,
            "measured_gain": found.measured_gain, "inner": found.inner,
            "triton_quartiles_us": _quartiles(found.triton_samples_us),
            "ours_quartiles_us": _quartiles(found.ours_samples_us),
            "triton_samples_us": list(found.triton_samples_us), "ours_samples_us": list(found.ours_samples_us)}


class Trace:
    """The hook's trace (logger ``linear_layouts.triton``) collected per kernel in the measuring child."""

    def __init__(self) -> None:
        import logging

        self.lines: list[str] = []
        self.handler = logging.Handler(logging.DEBUG)
        self.handler.emit = lambda record: self.lines.append(record.getMessage())
        self.logger = logging.getLogger("linear_layouts.triton")
        self.logger.addHandler(self.handler)
        self.logger.setLevel(logging.DEBUG)

    def take(self) -> list[str]:
        lines, self.lines = self.lines, []
        return lines

    def close(self) -> None:
        self.logger.removeHandler(self.handler)


def geomean(values: list[float]) -> float | None:
    """The geometric mean of ``values`` to 4 places (None for none)."""
    return round(math.exp(sum(math.log(v) for v in values) / len(values)), 4) if values else None


def summary(rows: list[dict]) -> dict:
    """Per mode (``model``, ``measured``) over the timed rows: correct, rewritten, ratios and their geomeans;
    model mode's sign right; measured mode's bases and how many kernels the hook timed itself."""
    measured = [r for r in rows if "time" in r]
    out: dict = {"kernels": len(rows), "timed": len(measured)}
    for variant in ("model", "measured"):
        timed = [r for r in measured if r[variant].get("ratio")]
        differs = [r for r in timed if r[variant]["binary_differs"]]
        out[variant] = {
            "correct": sum(r[variant]["correct"] for r in measured),
            "rewritten": len(differs),
            "max_ratio": max((r[variant]["ratio"] for r in differs), default=None),
            "max_ratio_same_binary": max((r[variant]["ratio"] for r in timed if not r[variant]["binary_differs"]),
                                         default=None),
            "at_most_1.01": sum(not r[variant]["binary_differs"] or r[variant]["ratio"] <= 1.01 for r in timed),
            "slower_than_1.02": [r["kernel"] for r in differs if r[variant]["ratio"] > 1.02],
            "same_binary_beyond_2pct": [r["kernel"] for r in timed
                                        if not r[variant]["binary_differs"] and abs(r[variant]["ratio"] - 1) > 0.02],
            "geomean_triton_over_ours_where_differs": geomean([1 / r[variant]["ratio"] for r in differs]),
            "geomean_triton_over_ours_all": geomean([1 / r[variant]["ratio"] for r in timed]),
        }
    rewrites = [r for r in measured
                if r["model"]["binary_differs"] and (r["model"]["decision"] or {}).get("predicted_gain")]
    out["model"]["sign_right"] = f"{sum(r['model']['ratio'] < 1 for r in rewrites)} / {len(rewrites)}"
    bases: dict[str, int] = {}
    for r in measured:
        basis = (r["measured"]["decision"] or NO_DECISION)["basis"]
        bases[basis] = bases.get(basis, 0) + 1
    out["measured"]["bases"] = dict(sorted(bases.items()))
    out["measured"]["measured_by_the_hook"] = sum(bool((r["measured"]["decision"] or {}).get("inner"))
                                                  for r in measured)
    return out


def _measured_text(decision: dict) -> str:
    """The hook's samples of a measured decision: ``Triton q1 / median / q3 vs ours q1 / median / q3 us (n x
    inner)``, else ``-``."""
    tq, oq = decision.get("triton_quartiles_us"), decision.get("ours_quartiles_us")
    if not tq or not oq:
        return "-"
    return (f"{' / '.join(map(str, tq))} vs {' / '.join(map(str, oq))} "
            f"({len(decision['triton_samples_us'])} x {decision['inner']})")


def one_line(row: dict) -> str:
    """A row in one line (the run's log)."""
    if "time" not in row:
        return f"{row['kernel']}: {row.get('error', '-')[:200]}"
    model, measured = row["model"], row["measured"]
    decision = measured["decision"] or NO_DECISION
    return (f"{row['kernel']}: Triton {row['time']['us']['triton']} us; model {model['ratio']} "
            f"({'ours' if model['binary_differs'] else 'Triton'}); measured {measured['ratio']} "
            f"({decision['choice']}, {decision['basis']}: {decision['reason'][:90]}; samples "
            f"{_measured_text(decision)}); first call {row['first_call_s']['measured']} s; "
            f"correct {model['correct']}/{measured['correct']}")


def markdown(meta: dict, rows: list[dict], checks: dict, stats: dict) -> str:
    """The run's report: the headline, one table row per kernel, measured mode's reasons, the checks."""
    env = meta["environment"]
    lines = ["# `linear_layouts.triton.enable()` on the device: corpus kernels through Triton's JIT (issue 34)", "",
             f"Date {env.get('date')}; device {env.get('gpu')}; Triton {env.get('triton')}; "
             f"PyTorch {env.get('torch')}; Python {env.get('python')}; linear_layouts {meta.get('package_key')}. "
             f"Script: "
             f"`benchmarks/gpu_triton_hook.py` ({meta.get('seconds')} s; warm-up compiles "
             f"{meta.get('warm', {}).get('seconds', '-')} s in {meta.get('warm', {}).get('jobs', '-')} processes).", "",
             "Each kernel is launched as a plain `@triton.jit` function: Triton alone, under `enabled(\"model\")` and "
             "under `enabled(\"measured\")`, each from a fresh `JITFunction` (as a new process meets it) on "
             "fresh, equal inputs (outputs compared); all three timed on the same buffers (Triton's run's), so "
             "a kept binary times as Triton's. Time per launch: median over "
             f"{meta.get('repeats')} samples, each a CUDA graph of `inner` launches, the three variants in rotating "
             "order; ratio = hooked / Triton (1.0 where the hook kept Triton's binary: the noise). `first call`: "
             "seconds of each variant's first JIT call (compile or cache hit, the engine, the measurement).", "",
             f"**Measured mode: {stats['measured']['correct']} / {stats['timed']} kernels give Triton's outputs; "
             f"{stats['measured']['at_most_1.01']} / {stats['timed']} at ratio <= 1.01 (Triton's own binary kept "
             f"counts as 1; of ours kept the max is {stats['measured']['max_ratio']}); ours kept on {stats['measured']['rewritten']}, geomean Triton / ours "
             f"there {stats['measured']['geomean_triton_over_ours_where_differs']}. Model mode: "
             f"{stats['model']['correct']} / {stats['timed']} correct; rewrote {stats['model']['rewritten']}, slower "
             f"than 1.02 on {stats['model']['slower_than_1.02'] or 'none'}; sign right "
             f"{stats['model']['sign_right']}; geomean Triton / ours where rewritten "
             f"{stats['model']['geomean_triton_over_ours_where_differs']}.**", "",
             f"Triton's own binary kept, yet beyond 2% of Triton's time (the timing's noise, e.g. a kernel whose "
             f"atomics change its work from launch to launch): model mode "
             f"{stats['model'].get('same_binary_beyond_2pct') or 'none'}, measured mode "
             f"{stats['measured'].get('same_binary_beyond_2pct') or 'none'}.", "",
             f"Measured mode's bases: {stats['measured']['bases']}; the hook timed both variants on "
             f"{stats['measured']['measured_by_the_hook']} kernels (samples: quartiles of per-launch µs, pairs x "
             f"launches per sample; ours is kept only at a median >= 1% faster with disjoint interquartile ranges).",
             "",
             "| kernel | Triton µs | model: ours? (predicted gain) | model ratio | measured: choice (basis) | "
             "hook's samples: Triton vs ours | measured ratio | correct model / measured | first call s T / M / Ms "
             "| inner |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    reasons = []
    for r in rows:
        if "time" not in r:
            lines.append(f"| {r['kernel']} | {r.get('error', '-')[:160]} | | | | | | | | |")
            continue
        model, measured = r["model"], r["measured"]
        md, ms = model["decision"] or {}, measured["decision"] or NO_DECISION
        gain = md.get("predicted_gain")
        model_text = ("ours" if model["binary_differs"] else "Triton's") + \
            (f" ({gain:+.1%})" if gain is not None else "")
        measured_text = f"{'ours' if measured['binary_differs'] else 'Triton'} ({ms['basis']})"
        reasons.append(f"- {r['kernel']}: {ms['basis']}: {ms['reason'].replace('|', '/')[:300]}")
        if ms["basis"] in ("no decision", "error"):
            reasons += [f"  - trace: {line[:300]}" for line in r.get("trace", [])] or ["  - trace: (empty)"]
        correct = f"{'yes' if model['correct'] else 'NO ' + ', '.join(model['wrong'])} / " \
                  f"{'yes' if measured['correct'] else 'NO ' + ', '.join(measured['wrong'])}"
        fc = r["first_call_s"]
        lines.append(f"| {r['kernel']} | {r['time']['us']['triton']} | {model_text} | {model['ratio']} | "
                     f"{measured_text} | {_measured_text(ms)} | {measured['ratio']} | {correct} | "
                     f"{fc['triton']} / {fc['model']} / {fc['measured']} | {r['time']['inner']} |")
    lines += ["", "## Measured mode: why, per kernel", "", *reasons]
    lines += ["", "## Integration checks", ""]
    for name, found in checks.items():
        lines.append(f"- **{name}**: " + ", ".join(f"{k} = {v}" for k, v in found.items()))
    warm_rows = meta.get("warm", {}).get("rows", {})
    failed = {k: v["error"] for k, v in warm_rows.items() if "error" in v}
    if failed:
        lines += ["", "Warm-up compile errors (the JIT meets them too): " +
                  "; ".join(f"{k}: {v[:160]}" for k, v in failed.items())]
    return "\n".join(lines) + "\n"
