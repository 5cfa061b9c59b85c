"""sha256 of the system's outputs, to show a refactoring changed none of them.

    PYTHONPATH=src python3 tools/output_hashes.py -o before.json          # record
    PYTHONPATH=src python3 tools/output_hashes.py --check before.json     # compare (exit 1 on any change)
    PYTHONPATH=src python3 tools/output_hashes.py --check before.json --only report,rewrite

Groups (``--only`` takes a comma-separated subset):

* ``kernels``: every CUDA source the GPU suite builds (``benchmarks/gpu_suite.py``: the conversion
  variants of ``harness.cases.all_cases``, the 8192^2 transposes (plain, persistent, cp.async) and the
  gathers) with its launch shape, the plan's prediction and codegen's model of its instructions;
* ``report``: ``linear-layouts report`` of every corpus TTGIR (``tests/data/triton_kernels/ir/{sm_80,
  sm_90,gfx942}``) as text, as HTML without pictures (with them for a sample) and as a canonical JSON of the ``KernelReport``;
* ``rewrite``: ``rewrite_kernel(ttir, ttgir, choose=True / False)`` of those kernels;
* ``engine``: ``engine.examples`` propagated, and the corpus TTIR imported and propagated;
* ``cli``: the README's commands (demo, show in every text format, matrix, banks, swizzle, convert
  --emit cuda, report of a .py kernel when Triton is installed).

Each output is reduced to bytes that do not depend on where a class lives (types by their qualified
name, never their module) nor on the clock (the engine's "propagated in N s" is blanked).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import enum
import hashlib
import io
import json
import os
import pathlib
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping

REPO = pathlib.Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "data" / "triton_kernels"
TARGETS = ("sm_80", "sm_90", "gfx942")
_CLOCK = re.compile(r"propagated in [0-9.]+ s")
_SKIPPED_FIELDS = {"seconds"}  # wall-clock time of an engine run


def sha(data: str | bytes) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


def canonical(value: object, _path: tuple[int, ...] = ()) -> object:
    """A JSON-able form of ``value`` independent of the modules its classes live in (a dataclass as its
    qualified name and fields, a LinearLayout as its bases and out dims, an enum as its name)."""
    import numpy as np

    from linear_layouts import LinearLayout

    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, enum.Enum):
        return f"{type(value).__qualname__}.{value.name}"
    if isinstance(value, bytes):
        return sha(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return canonical(value.item(), _path)
    if id(value) in _path:
        return "<cycle>"
    path = _path + (id(value),)
    if isinstance(value, LinearLayout):
        return {"LinearLayout": canonical(value.bases, path), "out_dims": canonical(dict(value.out_dims), path)}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"__type__": type(value).__qualname__,
                **{f.name: canonical(getattr(value, f.name), path) for f in dataclasses.fields(value)
                   if f.name not in _SKIPPED_FIELDS}}
    if isinstance(value, Mapping):
        return [[canonical(k, path), canonical(v, path)] for k, v in value.items()]
    if isinstance(value, (list, tuple)):
        return [canonical(v, path) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((canonical(v, path) for v in value), key=repr)
    if callable(value):
        return f"<callable {getattr(value, '__qualname__', type(value).__qualname__)}>"
    state = getattr(value, "__dict__", None)
    if state is None and hasattr(type(value), "__slots__"):
        state = {s: getattr(value, s) for s in type(value).__slots__ if hasattr(value, s)}
    if state is not None:
        return {"__type__": type(value).__qualname__, **{k: canonical(v, path) for k, v in state.items()}}
    return repr(value)


def canonical_json(value: object) -> str:
    return json.dumps(canonical(value), sort_keys=False, separators=(",", ":"))


# ------------------------------------------------------------------------------------------ groups
def group_kernels() -> Iterator[tuple[str, str]]:
    sys.path.insert(0, str(REPO / "benchmarks"))
    from harness import cases as gpu_cases
    import gpu_suite

    for v in gpu_suite.build_variants(gpu_cases.all_cases(), 24):
        record = dict(kernel=v.kernel.__dict__, step_kind=v.step_kind, predicted=v.predicted, modelled=v.modelled,
                      instructions=v.instructions, note=v.note, model_us=repr(v.model_us), steps=v.steps)
        yield f"{v.case.name}/{v.variant}", json.dumps(canonical(record))
    for w, tag, step, kernel in gpu_suite.transpose_kernels(8192):
        yield f"transpose/{w}/{tag}", canonical_json(kernel) + canonical_json(step)
    for shape, spt, tpw, wpc, bits, plan, kernels in gpu_suite.gather_kernels():
        for variant, kernel in kernels.items():
            yield f"gather/{shape}/{bits}/{variant}", canonical_json(kernel) + canonical_json(plan)


def _corpus(suffix: str) -> Iterator[tuple[str, pathlib.Path]]:
    for target in TARGETS:
        for path in sorted((CORPUS / "ir" / target).glob(f"*{suffix}")):
            yield f"{target}/{path.stem}", path


def _cli(argv: list[str], output: str | None = None) -> str:
    """stdout, stderr and the exit status of ``linear-layouts ARGV`` run in this process (``output``, the
    file given to ``-o``, blanked in them)."""
    from linear_layouts.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(argv)
        except SystemExit as exit_:
            status = exit_.code
        except Exception as error:  # an outcome too (a crash): the same one before and after
            status = f"raised {type(error).__name__}: {error}"
    text = f"{out.getvalue()}\nstderr: {err.getvalue()}\nexit {status}"
    return text.replace(output, "OUTPUT") if output else text


def _cli_file(argv: list[str], suffix: str) -> bytes:
    """``linear-layouts ARGV -o FILE``: the file's bytes (and what ``_cli`` gives)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "out" + suffix)
        text = _cli([*argv, "-o", path], path)
        written = pathlib.Path(path)
        return text.encode() + (written.read_bytes() if written.is_file() else b"")


