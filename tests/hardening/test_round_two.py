"""Issue 33 ("Hardened, round two"), items 2 and 4 to 8: each reproducer of the issue, as the attacker ran it.

Item 1 (the compiled core) is ``test_ccore_reproducers.py``, item 3 (the kernel cache)
``test_cache_reproducers.py``; the planted-secret fuzz of item 2 is in ``test_fuzz.py``. Every command line
here must exit 2 with one line on stderr (or 0 with the right answer), never a traceback, a hang, a stray
warning or a quote of more than ~80 characters of its input.
"""

from __future__ import annotations

import http.client
import os
import pickle
import socket
import sys
import threading
import time
from pathlib import Path

import pytest

from cli_run import run
from linear_layouts import LayoutError, LinearLayout
from linear_layouts.spec import parse_spec

BLOCKED = "BlockedLayout([1,4],[4,8],[4,1],[1,0])"
BLOCKED_T = "BlockedLayout([4,1],[8,4],[1,4],[0,1])"
NVMMA = "NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2)"
TOKEN = "ghp_SECRETtokenAAAABBBBCCCCDDDDEEEE1234"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJTRUNSRVQifQ.SECRETsignature0123"


def refused(argv: list[str], *needles: str) -> str:
    """``argv`` exits 2 with one line on stderr holding every needle; that line."""
    status, out, err = run(argv)
    assert status == 2 and err.count("\n") == 1 and "Traceback" not in err and "Warning" not in err, (status, err)
    for needle in needles:
        assert needle in err, err
    return err


# --- item 2: @FILE contents are never echoed; FIFOs and devices never block ---------------------------------

@pytest.mark.parametrize("content", [f"{TOKEN}\nsecond line\n", JWT, f"SECRET_LAYOUT_{TOKEN}(1, 2)",
                                     f'{{"bases": {{"register": [[1]]}}, "out_dims": {{"{TOKEN}": 3}}}}',
                                     f'{{"bases": {{"register": [[1]]}}, "out_dims": {{"dim0": 2}}, "{TOKEN}": 1}}'],
                         ids=["token", "jwt", "unknown-layout", "json-out-dim", "json-key"])
@pytest.mark.parametrize("argv", [["show", "@F"], ["show", "@F", "--format", "gluon"], ["show", "@F", "--format", "ttgir"],
                                  ["matrix", "@F"], ["banks", NVMMA, "@F", "--dtype", "fp16"],
                                  ["swizzle", "@F", BLOCKED_T, "--dtype", "fp16", "--format", "ttgir"],
                                  ["convert", BLOCKED, "@F", "--shape", "32,64", "--dtype", "fp16", "--format", "gluon"]],
                         ids=["show", "gluon", "ttgir", "matrix", "banks", "swizzle", "convert"])
def test_no_line_or_name_of_the_file_is_echoed(tmp_path, content, argv):
    """``show @FILE --format gluon`` printed the file's first line; every command's first error line
    quoted names taken from the file (``bare name 'ghp_...'``, a JWT, ``unknown layout 'SECRET...'``)."""
    spec = tmp_path / "spec"
    spec.write_text(content)
    line = refused([f"@{spec}" if a == "@F" else a for a in argv], "not a valid layout spec", "characters")
    for piece in (TOKEN, TOKEN[:12], *JWT.split("."), "second line"):
        assert piece not in line, line


def test_names_from_a_valid_file_are_withheld_from_later_errors(tmp_path):
    """A file that parses: its dim names reach later messages (``DST: tensor {...} differs``); they are
    withheld there, while a layout spelled on the command line keeps its names in the message."""
    spec = tmp_path / "dst.json"
    spec.write_text(f'{{"bases": {{"register": [[1]], "lane": [[2], [4], [8], [16], [32]]}}, "out_dims": ["{TOKEN}"]}}')
    dst = "BlockedLayout([1],[32],[2],[0])"
    line = refused(["convert", "@" + str(spec), dst, "--dtype", "fp16"], "differs from SRC's", "<from the file>")
    assert TOKEN not in line and TOKEN[:12] not in line
    inline = spec.read_text().replace(TOKEN, "mydim")
    assert "mydim" in refused(["convert", inline, dst, "--dtype", "fp16"])
    status, out, err = run(["show", f"@{spec}", "--format", "json"])  # shown: the names are the layout's
    assert status == 0 and TOKEN in out and not err


