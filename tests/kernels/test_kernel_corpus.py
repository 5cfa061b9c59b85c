"""The corpus of real Triton kernels (tests/data/triton_kernels): every file is a valid kernel file,
every stored TTIR / TTGIR exists, and Triton 3.9 compiling a kernel again reproduces the stored text."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from linear_layouts.core.errors import LayoutError
from linear_layouts.triton_model.kernel_file import TARGETS, parse_target

CORPUS = Path(__file__).resolve().parent.parent / "data" / "triton_kernels"
FILES = sorted(CORPUS.glob("*.py"))
INDEX = json.loads((CORPUS / "ir" / "index.json").read_text())


def test_the_corpus_has_at_least_20_kernels_each_compiled_for_every_target_it_supports():
    assert len(FILES) >= 20
    assert sorted(INDEX["kernels"]) == sorted(p.stem for p in FILES)
    for name, targets in INDEX["kernels"].items():
        assert sorted(targets) == sorted(TARGETS)
        for target, verdict in targets.items():
            for ext in ("ttir", "ttgir"):
                assert (CORPUS / "ir" / target / f"{name}.{ext}").is_file() == (verdict == "ok"), (name, target)
    refused = {(name, target): verdict for name, targets in INDEX["kernels"].items()
               for target, verdict in targets.items() if verdict != "ok"}
    # Triton refuses only fp8e4nv on sm_80 (mxfp8_matmul and the e4m3 GEMMs), every other compile is stored
    assert {target for _, target in refused} == {"sm_80"}
    assert all("type fp8e4nv not supported in this architecture" in verdict for verdict in refused.values())
    assert sorted(name for name, _ in refused) == sorted(p.stem for p in FILES if "fp8e4nv" in p.read_text())


def test_stored_ttgir_has_layouts_and_ttir_has_none():
    for target in TARGETS:
        for f in (CORPUS / "ir" / target).glob("*.ttgir"):
            text = f.read_text()
            assert '"ttg.num-warps"' in text and "#ttg." in text, f
            ttir = f.with_suffix(".ttir").read_text()
            assert "#ttg.blocked" not in ttir and "ttg.convert_layout" not in ttir, f


def test_parse_target():
    assert parse_target("sm_80") == ("cuda", 80, 32)
    assert parse_target("gfx942") == ("hip", "gfx942", 64)
    with pytest.raises(LayoutError, match="target must be sm_<cc>"):
        parse_target("hopper")


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_every_kernel_file_loads_with_a_consistent_spec(path):
    pytest.importorskip("triton")
    from linear_layouts.pipeline import load_kernel_file

    spec = load_kernel_file(path)
    assert spec.name == path.stem and spec.kernel.fn.__name__.endswith("_kernel")
    signature, constexprs, attrs = spec.specialization()
    assert list(signature) == list(spec.params)
    for (i,), values in attrs.items():  # pointers are 16-byte aligned, as PyTorch allocates
        if signature[spec.params[i]].startswith("*"):
            assert values == [["tt.divisibility", 16]]
    for p, value in spec.scalars.items():  # the JIT makes an integer 1 a constexpr
        if isinstance(value, int) and value == 1:
            assert signature[p] == "constexpr" and constexprs[p] == 1


def test_kernel_names_are_unique():
    """ncu filters kernels by name on the device: no two corpus kernels may share one."""
    pytest.importorskip("triton")
    from linear_layouts.pipeline import load_kernel_file

    names = [load_kernel_file(p).kernel.fn.__name__ for p in FILES]
    assert len(set(names)) == len(names)


def test_a_kernel_file_missing_its_spec_is_refused(tmp_path):
    pytest.importorskip("triton")
    from linear_layouts.pipeline import load_kernel_file

    bad = tmp_path / "bad.py"
    bad.write_text("import triton\n@triton.jit\ndef k(x):\n    pass\nKERNEL = k\nSIGNATURE = {}\nCONSTEXPRS = {}\nGRID = (1,)\n")
    with pytest.raises(LayoutError, match="parameter 'x' is in neither SIGNATURE nor CONSTEXPRS"):
        load_kernel_file(bad)
    with pytest.raises(LayoutError, match="existing .py kernel file"):
        load_kernel_file(tmp_path / "missing.py")
    # a scalar left out of SIGNATURE: SIGNATURE is named, not SCALARS (whose key is a parameter of the kernel)
    bad.write_text("import triton\n@triton.jit\ndef k(x, n):\n    pass\nKERNEL = k\nSIGNATURE = {'x': '*fp16'}\n"
                   "CONSTEXPRS = {}\nSCALARS = {'n': 4}\nTENSORS = {'x': [4]}\nGRID = (1,)\n")
    with pytest.raises(LayoutError, match="parameter 'n' is in neither SIGNATURE nor CONSTEXPRS"):
        load_kernel_file(bad)


@pytest.mark.parametrize("name,target", [("vector_add", "sm_90"), ("transpose", "sm_80"), ("matmul_fp16", "sm_90"),
                                         ("mxfp4_matmul", "gfx942")])
def test_compiling_again_reproduces_the_stored_ir(name, target):
    pytest.importorskip("triton")
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    from linear_layouts.pipeline import load_kernel_file
    from linear_layouts.triton_model.compile import compile_kernel

    ir = compile_kernel(load_kernel_file(CORPUS / f"{name}.py"), target)
    assert _without_install_path(ir.ttir) == _without_install_path((CORPUS / "ir" / target / f"{name}.ttir").read_text())
    assert _without_install_path(ir.ttgir) == _without_install_path((CORPUS / "ir" / target / f"{name}.ttgir").read_text())


def _without_install_path(ir: str) -> str:
    """``ir`` with the folder Triton is installed in cut from its ``loc(...)`` lines (a venv, the system's
    site-packages and a user install all hold the same ``triton/language/...`` files)."""
    return _TRITON_LOC.sub('loc("<triton>/', ir)


_TRITON_LOC = re.compile(r'loc\("[^"]*/(?=triton/)')


def test_install_path_is_cut_from_locations_only():
    a = '#loc3 = loc("/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/triton/language/standard.py":43:13)'
    b = '#loc3 = loc("/tmp/venv/lib/python3.11/site-packages/triton/language/standard.py":43:13)'
    assert _without_install_path(a) == _without_install_path(b)
    assert _without_install_path(a) != _without_install_path(b.replace(":43:13", ":44:13"))
    assert _without_install_path('loc("matmul_fp16.py":13:1)') == 'loc("matmul_fp16.py":13:1)'


def test_a_kernel_that_does_not_compile_for_a_target_says_why():
    pytest.importorskip("triton")
    from linear_layouts.pipeline import load_kernel_file
    from linear_layouts.triton_model.compile import compile_kernel

    with pytest.raises(LayoutError, match="cannot compile it for sm_80: .*fp8e4nv not supported"):
        compile_kernel(load_kernel_file(CORPUS / "mxfp8_matmul.py"), "sm_80")
