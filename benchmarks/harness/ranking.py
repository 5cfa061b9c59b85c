"""The cost model's ranking check: does it rank the two measured mechanisms of every in-warp suite pair as
the device did?  ``gpu_suite.py`` (its report), ``inwarp_shuffles.py``, ``model_ranking.py`` and the
calibration (``harness.cost_fit``) all score with ``score`` here.

Pairs: every in-warp conversion-loop row (``bench``, config ``conversion``) where our kernel (``ours``:
each direction planned by ``plan_conversion``, so possibly one shuffle and one shared-memory step) and
the kernel of the other mechanism (``shuffle`` or ``shared``, forced in both directions) were both timed
and both correct.  Each kernel is predicted from the steps it executes, as emitted (``StepRecord``: the
counts of ``codegen.cost.step_counts`` plus the layout facts the model prices): the suite's prepare
stage stores them per variant (``variants[*].steps``); for runs made before that, a steps file made by
``model_ranking.py counts`` with the code the run was built from (``results/kernel_steps/<date>.json``;
it also holds each kernel's ``model_us`` as priced then, so the pairing can be checked against the run's,
and the run's in-warp rows).

Rule: a pair agrees when the kernel predicted faster was measured faster.  A predicted tie is broken as
``plan_conversion`` breaks it (a shuffle is taken only when strictly cheaper): the kernel with fewer
shuffle steps is predicted faster.  No tolerance; misses list the measured and predicted ratios (ours /
other), so near-ties are visible.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

from harness import RESULTS

KINDS = ("shuffle", "shared")
STEPS_DIR = RESULTS / "kernel_steps"


@dataclass(frozen=True)
class StepRecord:
    """One emitted conversion step of one CTA: ``kind`` (``shuffle`` / ``shared``); shared-memory
    ``store`` / ``load`` wavefronts of all warps; ``shfl``, ``alu`` per thread; barriers; and
    ``load_warp_copies``: log2 of how many warps load the same data (zero warp bases of the loaded
    layout; their loads hit the same addresses)."""

    kind: str
    store: int = 0
    load: int = 0
    shfl: int = 0
    alu: int = 0
    barriers_cta: int = 0
    barriers_warp: int = 0
    load_warp_copies: int = 0


@dataclass(frozen=True)
class Pair:
    case: str
    bits: int
    warps: int
    other: str  # the forced mechanism's variant: "shuffle" or "shared"
    ours_us: float
    other_us: float
    ours_steps: tuple[StepRecord, StepRecord]
    other_steps: tuple[StepRecord, StepRecord]


@dataclass(frozen=True)
class Miss:
    """A pair ranked otherwise than measured; printed ``case measured/predicted`` (ours / other time)."""

    case: str
    measured: float  # ours / other, measured time
    predicted: float  # ours / other, predicted time

    def __str__(self) -> str:
        return f"{self.case} {self.measured:.2f}x/{self.predicted:.2f}x"


@dataclass(frozen=True)
class Score:
    agree: int
    total: int
    misses: tuple[Miss, ...]

    def __str__(self) -> str:
        return f"{self.agree} / {self.total}"


def _warp_copies_log2(layout) -> int:
    """``cost_model.warp_copies_log2``, restated: ``counts`` runs with the src of older commits."""
    return sum(1 for b in layout.flat_bases("warp") if b == 0) if layout.has_in_dim("warp") else 0


def step_record(step, packings=None) -> StepRecord:
    """The record of a codegen step (a ``SharedConversion`` or ``ShuffleConversion``); ``packings``: the
    (source, destination) register packings its kernel runs it between (``kernel_records``)."""
    from linear_layouts.codegen.conversion import SharedConversion
    from linear_layouts.codegen.cost import step_counts
    from linear_layouts.codegen.model import emitted_wavefronts

    c = step_counts(step, packings=packings)
    if isinstance(step, SharedConversion):
        from linear_layouts.codegen.conversion import canonical_vector_order

        st, ld = emitted_wavefronts(canonical_vector_order(step))
        assert st + ld == c.wavefronts
        return StepRecord("shared", st, ld, c.shfl, c.alu, c.barriers_cta, c.barriers_warp,
                          _warp_copies_log2(step.dst))
    return StepRecord("shuffle", 0, 0, c.shfl, c.alu, c.barriers_cta, c.barriers_warp)


def kernel_records(src, dst, bits: int, forward, backward) -> tuple[StepRecord, StepRecord]:
    """The records of a round-trip kernel's two steps as ``emit_conversion_kernel`` runs them: between the
    register packings it chooses for both (``kernel.choose_packings``), so a step whose preferred packing
    is not its neighbour's pays the byte permutes between them (8/16-bit shuffle steps, mostly)."""
    from linear_layouts.codegen.conversion import SharedConversion, canonical_vector_order
    from linear_layouts.codegen.kernel import choose_packings

    f, b = (canonical_vector_order(x) if isinstance(x, SharedConversion) else x for x in (forward, backward))
    pa, pb = choose_packings(src, dst, bits // 8, f, b)
    return step_record(forward, (pa, pb)), step_record(backward, (pb, pa))


def recount(results: dict) -> dict:
    """``results`` with each in-warp variant's steps counted as its kernel runs them (``kernel_records``),
    for runs recorded before the records counted the packing seams: each kernel rebuilt from its steps'
    kinds with the code importable now (a ``shuffle`` step: ``plan_shuffle``; ``shared``: the forced
    shared-memory step), kept only where the rebuilt steps give the recorded records (the same kernel)."""
    from harness.cases import all_cases

    from linear_layouts.analysis.shuffles import plan_shuffle
    from linear_layouts.codegen.plan import conversion_step
    from linear_layouts.codegen.shuffle import ShuffleConversion

    cases = {c.name: c for c in all_cases()}

    def build(kind, s, d, bits):
        return ShuffleConversion(plan_shuffle(s, d, bits)) if kind == "shuffle" else \
            conversion_step(s, d, bits, force_shared=True)

    variants, kept = [], 0
    for v in results.get("variants", []):
        c = cases.get(v["case"])
        if c is None or not v.get("steps"):
            variants.append(v)
            continue
        old = _steps_from(v["steps"])
        fwd, bwd = build(old[0].kind, c.src, c.dst, c.bits), build(old[1].kind, c.dst, c.src, c.bits)
        new = kernel_records(c.src, c.dst, c.bits, fwd, bwd)
        if old in ((step_record(fwd), step_record(bwd)), new):
            v, kept = {**v, "steps": [asdict(x) for x in new]}, kept + 1
        variants.append(v)
    print(f"recount: {kept} of {sum(bool(v.get('steps')) for v in variants)} recorded kernels recounted "
          "(the others differ from today's and keep their records)")
    return {**results, "variants": variants}


def kernel_ns(steps, warps: int, device=None) -> float:
    """Predicted SM-ns of a kernel's round trip (its two steps) with the device table (a name or a
    ``DeviceCosts``), as ``codegen.cost.step_time_ns`` prices the steps."""
    from linear_layouts.analysis.cost_model import OpCounts, conversion_time_ns, copied_load_wavefronts

    return sum(conversion_time_ns(OpCounts(s.store + s.load, s.shfl, s.alu, s.barriers_cta, s.barriers_warp), warps,
                                  device, copied_load_wavefronts(s.load, s.load_warp_copies)) for s in steps)


def device_note(device: str | None = None) -> str:
    """Where the device table came from (``DeviceCosts.measured``)."""
    from linear_layouts.analysis.cost_model import device_costs

    return device_costs(device).measured


def run_table(results: dict, device: str = "", table: str = ""):
    """(``DeviceCosts``, what it is) that score ``results``: the ``table`` file, else the table of ``device``
    (default: the run's device, ``fit_cost_model.run_device``), its own or the nearest (``target.cost_table``)."""
    from linear_layouts.target import TARGETS, cost_table, load_device, named_target

    if table:
        costs = load_device(Path(table))
        return costs, f"{costs.name} table from {Path(table).name}"
    if not device:
        env = results.get("environment", {})
        device = env.get("device") or ""
        if not device and env.get("gpu") and not str(env["gpu"]).startswith("unavailable"):
            from linear_layouts.target import device_name

            device = device_name(str(env["gpu"]).split(",")[0])
    found = cost_table(named_target(device=device) if device in TARGETS else None)
    return found.costs, found.label if device in TARGETS else f"{found.label} (device {device or '?'} not known)"


def _steps_from(records) -> tuple[StepRecord, StepRecord]:
    return tuple(StepRecord(**r) for r in records)  # type: ignore[return-value]


def steps_file(results: dict) -> Path:
    """The steps file of a run made before the suite recorded steps (by its date)."""
    date = str(results.get("environment", {}).get("date", "")).replace(" UTC", "").replace(":", "")
    return STEPS_DIR / (date.replace(" ", "_") + ".json")


def load_run(path: Path) -> dict:
    """A run's results: a ``gpu_suite.json``, or a steps file that carries its run's in-warp rows
    (``results``: the 2026-11-23 run, whose JSON is only in git history)."""
    data = json.loads(Path(path).read_text())
    return data["results"] if "kernels" in data else data


def pairs(results: dict, steps: dict | None = None) -> list[Pair]:
    """The scored pairs of a suite run (module doc); ``steps``: {case: {variant: {"steps": [2 records]}}}
    for runs without ``variants[*].steps`` (default: its ``steps_file``)."""
    recorded = {(v["case"], v["variant"]): v["steps"] for v in results.get("variants", []) if v.get("steps")}
    if not recorded and steps is None:
        path = steps_file(results)
        steps = json.loads(path.read_text())["kernels"] if path.exists() else {}
    out = []
    for r in results.get("bench", []):
        if r["config"] != "conversion" or not r.get("in_warp") or r.get("kind") == "registers":
            continue
        other = next((k for k in KINDS if r.get(k)), None)
        if other is None or not r.get("ours") or not (r.get("ours_correct") and r.get(other + "_correct")):
            continue
        rec = {k: recorded.get((r["case"], k)) or (steps or {}).get(r["case"], {}).get(k, {}).get("steps")
               for k in ("ours", other)}
        if not all(rec.values()):
            continue
        out.append(Pair(r["case"], r["bits"], r["warps"], other, r["ours"], r[other], _steps_from(rec["ours"]),
                        _steps_from(rec[other])))
    return out


def score(ps: list[Pair], time_ns: Callable | None = None) -> Score:
    """Agreement of the predicted and measured ranking over ``ps`` (module doc); ``time_ns(steps,
    warps)`` prices a kernel (default ``kernel_ns`` with the package's device table)."""
    time_ns = time_ns or kernel_ns
    agree, misses = 0, []
    for p in ps:
        po, pa = time_ns(p.ours_steps, p.warps), time_ns(p.other_steps, p.warps)
        shuffles = [sum(s.kind == "shuffle" for s in st) for st in (p.ours_steps, p.other_steps)]
        predicted_ours = (po, shuffles[0]) < (pa, shuffles[1])
        if predicted_ours == (p.ours_us < p.other_us):
            agree += 1
        else:
            misses.append(Miss(p.case, p.ours_us / p.other_us, po / pa if pa else math.inf))
    return Score(agree, len(ps), tuple(misses))


def score_results(results: dict) -> Score:
    """``score`` of a suite run's results (``gpu_suite.json``)."""
    return score(pairs(results))


def kernel_steps() -> dict:
    """{case: {variant: [forward, backward] step records}} of every in-warp suite kernel ("ours", the
    forced "shuffle" / "shared"), built as ``gpu_suite.build_variants`` builds them, with the code
    importable now, and each kernel's ``model_us`` as ``gpu_suite`` prices it (``codegen.cost``)."""
    from harness.cases import all_cases

    from linear_layouts.analysis.shuffles import plan_shuffle, same_warp_data
    from linear_layouts.codegen.conversion import RegisterCopy
    from linear_layouts.codegen.cost import step_time_ns
    from linear_layouts.codegen.plan import conversion_step
    from linear_layouts.codegen.shuffle import ShuffleConversion

    out = {}
    for c in all_cases():
        s, d, b = c.src, c.dst, c.bits
        if not same_warp_data(s, d):
            continue
        fwd, bwd = conversion_step(s, d, b), conversion_step(d, s, b)
        if isinstance(fwd, RegisterCopy):
            continue
        kernels = {"ours": (fwd, bwd), "shared": (conversion_step(s, d, b, force_shared=True),
                                                   conversion_step(d, s, b, force_shared=True))}
        try:
            kernels["shuffle"] = (ShuffleConversion(plan_shuffle(s, d, b)), ShuffleConversion(plan_shuffle(d, s, b)))
        except Exception:  # noqa: BLE001 - the suite skips such variants too
            pass
        out[c.name] = {k: dict(steps=[asdict(step_record(x)) for x in two],
                               model_us=sum(step_time_ns(x, c.warps) for x in two) / 1e3)
                       for k, two in kernels.items()}
    return out


def check_steps_file(results: dict, kernels: dict) -> list[str]:
    """Variants of ``results`` whose recorded ``model_us`` differs from the steps file's: a steps file
    made with other code than the run's (empty when every kernel is the run's)."""
    bad = []
    for v in results.get("variants", []):
        k = kernels.get(v["case"], {}).get(v["variant"])
        if k is not None and v.get("model_us") is not None and abs(k["model_us"] - v["model_us"]) > 1e-9:
            bad.append(f"{v['case']}/{v['variant']}")
    return bad