@pytest.mark.parametrize("target", ["fifo", "/dev/zero", "/dev/urandom", "folder", "huge"])
def test_a_fifo_a_device_a_folder_or_a_huge_file_is_refused_without_blocking(tmp_path, target):
    """``show @fifo`` blocked for ever in ``open()``."""
    path = {"fifo": tmp_path / "fifo", "folder": tmp_path, "huge": tmp_path / "huge"}.get(target, Path(target))
    if target == "fifo":
        os.mkfifo(path)
    if target == "huge":
        with open(path, "wb") as sparse:
            sparse.truncate(3 << 30)
    result: list = []
    worker = threading.Thread(target=lambda: result.append(run(["show", f"@{path}"])), daemon=True)
    worker.start()
    worker.join(10)
    assert result, "show @FILE blocked"
    status, _, err = result[0]
    assert status == 2 and ("not a regular file" in err or "above the limit" in err), err
    if target == "fifo":
        status, _, err = run(["report", str(path)])
        assert status == 2 and "not a regular file" in err, err


# --- item 4: report refuses absurd warp counts fast ---------------------------------------------------------

TTGIR = """#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [W, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, W], order = [0, 1]}>
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-warps" = W : i32, "ttg.threads-per-warp" = 32 : i32, ttg.target = "cuda:90"} {
  tt.func @k(%a: tensor<32x64xf16, #blocked>) {
    %b = ttg.convert_layout %a : tensor<32x64xf16, #blocked> -> tensor<32x64xf16, #blocked1>
    %c = ttg.local_alloc %a : (tensor<32x64xf16, #blocked>) -> !ttg.memdesc<32x64xf16, #shared, #smem>
    %d = ttg.local_load %c : !ttg.memdesc<32x64xf16, #shared, #smem> -> tensor<32x64xf16, #blocked1>
    tt.return
  }
}
"""


@pytest.mark.parametrize("warps", [1 << 16, 1 << 20, 1 << 28])
def test_report_refuses_a_huge_cta_fast(tmp_path, warps):
    """A 700-byte TTGIR with ``ttg.num-warps`` 65536 took 27.6 s, 2**20 over 150 s, and 2**28 was accepted."""
    path = tmp_path / "k.ttgir"
    path.write_text(TTGIR.replace("W", str(warps)))
    start = time.perf_counter()
    refused(["report", str(path), "--no-triton-estimate"], f"ttg.num-warps = {warps}", "linear_layouts.limits.MAX_ELEMENTS")
    assert time.perf_counter() - start < 5


def test_a_per_warp_loop_checks_its_size_first():
    from linear_layouts.kernels.triton_lowering import ldst_instructions

    huge = LinearLayout.identity_1d(1 << 21, "register", "offset")
    with pytest.raises(LayoutError, match="ldst_instructions: cvt: 2097152 elements exceed max_elements"):
        ldst_instructions(huge, 16, "load")


# --- item 5: recursion, memory and warnings become one LayoutError ------------------------------------------

