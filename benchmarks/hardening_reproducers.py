"""Re-run every reproducer of issues 13 ("Hardened") and 33 ("Hardened, round two") and record what each gets now.

Usage:  python benchmarks/hardening_reproducers.py [--only SUBSTRING] [--out benchmarks/results]

Every reproducer runs in a fresh process with a 4 GB address-space limit, a CPU-time limit and a wall-clock
limit (a process that blocks, say on a FIFO, is killed), so a reproducer that regressed cannot take the
machine down. Library reproducers must raise ``LayoutError`` (short message,
at most ~80 characters of the input quoted); command lines must exit 2 with exactly one line on stderr and
no traceback; the kernel cache must refuse planted entries; the explorer server is a real
``linear-layouts explore`` process probed by a real HTTP client on loopback. Each row records the answer
(error text), the wall time and the peak resident memory of the process (``wait4``'s ``ru_maxrss``; a bare
``import linear_layouts.cli`` is the "baseline" row). Writes ``hardening_reproducers.json`` and
``hardening_reproducers.md`` (date, machine, versions) under ``--out``; exits 1 if any reproducer fails.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import resource
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
ADDRESS_SPACE = 4 << 30  # per reproducer process
SECONDS = 60  # CPU seconds per reproducer process
BOUNDED_SECONDS = 15.0  # a refusal must come faster than this (wall, on a busy 2-core machine)
BOUNDED_MB = 1024  # ... and with a peak RSS under this
MAX_MESSAGE = 400  # characters of a LayoutError message

BLOCKED = "BlockedLayout([1,4],[4,8],[8,1],[1,0])"
BLOCKED_T = "BlockedLayout([4,1],[8,4],[1,8],[0,1])"
NVMMA = "NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2)"
SPEC_299 = ('{"bases": {"register": [' + ",".join(["[0]"] * 22) + '], "lane": [[1],[2],[4],[8],[16],[32]]}, '
            '"out_dims": {"dim0": 64}}')
SPEC_40 = ('{"bases": {"register": [' + ",".join(["[0]"] * 34) + '], "lane": [[1],[2],[4],[8],[16],[32]]}, '
           '"out_dims": {"dim0": 64}}')
SECRET = "root:$6$SECRETHASH$abcdefghijklmnop:19000:0:99999:7:::"


@dataclass
class Case:
    """One reproducer: ``kind`` api (Python code that must raise LayoutError), cli (argv that must exit 2 with
    one line on stderr), check (Python code that must print ``OK ...``)."""

    item: str
    what: str
    kind: str
    code: str = ""
    argv: list = field(default_factory=list)
    forbid: tuple = ()
    match: str = ""
    expect_status: int = 2
    seconds: float = 0.0  #: a longer bound than BOUNDED_SECONDS for this one (a build)
    address_space: bool = True  #: under the 4 GB address-space limit (AddressSanitizer reserves terabytes)


def api(item: str, what: str, code: str, match: str) -> Case:
    return Case(item, what, "api", code=code, match=match)


def cli(item: str, what: str, argv: list, match: str, forbid: tuple = ()) -> Case:
    return Case(item, what, "cli", argv=argv, match=match, forbid=forbid)


def check(item: str, what: str, code: str, seconds: float = 0.0, address_space: bool = True) -> Case:
    return Case(item, what, "check", code=textwrap.dedent(code), seconds=seconds, address_space=address_space)


PRELUDE = """
import numpy as np
from linear_layouts import ColumnAction, LayoutError, LinearLayout
from linear_layouts.core.layout import invert_and_compose_block_local
from linear_layouts.layouts import BlockedLayout
L = LinearLayout.identity_1d(16, "register", "dim0") * LinearLayout.identity_1d(32, "lane", "dim1")
"""


def cases(scratch: Path) -> list[Case]:
    """Every reproducer of the issue, in its order (and a few neighbours of each)."""
    shadow = scratch / "shadow"
    shadow.write_text((SECRET + "\n") * 20)
    junk = scratch / "junk"
    junk.write_text("x" * 1_000_000 + "(")
    junk_json = scratch / "junk.json"
    junk_json.write_text('{"bases": {"register": [[' + "7" * 30 + "]]}, " + '"x": "' + "y" * 900_000 + '"}')
    out = str(scratch / "out")
    ttgir = scratch / "huge.ttgir"
    ttgir.write_text('#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [8, 1], '
                     'order = [1, 0]}>\n#blocked1 = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [8, 4], '
                     'warpsPerCTA = [1, 8], order = [0, 1]}>\nmodule attributes {"ttg.num-warps" = 8 : i32} {\n'
                     '  tt.func @k(%a: tensor<65536x65536xf16, #blocked>) {\n'
                     '    %b = ttg.convert_layout %a : tensor<65536x65536xf16, #blocked> -> '
                     'tensor<65536x65536xf16, #blocked1>\n    tt.return\n  }\n}\n')
    (scratch / "big17.ttgir").write_text("x" * 17_000_000)
    blocked = ('#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], '
               'order = [1, 0]}>\n')
    body = ('module attributes {"ttg.num-warps" = 4 : i32} {\n  tt.func @k(%a: tensor<32x64xf16, #A>) {\n'
            '    %b = ttg.convert_layout %a : tensor<32x64xf16, #A> -> tensor<32x64xf16, #blocked>\n    tt.return\n'
            '  }\n}\n')
    (scratch / "cycle.ttgir").write_text(blocked + "#A = #B\n#B = #A\n" + body)
    (scratch / "bomb.ttgir").write_text(blocked + "#x0 = [1, 2]\n" + "".join(
        f"#x{i} = [#x{i - 1}, #x{i - 1}, #x{i - 1}, #x{i - 1}]\n" for i in range(1, 30)) + "#A = #x29\n" + body)
    (scratch / "raises.py").write_text('raise RuntimeError("boom")\n')
    (scratch / "syntax.py").write_bytes(b"\xff\xfe def (:")
    (scratch / "k.ttgir").write_text((HERE.parent / "tests/data/triton_kernels/ir/sm_90/absmax_atomic.ttgir").read_text())
    (scratch / "k.ttir").write_bytes(b"\xff\xfe")
    (scratch / "big.ttgir").write_text(ttgir.read_text().replace("65536x65536", "4096x4096"))
    return [
        # -- the kernel cache --------------------------------------------------------------------------
        check("cache", "default folder: $XDG_CACHE_HOME/linear_layouts/kernels, mode 0700, ours", f"""
            import os, stat
            os.environ.pop("LINEAR_LAYOUTS_CACHE", None)
            os.environ["XDG_CACHE_HOME"] = "{scratch}/xdg"
            from linear_layouts.codegen.ptx import cache_dir
            root = cache_dir()
            info = os.stat(root)
            assert str(root) == "{scratch}/xdg/linear_layouts/kernels", root
            assert stat.S_IMODE(info.st_mode) == 0o700 and info.st_uid == os.geteuid(), oct(info.st_mode)
            print(f"OK {{root}} mode {{stat.S_IMODE(info.st_mode):04o}} uid {{info.st_uid}}")
        """),
        check("cache", "planted cubin (no manifest) under the source's name: refused, recompiled", f"""
            import os, re, warnings
            os.environ["LINEAR_LAYOUTS_CACHE"] = "{scratch}/cache1"
            from linear_layouts.codegen import ptx
            src = "__global__ void k(int *p) {{ p[threadIdx.x] = 1; }}\\n"
            root = ptx.cache_dir()
            name = ptx.cache_key(src, "sm_90", "cubin")[:24]
            (root / f"{{name}}.cubin").write_bytes(b"\\x7fELF planted by another user")
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                path = ptx.compile_cubin(src)
            assert b"planted" not in path.read_bytes(), "the planted file was returned"
            message = [str(w.message) for w in caught if isinstance(w.message, ptx.CacheWarning)]
            assert message, "no CacheWarning"
            print("OK refused:", re.sub(r"/tmp/[^ ]*/", "", message[0]))
        """),
        check("cache", "planted file with a forged manifest (right source hash, other contents)", f"""
            import json, os, warnings
            os.environ["LINEAR_LAYOUTS_CACHE"] = "{scratch}/cache2"
            from linear_layouts.codegen import ptx
            src = "__global__ void k(int *p) {{ p[threadIdx.x] = 2; }}\\n"
            root = ptx.cache_dir()
            key = ptx.cache_key(src, "sm_90", "ptx")
            (root / f"{{key[:24]}}.ptx").write_text(".entry evil")
            (root / f"{{key[:24]}}.ptx.json").write_text(json.dumps({{"source_sha256": key, "artifact_sha256": "0" * 64}}))
            found, reason = ptx.cached_artifact(root, src, "sm_90", "ptx")
            assert found is None and "do not match" in reason, (found, reason)
            print("OK refused:", reason)
        """),
        check("cache", "entry and folder owned by another user (uid 65534), folder writable by others", f"""
            import os, hashlib, json, re
            from linear_layouts.codegen import ptx
            other = "{scratch}/cache_other"
            os.mkdir(other, 0o700)
            if os.geteuid() == 0:
                os.chown(other, 65534, 65534)
                os.environ["LINEAR_LAYOUTS_CACHE"] = other
                try:
                    ptx.cache_dir(); raise SystemExit("a folder of uid 65534 was accepted")
                except ptx.CompileError as error:
                    first = str(error)
                assert "belongs to uid 65534" in first, first
            else:
                first = "(not root: chown not possible, skipped)"
            shared = "{scratch}/cache_shared"
            os.mkdir(shared); os.chmod(shared, 0o777)
            os.environ["LINEAR_LAYOUTS_CACHE"] = shared
            try:
                ptx.cache_dir(); raise SystemExit("a world-writable folder was accepted")
            except ptx.CompileError as error:
                second = str(error)
            assert "writable by other users" in second, second
            os.environ["LINEAR_LAYOUTS_CACHE"] = "{scratch}/cache3"
            root = ptx.cache_dir()
            src = "x"; key = ptx.cache_key(src, "sm_90", "ptx")
            data = b"k"
            (root / f"{{key[:24]}}.ptx").write_bytes(data)
            (root / f"{{key[:24]}}.ptx.json").write_text(json.dumps({{"source_sha256": key,
                "artifact_sha256": hashlib.sha256(data).hexdigest()}}))
            assert ptx.cached_artifact(root, src, "sm_90", "ptx")[0] is not None
            if os.geteuid() == 0:
                os.chown(root / f"{{key[:24]}}.ptx", 65534, 65534)
                found, reason = ptx.cached_artifact(root, src, "sm_90", "ptx")
                assert found is None and "uid 65534" in reason, reason
            print("OK", re.search(r"it belongs[^;]*|\\(not root.*", first)[0], "|", re.search(r"it is writable[^;]*", second)[0])
        """),
        check("cache", "a cache folder inside a folder others can write (they could swap it)", f"""
            import os
            from linear_layouts.codegen import ptx
            shared = "{scratch}/shared_parent"
            os.mkdir(shared); os.chmod(shared, 0o777)
            os.environ["LINEAR_LAYOUTS_CACHE"] = shared + "/kernels"
            try:
                ptx.cache_dir(); raise SystemExit("accepted")
            except ptx.CompileError as error:
                print("OK refused:", str(error).split(": ", 2)[-1].replace("{scratch}/", "")[:110])
        """),
        check("cache", "the old world-shared /tmp/linear_layouts_cache is never read", f"""
            import os, warnings
            os.environ["LINEAR_LAYOUTS_CACHE"] = "{scratch}/cache4"
            from linear_layouts.codegen import ptx
            src = "__global__ void k(int *p) {{ p[threadIdx.x] = 4; }}\\n"
            old = "/tmp/linear_layouts_cache"
            import hashlib
            os.makedirs(old, exist_ok=True)
            planted = os.path.join(old, hashlib.sha256(src.encode()).hexdigest()[:24] + ".cubin")
            open(planted, "wb").write(b"planted")
            try:
                path = ptx.compile_cubin(src)
                assert str(path).startswith("{scratch}/cache4") and b"planted" not in path.read_bytes(), path
            finally:
                os.unlink(planted)
            print("OK compiled to", path.parent)
        """),
        # -- no size limits anywhere ---------------------------------------------------------------------
        cli("size", "show of the 299-byte JSON spec (64 elements, 22 zero register bases)", ["show", SPEC_299],
            "elements exceed max_elements=65536"),
        cli("size", "show of a spec with 34 zero register bases (16 TiB asked)", ["show", SPEC_40, "--format", "svg",
                                                                                   "-o", out], r"above 2\*\*31"),
        api("size", "LinearLayout.identity_1d(1 << 300000, 'a', 'b')", "LinearLayout.identity_1d(1 << 300000, 'a', 'b')",
            r"2\*\*300000 is above 2\*\*31"),
        api("size", "apply_all at 30 bits", "(LinearLayout.identity_1d(1 << 15, 'register', 'dim0') * "
            "LinearLayout.identity_1d(1 << 15, 'lane', 'dim1')).apply_all()", "exceed max_elements"),
        api("size", "apply_array at 24 bits", "(LinearLayout.identity_1d(1 << 12, 'register', 'dim0') * "
            "LinearLayout.identity_1d(1 << 12, 'lane', 'dim1')).apply_array({'register': np.arange(4096)[:, None], "
            "'lane': np.arange(4096)[None, :]})", "exceed max_elements"),
        api("size", "plan_conversion on 24 input bits", "from linear_layouts.analysis import plan_conversion\n"
            "plan_conversion(BlockedLayout([1,4],[4,8],[8,1],[1,0]).to_linear([4096,4096]), "
            "BlockedLayout([4,1],[8,4],[1,8],[0,1]).to_linear([4096,4096]), 'fp16')", "exceed max_elements"),
        api("size", "plan_conversion on 28 input bits", "from linear_layouts.analysis import plan_conversion\n"
            "a = BlockedLayout([1,4],[4,8],[8,1],[1,0]).to_linear([16384,16384]); plan_conversion(a, a, 'fp16')",
            "exceed max_elements"),
        cli("size", "show --shape 1024,1024 --format svg", ["show", BLOCKED, "--shape", "1024,1024", "--format", "svg",
                                                          "-o", out], "1048576 elements exceed max_elements=65536"),
        cli("size", "show --shape 65536,65536", ["show", BLOCKED, "--shape", "65536,65536"], "elements exceed"),
        cli("size", "show --shape 65536,65536 --format png", ["show", BLOCKED, "--shape", "65536,65536", "--format",
                                                            "png", "-o", out], "elements exceed"),
        cli("size", "banks / swizzle / convert --emit at 4096x4096",
            ["convert", BLOCKED, BLOCKED_T, "--shape", "4096,4096", "--dtype", "fp16", "--emit", "cuda"],
            "elements exceed max_elements=1048576"),
        cli("size", "swizzle at 4096x4096", ["swizzle", BLOCKED, BLOCKED_T, "--shape", "4096,4096", "--dtype", "fp16"],
            "elements exceed max_elements=1048576"),
        cli("size", "banks at 4096x4096", ["banks", NVMMA, BLOCKED, "--shape", "4096,4096", "--dtype", "fp16"],
            "elements exceed max_elements=1048576"),
        cli("size", "CuTe spec of 65536x65536", ["show", "Swizzle<3,4,3> o (65536,65536):(65536,1)"],
            r"above 2\*\*31"),
        cli("size", "CuTe spec of 1024x1024 (a picture above the limit)", ["show", "Swizzle<3,4,3> o (1024,1024):(1024,1)"],
            "elements exceed max_elements=65536"),
        Case("size", "report of a TTGIR with 65536x65536 tensors (reported, not counted)", "cli", argv=["report", str(ttgir)],
             match=r"not understood: .*(2\*\*32 is above 2\*\*31|4294967296 elements exceed max_elements)", expect_status=0),
        Case("size", "report of a TTGIR with 4096x4096 tensors", "cli", argv=["report", str(ttgir).replace("huge", "big")],
             match=r"4096x4096", expect_status=0),
        api("size", "the engine on m = 2**40", "from linear_layouts.engine import propagate\n"
            "from linear_layouts.engine.examples import dot_trans_store\npropagate(dot_trans_store(m=1 << 40))",
            r"above 2\*\*31|exceed max_elements"),
        api("size", "the engine on m = 2**16", "from linear_layouts.engine import propagate\n"
            "from linear_layouts.engine.examples import dot_trans_store\npropagate(dot_trans_store(m=1 << 16))",
            r"above 2\*\*31|exceed max_elements"),
        # -- tracebacks instead of LayoutError ----------------------------------------------------------
        api("traceback", "apply_all with a 64-bit basis", "LinearLayout({'register': [[1 << 30, 0, 0]]}, "
            "{'a': 1 << 31, 'b': 1 << 31, 'c': 4}, require_surjective=False).apply_all()", "do not fit an int64"),
        api("traceback", "apply_array with a 64-bit basis", "LinearLayout({'register': [[1 << 30, 0, 0]]}, "
            "{'a': 1 << 31, 'b': 1 << 31, 'c': 4}, require_surjective=False).apply_array({'register': np.arange(2)})",
            "do not fit an int64"),
        api("traceback", "a basis of 1 << 63", "LinearLayout({'register': [[1 << 63]]}, {'dim0': 1 << 64}, "
            "require_surjective=False)", r"above 2\*\*31"),
        api("traceback", "str of a layout with 15000 bases", "str(LinearLayout({'register': [[1 << i] for i in "
            "range(15000)]}, ['dim0']))", r"above 2\*\*31"),
        api("traceback", "parse_spec of 1000-deep JSON", "from linear_layouts.spec import parse_spec\n"
            "parse_spec('{\"a\":' + '[' * 1000 + ']' * 1000 + '}')", "nested deeper than 32"),
        api("traceback", "parse_spec of a JSON int of 5000 digits", "from linear_layouts.spec import parse_spec\n"
            "parse_spec('{\"bases\": {\"register\": [[' + '1' * 5000 + ']]}, \"out_dims\": [\"dim0\"]}')", "digits"),
        api("traceback", "parse_spec of a lone surrogate", "from linear_layouts.spec import parse_spec\n"
            "parse_spec('BlockedLayout(\\ud800)')", "not valid Unicode|surrogate|UTF-8"),
        cli("traceback", "non-UTF-8 argv (a real process, bytes b'\\xff')", ["show", b"Blocked\xffLayout"],
            "is not UTF-8 text"),
        cli("traceback", "a UTF-8-encoded lone surrogate in argv (a real process)", ["show", BLOCKED, "--title",
                                                                                  b"\xed\xa0\x80"], "is not UTF-8 text"),
        cli("traceback", "show -o /nonexistent/x", ["show", BLOCKED, "--shape", "16,32", "-o", "/nonexistent/x"],
            "No such file or directory"),
        cli("traceback", "show -o /tmp", ["show", BLOCKED, "--shape", "16,32", "-o", "/tmp"], "Is a directory"),
        cli("traceback", "explore --port 99999", ["explore", "--port", "99999"], "a TCP port is 0..65535"),
        Case("traceback", "explore on a busy port", "busy_port", match="already in use"),
        api("traceback", "concat_ins(None)", "L.concat_ins(None)", "other must be a LinearLayout"),
        api("traceback", "concat_outs(None)", "L.concat_outs(None)", "other must be a LinearLayout"),
        api("traceback", "equal_ignoring_out_dim_sizes(None)", "L.equal_ignoring_out_dim_sizes(None)",
            "other must be a LinearLayout"),
        api("traceback", "ColumnAction(None, 'r', 0)", "ColumnAction(None, 'r', 0)", "action must be a list"),
        api("traceback", "ColumnAction.apply(None)", "ColumnAction([0], 'r', 1).apply(None)",
            "layout must be a LinearLayout"),
        api("traceback", "ColumnAction.compose(None)", "ColumnAction([0], 'r', 1).compose(None)",
            "then must be a ColumnAction"),
        api("traceback", "invert_and_compose_block_local(None, None)", "invert_and_compose_block_local(None, None)",
            "must be a LinearLayout"),
        api("traceback", "plan_shared_memory(L, None, 16)", "from linear_layouts.analysis import plan_shared_memory\n"
            "plan_shared_memory(L, None, 16)", "dst must be a LinearLayout"),
        api("traceback", "conversion_kernel(L, None, 16)", "from linear_layouts.codegen import conversion_kernel\n"
            "conversion_kernel(L, None, 16)", "dst must be a LinearLayout"),
        api("traceback", "matrix_svg(None)", "from linear_layouts.present.viz import matrix_svg\nmatrix_svg(None)",
            "layout must be a LinearLayout"),
        api("traceback", "vector_tile(128, 0)", "from linear_layouts.analysis import vector_tile\nvector_tile(128, 0)",
            "dtype"),
        api("traceback", "legacy_swizzle_params([0, 0], ...)", "from linear_layouts.analysis import "
            "legacy_swizzle_params\nlegacy_swizzle_params([0, 0], [1, 0], 16, op_idx=0)", "power of two, got 0"),
        api("traceback", "a NumPy scalar where a catalog class wants a list",
            "BlockedLayout(np.int64(4), [4, 8], [4, 1], [1, 0])", "size_per_thread must be a list of integers"),
        # -- silently accepted junk ----------------------------------------------------------------------
        api("junk", "shape [16.9, 32.2] (was 16x32)", "from linear_layouts.spec import layout_from_spec\n"
            f"layout_from_spec('{BLOCKED}', [16.9, 32.2])", "shape"),
        api("junk", "shape [True, 32] (was 1x32)", "from linear_layouts.spec import layout_from_spec\n"
            f"layout_from_spec('{BLOCKED}', [True, 32])", "shape"),
        api("junk", "JSON out_dims {'dim0': 16.9}", "from linear_layouts.spec import layout_from_spec\n"
            "layout_from_spec('{\"bases\": {\"register\": [[1]]}, \"out_dims\": {\"dim0\": 16.9}}')", "dim0"),
        api("junk", "identity_1d(False, None, None)", "LinearLayout.identity_1d(False, None, None)",
            "must be a non-empty string"),
        api("junk", "a dict as a basis vector", "LinearLayout({'register': [{0: 1}]}, ['dim0'])",
            "must be a list of 1 ints"),
        api("junk", "require_surjective='false'", "LinearLayout({'register': [[1]]}, {'dim0': 4}, "
            "require_surjective='false')", "require_surjective must be True or False"),
        cli("junk", "--shape 16,,32", ["show", BLOCKED, "--shape", "16,,32"], "an empty size between commas"),
        cli("junk", "banks --steps -5", ["banks", NVMMA, "BlockedLayout([1,8],[4,8],[4,1],[1,0])", "--shape", "32,64",
                                        "--steps", "-5"], "must be 0 or more"),
        cli("junk", "--max-elements 0", ["show", BLOCKED, "--shape", "16,32", "--max-elements", "0"],
            "--max-elements"),
        check("traceback", "stdout on a full disk (> /dev/full) and a closed stdout", f"""
            import subprocess, sys
            argv = [sys.executable, "-m", "linear_layouts.cli", "show", "{BLOCKED}", "--shape", "16,32"]
            with open("/dev/full", "w") as full:
                p = subprocess.run(argv, stdout=full, stderr=subprocess.PIPE, text=True)
            q = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: __import__("os").close(1))
            for r in (p, q):
                assert r.returncode == 2 and r.stderr.count("\\n") == 1 and "Traceback" not in r.stderr, r.stderr
            print("OK exit 2:", p.stderr.strip(), "|", q.stderr.strip())
        """),
        cli("traceback", "report of a .py kernel file that raises", ["report", str(scratch / "raises.py")],
            "running the kernel file raised RuntimeError: boom"),
        cli("traceback", "report of a .py kernel file that is not Python", ["report", str(scratch / "syntax.py")],
            "not a valid Python file"),
        cli("traceback", "report of a TTGIR whose aliases form a cycle (was a RecursionError)",
            ["report", str(scratch / "cycle.ttgir")], "aliases nested deeper than 32"),
        cli("size", "report of a TTGIR whose aliases expand 4**29-fold", ["report", str(scratch / "bomb.ttgir")],
            "expand to more than 65536 characters"),
        # -- error echo ----------------------------------------------------------------------------------
        cli("echo", "show @FILE of a shadow-like file (never printed)", ["show", f"@{shadow}"], "spec",
            forbid=("SECRETHASH", "root:")),
        Case("echo", "show @/etc/shadow (the real one, never printed)", "cli", argv=["show", "@/etc/shadow"],
             match="", forbid=("@etc-shadow-lines",)),
        cli("echo", "show @FILE of 1 MB of junk (stderr stays short)", ["show", f"@{junk}"], "spec"),
        cli("echo", "show @FILE of a 0.9 MB JSON with a long string", ["show", f"@{junk_json}"], ""),
        cli("echo", "a 50 KB spec on the command line", ["show", "x" * 50_000 + "("], "syntax error"),
        cli("echo", "report of /etc/shadow (never printed)", ["report", "/etc/shadow"], "",
            forbid=("@etc-shadow-lines",)),
        cli("echo", "report of 1 MB of junk", ["report", str(junk)], ""),
        cli("size", "report of a 17 MB file (refused before reading)", ["report", str(scratch / "big17.ttgir")],
            "above the 16777216 of an IR text"),
        cli("traceback", "report whose sibling .ttir is not UTF-8", ["report", str(scratch / "k.ttgir")],
            "cannot read .*k.ttir"),
        api("echo", "a 1 MB dim name in an error", "LinearLayout({'x' * 1_000_000: 'y'}, ['dim0'])", ""),
        api("echo", "a 1 MB value in an error", "LinearLayout.identity_1d('x' * 1_000_000, 'a', 'b')", ""),
        api("echo", "a 1 MB CuTe text", "from linear_layouts.spec import parse_spec\nparse_spec('(' + '8,' * 300000 + "
            "'8):(1)')", ""),
    ]


TOKEN = "ghp_SECRETtokenAAAABBBBCCCCDDDDEEEE1234"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJTRUNSRVQifQ.SECRETsignature0123"
FUZZ_CCORE = HERE.parent / "tests" / "core" / "fuzz_ccore.py"
LOAD_FUZZ_CCORE = f"""
import importlib.util
spec = importlib.util.spec_from_file_location("fuzz_ccore", "{FUZZ_CCORE}")
fuzz_ccore = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fuzz_ccore)
"""
WARPS_TTGIR = """#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [W, 1], order = [1, 0]}>
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


