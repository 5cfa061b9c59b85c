"""The test run itself: quiet at exit, self-contained."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import types

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

_USE_THE_ORACLE = """
import runpy
from triton._C.libtriton import ir, gluon_ir
ctx = ir.context(); ir.load_dialects(ctx); builder = gluon_ir.GluonOpBuilder(ctx)
attribute = builder.get_blocked_layout([1, 4], [4, 8], [4, 1], [1, 0], [])
builder.to_linear_layout(attribute, [32, 64])   # imports Gluon's Python module from C++
print(runpy.run_path({conftest!r})["drop_triton_binding_defaults"]())
"""


def test_the_session_hook_silences_nanobinds_leak_report_at_exit():
    pytest.importorskip("triton._C.libtriton.gluon_ir")
    script = _USE_THE_ORACLE.format(conftest=str(ROOT / "tests" / "conftest.py"))
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    assert "create_async_tma" in run.stdout          # the methods whose defaults are bound objects
    assert "leaked" not in run.stderr, run.stderr


def test_triton_unit_test_data_is_inside_the_repository():
    from tools_helpers import UNITTESTS

    assert UNITTESTS.is_relative_to(ROOT)
    assert {p.name for p in UNITTESTS.glob("*.json")} >= {"dump_layout.json", "algebra.json", "conversions.json"}


def test_no_test_reads_a_path_outside_the_repository():
    """Test files name no folder beside the checkout (the project's ``shared/``, ``/work``) and climb no higher
    than the repository root (``Path(__file__).parents[n]`` with n past the root)."""
    import re

    offenders = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        root = len(path.relative_to(ROOT).parts) - 1  # Path(__file__).parents[root] is the repository root
        climbs = [int(n) for n in re.findall(r"parents\[(\d+)\]", text)]
        if any(n > root for n in climbs) or re.search(r"""["']shared["'] */|["']shared/\w|["']/work\b|["']\.\./""", text):
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


def test_install_script_names_every_test_dependency():
    """tools/install-test-deps.sh says what it installs: every package of the ``test`` extra, in its step line."""
    import re

    extra = re.search(r"^test = \[(.*)\]$", (ROOT / "pyproject.toml").read_text(), re.MULTILINE).group(1)
    packages = [re.split(r"[<>=\[ ]", name.strip().strip('"'))[0] for name in extra.split(",")]
    said = next(line for line in (ROOT / "tools" / "install-test-deps.sh").read_text().splitlines()
                if line.startswith("step \"pip install"))
    assert len(packages) >= 6 and [p for p in packages if p not in said] == []


def test_every_test_imports_our_modules_plainly_and_matches_its_errors():
    """The suite's own rules: a broken import of ``linear_layouts`` fails (no ``importorskip``) and every
    ``pytest.raises`` names the rule it expects (``match=``), so a different error fails the test."""
    import ast

    found = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            if node.func.attr == "raises" and not any(k.arg == "match" for k in node.keywords):
                found.append(f"{where} pytest.raises without match=")
            if node.func.attr == "importorskip" and node.args and isinstance(node.args[0], ast.Constant) \
                    and str(node.args[0].value).startswith("linear_layouts"):
                found.append(f"{where} importorskip of our own module")
    assert found == []


def _root_conftest(config: pytest.Config):
    """tests/conftest.py as pytest loaded it (a plugin of the session)."""
    path = str(ROOT / "tests" / "conftest.py")
    return next(p for p in config.pluginmanager.get_plugins() if getattr(p, "__file__", None) == path)


def test_the_default_hypothesis_profile_draws_the_same_examples_every_run(request):
    """CI cannot pass and fail on one commit: unless HYPOTHESIS_PROFILE (or --hypothesis-profile) names
    another, tests/conftest.py's "ci" profile derandomizes every Hypothesis test, with no deadline."""
    settings = pytest.importorskip("hypothesis").settings
    if os.environ.get("HYPOTHESIS_PROFILE") or request.config.getoption("hypothesis_profile", None):
        pytest.skip("a Hypothesis profile was chosen for this run")
    assert settings.default is settings.get_profile("ci")
    assert settings.default.derandomize and settings.default.database is None and settings.default.deadline is None


def test_the_explore_profile_scales_each_tests_examples_and_draws_them_at_random(request):
    """HYPOTHESIS_PROFILE=explore: a test's own max_examples times EXPLORE_SCALE, derandomize off even where
    the test's @settings turn it on; a test collected twice (parametrized) is scaled once."""
    hypothesis = pytest.importorskip("hypothesis")
    conftest = _root_conftest(request.config)

    @hypothesis.settings(max_examples=3, derandomize=True)
    @hypothesis.given(hypothesis.strategies.integers())
    def drawn(x):
        pass

    item = types.SimpleNamespace(obj=drawn)
    settings = hypothesis.settings
    previous = next(name for name in ("ci", "explore", "default") if settings.get_profile(name) is settings.default)
    settings.load_profile("explore")
    try:
        conftest.pytest_collection_modifyitems(request.config, [item, item])
    finally:
        settings.load_profile(previous)
    own = drawn._hypothesis_internal_use_settings
    assert own.max_examples == 3 * conftest.EXPLORE_SCALE and not own.derandomize
