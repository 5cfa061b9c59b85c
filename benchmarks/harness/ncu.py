"""Nsight Compute: the metric names the benchmarks read, one ncu process under a deadline, and the readers
of its ``--csv`` output (the raw page: one row per launch and metric; the source page: one row per SASS
instruction).

A raw-page row: ``"ID","Kernel Name","Metric Name","Metric Value",...``; ncu prints its own notes
(``==PROF==`` lines) among them, so only the lines that start with a quote are read.
"""

from __future__ import annotations

import csv
import io
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

#: shared-memory wavefronts of the loads / stores of one launch (all SMs, one pass)
METRIC_LD = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
METRIC_ST = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"
#: same unit as ``METRIC_LD`` / ``METRIC_ST``: all shared wavefronts, atomics, cp.async's shared side
METRIC_SHARED = "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"
METRIC_ATOM = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum"
METRIC_LDGSTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum"
#: ncu's per-instruction count of shared-memory wavefronts (``--section SourceCounters``, source page)
SOURCE_WAVEFRONTS = "L1 Wavefronts Shared"


def csv_rows(text: str) -> list[dict[str, str]]:
    """The rows of ``ncu --csv`` output as dicts by column name (the lines that are not CSV dropped).

    >>> csv_rows('==PROF== note\\n"ID","Kernel Name","Metric Name","Metric Value"\\n"0","k(int)","m","1,024"\\n')
    [{'ID': '0', 'Kernel Name': 'k(int)', 'Metric Name': 'm', 'Metric Value': '1,024'}]
    """
    lines = [line for line in text.splitlines() if line.startswith('"')]
    return list(csv.DictReader(io.StringIO("\n".join(lines))))


def kernel_name(row: dict[str, str]) -> str:
    """A row's kernel without its signature: ``k(int, float*)`` -> ``k``."""
    return row.get("Kernel Name", "").split("(")[0].strip()


def metric_values(text: str) -> Iterator[tuple[str, str, str, float]]:
    """``(launch ID, kernel, metric, value)`` of each row of ``ncu --csv`` output whose value is a number
    (thousands separators dropped)."""
    for row in csv_rows(text):
        try:
            value = float(row.get("Metric Value", "").replace(",", ""))
        except ValueError:
            continue
        yield row.get("ID", ""), kernel_name(row), row.get("Metric Name", ""), value


def launches(text: str) -> list[tuple[str, dict[str, float]]]:
    """``(kernel, {metric: value})`` of each profiled launch, in ncu's launch order (its ``ID``).

    >>> launches('"ID","Kernel Name","Metric Name","Metric Value"\\n"1","b","m","2"\\n"0","a","m","1"\\n')
    [('a', {'m': 1.0}), ('b', {'m': 2.0})]
    """
    by_id: dict[str, tuple[str, dict[str, float]]] = {}
    for launch, kernel, metric, value in metric_values(text):
        by_id.setdefault(launch, (kernel, {}))[1][metric] = value
    return [by_id[k] for k in sorted(by_id, key=lambda s: int(s) if s.isdigit() else -1)]


def by_kernel(text: str) -> dict[str, dict[str, float]]:
    """``{kernel: {metric: value}}`` from ``ncu --csv`` output (a kernel profiled twice: its last launch)."""
    measured: dict[str, dict[str, float]] = {}
    for _, kernel, metric, value in metric_values(text):
        measured.setdefault(kernel, {})[metric] = value
    return measured


def launches_by_kernel(text: str) -> dict[str, list[dict[str, float]]]:
    """``{kernel: [{metric: value} of each of its profiled launches, in launch order]}``."""
    out: dict[str, list[dict[str, float]]] = {}
    for kernel, metrics in launches(text):
        out.setdefault(kernel, []).append(metrics)
    return out


