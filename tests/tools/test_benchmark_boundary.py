"""The boundary between tests/ and benchmarks/: benchmarks import the package and ``benchmarks/harness``,
never ``tests``; tests import ``harness`` (a package) but no benchmark script, except the scripts listed in
``SCRIPT_TESTS`` whose own helpers their tests check (each to move into the harness); and the only
``sys.path`` edits under benchmarks/ are the harness's bootstrap and the two listed exceptions."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"
SCRIPTS = {path.stem for path in BENCHMARKS.glob("*.py")}

#: benchmark scripts some tests still import, to check the script's own helpers (the work left to move them
#: into ``benchmarks/harness``); a test importing any other script fails
SCRIPT_TESTS = {"gpu_cute", "gpu_global_microbench", "gpu_kernels", "gpu_shared_advice"}

#: ``sys.path.insert`` under benchmarks/ (file -> count): the bootstrap, the one a subfolder's script needs to
#: reach it, and the corpus compiler's PTX inventory that gpu_kernels.py reads from tools/
PATH_INSERTS = {"harness/__init__.py": 1, "gpu_bank_check/make_cases.py": 1, "gpu_kernels.py": 1}


def imported_modules(path: Path) -> set[str]:
    """Top-level names of every module ``path`` imports: ``import a.b``, ``from a import b``, and
    ``importlib.import_module("a")`` with a literal name (relative imports are skipped)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "import_module" and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            names.add(node.args[0].value.split(".")[0])
    return names


def test_imported_modules_reads_every_form(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("import a.b\nfrom c import d\nfrom . import e\nimport importlib\nimportlib.import_module('f.g')\n")
    assert imported_modules(source) == {"a", "c", "importlib", "f"}


def test_benchmarks_never_import_tests():
    offenders = [str(path.relative_to(ROOT)) for path in sorted(BENCHMARKS.rglob("*.py"))
                 if "tests" in imported_modules(path)]
    assert offenders == []


def test_tests_import_no_benchmark_script_but_the_listed():
    assert SCRIPT_TESTS <= SCRIPTS, "a listed script is gone: drop it from SCRIPT_TESTS"
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for name in imported_modules(path) & SCRIPTS:
            found.setdefault(name, set()).add(str(path.relative_to(ROOT)))
    unlisted = {name: files for name, files in found.items() if name not in SCRIPT_TESTS}
    assert unlisted == {}, "tests import benchmark scripts: move what they need into benchmarks/harness"
    assert set(found) == SCRIPT_TESTS, f"no test imports {sorted(SCRIPT_TESTS - set(found))} any more: unlist it"


def test_sys_path_inserts_only_in_the_bootstrap():
    counts = {}
    for path in sorted(BENCHMARKS.rglob("*.py")):
        n = len(re.findall(r"\bsys\.path\.insert\(", path.read_text()))
        if n:
            counts[str(path.relative_to(BENCHMARKS))] = n
    assert counts == PATH_INSERTS
