"""Round four of the command line's hardening: each reproducer of the hunt, as the attacker ran it. Every
command line here must exit 2 with one line on stderr naming the argument (or 0 with the library's answer),
never a traceback, a server that never returns, or an option dropped without a word.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cli_run import refused, run
from linear_layouts.ops import explain

BLOCKED = "BlockedLayout([1,8],[4,8],[4,1],[1,0])"
COLUMNS = "BlockedLayout([8,1],[8,4],[1,4],[0,1])"
WIDE_WARP = "BlockedLayout([1,8],[8,8],[2,1],[1,0])"  # 64 lanes
NVMMA = "NVMMASharedLayout(128, 16)"
BIG = "9" * 5000  # above Python's 4300 digits of int(str)
SRC = str(Path(__file__).resolve().parents[2] / "src")


# --- --dtype of thousands of digits: int() raised ValueError inside element_type (a traceback) ---------------

@pytest.mark.parametrize("argv", [
    ["show", NVMMA, "--shape", "64,64"],
    ["banks", NVMMA, BLOCKED, "--shape", "32,64"],
    ["swizzle", BLOCKED, "tma", "--shape", "32,64"],
    ["convert", BLOCKED, COLUMNS, "--shape", "32,64"],
    ["permute", "4,4", "1,0"],
], ids=["show", "banks", "swizzle", "convert", "permute"])
@pytest.mark.parametrize("dtype", [BIG, "torch." + BIG], ids=["digits", "prefixed"])
def test_a_dtype_of_5000_digits_is_refused(argv, dtype):
    refused(argv + ["--dtype", dtype], "--dtype: an integer of 5000 digits; at most 40 digits")


def test_the_explorer_refuses_a_dtype_of_5000_digits(tmp_path):
    refused(["explore", "-o", str(tmp_path / "page.html"), "--layout", BLOCKED, "--shape", "32,64", "--dtype", BIG],
            "--dtype: an integer of 5000 digits")


# --- --opt=--: Python 3.11's argparse gave [] (a list), not the '--' written ------------------------------------

@pytest.mark.parametrize("argv, needle", [
    (["matrix", BLOCKED, "--shape=--"], "--shape: expected sizes like 16,32, got '--'"),
    (["show", BLOCKED, "--shape", "32,64", "--dtype=--"], "--dtype: dtype '--' is not a known element type"),
    (["banks", NVMMA, BLOCKED, "--shape", "32,64", "--target=--"], "--target: target must be sm_<cc>"),
    (["banks", NVMMA, BLOCKED, "--shape", "32,64", "--store=--"], "--store: spec:"),
    (["show", BLOCKED, "--shape", "32,64", "--max-elements=--"], "--max-elements: expected a positive number of "
                                                                  "elements, got '--'"),
], ids=["shape", "dtype", "target", "store", "max-elements"])
def test_an_option_value_of_two_dashes_is_that_value(argv, needle):
    refused(argv, needle)


def test_an_appended_option_value_of_two_dashes(tmp_path):
    refused(["explore", "-o", str(tmp_path / "page.html"), "--layout=--"], "--layout: spec: '--'")


def test_an_output_of_two_dashes_is_a_file(tmp_path, monkeypatch):
    """``--output=--`` wrote to stdout, and ``explore -o=--`` served the page until killed."""
    monkeypatch.chdir(tmp_path)
    status, out, _ = run(["show", BLOCKED, "--shape", "32,64", "--output=--"])
    assert status == 0 and out == "" and "T0:0" in (tmp_path / "--").read_text()
    (tmp_path / "--").unlink()
    proc = subprocess.run([sys.executable, "-m", "linear_layouts", "explore", "-o=--"], cwd=tmp_path,
                          env={"PYTHONPATH": SRC}, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "serving" not in proc.stdout and (tmp_path / "--").stat().st_size


# --- arguments no path of the command read: checked all the same -----------------------------------------------

@pytest.mark.parametrize("extra", [["--dtype", "garbage"], ["--dtype", "ｆｐ１６"]], ids=["word", "fullwidth"])
def test_show_checks_the_dtype_of_a_distributed_layout(extra):
    refused(["show", BLOCKED, "--shape", "32,64"] + extra, "--dtype: dtype")


@pytest.mark.parametrize("extra, needle", [(["--dtype", "zz"], "--dtype: dtype 'zz'"),
                                           (["--shape", "zz"], "--shape: expected sizes like 16,32")],
                         ids=["dtype", "shape"])
def test_explore_checks_its_options_without_a_layout(tmp_path, extra, needle):
    refused(["explore", "-o", str(tmp_path / "page.html")] + extra, needle)
    assert not (tmp_path / "page.html").exists()


@pytest.mark.parametrize("argv, needle", [
    (["banks", NVMMA, BLOCKED, "--shape", "32,64", "--load", COLUMNS], "--load: not with --op load"),
    (["banks", NVMMA, BLOCKED, "--shape", "32,64", "--op", "store", "--store", COLUMNS],
     "--store: not with --op store"),
    (["banks", NVMMA, BLOCKED, "--shape", "32,64", "--store", COLUMNS, "--format", "svg"],
     "--store: the ranked table is text"),
    (["swizzle", BLOCKED, "tma", "--shape", "32,64", "--dtype", "fp16", "--ldmatrix"], "--ldmatrix: LOAD tma is a "
                                                                                       "consumer"),
    (["swizzle", BLOCKED, COLUMNS, "--shape", "32,64", "--dtype", "fp16", "--ldmatrix", "--format", "cute"],
     "--ldmatrix: --format cute"),
    (["convert", BLOCKED, COLUMNS, "--shape", "32,64", "--dtype", "fp16", "--format", "gluon", "--run"],
     "--run: goes with the plan"),
    (["convert", BLOCKED, COLUMNS, "--shape", "32,64", "--dtype", "fp16", "--format", "ttgir", "--emit", "cuda"],
     "--emit: goes with the plan"),
], ids=["banks-load", "banks-store", "banks-svg", "swizzle-consumer", "swizzle-cute", "convert-run", "convert-emit"])
def test_an_option_the_command_would_ignore_is_refused(argv, needle):
    refused(argv, needle)


# --- errors told by the option that holds the layout or the name -------------------------------------------------

@pytest.mark.parametrize("argv, needle", [
    (["banks", NVMMA, BLOCKED, "--shape", "32,64", "--store", NVMMA], "--store: expected a distributed layout"),
    (["banks", NVMMA, BLOCKED, "--shape", "32,64", "--store", WIDE_WARP], "--store has 64 lanes per warp"),
    (["explore", "-o", "{page}", "--store", NVMMA, "--load", BLOCKED, "--shape", "32,64"],
     "--store: expected a distributed layout"),
    (["explore", "-o", "{page}", "--store", BLOCKED, "--load", WIDE_WARP, "--shape", "32,64"],
     "--load: needs a 'lane' in dim of size 32"),
], ids=["banks-shared", "banks-lanes", "explore-shared", "explore-lanes"])
def test_store_and_load_errors_name_their_option(tmp_path, argv, needle):
    refused([a.replace("{page}", str(tmp_path / "page.html")) for a in argv], needle)


@pytest.mark.parametrize("extra, needle", [
    (["--target", "zz"], "--target: target must be sm_<cc>"),
    (["--device", ""], "--device: unknown ''"),
    (["--device", "H20"], "--device: unknown 'H20' (did you mean 'H200'?)"),
    (["--target", "sm_90", "--device", "A100"], "--device: A100 is sm_80, not the target sm_90"),
], ids=["target", "empty-device", "device", "both"])
def test_target_and_device_errors_name_their_option(extra, needle):
    refused(["banks", NVMMA, BLOCKED, "--shape", "32,64"] + extra, needle)
    refused(["convert", BLOCKED, COLUMNS, "--shape", "32,64", "--dtype", "fp16"] + extra, needle)


# --- permute ------------------------------------------------------------------------------------------------------

def test_permute_takes_negative_dims_as_its_help_says():
    """``permute 3,4,5 -1,-3,-2``: argparse took ``-1,-3,-2`` for an option ('the following arguments are required')."""
    status, out, err = run(["permute", "3,4,5", "-1,-3,-2", "--dtype", "bf16"])
    assert status == 0 and err == "", err
    assert out.strip() == str(explain((3, 4, 5), (2, 0, 1), "bf16")).strip()


@pytest.mark.parametrize("arch", ["sm_50", "sm_70"])
def test_permute_refuses_an_architecture_the_ops_do_not_compile_for(arch):
    """sm_50 was planned on an A100's SMs and L2, for kernels that never compile there."""
    refused(["permute", "4,4", "1,0", "--dtype", "bf16", "--target", arch], "--target:", "sm_75 and later")


def test_permute_names_dtype():
    refused(["permute", "4,4", "1,0", "--dtype", "nan"], "--dtype: dtype 'nan' is not a known element type")


# --- @FILE ----------------------------------------------------------------------------------------------------

def test_a_spec_file_with_a_byte_order_mark(tmp_path):
    """A spec saved as 'UTF-8 with BOM' was 'not a valid layout spec (at line 1, column 1)'."""
    path = tmp_path / "layout.txt"
    path.write_bytes(b"\xef\xbb\xbf" + BLOCKED.encode())
    status, out, err = run(["show", f"@{path}", "--shape", "32,64"])
    assert status == 0 and err == "", err
    assert out == run(["show", BLOCKED, "--shape", "32,64"])[1]