def run_ncu(child: list[str], regex: str, metrics: list[str], launch_count: int, timeout: float) -> dict:
    """One ncu process over ``child`` (a command that launches the kernels once each): the profiled
    launches in order, each ``{"kernel": name, "metrics": {name: value}}``; ``rc``, ``seconds``, and the
    output's tail when something went wrong. A timeout keeps what ncu wrote so far."""
    log = Path("/tmp") / f"ncu_{os.getpid()}_{int(time.time())}.csv"
    cmd = ["ncu", "--csv", "--print-units", "base", "--log-file", str(log), "--metrics", ",".join(metrics),
           "-k", regex, "--launch-count", str(launch_count)] + child
    start = time.time()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=max(5.0, timeout))
        rc, tail = proc.returncode, (proc.stdout + proc.stderr)[-2000:]
    except subprocess.TimeoutExpired as exc:
        rc, tail = 124, f"ncu stopped at the budget ({timeout:.0f} s): {str(exc)[-300:]}"
    except OSError as exc:
        rc, tail = 127, f"ncu could not start: {exc}"
    text = log.read_text() if log.exists() else ""
    ordered = [{"kernel": kernel, "metrics": metrics} for kernel, metrics in launches(text)]
    ok = rc == 0 and len(ordered) == launch_count
    return dict(rc=rc, seconds=round(time.time() - start, 1), launches=ordered, tail="" if ok else tail)


def source_wavefronts(text: str) -> dict[str, list[int]]:
    """Per kernel of ``ncu -i REPORT --page source --csv --print-source sass`` output: ``[store, load]``
    shared-memory wavefronts summed over its SASS instructions (``SOURCE_WAVEFRONTS``; stores: STS/STSM,
    loads: LDS/LDSM, after any predicate). The first section of a kernel profiled twice counts.

    >>> source_wavefronts('Kernel Name,k,\\nAddress,Source,L1 Wavefronts Shared\\n0x0,"  STS.128 [R2], R4",8\\n'
    ...                   '0x10,"  @!P0 LDS.64 R6, [R3]",2\\n0x20,"  LDSM.16.M88.4 R8, [R5]",4\\n0x30,"  IADD3 R1, R2, R3",0\\n')
    {'k': [8, 6]}
    """
    out: dict[str, list[int]] = {}
    name, cols, current = None, None, None
    for row in csv.reader(io.StringIO(text)):
        if not row:
            continue
        if row[0] == "Kernel Name":
            name, cols = row[1].split("(")[0].strip(), None
            current = out.setdefault(name, [0, 0]) if name not in out else None  # a repeat: not counted again
            continue
        if "Source" in row and SOURCE_WAVEFRONTS in row:
            cols = (row.index("Source"), row.index(SOURCE_WAVEFRONTS))
            continue
        if current is None or cols is None or len(row) <= max(cols):
            continue
        tokens = [t for t in row[cols[0]].split() if not t.startswith("@")]
        op = tokens[0] if tokens else ""
        try:
            value = int(float(row[cols[1]].replace(",", "") or 0))
        except ValueError:
            continue
        if op.startswith(("STS", "STSM")):
            current[0] += value
        elif op.startswith(("LDS", "LDSM")):
            current[1] += value
    return out


def metric_table(profiles: dict, metrics: list[str]) -> list[str]:
    """Markdown rows ``| metric | value per profile |`` (a header and one row per metric) of ``profiles``
    (label -> ``{"launches": [{"metrics": {...}}, ...]}``, the last launch read); small values to 3 digits.

    >>> metric_table({"a": {"launches": [{"metrics": {"t": 12345.0, "r": 0.5}}]}, "b": {}}, ["t", "r"])[2:]
    ['| t | 12,345 | - |', '| r | 0.5 | - |']
    """
    lines = ["| metric | " + " | ".join(profiles) + " |", "|---|" + "---|" * len(profiles)]
    for metric in metrics:
        cells = []
        for profile in profiles.values():
            value = ((profile.get("launches") or [{}])[-1]).get("metrics", {}).get(metric)
            cells.append("-" if value is None else f"{value:,.3g}" if abs(value) < 1e4 else f"{value:,.0f}")
        lines.append(f"| {metric} | " + " | ".join(cells) + " |")
    return lines
