"""Compile the corpus of real Triton kernels (tests/data/triton_kernels/*.py) on the CPU with the
installed Triton (3.9) for sm_80, sm_90 and gfx942, and store each kernel's TTIR and TTGIR as test data
under tests/data/triton_kernels/ir/<target>/<kernel>.{ttir,ttgir}, with an index (ir/index.json)
saying which kernels compile for which target and why not where they do not.

For the NVIDIA targets it also compiles on to PTX and a cubin (Triton's bundled ptxas) and stores the
static inventory of the PTX's shared-memory instructions (``ir/ptx_shared.json``: per kernel and target,
how many ``ld/st.shared`` of each width, ``ldmatrix`` / ``stmatrix`` of each shape appear in the PTX), the
oracle for the model of Triton's lowering (``linear_layouts.triton_model.lowering``); the same for its
global-memory instructions (``ir/ptx_global.json``: ``ld/st.global``, atomics and ``cp.async`` by bytes
per lane, ``triton_model.global_access``); and what ptxas gave each kernel (``ir/ptxas_registers.json``:
registers per thread and stack bytes, from ``cuobjdump --dump-resource-usage``).

Run: ``PYTHONPATH=src python3 tools/compile_triton_kernels.py [--jobs 2] [--check] [--only a,b]``
(``--check``: compile again and report files that differ from the stored ones, write nothing;
``--only``: those kernels alone, their rows of ``index.json`` and ``ptx_shared.json`` replaced and every
other kernel's rows and files left as they are).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # the JIT's default; silences 3.9's warning

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "data" / "triton_kernels"


def _compile_one(path: str) -> list[dict]:
    sys.path.insert(0, str(ROOT / "src"))
    from linear_layouts.core.errors import LayoutError
    from linear_layouts.pipeline import load_kernel_file
    from linear_layouts.triton_model.compile import compile_kernel
    from linear_layouts.triton_model.kernel_file import TARGETS

    spec = load_kernel_file(path)
    rows = []
    for target in TARGETS:
        try:
            ir = compile_kernel(spec, target)
            row = {"kernel": spec.name, "target": target, "ok": True, "ttir": ir.ttir, "ttgir": ir.ttgir,
                   "triton": ir.triton_version}
            if target.startswith("sm_"):
                compiled = _compiled(spec, target)
                row["ptx_shared"] = ptx_shared_inventory(compiled["ptx"])
                row["ptx_global"] = ptx_global_inventory(compiled["ptx"])
                row["ptxas"] = cubin_resources(compiled["cubin"])
            rows.append(row)
        except LayoutError as error:
            rows.append({"kernel": spec.name, "target": target, "ok": False, "error": str(error)})
    return rows


def _compiled(spec, target: str) -> dict:
    """The PTX and cubin Triton compiles ``spec`` to for ``target``."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from linear_layouts.triton_model.kernel_file import parse_target

    signature, constexprs, attrs = spec.specialization()
    src = ASTSource(fn=spec.kernel, signature=signature, constexprs=constexprs, attrs=attrs)
    asm = triton.compile(src, target=GPUTarget(*parse_target(target)), options=dict(spec.options)).asm
    return {"ptx": asm["ptx"], "cubin": asm["cubin"]}


def ptx_global_inventory(ptx: str) -> dict[str, int]:
    """``triton_model.global_access.ptx_global_inventory``: global ld / st / atomics / cp.async by bytes."""
    from linear_layouts.triton_model.global_access import ptx_global_inventory as inventory

    return inventory(ptx)


def cubin_resources(cubin: bytes) -> dict[str, int]:
    """``triton_model.compile.cubin_resources``: registers per thread and stack bytes of the cubin's kernel."""
    from linear_layouts.triton_model.compile import cubin_resources as resources

    return resources(cubin)


