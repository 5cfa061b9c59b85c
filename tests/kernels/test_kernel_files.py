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


def _spec(options: dict):
    from linear_layouts.triton_model.kernel_file import KernelSpec

    return KernelSpec(name="k", path="/kernels/k.py", kernel=None, params=(), signature={}, constexprs={},
                      scalars={}, tensors={}, grid=(1,), options=options)


@pytest.mark.parametrize(("target", "option", "owner"), [
    ("sm_90", "waves_per_eu", "hip"), ("sm_80", "matrix_instr_nonkdim", "hip"), ("sm_90", "kpack", "hip"),
    ("gfx942", "maxnreg", "cuda"), ("gfx942", "ptx_version", "cuda"),
])
def test_an_option_of_the_other_backend_is_refused_naming_the_option_the_file_and_the_backend(target, option,
                                                                                              owner):
    """Triton's ``parse_options`` keeps only its own backend's fields: an AMD option on an NVIDIA compile (or
    the reverse) would be dropped unread."""
    pytest.importorskip("triton")
    from linear_layouts.core.errors import LayoutError
    from linear_layouts.triton_model.kernel_file import check_target_options

    backend = "hip" if target.startswith("gfx") else "cuda"
    with pytest.raises(LayoutError, match=r"is an option of Triton.s") as caught:
        check_target_options(_spec({"num_warps": 4, option: 2}), target)
    message = str(caught.value)
    assert message.startswith(f"k.py: OPTIONS['{option}'] is an option of Triton's {owner} backend only")
    assert f"{target} compiles with its {backend} backend" in message
    assert ("CUDAOptions" if backend == "cuda" else "HIPOptions") in message


@pytest.mark.parametrize(("target", "options"), [
    ("sm_90", {"num_warps": 4, "num_stages": 3, "maxnreg": 128}),
    ("gfx942", {"num_warps": 4, "waves_per_eu": 2, "matrix_instr_nonkdim": 16, "kpack": 2}),
])
def test_the_backends_own_options_are_accepted(target, options):
    pytest.importorskip("triton")
    from linear_layouts.triton_model.kernel_file import check_target_options, triton_option_names

    assert set(options) <= set(triton_option_names("cuda" if target.startswith("sm") else "hip"))
    assert check_target_options(_spec(options), target) is None


def test_a_name_of_no_backend_is_still_not_an_option():
    pytest.importorskip("triton")
    from linear_layouts.core.errors import LayoutError
    from linear_layouts.triton_model.kernel_file import check_target_options

    with pytest.raises(LayoutError, match=r"k.py: OPTIONS\['warps'\] is not a compile option of Triton; sm_90"):
        check_target_options(_spec({"warps": 4}), "sm_90")


@pytest.mark.parametrize(("target", "option", "backend"), [("sm_90", "waves_per_eu", "cuda"),
                                                           ("gfx942", "maxnreg", "hip")])
def test_report_of_a_file_with_the_other_backends_option_exits_2_with_one_line(tmp_path, capsys, target, option,
                                                                               backend):
    pytest.importorskip("triton")
    text = _example()
    assert text.count("OPTIONS = {") == 1
    path = tmp_path / "transpose.py"
    path.write_text(text.replace("OPTIONS = {", f'OPTIONS = {{"{option}": 2, '))
    assert main(["report", str(path), "--target", target]) == 2
    err = capsys.readouterr().err
    assert f"transpose.py: OPTIONS['{option}']" in err and f"its {backend} backend" in err
    assert err.count("\n") == 1
