"""Issue 13's command-line reproducers: each now exits with status 2 and one line on stderr
(``linear-layouts: error: ...``), no traceback, never echoing a file, never writing hundreds of MB."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from linear_layouts.cli import main
from linear_layouts.core.limits import MAX_SPEC_CHARS

BLOCKED = "BlockedLayout([1,4],[4,8],[8,1],[1,0])"
NVMMA = "NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2)"
SRC = Path(__file__).resolve().parents[2] / "src"


def fails(capsys, argv: list[str], *needles: str) -> str:
    """``main(argv)`` exits 2 with exactly one line on stderr containing every needle."""
    assert main(argv) == 2
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert len(lines) == 1, err[:2000]
    assert lines[0].startswith("linear-layouts: error: ") and "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], lines[0]
    assert len(out) < 100_000
    return lines[0]


def test_show_of_a_small_spec_that_asks_for_gigabytes(capsys, tmp_path):
    """A 299-byte JSON spec (64 elements, 22 zero register bases) made `show` allocate 4.3 GB."""
    spec = ('{"bases": {"register": [' + ",".join(["[0]"] * 22) + '], "lane": [[1],[2],[4],[8],[16],[32]]}, '
            '"out_dims": {"dim0": 64}}')
    fails(capsys, ["show", spec], "268435456 elements exceed max_elements=65536", "--max-elements")
    forty = spec.replace(",".join(["[0]"] * 22), ",".join(["[0]"] * 31)).replace('"lane": [', '"warp": [[0]],"lane": [')
    fails(capsys, ["show", forty, "--format", "svg"], "elements exceed max_elements=65536")


@pytest.mark.parametrize("shape, fmt", [("1024,1024", "svg"), ("65536,65536", "text"), ("65536,65536", "png"),
                                        ("1024,1024", "html")])
def test_big_pictures_are_refused(capsys, tmp_path, shape, fmt):
    """`--shape 1024,1024 --format svg` wrote a 370 MB file in 37 s; 65536x65536 was a MemoryError."""
    out = tmp_path / "picture"
    fails(capsys, ["show", BLOCKED, "--shape", shape, "--format", fmt, "-o", str(out)],
          "elements exceed max_elements=65536")
    assert not out.exists()


def test_max_elements_raises_and_lowers_the_limit(capsys):
    assert main(["show", BLOCKED, "--shape", "512,256", "--max-elements", str(512 * 256)]) == 0
    assert capsys.readouterr().out.count("T") == 512 * 256
    fails(capsys, ["show", BLOCKED, "--shape", "64,64", "--max-elements", "1024"], "max_elements=1024")
    fails(capsys, ["convert", BLOCKED, "BlockedLayout([4,1],[8,4],[1,8],[0,1])", "--shape", "64,64",
                   "--dtype", "fp16", "--max-elements", "1024"], "max_elements=1024")
    for junk in ("0", "-5", "1e6", "lots", ""):
        fails(capsys, ["show", BLOCKED, "--shape", "64,64", "--max-elements", junk], "--max-elements")


def test_convert_above_the_default_limit(capsys):
    """`plan_conversion` on 24 input bits took 68 s / 1.1 GB and died at 28."""
    fails(capsys, ["convert", BLOCKED, "BlockedLayout([4,1],[8,4],[1,8],[0,1])", "--shape", "4096,4096",
                   "--dtype", "fp16"], "16777216 elements exceed max_elements=1048576")


@pytest.mark.parametrize("target, reason", [("/nonexistent/x", "No such file or directory"),
                                            ("/", "Is a directory")])
def test_output_to_a_bad_path(capsys, target, reason):
    """`show -o /nonexistent/x`, `-o /tmp` raised FileNotFoundError, IsADirectoryError."""
    fails(capsys, ["show", BLOCKED, "--shape", "16,32", "-o", target], f"-o {target!r}: cannot write there",
          reason)
    fails(capsys, ["explore", "-o", target], "cannot write there", reason)


def test_explore_port_out_of_range(capsys):
    """`explore --port 99999` raised OverflowError."""
    for port in ("99999", "-1", "65536"):
        fails(capsys, ["explore", "--port", port], "--port: a TCP port is 0..65535")


def test_explore_on_a_busy_port(capsys):
    """A busy port raised OSError."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        fails(capsys, ["explore", "--port", str(port)], f"--port {port}", "already in use")