def round_two(scratch: Path) -> list[Case]:
    """Every reproducer of issue 33 ("Hardened, round two"), in its order."""
    secrets = {"token": f"{TOKEN}\nsecond line\n", "jwt": JWT, "call": f"SECRET_LAYOUT_{TOKEN}(1, 2)",
               "json": f'{{"bases": {{"register": [[1]]}}, "out_dims": {{"{TOKEN}": 3}}}}'}
    for name, text in secrets.items():
        (scratch / f"secret_{name}").write_text(text)
    valid = scratch / "secret_valid.json"
    valid.write_text(f'{{"bases": {{"register": [[1]], "lane": [[2], [4], [8], [16], [32]]}}, "out_dims": ["{TOKEN}"]}}')
    os.mkfifo(scratch / "fifo")
    with open(scratch / "huge3g", "wb") as sparse:
        sparse.truncate(3 << 30)
    for warps in (1 << 16, 1 << 20, 1 << 28):
        (scratch / f"warps{warps}.ttgir").write_text(WARPS_TTGIR.replace("W", str(warps)))
    loops = "".join(f"scf.for %i{i} = %c0 to %c1 step %c1 : i32 {{\n" for i in range(400)) + "}\n" * 400
    (scratch / "nested400.ttgir").write_text(
        'module attributes {"ttg.num-warps" = 4 : i32} {\n  tt.func @k() {\n    %c0 = arith.constant 0 : i32\n'
        '    %c1 = arith.constant 1 : i32\n' + loops + "    tt.return\n  }\n}\n")
    kernel = (HERE.parent / "tests/data/triton_kernels/absmax_atomic.py").read_text()
    for name, (old, new) in {"tensors": ('TENSORS = {"x_ptr": [1 << 24]', 'TENSORS = {"x_ptr": "abc"'),
                             "warps": ('"num_warps": 8', '"num_warps": 3'),
                             "fn": ("OPTIONS = {", "KERNEL.fn = 5\nOPTIONS = {"),
                             "grid": ("GRID = (4096,)", "GRID = iter(int, 1)")}.items():
        (scratch / f"kernel_{name}.py").write_text(kernel.replace(old, new, 1))
    bases = ", ".join(f"[{1 << i}]" for i in range(31))
    wide = ('{"bases": {"register": [' + bases + '], "lane": [[0],[0],[0],[0],[0]], "warp": [[0],[0],[0],[0],[0]]}, '
            '"out_dims": ["dim0"]}')
    surrogate = '{"bases": {"\\ud800": [[1]]}, "out_dims": {"dim0": 2}}'
    leaks = (TOKEN, TOKEN[:12], *JWT.split("."), "second line")
    return [
        # -- 1. the compiled core ------------------------------------------------------------------------
        check("ccore", "a dim name's __eq__ re-running __init__ on the other layout (use after free, rc 139)", """
            from linear_layouts import LinearLayout, _ccore
            names = [f"d{i}" for i in range(24)]
            layout = LinearLayout({n: [] for n in names}, ["dim0"])
            class Evil(str):
                def __eq__(self, other):
                    layout.__init__({"x": [[1]], "y": [[2]]}, ["dim1"])
                    return True
                __hash__ = str.__hash__
            evil = LinearLayout({(Evil(n) if i == 0 else n): [] for i, n in enumerate(names)}, ["dim0"])
            print("OK", _ccore.backend(), "core: names stored as", type(evil.in_dim_names[0]).__name__, "| equal:",
                  evil == layout)
        """),
        check("ccore", "the same, the name planted behind the constructor (the comparison holds its tuples)",
              LOAD_FUZZ_CCORE + textwrap.dedent("""
            for line in fuzz_ccore.reproducers()[:1]:
                print("OK", line)
        """)),
        check("ccore", "__init__ again on a hashed layout (it vanished from its own dict)", """
            from linear_layouts import LinearLayout
            layout = LinearLayout({"register": [[1]]}, ["dim0"])
            table = {layout: 1}
            try:
                layout.__init__({"a": [[1]]}, ["b"]); raise SystemExit("re-initialized")
            except AttributeError as error:
                assert table[layout] == 1
                print("OK AttributeError:", error)
        """),
        check("ccore", "writing the hash slot (hash() raised SystemError)", """
            from linear_layouts import LinearLayout
            layout = LinearLayout({"register": [[1]]}, ["dim0"])
            try:
                object.__setattr__(layout, "_hash", -1); raise SystemExit("the hash slot was writable")
            except AttributeError as error:
                print("OK AttributeError:", error, "| hash:", hash(layout) == hash(LinearLayout({"register": [[1]]}, ["dim0"])))
        """),
        check("ccore", "unpickling a forged layout (a 40-bit in dim; validation was skipped)", """
            import pickle
            from linear_layouts import LayoutError
            from linear_layouts.core.layout import _rebuild
            class Forged:
                def __reduce__(self):
                    return (_rebuild, (("i",), (tuple(1 << k for k in range(40)),), ("o",), (40,)))
            try:
                pickle.loads(pickle.dumps(Forged())); raise SystemExit("unpickled")
            except LayoutError as error:
                print("OK LayoutError:", error)
        """),
        check("ccore", "apply_array over a 40-bit in dim (C gave 0 where Python gave 256)", """
            import numpy as np
            from linear_layouts import LinearLayout, _ccore
            wide = LinearLayout._make(("i",), (tuple(1 << (k % 9) for k in range(40)),), ("o",), (9,))
            x = np.array([2, (1 << 39) | 256, (1 << 40) - 1])
            got = {b: (_ccore.using(b).__enter__(), wide.apply_array({"i": x})["o"].tolist())[1] for b in ("c", "python")}
            assert got["c"] == got["python"] == [2, 264, 15], got
            print("OK C and Python:", got["c"])
        """),
        check("ccore", "the reproducers and 40 fuzz rounds under AddressSanitizer + UBSan", LOAD_FUZZ_CCORE + textwrap.dedent("""
            proc = fuzz_ccore.run_asan(iterations=40, seed=33)
            assert proc.returncode == 0 and "ERROR: AddressSanitizer" not in proc.stderr, proc.stderr[-1500:]
            print("OK", proc.stdout.strip().splitlines()[-1])
        """), seconds=300, address_space=False),
        # -- 2. @FILE contents -----------------------------------------------------------------------------
        *[cli("file", f"{' '.join(argv).replace('@F', '@FILE')} of a file holding a {name}",
              [f"@{scratch / f'secret_{name}'}" if a == "@F" else a for a in argv], "not a valid layout spec",
              forbid=leaks)
          for name in secrets for argv in (["show", "@F", "--format", "gluon"], ["show", "@F", "--format", "ttgir"])],
        cli("file", "show @FILE of a JSON with a secret out-dim name", ["show", f"@{scratch / 'secret_json'}"],
            "not a valid layout spec", forbid=leaks),
        cli("file", "convert SRC @FILE of a token file",
            ["convert", BLOCKED, f"@{scratch / 'secret_token'}", "--shape", "32,64", "--dtype", "fp16"],
            "not a valid layout spec",
            forbid=leaks),
        cli("file", "a later error naming a dim of a valid @FILE (DST differs from SRC)",
            ["convert", f"@{valid}", "BlockedLayout([1],[32],[2],[0])", "--dtype", "fp16"], "<from the file>",
            forbid=leaks),
        cli("file", "show @fifo (blocked for ever in open())", ["show", f"@{scratch / 'fifo'}"], "a FIFO, not a regular file"),
        cli("file", "show @/dev/zero", ["show", "@/dev/zero"], "a character device, not a regular file"),
        cli("file", "show @FOLDER", ["show", f"@{scratch}"], "a folder, not a regular file"),
        cli("file", "show @FILE of 3 GiB (refused before it is read)", ["show", f"@{scratch / 'huge3g'}"],
            "above the limit of 262144"),
        # -- 3. the kernel cache ---------------------------------------------------------------------------
        check("cache", "LINEAR_LAYOUTS_CACHE=/ (accepted as root)", """
            import os
            os.environ["LINEAR_LAYOUTS_CACHE"] = "/"
            from linear_layouts.codegen import ptx
            try:
                ptx.cache_dir(); raise SystemExit("accepted")
            except ptx.CompileError as error:
                print(f"OK uid {os.geteuid()}:", str(error)[:120])
        """),
        check("cache", "a world-writable, non-sticky grandparent (its child could be renamed under us)", f"""
            import os
            from linear_layouts.codegen import ptx
            os.makedirs("{scratch}/grand/parent"); os.chmod("{scratch}/grand", 0o777)
            os.environ["LINEAR_LAYOUTS_CACHE"] = "{scratch}/grand/parent/kernels"
            try:
                ptx.cache_dir(); raise SystemExit("accepted")
            except ptx.CompileError as error:
                print("OK refused:", str(error).split(": ", 2)[-1].replace("{scratch}/", "")[:110])
        """),
        check("cache", "a folder at an entry path (IsADirectoryError), a nested manifest (RecursionError)", f"""
            import os, warnings
            os.environ["LINEAR_LAYOUTS_CACHE"] = "{scratch}/cache_r2"
            from linear_layouts.codegen import ptx
            root = ptx.cache_dir()
            answers = []
            for i, blocker in enumerate(("folder", "nested")):
                src = f"__global__ void k(int *p) {{{{ p[threadIdx.x] = {{i + 40}}; }}}}\\n"
                name = ptx.cache_key(src, "sm_90", "ptx")[:24] + ".ptx"
                if blocker == "folder":
                    (root / name).mkdir(); (root / name / "x").write_text("x")
                else:
                    (root / name).write_bytes(b"k"); (root / (name + ".json")).write_text("[" * 2000 + "]" * 2000)
                    os.chmod(root / name, 0o600); os.chmod(root / (name + ".json"), 0o600)
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    text = ptx.compile_ptx(src)
                assert ".entry" in text and len(caught) == 1, [str(w.message) for w in caught]
                answers.append(str(caught[0].message).split(": ", 1)[1].replace(str(root) + "/", "")[:70])
            print("OK one warning each, recompiled:", " | ".join(answers))
        """),
        check("cache", "a 3 GiB cubin (read whole): refused by its size, unread", f"""
            import hashlib, json, os, time
            os.environ["LINEAR_LAYOUTS_CACHE"] = "{scratch}/cache_big"
            from linear_layouts.codegen import ptx
            root = ptx.cache_dir()
            src = "x"; key = ptx.cache_key(src, "sm_90", "cubin")
            with open(root / f"{{key[:24]}}.cubin", "wb") as f:
                f.truncate(3 << 30)
            (root / f"{{key[:24]}}.cubin.json").write_text(json.dumps({{"source_sha256": key, "artifact_sha256": "0"}}))
            start = time.perf_counter()
            found, reason = ptx.cached_artifact(root, src, "sm_90", "cubin")
            assert found is None and "not read" in reason and time.perf_counter() - start < 1, reason
            print(f"OK in {{time.perf_counter() - start:.3f}} s:", reason)
        """),
        check("cache", "the runtime loads the verified bytes (the path was reopened after the check)", f"""
            import os, sys, types
            os.environ["LINEAR_LAYOUTS_CACHE"] = "{scratch}/cache_rt"
            from linear_layouts.codegen import ptx, runtime
            if ptx.find_nvcc() is None:
                print("OK (no nvcc here: the runtime compiles through NVRTC)"); raise SystemExit(0)
            loaded = []
            class Module:
                def load(self, data): loaded.append(data)
                def get_function(self, name): return name
            sys.modules["cupy"] = types.SimpleNamespace(cuda=types.SimpleNamespace(function=types.SimpleNamespace(
                Module=Module)), RawModule=lambda **kw: sys.exit("RawModule(path=...) would reopen the file"))
            runtime._function("__global__ void k(int *p) {{ p[0] = 33; }}", "k", 0)
            assert len(loaded) == 1 and loaded[0][:4] == b"\\x7fELF"
            print(f"OK Module.load of {{len(loaded[0])}} verified bytes (cuModuleLoadData), never the path")
        """),
        # -- 4. report: warps ------------------------------------------------------------------------------
        *[cli("report", f"report of a 700-byte TTGIR with ttg.num-warps = 2**{warps.bit_length() - 1}",
              ["report", str(scratch / f"warps{warps}.ttgir")], "linear_layouts.limits.MAX_ELEMENTS")
          for warps in (1 << 16, 1 << 20, 1 << 28)],
        # -- 5. recursion and tracebacks -------------------------------------------------------------------
        cli("recursion", "show of 1+1+...+1 (901 characters)", ["show", "+".join(["1"] * 451)], "not a literal"),
        cli("recursion", "show of a.a....a (899 characters)", ["show", ".".join(["a"] * 450)], "nested deeper than 128"),
        cli("recursion", "show of ~ x 10000 (MemoryError in ast.parse)", ["show", "~" * 10000 + "1"], "'~' at column 1"),
        api("recursion", "parse_spec of 1+1+... x 5000 (RecursionError)", "from linear_layouts.spec import parse_spec\n"
            "parse_spec('1+' * 5000 + '1')", "not a literal"),
        api("recursion", "parse_spec of f()()... x 3000", "from linear_layouts.spec import parse_spec\n"
            "parse_spec('f' + '()' * 3000)", "nested deeper"),
        cli("recursion", "report of 400 nested scf.for (RecursionError in ir_text)", ["report", str(scratch / "nested400.ttgir")],
            "regions nested deeper than 32"),
        cli("recursion", "matrix of JSON with a lone surrogate (UnicodeEncodeError)", ["matrix", surrogate],
            "must be valid Unicode text"),
        cli("recursion", "show --format html of JSON with a lone surrogate", ["show", surrogate, "--format", "html"],
            "must be valid Unicode text"),
        cli("recursion", "show with --max-elements raised past memory (NumPy MemoryError)",
            ["show", wide, "--max-elements", "9" * 19], "out of memory"),
        cli("recursion", "show 1for (a stray SyntaxWarning line)", ["show", "1for"], "syntax error at column 2"),
        # -- 6. report KERNEL.py ---------------------------------------------------------------------------
        cli("kernel", 'report of a kernel with TENSORS={"x_ptr": "abc"}', ["report", str(scratch / "kernel_tensors.py")],
            "must be a shape"),
        cli("kernel", "report of a kernel with num_warps=3 (Triton's AssertionError)", ["report", str(scratch / "kernel_warps.py")],
            "must be a power of two from 1 to 32"),
        cli("kernel", "report of a kernel with KERNEL.fn = 5", ["report", str(scratch / "kernel_fn.py")],
            "KERNEL must be a @triton.jit function"),
        cli("kernel", "report of a kernel with GRID = iter(int, 1) (grew to 3.6 GB)", ["report", str(scratch / "kernel_grid.py")],
            "GRID must be 1 to 3 positive ints"),
        check("kernel", "report --help says a .py is executed", f"""
            import subprocess, sys
            out = subprocess.run([sys.executable, "-m", "linear_layouts.cli", "report", "--help"], capture_output=True,
                                 text=True).stdout
            assert "EXECUTED" in out and "imported as Python" in " ".join(out.split()), out
            print("OK", " ".join(out.split()).split("positional")[0].split("kernel, ")[-1][:110])
        """),
        # -- 8. silent acceptance ----------------------------------------------------------------------------
        cli("silent", "show tensor<32x64xf16, #ttg.blocked<rank 1>> (a 64-element layout)",
            ["show", "tensor<32x64xf16, #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], "
                     "order = [0]}>>"], "has rank 1"),
        cli("silent", "show tensor<64xf16, #ttg.blocked<rank 2>> (the converse)",
            ["show", "tensor<64xf16, #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], "
                     "order = [1, 0]}>>"], "has rank 2"),
        api("silent", "a set as out_dims (a layout per PYTHONHASHSEED)",
            "LinearLayout({'register': [[1, 0], [0, 1]]}, {'dim0', 'dim1'})", "must be ordered"),
        cli("silent", "banks --steps with 1,204 digits (quoted whole)", ["banks", NVMMA, BLOCKED, "--steps", "-" + "9" * 1204],
            "an int of 4000 bits"),
        api("silent", "a CuTe shape of 3,000 modes (quoted whole)", "from linear_layouts.spec import parse_spec\n"
            "parse_spec('(' + '2,' * 3000 + '2):(' + '1,' * 3000 + '1)').to_linear()", r"\.\.\. \(\d{5} characters\)"),
    ]


