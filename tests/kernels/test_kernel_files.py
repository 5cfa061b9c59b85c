"""What `report FILE.py` needs is said where a user looks: the README, docs/kernel-files.md, and errors
that name the Triton version needed and every missing name of a kernel file."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from linear_layouts.cli import main
from linear_layouts.triton_model.kernel_file import TRITON_NEEDED

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "kernel-files.md"
NEEDED = ".".join(map(str, TRITON_NEEDED))


def _example() -> str:
    return re.search(r"```python\n(.*?)```", DOC.read_text(), re.S)[1]


def test_the_version_needed_is_the_extras(capsys):
    extra = re.search(r'^triton = \["triton>=([\d.]+)"\]', (ROOT / "pyproject.toml").read_text(), re.M)[1]
    assert extra == NEEDED


def test_readme_says_report_needs_triton_and_where_the_format_is():
    readme = " ".join((ROOT / "README.md").read_text().split())
    quickstart = readme[readme.index("## Quickstart"):readme.index("## A short tour")]
    assert f"Triton {NEEDED} or newer" in quickstart and "pip install '.[triton]'" in quickstart
    assert "docs/kernel-files.md" in quickstart
    real = readme[readme.index("Real kernels:"):]
    assert f"must be {NEEDED} or newer: `pip install 'linear_layouts[triton]'`" in real


def test_the_doc_lists_every_name_the_loader_reads_and_its_example_loads(tmp_path):
    from linear_layouts.triton_model import kernel_file as spec

    text = DOC.read_text()
    source = Path(spec.__file__).read_text()
    names = set(re.findall(r'"([A-Z_]{4,})"', source)) & {"KERNEL", "SIGNATURE", "CONSTEXPRS", "SCALARS", "TENSORS",
                                                            "GRID", "OPTIONS", "NEEDS_ALLOCATOR"}
    assert len(names) == 8 and all(f"| `{name}` |" in text for name in names)
    pytest.importorskip("triton")
    path = tmp_path / "transpose.py"
    path.write_text(_example())
    loaded = spec.load_kernel_file(path)
    assert loaded.grid == (64, 64) and loaded.scalars == {"M": 4096, "N": 4096}


def test_a_file_missing_grid_and_scalars_names_both(tmp_path, capsys):
    pytest.importorskip("triton")
    text = "\n".join(line for line in _example().splitlines() if not line.startswith(("GRID", "SCALARS")))
    path = tmp_path / "transpose.py"
    path.write_text(text)
    assert main(["report", str(path)]) == 2
    err = capsys.readouterr().err
    assert "a kernel file must define GRID (the launch grid) and SCALARS (values of M, N)" in err
    assert "docs/kernel-files.md" in err


def test_without_triton_the_error_names_the_version_and_the_install(tmp_path, capsys, monkeypatch):
    path = tmp_path / "transpose.py"
    path.write_text(_example())
    monkeypatch.setitem(sys.modules, "triton", None)    # `import triton` raises ImportError
    assert main(["report", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"needs Triton >= {NEEDED} (pip install 'linear_layouts[triton]')" in err and "\n" == err[-1]
    assert err.count("\n") == 1
