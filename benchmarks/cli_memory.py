"""Benchmark: peak memory (RSS) and time of every CLI command at its default size limits.

Usage:  python benchmarks/cli_memory.py [--quick] [--out benchmarks/results]

Issue 13's acceptance: "memory stays under 1 GB for any single CLI command on its default limits". Each
command runs in a fresh Python process (``linear_layouts.cli.main(argv)``); the process reports its own
peak resident set size (``resource.getrusage(RUSAGE_SELF).ru_maxrss``) and the wall time. The commands
are the heaviest each subcommand accepts without ``--max-elements``: pictures of a 256x256 tile (the
picture limit, ``limits.MAX_PICTURE_ELEMENTS``), analyses, plans and kernels of a 1024x1024 tensor
(2**20 elements: ``limits.MAX_ELEMENTS``), every output format (CuTe, Gluon, TTGIR, JSON, PNG, HTML), reports
of the largest real kernel (a .py compiled by Triton on the CPU, its TTGIR) and of a TTGIR file at
``limits.MAX_IR_BYTES``, and one step beyond each limit, which must be refused at once. The explorer server
(``explore`` without ``-o``) is measured as a process serving the heaviest requests its API accepts
(``/proc/PID/status`` VmHWM). Writes ``cli_memory.json`` and ``cli_memory.md`` (date, machine, versions) under
``--out``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
LIMIT_MB = 1024

BLOCKED = "BlockedLayout([1,4],[4,8],[8,1],[1,0])"
BLOCKED_T = "BlockedLayout([4,1],[8,4],[1,8],[0,1])"
NVMMA = "NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2)"
CUTE = "Swizzle<3,4,3> o (256,256):(256,1)"
KERNELS = HERE.parent / "tests" / "data" / "triton_kernels"

_RUNNER = """
import json, resource, sys, time
sys.argv = ["linear-layouts"] + json.loads(sys.argv[1])
start = time.perf_counter()
status = None
try:
    from linear_layouts.cli import main
    status = main(sys.argv[1:])
except SystemExit as exit_:
    status = exit_.code