def ptx_shared_inventory(ptx: str) -> dict[str, int]:
    """Static count of the PTX's shared-memory data instructions by kind: ``st.shared.16B`` (bytes per
    lane, whatever the type suffix: ``.b32``, and ``.s32`` where LLVM folds a sign extension into the load),
    ``ldmatrix.x4.trans``, ... (``cp.async``, atomics and barriers are not data ld/st)."""
    import re
    from collections import Counter

    out: Counter = Counter()
    for name in re.findall(r"^\s*(?:@!?%p\d+ )?((?:ld|st)\.shared\S*|ldmatrix\S*|stmatrix\S*)", ptx, re.M):
        m = re.match(r"(ld|st)\.shared(?:::cta)?\.(?:(v\d)\.)?[bsuf](\d+)", name)  # ld.shared.s32: an extending load
        if m:
            op, v, b = m.groups()
            out[f"{op}.shared.{int(b) // 8 * (int(v[1:]) if v else 1)}B"] += 1
            continue
        m = re.match(r"(ldmatrix|stmatrix)\.sync\.aligned\.m8n8\.(x\d)(\.trans)?", name)
        if m:
            out[f"{m.group(1)}.{m.group(2)}{m.group(3) or ''}"] += 1
    return dict(sorted(out.items()))


def _stored(name: str) -> dict:
    """The stored ``ir/<name>`` (JSON), or {} where there is none."""
    path = CORPUS / "ir" / name
    return json.loads(path.read_text()) if path.is_file() else {}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--check", action="store_true", help="compare with the stored files; write nothing")
    parser.add_argument("--only", default="", help="comma list of corpus kernels (default: all); the stored "
                                                   "rows of the others are kept")
    args = parser.parse_args()
    files = sorted(str(p) for p in CORPUS.glob("*.py"))
    only = [name for name in args.only.split(",") if name]
    if only:
        missing = sorted(set(only) - {Path(f).stem for f in files})
        if missing:
            parser.error(f"--only: no kernel file {', '.join(missing)} in {CORPUS}")
        files = [f for f in files if Path(f).stem in only]
    with ProcessPoolExecutor(args.jobs) as pool:
        results = [row for rows in pool.map(_compile_one, files) for row in rows]
    index: dict = {"triton": next((r["triton"] for r in results if r["ok"]), None), "kernels": {}}
    inventory: dict = {}
    if only:  # the other kernels' rows as stored
        index["kernels"] = {k: v for k, v in _stored("index.json").get("kernels", {}).items() if k not in only}
        inventory = {t: {k: v for k, v in rows.items() if k not in only} for t, rows in _stored("ptx_shared.json").items()}
    differ = []
    for r in results:
        entry = index["kernels"].setdefault(r["kernel"], {})
        entry[r["target"]] = "ok" if r["ok"] else r["error"]
        if not r["ok"]:
            continue
        for ext in ("ttir", "ttgir"):
            out = CORPUS / "ir" / r["target"] / f"{r['kernel']}.{ext}"
            if args.check:
                if not out.is_file() or out.read_text() != r[ext]:
                    differ.append(str(out.relative_to(ROOT)))
            else:
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_text(r[ext])
    if args.check:
        print("\n".join(differ) if differ else "all stored IR files are up to date")
        return 1 if differ else 0
    (CORPUS / "ir" / "index.json").write_text(json.dumps(index, indent=1, sort_keys=True) + "\n")
    for r in results:
        if r.get("ptx_shared") is not None:
            inventory.setdefault(r["target"], {})[r["kernel"]] = r["ptx_shared"]
    (CORPUS / "ir" / "ptx_shared.json").write_text(json.dumps(inventory, indent=1, sort_keys=True) + "\n")
    for key, name in (("ptx_global", "ptx_global.json"), ("ptxas", "ptxas_registers.json")):
        table: dict = {}
        if only:  # the other kernels' rows as stored
            table = {t: {k: v for k, v in rows.items() if k not in only} for t, rows in _stored(name).items()}
        for r in results:
            if r.get(key) is not None:
                table.setdefault(r["target"], {})[r["kernel"]] = r[key]
        (CORPUS / "ir" / name).write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    ok = sum(r["ok"] for r in results)
    print(f"{len(files)} kernels, {ok} of {len(results)} (kernel, target) compiles stored under {CORPUS / 'ir'}")
    for r in results:
        if not r["ok"]:
            print(f"  {r['kernel']} {r['target']}: {r['error']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