def test_empty_size_in_shape(capsys):
    """`--shape 16,,32` was read as 16x32."""
    fails(capsys, ["show", BLOCKED, "--shape", "16,,32"], "an empty size between commas")
    for junk in ("16,32.5", "16,-32", "16;32", "1" * 30, ",", "16,0x20"):
        fails(capsys, ["show", BLOCKED, "--shape", junk], "--shape")


def test_negative_steps(capsys):
    """`banks --steps -5` listed all but the last five steps."""
    fails(capsys, ["banks", NVMMA, "BlockedLayout([1,8],[4,8],[4,1],[1,0])", "--shape", "32,64", "--steps", "-5"],
          "--steps: the number of steps to list must be 0 or more, got -5")


def test_a_file_is_never_echoed(capsys, tmp_path):
    """`show @/etc/shadow` as root printed the file; a 1 MB junk file wrote 1 MB to stderr."""
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$SECRETHASH$abcdef:19000:0:99999:7:::\n" * 10)
    line = fails(capsys, ["show", f"@{secret}"], "not a valid layout spec (at line 1, column 6 of 450 characters")
    assert "SECRETHASH" not in line and "root:" not in line
    junk = tmp_path / "junk"
    junk.write_text("x" * 1_000_000 + "(")
    assert len(fails(capsys, ["show", f"@{junk}"], "spec")) < 300
    huge = tmp_path / "huge"
    huge.write_text("[" + "1," * 1_000_000 + "]")
    fails(capsys, ["show", f"@{huge}"], f"a spec has at most {MAX_SPEC_CHARS} characters")
    binary = tmp_path / "binary"
    binary.write_bytes(b"\x7fELF\xff\xfe" * 100)
    fails(capsys, ["show", f"@{binary}"], "not UTF-8 text")
    fails(capsys, ["show", f"@{tmp_path}"], "a folder, not a regular file")


def test_spec_errors_in_arguments_are_one_line(capsys):
    fails(capsys, ["show", "x" * 50_000 + "("], "syntax error")
    fails(capsys, ["show", "{" + '"a":[' * 1000 + "]" * 1000 + "}"], "nested deeper than 32 levels")
    fails(capsys, ["show", '{"bases": {"register": [[' + "1" * 5000 + ']]}, "out_dims": ["dim0"]}'], "digits")


def test_non_utf8_arguments(capsys):
    """A lone surrogate or non-UTF-8 argv raised UnicodeEncodeError."""
    fails(capsys, ["show", "Blocked\udcffLayout"], "argument 2 is not UTF-8 text")
    fails(capsys, ["show", BLOCKED, "--title", "\ud800"], "argument 4 is not UTF-8 text")


def test_non_utf8_argv_from_the_shell(tmp_path):
    """The same through a real process: the bytes of argv are not UTF-8."""
    env = dict(os.environ, PYTHONPATH=str(SRC))
    proc = subprocess.run([sys.executable, "-m", "linear_layouts.cli", "show", b"Blocked\xffLayout"],
                          capture_output=True, env=env, timeout=120)
    assert proc.returncode == 2
    err = proc.stderr.decode("utf-8")
    assert err.count("\n") == 1 and err.startswith("linear-layouts: error: argument 2 is not UTF-8 text")


def test_the_explorer_page_draws_at_most_the_picture_limit(capsys, tmp_path):
    page = tmp_path / "page.html"
    fails(capsys, ["explore", "-o", str(page), "--store", BLOCKED, "--load", "BlockedLayout([4,1],[8,4],[1,8],[0,1])",
                   "--shape", "1024,1024"], "--store: the explorer page: 1048576 elements exceed max_elements=65536")
    fails(capsys, ["explore", "-o", str(page), "--layout", BLOCKED, "--shape", "512,512"], "--layout: the explorer page")
    assert not page.exists()
    assert main(["explore", "-o", str(page), "--layout", BLOCKED, "--shape", "64,64"]) == 0 and page.stat().st_size