#: the kernels whose HTML report is hashed with its pictures too (a sample: pictures are slow)
_PICTURED = {"sm_90/matmul_fp16", "sm_80/transpose", "gfx942/fused_softmax", "sm_90/attention_fwd"}


def group_report() -> Iterator[tuple[str, str | bytes]]:
    from linear_layouts.cli import main  # noqa: F401  (the CLI's imports first, as a user's run has them)
    from linear_layouts.pipeline.from_file import report_for_file

    for key, path in _corpus(".ttgir"):
        yield f"{key}/text", _CLOCK.sub("propagated in ? s", _cli(["report", str(path)]))
        yield f"{key}/html", _CLOCK.sub("propagated in ? s",
                                        _cli_file(["report", str(path), "--format", "html", "--no-pictures"],
                                                  ".html").decode())
        try:
            report = canonical_json(report_for_file(str(path)))
        except Exception as error:  # an outcome too
            report = f"{type(error).__name__}: {error}"
        yield f"{key}/json", report
        if key in _PICTURED:
            yield f"{key}/html-pictures", _CLOCK.sub("propagated in ? s", _cli_file(
                ["report", str(path), "--format", "html"], ".html").decode())


def group_rewrite() -> Iterator[tuple[str, str]]:
    from linear_layouts.pipeline.rewrite import rewrite_kernel

    for key, path in _corpus(".ttgir"):
        ttir = path.with_suffix(".ttir")
        if not ttir.is_file():
            continue
        for choose in (True, False):
            try:
                result = canonical_json(rewrite_kernel(ttir.read_text(), path.read_text(), choose=choose))
            except Exception as error:  # an outcome too: the same error before and after
                result = f"{type(error).__name__}: {error}"
            yield f"{key}/choose={choose}", result


def group_engine() -> Iterator[tuple[str, str]]:
    from linear_layouts.engine import propagate
    from linear_layouts.engine.examples import EXAMPLES
    from linear_layouts.triton_model.ir_text import parse_module
    from linear_layouts.pipeline.ttir_import import import_ttir

    for name, build in EXAMPLES.items():
        result = propagate(build())
        yield f"examples/{name}", result.to_text() + canonical_json(result)
    for key, path in _corpus(".ttir"):
        try:
            imported = import_ttir(parse_module(path.read_text()))
            text = canonical_json(imported)
            try:
                text += propagate(imported.program).to_text()
            except Exception as error:
                text += f"propagate: {type(error).__name__}: {error}"
        except Exception as error:
            text = f"{type(error).__name__}: {error}"
        yield f"ttir/{key}", text