finally:
    sys.__stderr__.write("\\n@@" + json.dumps({"status": status, "seconds": time.perf_counter() - start,
                         "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}) + "\\n")
"""


def big_ttgir(path: Path) -> Path:
    """A TTGIR module just under ``limits.MAX_IR_BYTES``: the largest real kernel's function, repeated."""
    from linear_layouts.core.limits import MAX_IR_BYTES

    text = (KERNELS / "ir" / "sm_90" / "attention_fwd.ttgir").read_text()
    head, body = text[:text.index("tt.func")], text[text.index("tt.func"):text.rindex("}")]
    copies = (MAX_IR_BYTES - len(head) - 2) // (len(body) + 8)
    with path.open("w") as file:  # streamed: this process stays small (a child's peak RSS starts at ours)
        file.write(head)
        for i in range(copies):
            file.write(body.replace("tt.func public @", f"tt.func public @f{i}_"))
        file.write("}\n")
    with open(f"{path}.more", "wb") as more:
        more.truncate(MAX_IR_BYTES + 1)  # sparse
    return path


def commands(out: Path, quick: bool) -> list[tuple[str, list[str], int]]:
    """(what, argv, expected exit status)."""
    o = ["-o", str(out / "output")]
    big = "1024,1024" if not quick else "256,256"
    ir = str(big_ttgir(out / "big.ttgir"))
    runs = [
        ("show text 256x256 (picture limit)", ["show", BLOCKED, "--shape", "256,256"] + o, 0),
        ("show svg 256x256", ["show", BLOCKED, "--shape", "256,256", "--format", "svg"] + o, 0),
        ("show png 256x256", ["show", BLOCKED, "--shape", "256,256", "--format", "png"] + o, 0),
        ("show html 256x256", ["show", BLOCKED, "--shape", "256,256", "--format", "html"] + o, 0),
        ("show shared html 256x256", ["show", NVMMA, "--shape", "256,256", "--format", "html"] + o, 0),
        ("show svg 1024x1024 (refused)", ["show", BLOCKED, "--shape", "1024,1024", "--format", "svg"] + o, 2),
        ("show 65536x65536 (refused)", ["show", BLOCKED, "--shape", "65536,65536"] + o, 2),
        ("show cute 256x256 (NVMMA)", ["show", NVMMA, "--shape", "256,256", "--format", "cute"] + o, 0),
        ("show gluon 256x256", ["show", BLOCKED, "--shape", "256,256", "--format", "gluon"] + o, 0),
        ("show ttgir 256x256", ["show", BLOCKED, "--shape", "256,256", "--format", "ttgir"] + o, 0),
        ("show json 256x256", ["show", BLOCKED, "--shape", "256,256", "--format", "json"] + o, 0),
        ("show CuTe spec 256x256 png", ["show", CUTE, "--format", "png", "--dtype", "fp16"] + o, 0),
        ("show --hw --wide 256x256", ["show", BLOCKED, "--shape", "256,256", "--hw", "--wide"] + o, 0),
        ("matrix svg 1024x1024", ["matrix", BLOCKED, "--shape", "1024,1024", "--format", "svg"] + o, 0),
        (f"banks {big}", ["banks", NVMMA, BLOCKED, "--shape", big, "--dtype", "fp16"] + o, 0),
        (f"banks svg {big}", ["banks", NVMMA, BLOCKED, "--shape", big, "--dtype", "fp16", "--format", "svg"] + o, 0),
        (f"banks --store (advice table) {big}", ["banks", NVMMA, BLOCKED, "--shape", big, "--dtype", "fp16",
                                                "--store", BLOCKED_T] + o, 0),
        (f"swizzle {big}", ["swizzle", BLOCKED, BLOCKED_T, "--shape", big, "--dtype", "fp16"] + o, 0),
        (f"swizzle --format cute {big}", ["swizzle", BLOCKED, BLOCKED_T, "--shape", big, "--dtype", "fp16",
                                          "--format", "cute"] + o, 0),
        (f"swizzle wgmma-b {big}", ["swizzle", BLOCKED, "wgmma-b", "--shape", big, "--dtype", "fp16"] + o, 0),
        (f"convert --format gluon {big}", ["convert", BLOCKED, BLOCKED_T, "--shape", big, "--dtype", "fp16",
                                           "--format", "gluon"] + o, 0),
        (f"convert {big}", ["convert", BLOCKED, BLOCKED_T, "--shape", big, "--dtype", "fp16"] + o, 0),
        (f"convert --emit cuda {big}", ["convert", BLOCKED, BLOCKED_T, "--shape", big, "--dtype", "fp16",
                                        "--emit", "cuda"] + o, 0),
        ("convert 2048x1024 (refused)", ["convert", BLOCKED, BLOCKED_T, "--shape", "2048,1024", "--dtype", "fp16"]
         + o, 2),
        ("explore -o (page with a 256x256 pair)", ["explore", "--store", BLOCKED, "--load", BLOCKED_T, "--shape",
                                                  "256,256", "--dtype", "fp16"] + o, 0),
        ("explore -o --layout 256x256", ["explore", "--layout", BLOCKED, "--shape", "256,256"] + o, 0),
        ("report attention_fwd.py (Triton compiles on the CPU)", ["report", str(KERNELS / "attention_fwd.py")] + o, 0),
        ("report attention_fwd.py --format html", ["report", str(KERNELS / "attention_fwd.py"), "--format", "html"]
         + o, 0),
        ("report attention_fwd.ttgir", ["report", str(KERNELS / "ir" / "sm_90" / "attention_fwd.ttgir")] + o, 0),
        ("report of a TTGIR file at MAX_IR_BYTES (16 MB)", ["report", ir, "--no-triton-estimate"] + o, 0),
        ("report of a file above MAX_IR_BYTES (refused)", ["report", ir + ".more"] + o, 2),
        ("demo", ["demo"], 0),
    ]
    return runs if not quick else [r for r in runs if "1024x1024" not in r[0] or "refused" in r[0]]


def measure(argv: list[str]) -> dict:
    env = dict(os.environ, PYTHONPATH=str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", _RUNNER, json.dumps(argv)], capture_output=True, text=True,
                          env=env, timeout=900)
    marker = proc.stderr.rfind("\n@@")
    if marker < 0:
        return {"status": proc.returncode, "seconds": None, "peak_mb": None, "stderr": proc.stderr[-500:]}
    result = json.loads(proc.stderr[marker + 3:].splitlines()[0])
    result["stderr"] = proc.stderr[:marker].strip()[-300:]
    return result


_CLIENT = """
import json, sys, threading, http.client
port, rounds = int(sys.argv[1]), int(sys.argv[2])
bits16 = [[1 << i, 0] for i in range(8)] + [[0, 1 << i] for i in range(8)]
# the heaviest pair the API accepts: 2**16 elements, 2**24 hardware indices (8 zero register bases)
store = {"bases": {"register": bits16[:8] + [[0, 0]] * 8, "lane": bits16[8:13], "warp": bits16[13:]},
         "out_dims": {"dim0": 256, "dim1": 256}}
load = {"bases": {"register": bits16[8:] + [[0, 0]] * 8, "lane": bits16[:5], "warp": bits16[5:8]},
        "out_dims": {"dim0": 256, "dim1": 256}}
body = json.dumps({"store": store, "load": load, "bitwidth": 8}).encode()
statuses = []
def post():
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    c.request("POST", "/api/swizzle", body, {"Content-Type": "application/json", "Host": f"127.0.0.1:{port}",
                                             "Origin": f"http://127.0.0.1:{port}"})
    r = c.getresponse(); r.read(); statuses.append(r.status); c.close()
for _ in range(rounds):
    threads = [threading.Thread(target=post) for _ in range(16)]
    [t.start() for t in threads]; [t.join() for t in threads]
print(json.dumps(statuses))
"""


def measure_server(rounds: int) -> dict:
    """``explore`` serving: 16 concurrent heaviest API requests, ``rounds`` times; the server's peak RSS."""
    env = dict(os.environ, PYTHONPATH=str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    start = time.perf_counter()
    server = subprocess.Popen([sys.executable, "-m", "linear_layouts.cli", "explore", "--port", "0"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        port = server.stdout.readline().split("127.0.0.1:")[1].split("/")[0]
        client = subprocess.run([sys.executable, "-c", _CLIENT, port, str(rounds)], capture_output=True, text=True,
                                timeout=900)
        statuses = json.loads(client.stdout) if client.returncode == 0 else [client.stderr[-300:]]
        peak = int(Path(f"/proc/{server.pid}/status").read_text().split("VmHWM:")[1].split()[0]) / 1024
    finally:
        server.terminate()
        server.wait(10)
    ok = statuses == [200] * (16 * rounds)
    return {"status": 0 if ok else 1, "seconds": time.perf_counter() - start, "peak_mb": peak,
            "stderr": "" if ok else str(statuses)[:300]}


def versions() -> dict:
    import numpy

    return {"python": platform.python_version(), "numpy": numpy.__version__, "machine": platform.machine(),
            "processor": platform.processor() or platform.machine(), "cpus": os.cpu_count(),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "results")
    parser.add_argument("--quick", action="store_true", help="skip the 2**20-element runs (a smoke test)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for what, argv, expected in commands(Path(scratch), args.quick):
            result = measure(argv)
            result.update(what=what, argv=argv, expected=expected)
            size = Path(scratch, "output")
            result["output_mb"] = size.stat().st_size / 2**20 if size.exists() else 0.0
            if size.exists():
                size.unlink()
            rows.append(result)
            print(f"{what:42s} exit {result['status']} (expected {expected})  {result['seconds'] or 0:6.1f} s  "
                  f"{result['peak_mb'] or 0:7.1f} MB peak  {result['output_mb']:6.1f} MB written", flush=True)
    rounds = 1 if args.quick else 4
    result = measure_server(rounds)
    result.update(what=f"explore (serving): {16 * rounds} heaviest API requests, 16 at once", argv=["explore"],
                  expected=0, output_mb=0.0)
    rows.append(result)
    print(f"{result['what']:42s} exit {result['status']} (expected 0)  {result['seconds']:6.1f} s  "
          f"{result['peak_mb']:7.1f} MB peak", flush=True)
    worst = max(rows, key=lambda r: r["peak_mb"] or 0)
    ok = all(r["status"] == r["expected"] for r in rows) and all((r["peak_mb"] or 0) < LIMIT_MB for r in rows)
    meta = versions()
    (args.out / "cli_memory.json").write_text(json.dumps({"meta": meta, "rows": rows, "ok": ok}, indent=1))
    lines = ["# Peak memory of every CLI command at its default limits", "",
             f"{meta['date']}; {meta['processor']}, {meta['cpus']} CPUs; Python {meta['python']}, NumPy "
             f"{meta['numpy']}. Each command in a fresh process (`benchmarks/cli_memory.py`); peak RSS from "
             "`getrusage` (Linux carries the parent's peak across exec, so ~35-65 MB is the floor); the explorer "
             "server's from `/proc/PID/status` VmHWM after the requests. Limits: `linear_layouts.core.limits` "
             "(pictures 2**16 elements, everything else 2**20, specs 64 KiB, IR files 16 MiB).", "",
             "| command | exit (expected) | seconds | peak RSS (MB) | written (MB) |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['what']} | {r['status']} ({r['expected']}) | {r['seconds'] or 0:.1f} | "
                     f"{r['peak_mb'] or 0:.0f} | {r['output_mb']:.1f} |")
    lines += ["", f"Worst: **{worst['what']}**, {worst['peak_mb']:.0f} MB peak (limit {LIMIT_MB} MB). "
              f"{'All commands under the limit, every refusal as expected.' if ok else 'NOT ALL OK: see the table.'}"]
    (args.out / "cli_memory.md").write_text("\n".join(lines) + "\n")
    print(lines[-1])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
