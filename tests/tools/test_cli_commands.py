"""The linear-layouts command: every subcommand, the seed numbers, and clear errors."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
import xml.etree.ElementTree as ET

import pytest

from linear_layouts import LinearLayout
from linear_layouts.analysis.banks import wavefronts
from linear_layouts.cli import main
from linear_layouts.present.viz.scenarios import seed_transpose
from linear_layouts.present.viz.text import distributed_view, matrix_text, shared_view

SEED = seed_transpose()
BLOCKED = "BlockedLayout([1,4],[4,8],[4,1],[1,0])"


def _spec(layout: LinearLayout) -> str:
    return json.dumps({"bases": layout.bases, "out_dims": layout.out_dims})


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_show_text_is_triton_view(capsys):
    from linear_layouts import layouts as catalog
    layout = catalog.BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0]).to_linear([32, 64])
    code, out, _ = _run(capsys, "show", BLOCKED, "--shape", "32,64")
    assert code == 0 and out == distributed_view(layout)
    code, out, _ = _run(capsys, "show", BLOCKED, "--shape", "32x64", "--hw")
    assert code == 0 and out == distributed_view(layout, True)


def test_show_shared_and_json_round_trip(capsys, tmp_path):
    shared = SEED.shared[2][1]
    code, out, _ = _run(capsys, "show", _spec(shared))
    assert code == 0 and out == shared_view(shared)
    code, out, _ = _run(capsys, "show", _spec(shared), "--format", "json")
    assert LinearLayout(**{"bases": json.loads(out)["bases"], "out_dims": json.loads(out)["out_dims"]}) == shared
    spec_file = tmp_path / "layout.json"
    spec_file.write_text(out)
    code, out2, _ = _run(capsys, "show", f"@{spec_file}")
    assert code == 0 and out2 == shared_view(shared)


def test_show_svg_png_html(capsys, tmp_path):
    code, out, _ = _run(capsys, "show", _spec(SEED.load), "--format", "svg")
    root = ET.fromstring(out)
    assert code == 0 and sum(1 for g in root.iter("{http://www.w3.org/2000/svg}g") if g.get("class") == "cell") == 512
    code, out, _ = _run(capsys, "show", _spec(SEED.shared[1][1]), "--format", "svg", "--view", "physical")
    assert code == 0 and "one 128-byte row of the 32 banks per line" in out and "segment \\ slot" in out
    html_file = tmp_path / "l.html"
    code, _, _ = _run(capsys, "show", _spec(SEED.store), "--format", "html", "-o", str(html_file))
    assert code == 0 and "<svg" in html_file.read_text()
    png = tmp_path / "l.png"
    code, _, _ = _run(capsys, "show", _spec(SEED.store), "--format", "png", "-o", str(png))
    assert code == 0 and png.read_bytes()[:4] == b"\x89PNG"
    code, _, _ = _run(capsys, "show", _spec(SEED.shared[1][1]), "--format", "png", "--view", "physical", "-o", str(png))
    assert code == 0 and png.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("label, first", [("auto", ["T0", "r0"]), ("thread", ["T0"]), ("lane", ["L0"]),
                                          ("register", ["r0"]), ("warp", ["W0"])])
def test_show_label_picks_what_the_cells_say(capsys, label, first):
    code, out, _ = _run(capsys, "show", BLOCKED, "--shape", "32,32", "--format", "svg", "--label", label)
    cells = [g for g in ET.fromstring(out).iter("{http://www.w3.org/2000/svg}g") if g.get("class") == "cell"]
    assert code == 0 and [t.text for t in cells[0].iter("{http://www.w3.org/2000/svg}text")] == first


def test_matrix(capsys):
    code, out, _ = _run(capsys, "matrix", _spec(SEED.load))
    assert code == 0 and out.rstrip("\n") == matrix_text(SEED.load)
    rows = out.strip().splitlines()
    assert rows[0].split() == ["r0", "r1", "r2", "r3", "t0", "t1", "t2", "t3", "t4"]
    assert rows[5].split() == ["dim1[0]", "0", "0", "0", "0", "0", "0", "0", "0", "1"]  # t4 -> column parity


@pytest.mark.parametrize("index, load, per_step", [(0, 256, 16), (1, 32, 2), (2, 16, 1)])
def test_banks_reproduces_seed_004(capsys, index, load, per_step):
    shared = _spec(SEED.shared[index][1])
    code, out, _ = _run(capsys, "banks", shared, _spec(SEED.load), "--dtype", "fp32")
    assert code == 0
    assert out.startswith(f"load: {load} wavefronts (16 instructions × 1 phase × {per_step} per phase); "
                          f"brute-force simulation: {load}")
    code, out, _ = _run(capsys, "banks", shared, _spec(SEED.store), "--dtype", "32", "--op", "store")
    assert out.startswith("store: 16 wavefronts")
    code, out, _ = _run(capsys, "banks", shared, _spec(SEED.load), "--dtype", "fp32", "--format", "svg")
    steps = [g for g in ET.fromstring(out).iter("{http://www.w3.org/2000/svg}g") if g.get("class") == "step"]
    assert [int(g.get("data-wavefronts")) for g in steps] == [per_step] * 16


def test_swizzle_seed(capsys):
    code, out, _ = _run(capsys, "swizzle", _spec(SEED.store), _spec(SEED.load), "--dtype", "fp32")
    assert code == 0
    assert "G = {e_i ⊕ f_i}" in out and "n1⊕m0, n2⊕m1, n3⊕m2, n4⊕m3" in out
    table = {line.split("  ")[0].strip(): line.split()[-6:-3] for line in out.splitlines()
             if line.startswith(("unswizzled", "§5.4"))}
    assert table["unswizzled (row-major)"] == ["16", "256", "272"]
    assert table["§5.4 construction"] == ["16", "16", "32"]
    assert "offset bases: [[0,1], [0,2], [0,4], [0,8], [0,16], [1,2], [2,4], [4,8], [8,16]]" in " ".join(out.split()).lower()
    # one recommended answer, its bases last (whole JSON, lines broken between its tokens)
    recommended = json.loads(out.split("for `linear-layouts show`:")[1])
    best = LinearLayout(recommended["bases"], recommended["out_dims"])
    assert wavefronts(best, SEED.store, 32, op="store") + wavefronts(best, SEED.load, 32) == 32


def test_convert_plan_and_kernel(capsys):
    code, out, _ = _run(capsys, "convert", _spec(SEED.store), _spec(SEED.load), "--dtype", "fp32", "--emit", "cuda")
    assert code == 0 and "optimal swizzle" in out and "16 wavefronts" in out and "__global__" in out
    assert "st.shared.b32" in out and "__shfl_sync" not in out
    code, out, _ = _run(capsys, "convert", "BlockedLayout([1,1],[4,8],[1,1],[1,0])",
                        "BlockedLayout([1,2],[4,8],[1,1],[0,1])", "--shape", "16,16", "--dtype", "fp32",
                        "--emit", "cuda")
    assert code == 0 and "warp shuffles" in out and "__global__" in out and "__shfl_sync" in out
    code, out, _ = _run(capsys, "convert", "BlockedLayout([1,8],[4,8],[4,1],[1,0])",
                        "BlockedLayout([8,1],[8,4],[1,4],[0,1])", "--shape", "64,64", "--dtype", "fp16")
    assert code == 0 and "shared memory" in out and "__syncthreads()" in out


def test_convert_run_without_gpu_says_so(capsys):
    try:
        import cupy  # noqa: F401
        pytest.skip("a GPU runtime is present")
    except ImportError:
        pass
    code, out, err = _run(capsys, "convert", _spec(SEED.store), _spec(SEED.load), "--dtype", "fp32", "--run")
    assert code == 2 and err.startswith("linear-layouts: error: --run: needs an NVIDIA GPU with CuPy; ")
    assert err.count("\n") == 1 and "Traceback" not in err and "shared memory" in out  # the plan, then the line


def test_demo_runs_the_seed_end_to_end(capsys):
    code, out, _ = _run(capsys, "demo")
    assert code == 0
    assert "A(r1, t9, w0) = (i, j) = (2, 3)" in out
    for row in ("unswizzled: 32m + n        16   256   16 + 256", "XOR m: 32m + (n ⊕ m)       16    32    16 + 32",
                "XOR 2m: 32m + (n ⊕ 2m)     16    16    16 + 16"):
        assert row in out
    assert "It is offset = 32·m + (n ⊕ 2m): True" in out and "__global__" in out and "st.shared.b32 × 16" in out


def test_python_dash_m_runs_the_command():
    """``python -m linear_layouts`` is the ``linear-layouts`` command: the same output, exit 2 with one
    line on bad input."""
    run = lambda *a: subprocess.run([sys.executable, "-m", "linear_layouts", *a], capture_output=True, text=True,
                                    timeout=120)
    ok = run("matrix", "BlockedLayout([1,4],[4,8],[4,1],[1,0])", "--shape", "16,32")
    assert ok.returncode == 0 and ok.stdout.count("\n") >= 9, ok.stderr
    bad = run("show", "BlockedLayout([1,4],[4,8],[4,1],[1,0])")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
    assert bad.stderr.startswith("linear-layouts: error: LAYOUT: shape:")


def test_explore_writes_and_serves_on_localhost_only(capsys, tmp_path):
    page = tmp_path / "explorer.html"
    code, _, _ = _run(capsys, "explore", "-o", str(page))
    assert code == 0 and 'id="explorer-data"' in page.read_text()
    proc = subprocess.Popen([sys.executable, "-m", "linear_layouts.cli", "explore", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = proc.stdout.readline()
        assert "http://127.0.0.1:" in line
        url = line.split()[4]
        for _ in range(50):
            try:
                body = urllib.request.urlopen(url, timeout=5).read().decode()
                break
            except OSError:
                time.sleep(0.1)
        assert 'id="explorer-data"' in body
        with pytest.raises(urllib.error.HTTPError, match=r"HTTP Error 404: Not Found"):
            urllib.request.urlopen(url + "etc/passwd", timeout=5)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.parametrize("argv, message", [
    (["show", "BlockedLayout([1,4],[4,8],[4,1],[1,0])"], "needs a tensor shape"),
    (["show", "BlockedLayout([1,4],[4,8],[4,1]"], "syntax error at column"),
    (["show", "__import__('os')"], "not a layout name|unknown layout"),
    (["show", BLOCKED, "--shape", "12,64"], "power of two"),
    (["show", "@/nonexistent/spec.json"], "spec file"),
    (["banks", '{"bases": {"offset": [[1]]}, "out_dims": {"dim0": 2}}', '{"bases": {"lane": [[1]]}, "out_dims": {"dim0": 2}}'],
     "--dtype"),
    (["convert", BLOCKED, "BlockedLayout([1,1],[4,8],[4,1],[1,0])", "--shape", "32,64", "--dtype", "fp99"], "dtype"),
])
def test_errors_are_clear(capsys, argv, message):
    code, _, err = _run(capsys, *argv)
    assert code == 2 and err.startswith("linear-layouts: error:")
    import re

    assert re.search(message, err), err


def test_swizzle_api_validates_requests():
    from linear_layouts.present.viz.explorer import swizzle_api

    seed = SEED
    good = {"store": json.loads(_spec(seed.store)), "load": json.loads(_spec(seed.load)), "bitwidth": 32}
    answer = swizzle_api(good)
    assert LinearLayout(answer["optimal"]["bases"], answer["optimal"]["out_dims"]) == seed.shared[2][1]
    assert [s["name"] for s in answer["algorithm"]["steps"]] == ["V", "I", "E", "F", "G", "C", "result"]
    assert "bitwidth" in swizzle_api({**good, "bitwidth": 12})["error"]
    assert "needs" in swizzle_api({"store": good["store"]})["error"]
    assert "bases" in swizzle_api({**good, "load": {"bases": {"lane": [[3]]}}})["error"]
    big = {"bases": {"register": [[1 << i] for i in range(17)]}, "out_dims": {"dim0": 1 << 17}}
    assert "not served" in swizzle_api({**good, "store": big, "load": big})["error"]


def test_explore_adds_scenarios_and_layouts(capsys, tmp_path):
    import re

    page = tmp_path / "e.html"
    code, _, _ = _run(capsys, "explore", "-o", str(page), "--store", "BlockedLayout([1,4],[4,8],[1,1],[1,0])",
                      "--load", "BlockedLayout([4,1],[8,4],[1,1],[0,1])", "--shape", "16,32", "--dtype", "fp16",
                      "--layout", "BlockedLayout([2,2],[4,8],[1,1],[1,0])")
    assert code == 0
    island = re.search(r'id="explorer-data">(.*?)</script>', page.read_text(), re.S).group(1)
    data = json.loads(island.replace("<\\/", "</"))
    first = data["scenarios"][0]
    assert first["bitwidth"] == 16 and first["shape"] == [16, 32]
    assert [s["name"] for s in first["algorithm"]["steps"]][-1] == "result"
    assert any(c["name"] == "BlockedLayout([2,2],[4,8],[1,1],[1,0])" for c in data["catalog"])
    code, _, err = _run(capsys, "explore", "-o", str(page), "--store", "BlockedLayout([1,4],[4,8],[1,1],[1,0])")
    assert code == 2 and "--store and --load go together" in err


@pytest.mark.gpu
def test_convert_run_verifies_on_the_gpu(capsys):
    pytest.importorskip("cupy")
    code, out, err = _run(capsys, "convert", "BlockedLayout([1,8],[4,8],[4,1],[1,0])",
                          "BlockedLayout([8,1],[8,4],[1,4],[0,1])", "--shape", "64,64", "--dtype", "fp16", "--run")
    if code == 2 and "--run: needs an NVIDIA GPU" in err:  # CuPy without a GPU it can use
        pytest.skip(err.strip())
    assert code == 0 and "0 wrong: ok" in out