# --------------------------------------------------------------------------------------------------------
# running one reproducer in a fresh, bounded process

def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    _cpu_limit()


def _cpu_limit() -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (SECONDS, SECONDS))


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=str(SRC), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")


WALL_SECONDS = 180  # a reproducer process still running after this is killed (one that blocks uses no CPU)


def spawn(argv: list, *, cwd: str | None = None, address_space: bool = True) -> dict:
    """Run ``argv`` bounded; its exit status, stdout, stderr, wall seconds and peak RSS (MB)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=_env(),
                                preexec_fn=_limits if address_space else _cpu_limit, cwd=cwd)
        killer = threading.Timer(WALL_SECONDS, proc.kill)
        killer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            killer.cancel()
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return {"status": proc.returncode, "stdout": out.read(), "stderr": err.read(), "seconds": seconds,
                "peak_mb": usage.ru_maxrss / 1024}


API_RUNNER = """
import sys
{prelude}
try:
{body}
except LayoutError as error:
    sys.stdout.write("LayoutError: " + str(error))
    raise SystemExit(0)
sys.stdout.write("RETURNED without an error")
raise SystemExit(1)
"""


def run_case(case: Case, shadow_lines: set[str]) -> dict:
    if case.kind == "api":
        code = API_RUNNER.format(prelude=PRELUDE, body=textwrap.indent(case.code, "    "))
        result = spawn([sys.executable, "-c", code])
        text = result["stdout"].decode("utf-8", "replace")
        message = text.removeprefix("LayoutError: ")
        problems = []
        if result["status"] != 0 or not text.startswith("LayoutError: "):
            problems.append(f"exit {result['status']}: {(text + result['stderr'].decode('utf-8', 'replace'))[-300:]}")
        elif case.match and not re.search(case.match, message):
            problems.append(f"message does not say {case.match!r}")
        if len(message) > MAX_MESSAGE:
            problems.append(f"message of {len(message)} characters")
        answer = "LayoutError: " + message if not problems else problems[0]
    elif case.kind == "check":
        result = spawn([sys.executable, "-c", case.code], address_space=case.address_space)
        text = result["stdout"].decode("utf-8", "replace").strip()
        problems = [] if result["status"] == 0 and text.startswith("OK") else [
            f"exit {result['status']}: {(text + result['stderr'].decode('utf-8', 'replace'))[-300:]}"]
        answer = text.removeprefix("OK ").strip() if not problems else problems[0]
    else:
        if case.kind == "busy_port":
            with socket.socket() as busy:
                busy.bind(("127.0.0.1", 0))
                busy.listen(1)
                argv = ["explore", "--port", str(busy.getsockname()[1])]
                result = spawn([sys.executable, "-m", "linear_layouts.cli"] + argv)
        else:
            result = spawn([sys.executable, "-m", "linear_layouts.cli"] + case.argv)
        err = result["stderr"].decode("utf-8", "replace")
        lines = err.splitlines()
        problems = []
        if result["status"] != case.expect_status:
            problems.append(f"exit {result['status']}")
        if case.expect_status == 0:
            text = result["stdout"].decode("utf-8", "replace")
            if lines:
                problems.append(f"{len(lines)} lines on stderr")
            found = re.search(case.match, text) if case.match else None
            if case.match and not found:
                problems.append(f"stdout does not say {case.match!r}")
            err = f"{len(text)} characters on stdout: ..." + (found[0][-150:] if found else text[:150])
        elif len(lines) != 1 or not lines[0].startswith("linear-layouts"):
            problems.append(f"{len(lines)} lines on stderr")
        if "Traceback" in err:
            problems.append("a traceback")
        if case.match and case.expect_status and not re.search(case.match, err):
            problems.append(f"stderr does not say {case.match!r}")
        for needle in case.forbid:
            leaked = shadow_lines if needle == "@etc-shadow-lines" else {needle}
            if any(line and line in err + result["stdout"].decode("utf-8", "replace") for line in leaked):
                problems.append("the file's contents were echoed")
                err = "[redacted: it echoed the file]"
        if len(err) > 1000:
            problems.append(f"{len(err)} characters on stderr")
        answer = (f"exit {result['status']}: " + err.strip()[:300]) if not problems else \
            "; ".join(problems) + " | " + err.strip()[:200]
    if not problems and result["seconds"] > (case.seconds or BOUNDED_SECONDS):
        problems.append(f"took {result['seconds']:.1f} s")
    if not problems and result["peak_mb"] > BOUNDED_MB:
        problems.append(f"peak {result['peak_mb']:.0f} MB")
    return {"item": case.item, "what": case.what, "ok": not problems, "answer": answer, "problems": problems,
            "seconds": result["seconds"], "peak_mb": result["peak_mb"]}


# --------------------------------------------------------------------------------------------------------
# the explorer server: a real `linear-layouts explore` process, a real client on loopback

SERVER_PROBES = r"""
import http.client, json, socket, sys, time
port = int(sys.argv[1])
results = []