@pytest.mark.parametrize("text, match", [
    ("1+" * 450 + "1", "'\\+' at column 2 is not a literal"), (".".join(["a"] * 450), "nested deeper than 128 levels"),
    ("~" * 10000 + "1", "'~' at column 1"), ("1+" * 5000 + "1", "'\\+' at column 2"),
    ("f" + "()" * 3000, "nested deeper than"), ("-" * 5000 + "1", "'--' at column 1"),
    ("1 if 1 else " * 2000 + "1", "nested deeper than 128 levels"), ("1for", "syntax error at column 2"),
], ids=["plus-chain", "attribute-chain", "tilde-10000", "plus-5000", "call-chain", "minus-chain", "if-chain", "1for"])
def test_bracket_free_nesting_is_refused_before_it_recurses(text, match):
    """``1+1+...`` and ``a.a....`` of ~800 characters: RecursionError in the error path's ``ast.unparse``;
    ``~`` x 10000: MemoryError in ``ast.parse``; ``parse_spec``: RecursionError; ``1for``: a SyntaxWarning."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(LayoutError, match=match) as info:
            parse_spec(text)
    assert len(str(info.value)) < 400
    if len(text) < 1000:
        refused(["show", text], "spec: ")


def test_400_nested_loops_in_a_ttgir_are_refused():
    from linear_layouts.kernels.ir_text import parse_module

    loops = "".join(f"scf.for %i{i} = %c0 to %c1 step %c1 : i32 {{\n" for i in range(400)) + "}\n" * 400
    text = ('module attributes {"ttg.num-warps" = 4 : i32} {\n  tt.func @k() {\n    %c0 = arith.constant 0 : i32\n'
            '    %c1 = arith.constant 1 : i32\n' + loops + "    tt.return\n  }\n}\n")
    with pytest.raises(LayoutError, match="regions nested deeper than 32 levels"):
        parse_module(text)


@pytest.mark.parametrize("argv", [["matrix", "J"], ["show", "J", "--format", "html"], ["show", "J"]])
def test_a_lone_surrogate_in_json_is_refused(argv):
    """JSON ``"\\ud800"``: UnicodeEncodeError from ``matrix`` and ``show --format html``."""
    spec = '{"bases": {"\\ud800": [[1]]}, "out_dims": {"dim0": 2}}'
    refused([spec if a == "J" else a for a in argv], "must be valid Unicode text")


def test_a_raised_max_elements_that_does_not_fit_memory_is_one_line():
    """``--max-elements`` raised past this machine: NumPy's MemoryError traceback (16 TiB asked). Run in a
    child process whose address space is 3 GB (what would not fit any machine), as the NumPy allocation that
    fails is the caller's to size: without a limit the kernel may grant 16 GB before it runs out."""
    import resource
    import subprocess

    bases = ", ".join(f"[{1 << i}]" for i in range(31))
    spec = ('{"bases": {"register": [' + bases + '], "lane": [[0],[0],[0],[0],[0]], "warp": [[0],[0],[0],[0],[0]]}, '
            '"out_dims": ["dim0"]}')

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    proc = subprocess.run([sys.executable, "-m", "linear_layouts.cli", "show", spec, "--max-elements", "9" * 19],
                          capture_output=True, text=True, preexec_fn=limit, timeout=120,
                          env=dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2] / "src")))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert "out of memory" in proc.stderr and "--max-elements" in proc.stderr


# --- item 6: a kernel file's own mistakes ------------------------------------------------------------------

KERNEL = Path(__file__).resolve().parents[1] / "data" / "triton_kernels" / "absmax_atomic.py"


@pytest.mark.parametrize("edit, match", [
    (('TENSORS = {"x_ptr": [1 << 24]', 'TENSORS = {"x_ptr": "abc"'), "TENSORS['x_ptr'] must be a shape"),
    (('"num_warps": 8', '"num_warps": 3'), "OPTIONS['num_warps'] must be a power of two from 1 to 32"),
    (("OPTIONS = {", "KERNEL.fn = 5\nOPTIONS = {"), "KERNEL must be a @triton.jit function"),
    (("GRID = (4096,)", "GRID = iter(int, 1)"), "GRID must be 1 to 3 positive ints"),
], ids=["tensors-abc", "num-warps-3", "fn-5", "endless-grid"])
def test_kernel_file_mistakes_are_one_line(tmp_path, edit, match):
    """``TENSORS={"x_ptr": "abc"}`` (an unpack ValueError), ``num_warps=3`` (Triton's AssertionError),
    ``KERNEL.fn = 5`` (TypeError), ``GRID = iter(int, 1)`` (grew to 3.6 GB)."""
    pytest.importorskip("triton")
    text = KERNEL.read_text()
    assert edit[0] in text
    path = tmp_path / f"kernel_{len(edit[1])}.py"
    path.write_text(text.replace(edit[0], edit[1], 1))
    start = time.perf_counter()
    refused(["report", str(path), "--no-triton-estimate"], match)
    assert time.perf_counter() - start < 60


def test_report_help_says_a_kernel_file_is_executed():
    status, out, _ = run(["report", "--help"])
    assert status == 0 and "EXECUTED" in out and "imported as Python" in " ".join(out.split())


