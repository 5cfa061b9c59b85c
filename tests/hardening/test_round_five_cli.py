"""Round five of the command line's hardening: kernel-file keys that named nothing were accepted without a word,
a target of the right form was called malformed, and ``permute`` planned on a device it never named.
Each command line here exits 2 with one line on stderr naming the file or the option, or 0 saying what it assumed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cli_run import refused, run
from linear_layouts.core.errors import LayoutError
from linear_layouts.triton_model.kernel_file import load_kernel_file, parse_target

DOC = Path(__file__).resolve().parents[2] / "docs" / "kernel-files.md"


def _kernel_file(tmp_path: Path, name: str, old: str = "", new: str = "") -> Path:
    """The example kernel file of docs/kernel-files.md, saved as ``name``.py, with ``old`` replaced by ``new``."""
    text = re.search(r"```python\n(.*?)```", DOC.read_text(), re.S)[1]
    if old:
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    return path


# (file name, the text replaced, its replacement, what the error must say)
BAD_KEYS = [
    ("optiontypo", 'OPTIONS = {"num_warps": 4}', 'OPTIONS = {"num_wraps": 4}',
     ("optiontypo.py: OPTIONS['num_wraps'] is not a compile option of Triton", "did you mean 'num_warps'?",
      "CUDAOptions")),
    ("tensorextra", 'TENSORS = {"x_ptr": [4096, 4096], "y_ptr": [4096, 4096]}',
     'TENSORS = {"x_ptr": [4096, 4096], "y_ptr": [4096, 4096], "z_ptr": [64]}',
     ("tensorextra.py: TENSORS['z_ptr'] is not a pointer parameter of the kernel", "they are: x_ptr, y_ptr")),
    ("scalarextra", 'SCALARS = {"M": 4096, "N": 4096}', 'SCALARS = {"M": 4096, "N": 4096, "K": 64}',
     ("scalarextra.py: SCALARS['K'] is not a scalar parameter of the kernel", "they are: M, N")),
    ("constexprextra", 'CONSTEXPRS = {"BLOCK": 64}', 'CONSTEXPRS = {"BLOCK": 64, "BLOK": 2}',
     ("constexprextra.py: CONSTEXPRS['BLOK'] is not a parameter of the kernel", "did you mean 'BLOCK'?")),
    ("sigbadtype", '"y_ptr": "*fp16"', '"y_ptr": "*float16"',
     ("sigbadtype.py: SIGNATURE['y_ptr'] is '*float16', not a Triton type (did you mean '*fp16'?)",)),
]
IDS = ["options", "tensors", "scalars", "constexprs", "signature"]


@pytest.mark.parametrize("name, old, new, needles", BAD_KEYS, ids=IDS)
def test_report_refuses_a_kernel_file_key_that_names_nothing(tmp_path, name, old, new, needles):
    pytest.importorskip("triton")
    refused(["report", str(_kernel_file(tmp_path, name, old, new)), "--target", "sm_90"], *needles)


@pytest.mark.parametrize("name, old, new, needles", BAD_KEYS, ids=IDS)
def test_the_loader_refuses_a_kernel_file_key_that_names_nothing(tmp_path, name, old, new, needles):
    pytest.importorskip("triton")
    with pytest.raises(LayoutError, match="is not|not a Triton type") as caught:
        load_kernel_file(_kernel_file(tmp_path, name, old, new))
    assert all(needle in str(caught.value) for needle in needles), str(caught.value)


def test_every_option_triton_accepts_is_accepted(tmp_path):
    """The options are Triton's own: another backend's option (HIP's waves_per_eu) loads too."""
    pytest.importorskip("triton")
    path = _kernel_file(tmp_path, "options", 'OPTIONS = {"num_warps": 4}',
                        'OPTIONS = {"num_warps": 4, "num_stages": 2, "maxnreg": 128, "waves_per_eu": 2}')
    assert load_kernel_file(path).options["maxnreg"] == 128


# --- --target gfx90a: "must be ... gfx<arch> (e.g. gfx942), got 'gfx90a'", and report's without --target: ----

def test_report_says_gfx90a_is_not_a_known_target(tmp_path):
    refused(["report", str(_kernel_file(tmp_path, "transpose")), "--target", "gfx90a"],
            "--target: 'gfx90a' is not a known target; known: sm_80, sm_90, gfx942")


def test_parse_target_says_gfx90a_is_not_known():
    with pytest.raises(LayoutError, match=r"'gfx90a' is not a known target; known: sm_80, sm_90, gfx942"):
        parse_target("gfx90a")


# --- permute: "got sm_70 (A100)"; sm_86 planned on an A100's SMs and L2 without saying so; --l2-mib 0 ---------

def test_permute_names_the_architectures_the_ops_compile_for():
    line = refused(["permute", "4,4", "1,0", "--dtype", "bf16", "--target", "sm_70"],
                   "--target: the layout ops compile for NVIDIA GPUs of sm_75 and later", "not sm_70")
    assert "A100" not in line


def test_permute_on_another_device_names_it():
    refused(["permute", "4,4", "1,0", "--dtype", "bf16", "--device", "MI300X"], "--device:", "not MI300X (gfx942)")


@pytest.mark.parametrize("arch, note", [
    ("sm_86", "(as an A100: 108 SMs, 40 MiB L2; --sms/--l2-mib to set them)"),
    ("sm_120", "(as a B200: 148 SMs, 126 MiB L2; --sms/--l2-mib to set them)"),
])
def test_permute_names_the_device_whose_sms_and_l2_it_assumed(arch, note):
    status, out, err = run(["permute", "64,64", "1,0", "--dtype", "fp16", "--target", arch])
    assert status == 0 and err == "" and note in out, (status, out, err)


def test_permute_names_only_what_it_assumed():
    status, out, _ = run(["permute", "64,64", "1,0", "--dtype", "fp16", "--target", "sm_86", "--sms", "50"])
    assert status == 0 and "(as an A100: 40 MiB L2; --l2-mib to set it)" in out
    status, out, _ = run(["permute", "64,64", "1,0", "--dtype", "fp16", "--target", "sm_86", "--sms", "50",
                          "--l2-mib", "3"])
    assert status == 0 and "(as " not in out


def test_permute_refuses_no_l2():
    refused(["permute", "4,4", "1,0", "--dtype", "bf16", "--l2-mib", "0"], "--l2-mib: a device has 1 MiB of L2 or more")