def record(what, ok, answer, start):
    results.append({"what": what, "ok": bool(ok), "answer": answer[:300], "seconds": time.perf_counter() - start})

def request(method, path, body=None, headers=None, host="same"):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        c.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        if host is not None:
            c.putheader("Host", f"127.0.0.1:{port}" if host == "same" else host)
        for k, v in (headers or {}).items():
            c.putheader(k, v)
        if body is not None and "Content-Length" not in (headers or {}):
            c.putheader("Content-Length", str(len(body)))
        c.endheaders(body)
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()

def post(body, content_type="application/json", origin="same", headers=None):
    h = {"Content-Type": content_type} if content_type else {}
    if origin is not None:
        h["Origin"] = f"http://127.0.0.1:{port}" if origin == "same" else origin
    h.update(headers or {})
    return request("POST", "/api/swizzle", body, h)

def answer(status, body):
    return f"{status} {body.decode('utf-8', 'replace')[:200]}"

seed_store = {"bases": {"register": [[0, 1], [0, 2]], "lane": [[0, 4], [0, 8], [1, 0], [2, 0], [4, 0]],
                        "warp": [[8, 0], [16, 0]]}, "out_dims": {"dim0": 32, "dim1": 16}}
seed_load = {"bases": {"register": [[1, 0], [2, 0]], "lane": [[4, 0], [8, 0], [0, 1], [0, 2], [0, 4]],
                       "warp": [[0, 8], [16, 0]]}, "out_dims": {"dim0": 32, "dim1": 16}}