def test_report_reads_no_huge_or_undecodable_file(capsys, tmp_path):
    """`report` read any file whole (memory), and a sibling .ttir that is not UTF-8 was a traceback."""
    from linear_layouts.core.limits import MAX_IR_BYTES

    huge = tmp_path / "huge.ttgir"
    with huge.open("wb") as file:
        file.truncate(MAX_IR_BYTES + 1)  # sparse: nothing is written
    fails(capsys, ["report", str(huge)], f"above the {MAX_IR_BYTES} of an IR text", "MAX_IR_BYTES")
    kernel = Path(__file__).resolve().parents[1] / "data/triton_kernels/ir/sm_90/absmax_atomic.ttgir"
    (tmp_path / "k.ttgir").write_text(kernel.read_text())
    (tmp_path / "k.ttir").write_bytes(b"\xff\xfe")
    fails(capsys, ["report", str(tmp_path / "k.ttgir"), "--no-triton-estimate"], "cannot read", "k.ttir")
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$SECRETHASH$abcdef:19000:0:99999:7:::\n" * 10)
    line = fails(capsys, ["report", str(secret)], "")
    assert "SECRETHASH" not in line


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("argv", [["show", BLOCKED, "--shape", "16,32"], ["show", BLOCKED, "--shape", "64,64", "--format",
                                                                         "png"], ["demo"]], ids=["text", "png", "demo"])
def test_stdout_that_cannot_be_written(argv):
    """A full disk behind stdout (`> /dev/full`) was an OSError traceback; a closed stdout (`>&-`) one too."""
    env = dict(os.environ, PYTHONPATH=str(SRC))
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "linear_layouts.cli"] + argv, stdout=full, stderr=subprocess.PIPE,
                              env=env, timeout=120, text=True)
    assert proc.returncode == 2 and proc.stderr == "linear-layouts: error: stdout: cannot write: No space left on " \
                                                    "device\n", proc.stderr
    closed = subprocess.run([sys.executable, "-c", "import os, sys; os.close(1); from linear_layouts.cli import main; "
                             f"sys.exit(main({argv!r}))"], stderr=subprocess.PIPE, env=env, timeout=120, text=True)
    assert closed.returncode == 2 and closed.stderr.startswith("linear-layouts: error: stdout") \
        and closed.stderr.count("\n") == 1, closed.stderr


@pytest.mark.parametrize("source, needle", [
    (b'raise RuntimeError("boom")\n', "running the kernel file raised RuntimeError: boom"),
    (b"def (:\n", "not a valid Python file: invalid syntax (line 1)"),
    (b"\xff\xfe junk", "not a valid Python file"),
], ids=["raises", "syntax", "not-utf8"])
def test_report_of_a_broken_kernel_file(capsys, tmp_path, source, needle):
    """`report KERNEL.py` runs the file: its own exception or syntax error was a 25-line traceback."""
    kernel = tmp_path / "kernel.py"
    kernel.write_bytes(source)
    fails(capsys, ["report", str(kernel)], "kernel.py: ", needle)


def test_report_of_a_ttgir_whose_last_store_lost_its_operands(capsys, tmp_path):
    """The corpus fuzz (mutated TTGIR texts): ``tt.store %16 :`` (its value and mask deleted) after the
    function's last conversion was an IndexError in the report's tail-conversion scan, a traceback."""
    kernel = Path(__file__).resolve().parents[1] / "data/triton_kernels/ir/sm_90/transpose.ttgir"
    text = kernel.read_text()
    assert "tt.store %16, %17, %9 :" in text
    (tmp_path / "k.ttgir").write_text(text.replace("tt.store %16, %17, %9 :", "tt.store %16 :"))
    assert main(["report", str(tmp_path / "k.ttgir"), "--no-triton-estimate", "-o", str(tmp_path / "out")]) == 0
    assert "Traceback" not in capsys.readouterr().err and "Kernel transpose_kernel" in (tmp_path / "out").read_text()
