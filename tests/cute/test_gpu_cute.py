"""benchmarks/gpu_cute.py on the CPU: its kernels' predictions agree with codegen's model of the emitted
instructions and with the brute-force bank simulator; they compile; ncu's CSV is read; on a GPU
(marked gpu) the whole script runs and ncu equals the prediction."""

from __future__ import annotations

import importlib
import json
import os

import pytest

from harness import ncu
from linear_layouts.analysis.bank_simulator import simulate_wavefronts
from linear_layouts.codegen.ptx import compile_ptx, count_ptx, find_nvcc, split_ptx_entries
from linear_layouts.cute import parse_cute, to_linear


@pytest.fixture(scope="module")
def gpu_cute(tmp_path_factory):
    cache = os.environ.get("LINEAR_LAYOUTS_CACHE")
    os.environ["LINEAR_LAYOUTS_CACHE"] = str(tmp_path_factory.mktemp("kernels"))  # not the benchmark's cubins
    try:
        yield importlib.import_module("gpu_cute")
    finally:
        if cache is None:
            os.environ.pop("LINEAR_LAYOUTS_CACHE", None)
        else:
            os.environ["LINEAR_LAYOUTS_CACHE"] = cache


@pytest.fixture(scope="module")
def kernels(gpu_cute):
    return gpu_cute.build(limit=3)  # the CUTLASS atoms: 7 + 4 + 2 given CuTe layouts and the best ones


def test_predictions_equal_the_emitted_model_and_the_simulator(kernels):
    assert len(kernels) >= 7
    for k in kernels:
        shared = to_linear(parse_cute(k.cute))
        assert k.predicted == k.modelled, k.cute
        assert simulate_wavefronts(shared, k.src, k.bits, op="store", skip_duplicates=True) == k.predicted[0]
        assert simulate_wavefronts(shared, k.dst, k.bits) == k.predicted[1]


def test_every_parameter_of_the_cutlass_swizzle_is_pinned(kernels):
    """fp16 64x64, 128-byte rows stored by 8 lanes of 16 bytes, mma.sync A-operand loads: Sw<3,3,3> (CUTLASS's
    Swizzle<3,4,3> on bytes) is the best CuTe swizzle; one bit fewer doubles the load wavefronts, M = 2 splits
    the 16-byte vectors, M = 4 or S = 4 leave 2-way conflicts."""
    cost = {k.cute: k.predicted for k in kernels if k.name == "atoms_fp16_rows_to_dotA"}
    assert cost["Sw<3,3,3> o 0 o (64,64):(64,1)"] == (64, 64)
    assert cost["Sw<2,3,3> o 0 o (64,64):(64,1)"] == (64, 128)
    assert cost["Sw<1,3,3> o 0 o (64,64):(64,1)"] == (64, 256)
    assert cost["(64,64):(64,1)"] == (64, 512)
    assert cost["Sw<3,2,3> o 0 o (64,64):(64,1)"] == (128, 128)
    assert cost["Sw<3,4,3> o 0 o (64,64):(64,1)"] == (64, 128)
    assert cost["Sw<3,3,4> o 0 o (64,64):(64,1)"] == (64, 128)
    assert len(cost) == 7  # best_cute_swizzle's choice is one of them: Sw<3,3,3>
    four_lanes = {k.cute: k.predicted for k in kernels if k.name == "atoms_fp16_row_to_dotA"}
    assert four_lanes["Sw<3,3,3> o 0 o (64,64):(64,1)"] == (128, 64)  # 2 rows per phase: the store conflicts


@pytest.mark.skipif(find_nvcc() is None, reason="nvcc is not installed")
def test_kernels_compile_and_issue_the_counted_instructions(kernels):
    entries = split_ptx_entries(compile_ptx("".join(k.kernel.source for k in kernels)))
    for k in kernels:
        counts = count_ptx(entries[k.kernel.name])
        for opcode, n in k.instructions.items():
            assert counts[opcode] >= n, (k.cute, opcode)


def test_ncu_csv_is_read(gpu_cute, kernels):
    name = kernels[0].kernel.name
    out = ("==PROF== Connected\n"
           '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Section Name","Metric Name","Metric Unit","Metric Value"\n'
           f'"0","1","python","h","{name}(const unsigned short *, unsigned short *, int)","1","7","Command line profiler metrics","{gpu_cute.METRIC_LD}","","64"\n'
           f'"0","1","python","h","{name}(const unsigned short *, unsigned short *, int)","1","7","Command line profiler metrics","{gpu_cute.METRIC_ST}","","1,28"\n')
    assert ncu.by_kernel(out) == {name: {gpu_cute.METRIC_LD: 64.0, gpu_cute.METRIC_ST: 128.0}}
    again = "".join(line.replace('"0","1"', '"1","1"').replace('"64"', '"67"') + "\n"  # a second launch, ld +3
                    for line in out.splitlines() if line.startswith('"0"'))
    assert gpu_cute.parse_ncu_launches(out + again) == {name: [{gpu_cute.METRIC_LD: 64.0, gpu_cute.METRIC_ST: 128.0},
                                                               {gpu_cute.METRIC_LD: 67.0, gpu_cute.METRIC_ST: 128.0}]}


def test_report_and_cache_round_trip(gpu_cute, kernels, tmp_path):
    path = tmp_path / "variants.json"
    gpu_cute.save(kernels, path)
    again = gpu_cute.load(path)
    assert [(k.name, k.cute, k.predicted, k.kernel) for k in again] == [(k.name, k.cute, k.predicted, k.kernel) for k in kernels]
    rows = [dict(case=k.name, cute=k.cute, bits=k.bits, measured=list(k.predicted), predicted=list(k.predicted),
                 modelled=list(k.modelled), instructions=k.instructions, equal=True) for k in kernels]
    text = gpu_cute.report(dict(environment={}, kernels=rows, verify=[dict(case=k.name, cute=k.cute, wrong=0) for k in kernels],
                                ncu=dict(rows=rows), seconds=1.0))
    assert f"**{len(kernels)} / {len(kernels)}**" in text and "Sw<3,3,3> o 0 o (64,64):(64,1)" in text


@pytest.mark.gpu
def test_on_the_gpu_ncu_equals_the_prediction(gpu_cute, tmp_path, cuda_gpu):
    if not gpu_cute.CACHE.exists():  # not prepared on the CPU and carried: prepare here (nvcc)
        assert gpu_cute.main(["--mode", "prepare"]) == 0
    assert gpu_cute.main(["--mode", "measure", "--out", str(tmp_path)]) == 0
    results = json.loads((tmp_path / "gpu_cute.json").read_text())
    assert all(r["wrong"] == 0 for r in results["verify"])
    assert sum(r["equal"] for r in results["ncu"]["rows"]) >= 10