good = json.dumps({"store": seed_store, "load": seed_load, "bitwidth": 16}).encode()

def probe(what, call, expect, needle=b""):
    start = time.perf_counter()
    try:
        status, body = call()
    except Exception as error:  # noqa: BLE001
        record(what, False, f"client error {type(error).__name__}: {error}", start)
        return
    record(what, status == expect and needle in body, answer(status, body), start)

probe("GET / with our Host", lambda: request("GET", "/"), 200, b"<")
probe("POST /api/swizzle from our page", lambda: post(good), 200, b"optimal")
probe("Host evil.example (DNS rebinding)", lambda: request("GET", "/", host=f"evil.example:{port}"), 421, b"Host")
probe("Host 127.0.0.1 with another port", lambda: request("GET", "/", host=f"127.0.0.1:{port + 1}"), 421)
probe("no Host header", lambda: request("GET", "/", host=None), 421)
probe("POST text/plain (a cross-site form)", lambda: post(good, "text/plain", origin=None), 415, b"application/json")
probe("POST form-urlencoded", lambda: post(good, "application/x-www-form-urlencoded", origin=None), 415)
probe("POST without Content-Type", lambda: post(good, None, origin=None), 415)
probe("POST JSON from Origin http://evil.example", lambda: post(good, origin="http://evil.example"), 403, b"Origin")
probe("POST JSON with Sec-Fetch-Site: cross-site", lambda: post(good, headers={"Sec-Fetch-Site": "cross-site"}), 403)
probe("POST JSON from Origin null", lambda: post(good, origin="null"), 403)
zeros = json.dumps({"store": {"bases": {"register": [[0, 0]] * 40000}, "out_dims": {"dim0": 1, "dim1": 1}},
                    "load": seed_load, "bitwidth": 32}).encode()
