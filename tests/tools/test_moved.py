"""Old import paths of moved modules (``linear_layouts._moved``): each is the very module of its new name,
the names the README and docs document import under their old and new paths, and no file is left at
an old path."""

from __future__ import annotations

import importlib
import pathlib
import re
import subprocess
import sys

import pytest

from linear_layouts._moved import MOVED

REPO = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = REPO / "src" / "linear_layouts"

#: what the README and docs/ documented before the move (their import lines and dotted names)
DOCUMENTED_IMPORTS = """
from linear_layouts import BlockedLayout, NVMMADistributedLayout, SwizzledSharedLayout, DotOperandLayout
from linear_layouts import LinearLayout, NVMMASharedLayout, f2
from linear_layouts.analysis import wavefronts, optimal_swizzle, plan_conversion
from linear_layouts.analysis.banks import wavefronts
from linear_layouts.analysis.shared_advice import Consumer, suggest_shared_layout
from linear_layouts.catalog import BlockedLayout, DotOperandLayout, NVMMADistributedLayout, NVMMASharedLayout
from linear_layouts.cli import main
from linear_layouts.cute import Layout, Swizzle, composition, parse_cute, to_linear, from_linear
from linear_layouts.cute import element_swizzle, best_cute_swizzle, sm80_16x8x16, TVLayout
from linear_layouts.engine import Builder, propagate
from linear_layouts.viz import distributed_view, shared_view
from linear_layouts.kernels.rewrite import rewrite_kernel
from linear_layouts.kernels.report import analyze_ttgir, KernelReport
from linear_layouts.ttgir import parse_module, format_attribute, parse_attribute
from linear_layouts.triton import to_gluon, from_gluon, gluon_expression, triton_bank_conflicts
from linear_layouts.errors import LayoutError
from linear_layouts.layout import LinearLayout, ColumnAction
from linear_layouts.element_type import element_type, bitwidth
from linear_layouts.analysis.dtypes import bitwidth, SUPPORTED_BITWIDTHS
"""
DOCUMENTED_NAMES = (
    "linear_layouts.analysis.wavefronts", "linear_layouts.arguments.checked", "linear_layouts.catalog",
    "linear_layouts.cute", "linear_layouts.engine", "linear_layouts.f2", "linear_layouts.limits.check_text",
    "linear_layouts.kernels.rewrite.rewrite_kernel", "linear_layouts.ttgir.parse_module", "linear_layouts.viz",
    "linear_layouts.analysis.shared_advice", "linear_layouts.cli",
)


def resolve(dotted: str) -> object:
    """The object a dotted name names: the longest importable module prefix, then attributes."""
    parts = dotted.split(".")
    for n in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:n]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[n:]:
            value = getattr(value, attribute)
        return value
    raise ModuleNotFoundError(dotted)


@pytest.mark.parametrize("old", sorted(MOVED))
def test_old_name_is_the_new_module(old):
    module = importlib.import_module(old)
    assert module is importlib.import_module(MOVED[old])
    assert module.__name__ == MOVED[old] and module.__spec__.name == MOVED[old]
    assert sys.modules[old] is module


def test_every_new_name_exists_and_old_paths_hold_no_file():
    for old, new in MOVED.items():
        importlib.import_module(new)  # the target of every old name is a module of the package
        path = PACKAGE.joinpath(*old.split(".")[1:])
        assert not path.with_suffix(".py").exists(), f"{old}: a file is left at its old path"
        assert not any(path.glob("*.py")), f"{old}: a folder of modules is left at its old path"


def test_old_names_first_in_a_fresh_interpreter():
    """Old names imported before anything else: same modules, the package's own names intact (an old
    submodule name never replaces a function its package binds, such as ``recognize``)."""
    code = "\n".join([
        "import linear_layouts.kernels.rewrite",
        "import linear_layouts.pipeline.rewrite as new",
        "assert linear_layouts.kernels.rewrite is new, 'kernels.rewrite'",
        "from linear_layouts.catalog.recognize import recognize",
        "import linear_layouts.catalog.recognize",
        "import linear_layouts.layouts as layouts",
        "assert callable(layouts.recognize) and layouts.recognize is recognize, 'recognize'",
        "import linear_layouts.viz.svg",
        "assert linear_layouts.viz.svg.shared_svg is __import__('linear_layouts.present.viz.svg', fromlist=['x']).shared_svg",
        "from linear_layouts.kernels import load_kernel_file, spec",
        "assert spec.load_kernel_file is load_kernel_file",
        "import linear_layouts",
        "assert linear_layouts.layout.LinearLayout is linear_layouts.LinearLayout, 'root attribute layout'",
        "assert linear_layouts.errors.LayoutError is linear_layouts.LayoutError, 'root attribute errors'",
        "import linear_layouts._ccore as c, linear_layouts.core._ccore as n",
        "assert c is n and c.backend() in ('c', 'python')",
        "print('ok')",
    ])
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


def test_documented_imports_before_the_move():
    namespace: dict = {}
    exec(compile(DOCUMENTED_IMPORTS, "<documented imports>", "exec"), namespace)  # noqa: S102 - our own text
    assert namespace["rewrite_kernel"] is resolve("linear_layouts.pipeline.rewrite.rewrite_kernel")
    assert namespace["parse_module"] is resolve("linear_layouts.layouts.ttgir.parse_module")
    for name in DOCUMENTED_NAMES:
        assert resolve(name) is not None


def _documented_now() -> tuple[list[str], list[str]]:
    texts = [p.read_text(encoding="utf-8") for p in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]]
    statements = sorted({m.group(1) for text in texts for m in re.finditer(
        r"^\s*(?:>>> )?((?:from linear_layouts[\w.]* import [\w, ]+|import linear_layouts[\w.]*))\s*$", text, re.M)})
    # a name after a dot is another object's attribute (PyTorch's torch.ops.linear_layouts), not our import path
    names = sorted({m.group(0) for text in texts
                    for m in re.finditer(r"(?<![\w.])linear_layouts(?:\.[A-Za-z_]\w*)+", text)})
    return statements, names


def test_documented_imports_now():
    """Every import line and dotted name of the README and docs/ as they are."""
    statements, names = _documented_now()
    assert statements and names
    for statement in statements:
        exec(statement, {})  # noqa: S102 - a line of our own docs
    for name in names:
        resolve(name)