# --- item 7: the explorer's HTTP edge cases ------------------------------------------------------------------

@pytest.fixture
def explorer(capfd):
    from linear_layouts.viz.server import explorer_server

    server = explorer_server(b"<html>" + b"x" * (4 << 20) + b"</html>", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()
    assert "Traceback" not in capfd.readouterr().err


def _raw(port: int, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(data)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_a_non_ascii_content_length_is_answered(explorer):
    """``Content-Length: ²``: ``str.isdigit()`` said yes, ``int()`` raised, the client got nothing."""
    reply = _raw(explorer, f"POST /api/swizzle HTTP/1.1\r\nHost: 127.0.0.1:{explorer}\r\nContent-Type: application/json\r\n"
                           "Content-Length: ²\r\n\r\n{}".encode("utf-8"))
    assert reply.startswith(b"HTTP/1.0 411 ") and b"ASCII digits" in reply


@pytest.mark.parametrize("line, status", [(b"GET / HTTP/x.y", b"400"), (b"GET / HTTP/2.0", b"505"),
                                          (b"GET / HTTP/1.99999999999", b"400"), (b"GET /", b"505")])
def test_a_bad_http_version_gets_a_status_line(explorer, line, status):
    """http.server answered these as HTTP/0.9: a body without a status line."""
    reply = _raw(explorer, line + b"\r\n\r\n")
    assert reply.split(b"\r\n")[0].startswith(b"HTTP/1.0 " + status) and b'{"error": ' in reply


def test_a_client_that_hangs_up_leaves_no_traceback(explorer):
    """Connections cut (by the client, or by the server at its 30 s deadline) printed BrokenPipeError
    tracebacks; the fixture checks stderr."""
    for _ in range(5):
        s = socket.create_connection(("127.0.0.1", explorer))
        s.sendall(f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{explorer}\r\n\r\n".encode())
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")  # RST on close
        s.close()
    time.sleep(0.5)
    connection = http.client.HTTPConnection("127.0.0.1", explorer, timeout=10)
    connection.request("GET", "/")
    assert connection.getresponse().status == 200


# --- item 8: silent acceptance and long quotes ------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "tensor<32x64xf16, #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>>",
    "tensor<64xf16, #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>>",
], ids=["rank-1-layout-of-a-2-d-tensor", "rank-2-layout-of-a-1-d-tensor"])
def test_a_layout_of_another_rank_than_its_tensor_is_refused(text):
    """The first gave a 64-element layout for a 32x64 tensor; the converse was already refused."""
    with pytest.raises(LayoutError, match="its layout BlockedLayout has rank"):
        parse_spec(text).to_linear()
    refused(["show", text], "must have its rank")


def test_a_set_is_never_an_ordered_argument():
    """A ``set`` as ``out_dims`` gave a different layout per PYTHONHASHSEED."""
    for call in (lambda: LinearLayout({"register": [[1, 0], [0, 1]]}, {"dim0", "dim1"}),
                 lambda: LinearLayout({("register", ((1,),))}, ["dim0"]),
                 lambda: LinearLayout.identity_1d(4, "a", "b").transpose_ins({"a"})):
        with pytest.raises(LayoutError, match="ordered"):
            call()


def test_messages_quote_at_most_about_80_characters():
    """A 1,204-digit integer and a 3,000-mode CuTe shape were quoted whole."""
    line = refused(["banks", NVMMA, BLOCKED, "--steps", "-" + "9" * 1204])
    assert "9" * 81 not in line and len(line) < 300
    line = refused(["show", "--format", "x" * 1204, BLOCKED])
    assert "x" * 81 not in line
    with pytest.raises(LayoutError, match=r"not F2-linear") as info:
        parse_spec("(" + "2," * 3000 + "2):(" + "1," * 3000 + "1)").to_linear()
    assert "2,2," * 41 not in str(info.value) and len(str(info.value)) < 400


def test_pickles_of_layouts_still_round_trip():
    layout = parse_spec(BLOCKED).to_linear([32, 64])
    assert pickle.loads(pickle.dumps(layout)) == layout
    assert sys.getrefcount(layout) > 1