probe(f"the 240 KB body ({len(zeros)} bytes)", lambda: post(zeros), 413, b"bytes")
wide = dict(seed_store, bases=dict(seed_store["bases"], register=seed_store["bases"]["register"] + [[0, 0]] * 16))
probe("a 64 KB-bounded body with 25 in bits", lambda: post(json.dumps({"store": wide, "load": seed_load,
                                                                      "bitwidth": 32}).encode()), 400, b"in bits")
w24 = dict(seed_store, bases=dict(seed_store["bases"], register=seed_store["bases"]["register"] + [[0, 0]] * 15))
probe("the worst body accepted: 24 in bits (2**24 hardware indices)",
      lambda: post(json.dumps({"store": w24, "load": seed_load, "bitwidth": 64}).encode()), 200)
big_out = {"bases": {"register": [[1 << i, 0] for i in range(8)] + [[0, 1 << i] for i in range(9)]},
           "out_dims": {"dim0": 256, "dim1": 512}}
probe("a layout of 2**17 elements", lambda: post(json.dumps({"store": big_out, "load": big_out,
                                                             "bitwidth": 16}).encode()), 400, b"not served")
probe("Content-Length: 10**9", lambda: post(b"{}", headers={"Content-Length": str(10**9)}), 413)
probe("Content-Length: -1", lambda: post(b"{}", headers={"Content-Length": "-1"}), 411)
probe("body not JSON", lambda: post(b"not json"), 400, b"not JSON")
probe("body 5000-deep JSON", lambda: post(b"[" * 5000 + b"]" * 5000), 400, b"not JSON")
probe("body not UTF-8", lambda: post(b"\xff\xfe"), 400, b"not JSON")
probe("JSON without the fields", lambda: post(b'{"store": 1}'), 400, b"store")
probe("bitwidth 12", lambda: post(json.dumps({"store": seed_store, "load": seed_load, "bitwidth": 12}).encode()),
      400, b"bitwidth")
