"""benchmarks/gpu_global_microbench.py on the CPU: the warp-request patterns touch the sectors they claim,
the configurations and the CUDA source agree, the SASS width check reads cuobjdump's text, and the run
mode (with a stand-in for CuPy) writes the results and the device table in their documented shape."""

from __future__ import annotations

import json
import sys
import types

import pytest

import gpu_global_microbench as gm


@pytest.mark.parametrize("pattern", gm.patterns(), ids=lambda p: f"{p.vector_bytes}B-{p.key}")
def test_every_request_touches_the_sectors_its_pattern_claims(pattern):
    iters = 8
    for warp in (0, 3):
        for i in range(iters):
            offsets = pattern.offsets(i, iters, warp)
            assert all(o % pattern.vector_bytes == 0 for o in offsets)  # aligned to the vector
            assert gm.sectors(offsets, pattern.vector_bytes) == pattern.sectors_per_request
    fraction = 32 * pattern.vector_bytes / (32 * pattern.sectors_per_request)
    assert pattern.coalesced_fraction == pytest.approx(fraction) and 0 < fraction <= 1


@pytest.mark.parametrize("pattern", gm.patterns(), ids=lambda p: f"{p.vector_bytes}B-{p.key}")
def test_dense_fills_every_sector_it_touches_and_sparse_never_shares_one(pattern):
    iters, v = 32, pattern.vector_bytes  # the least a run takes for a dense pattern of 1-byte segments
    touched: dict[int, int] = {}
    owners: dict[int, set] = {}
    for warp in range(3):
        for i in range(iters):
            for o in pattern.offsets(i, iters, warp):
                for b in range(o, o + v):
                    touched[b] = touched.get(b, 0) + 1
                    owners.setdefault(b // 32, set()).add((warp, i))
    assert set(touched.values()) == {1}  # no byte twice
    used = {}
    for b in touched:
        used[b // 32] = used.get(b // 32, 0) + 1
    if pattern.dense:  # the unused bytes of a request's sectors are the same warp's other requests'
        assert set(used.values()) == {32}
        assert all(len({w for w, _ in o}) == 1 for o in owners.values())
    else:  # one request per sector, its unused bytes nobody's
        assert all(len(o) == 1 for o in owners.values())
        assert set(used.values()) == {pattern.segment_bytes} and pattern.segment_bytes < 32


def test_named_patterns():
    contiguous, rows, gather = gm.Pattern(16, 32), gm.Pattern(4, 4), gm.Pattern(4, 1, dense=False)
    assert (contiguous.sectors_per_request, contiguous.coalesced_fraction) == (16, 1.0)
    assert (rows.sectors_per_request, rows.coalesced_fraction, rows.key) == (8, 0.5, "dense/4")
    assert (gather.sectors_per_request, gather.coalesced_fraction, gather.key) == (32, 0.125, "sparse/1")
    with pytest.raises(ValueError, match="vector_bytes"):
        gm.Pattern(3, 32)


def test_configurations_and_source_agree():
    items = gm.configs()
    names = [c.name for c in items]
    assert len(set(names)) == len(names)
    source = gm.cuda_source(items)
    kernels = {c.kernel for c in items}
    for k in kernels:
        assert source.count(f"void {k}(PARAMS)") == 1
    for c in items:
        n = c.iters(132 * gm.CTAS_PER_SM * gm.THREADS // 32)
        assert n % gm.UNROLL == 0 and (n == gm.SMALL_ITERS if c.size == "small" else 16 <= n <= 4096)
    ops = {(c.op, c.element, c.vector_bytes) for c in items}
    assert ("st", "b", 1) in ops and ("atom.acq_rel", "f32", 16) in ops and ("red.relaxed", "bf16", 2) in ops
    # the spellings Triton 3.6 / 3.9 emit (tl.atomic_add: acq_rel; sem="relaxed": atom in 3.6, red in 3.9)
    for ptx in ("ld.global.v4.b32", "st.global.b16", "ld.global.b8", "atom.global.gpu.acq_rel.add.v4.f32",
                "atom.global.gpu.acq_rel.add.noftz.v8.f16", "red.global.gpu.relaxed.add.noftz.v2.bf16",
                "atom.global.gpu.relaxed.add.f32"):
        assert ptx in source, ptx


SASS = """
	code for sm_90
		Function : gm_ld_16
        /*0400*/                   LDG.E.128 R4, desc[UR4][R2.64] ;
        /*0410*/                   LDG.E.128 R8, desc[UR4][R2.64+0x10] ;
        /*0420*/                   LDG.E.128 R8, desc[UR4][R2.64+0x20] ;
        /*0430*/              @!P0 LDG.E.128 R8, desc[UR4][R2.64+0x30] ;
        /*0440*/                   LDG.E.128 R8, desc[UR4][R2.64+0x40] ;
        /*0450*/              @P1  STG.E desc[UR4][R6.64], R0 ;
		Function : gm_st_4
        /*0400*/                   STG.E desc[UR4][R2.64], R0 ;
        /*0410*/                   STG.E.64 desc[UR4][R2.64], R0 ;
        /*0420*/                   STG.E desc[UR4][R2.64], R0 ;
        /*0430*/                   STG.E desc[UR4][R2.64], R0 ;
		Function : gm_atom_acq_rel_f32_16
        /*03f0*/                   MEMBAR.ALL.GPU ;
        /*0420*/                   ATOMG.E.ADD.F32x4.FTZ.RN.STRONG.GPU PT, R12, desc[UR4][R12.64], R16 ;
"""


def test_sass_inventory_and_width_check():
    inventory = gm.sass_inventory(SASS)
    assert inventory["gm_ld_16"] == {"LDG.E.128": 5, "STG.E": 1}
    assert inventory["gm_atom_acq_rel_f32_16"] == {"MEMBAR.ALL.GPU": 1, "ATOMG.E.ADD.F32x4.FTZ.RN.STRONG.GPU": 1}
    ld16 = gm.Config("ld", "b", gm.Pattern(16, 32), "dram", "full")
    st4 = gm.Config("st", "b", gm.Pattern(4, 32), "dram", "full")
    assert gm.check_widths(inventory, [ld16]) == []
    (bad,) = gm.check_widths(inventory, [st4])  # a 64-bit store among the 32-bit ones
    assert bad.startswith("gm_st_4:") and "STG.E.64" in bad


def test_derived_figures():
    cfg = gm.Config("st", "b", gm.Pattern(16, 32), "dram", "full")
    row = gm.derived(cfg, us=110.0, empty_us=10.0, iters=100, warps=1000, sms=100)
    # 100 us over 100000 warp-instructions on 100 SMs: 100 SM-ns each; 51.2 MB in 100 us
    assert row["ns"] == pytest.approx(100.0) and row["useful_GBps"] == pytest.approx(512.0)
    small = gm.derived(gm.Config("ld", "b", gm.Pattern(4, 32), "l2", "small"), 30.0, 4.4, 256, 132, 132)
    assert small["ns"] == pytest.approx(100.0)  # 25.6 us over 256 dependent loads


def test_device_names():
    assert gm.device_name("NVIDIA H200") == "H200"
    assert gm.device_name("NVIDIA H100 80GB HBM3") == "H100"
    assert gm.device_name("NVIDIA A100-SXM4-40GB") == "A100"


class _FakeCupy(types.ModuleType):
    """Enough of CuPy for ``measure``: a kernel's time grows with its ``iters`` argument."""

    def __init__(self):
        super().__init__("cupy")
        import numpy as np

        self.__version__ = "stand-in"

        self.np, self.uint8, self.uint32 = np, np.uint8, np.uint32
        self.clock = 0.0
        self.launches: list[tuple] = []
        fake = self

        class Event:
            def record(self):
                self.t = fake.clock

            def synchronize(self):
                pass

        class Function:
            def __init__(self, name):
                self.name = name

            def __call__(self, grid, block, args):
                fake.launches.append((self.name, grid, block, args))
                fake.clock += 2.0 + 0.01 * int(args[6])  # us: launch + per iteration

        class Module:
            def __init__(self, path):
                self.path = path

            def get_function(self, name):
                return Function(name)

        runtime = types.SimpleNamespace(
            getDeviceProperties=lambda i: {"name": b"NVIDIA H200", "multiProcessorCount": 132},
            deviceSynchronize=lambda: None)
        self.cuda = types.SimpleNamespace(Event=Event, runtime=runtime,
                                          get_elapsed_time=lambda a, b: (b.t - a.t) / 1e3)
        self.RawModule = Module

    def zeros(self, n, dtype):
        return self.np.zeros(min(n, 16), dtype=dtype)


def test_run_mode_writes_the_results_and_the_device_table(tmp_path, monkeypatch):
    build = tmp_path / "build"
    build.mkdir()
    items = gm.configs()
    (build / "plan.json").write_text(json.dumps({"configs": [gm._config_row(c) for c in items],
                                                 "sass": {}, "width_errors": []}))
    (build / "global_microbench.cubin").write_bytes(b"")
    fake = _FakeCupy()
    monkeypatch.setitem(sys.modules, "cupy", fake)
    assert gm.main(["--mode", "run", "--build", str(build), "--out", str(tmp_path / "out"), "--budget", "60"]) == 0
    data = json.loads((tmp_path / "out" / "gpu_global_microbench.json").read_text())
    assert data["meta"]["device"] == "NVIDIA H200" and len(data["rows"]) == len(items)
    assert all(r["ns"] > 0 and r["us"] > r["empty_us"] for r in data["rows"])
    table = json.loads((tmp_path / "out" / "global" / "H200.json").read_text())
    assert set(table["ns"]) == {"full", "small"} and set(table["ns"]["full"]) == {"dram", "l2", "contended"}
    assert table["ns"]["full"]["dram"]["atom.acq_rel"]["f32"]["8"]["dense/32"] > 0
    # 8 bytes a lane: 256 bytes a request, in 32-byte sectors once segments reach 32 bytes (4 lanes)
    assert table["sectors_per_request"]["8"] == {"dense/32": 8, "dense/8": 8, "dense/4": 8, "dense/2": 16,
                                                 "dense/1": 32, "sparse/2": 16, "sparse/1": 32}
    assert set(table["ns"]["full"]["l2"]["ld"]["b"]["16"]) == {"dense/32", "dense/8", "dense/4", "dense/2",
                                                               "dense/1", "sparse/1"}
    md = (tmp_path / "out" / "gpu_global_microbench.md").read_text()
    assert "## full, dram" in md and "| st | b | 16 |" in md
    # every configuration launched its own kernel with its pattern's arguments, and once with no iterations
    named = {(name, int(args[6])) for name, _, _, args in fake.launches}
    for c in items[:20]:
        assert (c.kernel, 0) in named and (c.kernel, c.iters(132 * gm.CTAS_PER_SM * gm.THREADS // 32)) in named


def test_run_mode_without_a_prepared_build_says_so(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", _FakeCupy())
    with pytest.raises(SystemExit, match="run --mode prepare on the CPU"):
        gm.main(["--mode", "run", "--build", str(tmp_path), "--out", str(tmp_path)])