#: the README's commands (``A short tour`` and the examples after it)
_BLOCKED = "BlockedLayout([1,4],[4,8],[4,1],[1,0])"
CLI_COMMANDS: tuple[tuple[str, tuple[str, ...], str | None], ...] = (
    ("demo", ("demo",), None),
    *((f"show/{form}", ("show", _BLOCKED, "--shape", "32,64", "--format", form), None)
      for form in ("text", "grid", "json", "gluon", "ttgir")),
    ("show/hw", ("show", _BLOCKED, "--shape", "32,64", "--hw"), None),
    ("show/svg", ("show", _BLOCKED, "--shape", "32,64", "--format", "svg"), ".svg"),
    ("show/png", ("show", _BLOCKED, "--shape", "32,64", "--format", "png"), ".png"),
    ("show/html", ("show", _BLOCKED, "--shape", "32,64", "--format", "html"), ".html"),
    ("show/cute", ("show", "Swizzle<3,4,3> o (8,128):(128,1)", "--format", "cute"), None),
    ("show/ttgir-in", ("show", "tensor<128x64xf16, #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], "
                               "warpsPerCTA = [4, 1], order = [1, 0]}>>"), None),
    ("matrix", ("matrix", f"SliceLayout(0, {_BLOCKED})", "--shape", "64"), None),
    ("banks", ("banks", "SwizzledSharedLayout(8,1,8,[1,0])", "NVMMADistributedLayout([2,0],[4,1],[16,8])",
               "--shape", "64,64", "--dtype", "fp16"), None),
    ("banks/svg", ("banks", "SwizzledSharedLayout(8,1,8,[1,0])", "NVMMADistributedLayout([2,0],[4,1],[16,8])",
                   "--shape", "64,64", "--dtype", "fp16", "--format", "svg"), ".svg"),
    ("swizzle", ("swizzle", "BlockedLayout([1,8],[4,8],[4,1],[1,0])", "NVMMADistributedLayout([2,0],[4,1],[16,8])",
                 "--shape", "64,64", "--dtype", "fp16"), None),
    *((f"swizzle/wgmma-a/{form}", ("swizzle", "BlockedLayout([1,8],[4,8],[4,1],[1,0])", "wgmma-a",
                                   "--shape", "128,64", "--dtype", "fp16", "--format", form), None)
      for form in ("text", "gluon", "ttgir")),
    ("swizzle/cute", ("swizzle", "BlockedLayout([1,8],[4,8],[4,1],[1,0])", "NVMMADistributedLayout([2,0],[4,1],[16,8])",
                      "--shape", "64,64", "--dtype", "fp16", "--format", "cute"), None),
    *((f"convert/{form}", ("convert", "BlockedLayout([1,8],[4,8],[4,1],[1,0])",
                           "NVMMADistributedLayout([2,0],[4,1],[16,8])", "--shape", "64,64", "--dtype", "fp16",
                           "--format", form, *(("--emit", "cuda") if form == "text" else ())), None)
      for form in ("text", "gluon", "ttgir")),  # the kernel goes with the plan (text) only
    ("convert/transpose", ("convert", "BlockedLayout([1,8],[8,4],[1,1],[1,0])",
                           "BlockedLayout([8,1],[4,8],[1,1],[0,1])", "--shape", "16,32", "--dtype", "fp16",
                           "--emit", "cuda"), None),
    ("explore", ("explore",), ".html"),
)


def group_cli() -> Iterator[tuple[str, str | bytes]]:
    for key, argv, suffix in CLI_COMMANDS:
        yield key, _cli_file(list(argv), suffix) if suffix else _cli(list(argv))
    try:
        import triton  # noqa: F401
    except ImportError:
        return
    yield "report/matmul_fp16.py", _CLOCK.sub("propagated in ? s", _cli(
        ["report", str(CORPUS / "matmul_fp16.py"), "--target", "sm_90"]))


GROUPS: dict[str, Callable[[], Iterator[tuple[str, str | bytes]]]] = {
    "kernels": group_kernels, "report": group_report, "rewrite": group_rewrite, "engine": group_engine,
    "cli": group_cli,
}


def collect(groups: list[str]) -> dict[str, str]:
    hashes: dict[str, str] = {}
    for group in groups:
        start = time.time()
        n = 0
        for key, output in GROUPS[group]():
            hashes[f"{group}:{key}"] = sha(output)
            n += 1
        print(f"{group}: {n} outputs in {time.time() - start:.1f} s", file=sys.stderr, flush=True)
    return hashes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--output", help="write the hashes (JSON) here (default: stdout)")
    ap.add_argument("--check", metavar="FILE", help="compare with the hashes in FILE; exit 1 on any difference")
    ap.add_argument("--only", help="comma-separated groups: " + ",".join(GROUPS))
    args = ap.parse_args(argv)
    groups = args.only.split(",") if args.only else list(GROUPS)
    unknown = [g for g in groups if g not in GROUPS]
    if unknown:
        ap.error(f"--only: unknown group(s) {unknown} (known: {', '.join(GROUPS)})")
    hashes = collect(groups)
    if args.output:
        pathlib.Path(args.output).write_text(json.dumps(hashes, indent=1, sort_keys=True) + "\n")
    if not args.check:
        if not args.output:
            print(json.dumps(hashes, indent=1, sort_keys=True))
        return 0
    before = {k: v for k, v in json.loads(pathlib.Path(args.check).read_text()).items()
              if k.split(":", 1)[0] in groups}
    changed = sorted(k for k in hashes if k in before and before[k] != hashes[k])
    missing = sorted(set(before) - set(hashes))
    new = sorted(set(hashes) - set(before))
    for label, keys in (("changed", changed), ("missing", missing), ("new", new)):
        for key in keys:
            print(f"{label}: {key}")
    same = len(hashes) - len(changed) - len(new)
    print(f"{same} of {len(before)} outputs identical; {len(changed)} changed, {len(missing)} missing, "
          f"{len(new)} new")
    return 1 if changed or missing or new else 0


if __name__ == "__main__":
    sys.exit(main())