probe("bases with a 5000-digit int", lambda: post(b'{"store": {"bases": {"register": [[' + b"1" * 4000 +
                                                  b']]}, "out_dims": {"dim0": 2}}, "load": 1, "bitwidth": 16}'), 400)
probe("GET /etc/passwd", lambda: request("GET", "/etc/passwd"), 404)
probe("GET /../../etc/passwd", lambda: request("GET", "/../../etc/passwd"), 404)
def raw(data):
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(data)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    reply = b"".join(chunks)
    return int(reply.split(b" ", 2)[1]) if reply.startswith(b"HTTP/1.") else 0, reply

probe("Content-Length: \u00b2 (issue 33: int() raised, no answer)",
      lambda: raw(f"POST /api/swizzle HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                  "Content-Length: \u00b2\r\n\r\n{}".encode()), 411, b"ASCII digits")
probe("request line GET / HTTP/x.y (issue 33: no status line)", lambda: raw(b"GET / HTTP/x.y\r\n\r\n"), 400,
      b'{"error": "400 Bad Request')
probe("request line GET / HTTP/2.0", lambda: raw(b"GET / HTTP/2.0\r\n\r\n"), 505, b'{"error": "505')
probe("request line GET / (HTTP/0.9)", lambda: raw(b"GET /\r\n\r\n"), 505, b"HTTP/0.9 is not served")
probe("PUT / (http.server's own error, as JSON)", lambda: request("PUT", "/", b"x", {"Content-Type":
                                                                                  "application/json"}),
      501, b'{"error": "501 Not Implemented: Unsupported method')

# 50 stalled POSTs: at most 16 held, the rest answered 503 at once, the held ones closed by the timeout
start = time.perf_counter()
stalled = []
try:
    for _ in range(50):
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        s.sendall(f"POST /api/swizzle HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 100\r\n".encode())
        stalled.append(s)
    replies = []
    for s in stalled:
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
        replies.append(b"".join(chunks))
finally:
    for s in stalled:
        s.close()
elapsed = time.perf_counter() - start
busy = sum(r.startswith(b"HTTP/1.1 503") for r in replies)
record("50 stalled POSTs (headers never finished)", busy >= 34 and elapsed < 25,
       f"{busy} answered 503 at once, {50 - busy} closed by the server after {elapsed:.1f} s", start)
# a stalled body (headers complete, body never sent)
start = time.perf_counter()
with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
    s.sendall(f"POST /api/swizzle HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
              f"Origin: http://127.0.0.1:{port}\r\nContent-Length: 1000\r\n\r\n{{".encode())
    data = s.recv(65536)
record("a stalled body", data == b"" or b"408" in data or b"400" in data, f"closed after "
       f"{time.perf_counter() - start:.1f} s ({data[:60]!r})", start)
# a trickling client: one header byte every 2 s must not hold a connection for ever
start = time.perf_counter()
with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
    closed = False
    try:
        s.sendall(b"GET / HTTP/1.1\r\n")
        while time.perf_counter() - start < 45:
            s.sendall(b"X")
            time.sleep(2)
    except OSError:
        closed = True
record("a client trickling one byte every 2 s", closed, f"closed by the server: {closed} after "
       f"{time.perf_counter() - start:.1f} s", start)
probe("still serving afterwards", lambda: request("GET", "/"), 200)
print(json.dumps(results))
"""


def server_rows() -> list[dict]:
    """Start `linear-layouts explore --port 0`, probe it, report each probe and the server's peak memory."""
    proc = subprocess.Popen([sys.executable, "-m", "linear_layouts.cli", "explore", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(), preexec_fn=_limits, text=True)
    stderr: list[str] = []  # read as it comes: a server printing tracebacks must not block on a full pipe
    reader = threading.Thread(target=lambda: stderr.extend(proc.stderr), daemon=True)
    reader.start()
    try:
        line = proc.stdout.readline()
        match = re.search(r"127\.0\.0\.1:(\d+)", line)
        if not match:
            return [{"item": "server", "what": "explore starts", "ok": False, "answer": line,
                     "seconds": 0, "peak_mb": 0, "problems": ["did not start"]}]
        probes = subprocess.run([sys.executable, "-c", SERVER_PROBES, match[1]], capture_output=True, text=True,
                                env=_env(), timeout=300)
        try:
            results = json.loads(probes.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            return [{"item": "server", "what": "the probes ran", "ok": False, "answer": probes.stderr[-500:],
                     "seconds": 0, "peak_mb": 0, "problems": ["probe script failed"]}]
        status = Path(f"/proc/{proc.pid}/status").read_text()
        peak = int(re.search(r"VmHWM:\s+(\d+)", status)[1]) / 1024
    finally:
        proc.terminate()
        proc.wait(10)
    reader.join(10)
    errors = "".join(stderr)
    rows = [dict(r, item="server", peak_mb=None, problems=[] if r["ok"] else ["unexpected answer"]) for r in results]
    rows.append({"item": "server", "what": "the server's stderr after every probe and the 30 s cuts (issue 33: "
                 "BrokenPipeError tracebacks)", "ok": "Traceback" not in errors,
                 "answer": f"{len(errors.splitlines())} lines, no traceback" if "Traceback" not in errors else
                 errors[-300:], "seconds": 0, "peak_mb": None, "problems": []})
    rows.append({"item": "server", "what": "peak RSS of the server process over all probes", "ok": peak < BOUNDED_MB,
                 "answer": f"{peak:.0f} MB", "seconds": 0, "peak_mb": peak, "problems": []})
    return rows


# --------------------------------------------------------------------------------------------------------

def versions() -> dict:
    import numpy

    return {"python": platform.python_version(), "numpy": numpy.__version__, "machine": platform.machine(),
            "cpus": os.cpu_count(), "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                     cwd=HERE).stdout.strip()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "results")
    parser.add_argument("--only", default="", help="run only reproducers whose item or text contains this")
    parser.add_argument("--no-server", action="store_true", help="skip the explorer server probes (~80 s)")
    args = parser.parse_args()
    try:
        shadow_lines = {line for line in Path("/etc/shadow").read_text().splitlines() if len(line) > 8}
    except OSError:
        shadow_lines = set()
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        baseline = spawn([sys.executable, "-c", "import linear_layouts.cli, linear_layouts.analysis"])
        rows.append({"item": "baseline", "what": "import linear_layouts.cli (a process doing nothing)", "ok": True,
                     "answer": "", "seconds": baseline["seconds"], "peak_mb": baseline["peak_mb"], "problems": []})
        for case in cases(Path(scratch)) + round_two(Path(scratch)):
            if args.only and args.only not in case.item and args.only not in case.what:
                continue
            row = run_case(case, shadow_lines)
            rows.append(row)
            print(f"{'ok  ' if row['ok'] else 'FAIL'} {row['item']:9s} {row['what'][:60]:60s} {row['seconds']:5.1f} s "
                  f"{row['peak_mb']:6.0f} MB  {row['answer'][:110]}", flush=True)
    if not args.no_server and (not args.only or args.only == "server"):
        for row in server_rows():
            rows.append(row)
            print(f"{'ok  ' if row['ok'] else 'FAIL'} server    {row['what'][:60]:60s} {row['seconds']:5.1f} s "
                  f"{row['answer'][:110]}", flush=True)
    ok = all(r["ok"] for r in rows)
    meta = versions()
    if args.only:
        print("(--only: results not written)")
        return 0 if ok else 1
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "hardening_reproducers.json").write_text(json.dumps({"meta": meta, "rows": rows, "ok": ok}, indent=1))
    lines = ["# Issues 13 and 33: the hardening reproducers, re-run", "",
             f"{meta['date']}; commit {meta['commit']}; {meta['machine']}, {meta['cpus']} CPUs; Python {meta['python']}, "
             f"NumPy {meta['numpy']}. `python benchmarks/hardening_reproducers.py`: each reproducer in a fresh "
             f"process (4 GB address-space limit); peak RSS from `wait4` (the baseline row is a bare import). "
             "Library calls must raise `LayoutError`; command lines must exit 2 with one line on stderr, no "
             "traceback; the server rows are a real `linear-layouts explore --port 0` probed over loopback.", "",
             "| | item | reproducer | answer now | s | peak MB |", "|---|---|---|---|---|---|"]
    for r in rows:
        text = r["answer"].replace("|", "\\|").replace("\n", " ")
        text = text if len(text) <= 160 else text[:157] + "..."
        peak = f"{r['peak_mb']:.0f}" if r.get("peak_mb") else ""
        lines.append(f"| {'ok' if r['ok'] else '**FAIL**'} | {r['item']} | {r['what']} | {text} | "
                     f"{r['seconds']:.1f} | {peak} |")
    failed = [r for r in rows if not r["ok"]]
    lines += ["", f"{len(rows) - len(failed)} of {len(rows)} rows as required." +
              ("" if not failed else " FAILED: " + "; ".join(r["what"] for r in failed))]
    (args.out / "hardening_reproducers.md").write_text("\n".join(lines) + "\n")
    print(lines[-1])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
