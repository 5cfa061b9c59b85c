"""Where a figure was measured: date, device, tool and library versions, written next to every result.

``environment()`` asks ``nvidia-smi`` for the GPU's fields, each tool for its version, each module for
its ``__version__``; what is missing is recorded as ``unavailable`` / ``absent``, never fatal (the CPU
steps write the same record).
"""

from __future__ import annotations

import platform
import subprocess
import time
from pathlib import Path

#: the library versions a device record carries (absent ones recorded as ``absent``)
DEVICE_MODULES = ("cupy", "numpy", "triton", "torch")


def cpu_model() -> str:
    """The CPU's model name (Linux ``/proc/cpuinfo``), else the platform's word for it."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.system()


def tool_line(cmd: list[str], timeout: float = 30) -> str:
    """The last line a command prints (``nvcc --version``: ``Build cuda_13.0...``), or ``unavailable``."""
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout).stdout.strip().splitlines()[-1]
    except (OSError, subprocess.TimeoutExpired, IndexError):
        return "unavailable"


def module_version(name: str) -> str:
    """``name.__version__``, or ``absent`` where the module does not import."""
    try:
        return __import__(name).__version__
    except Exception:  # noqa: BLE001 - a missing or broken module is recorded, not fatal
        return "absent"


def environment(gpu_fields: tuple[str, ...] = ("name", "driver_version"), tools: tuple[str, ...] = ("nvcc", "ncu"),
                modules: tuple[str, ...] = DEVICE_MODULES, *, date: bool = True, device: bool = False,
                compiled_by: str | None = None, timeout: float = 30) -> dict:
    """Keys in order: ``date`` (UTC, when ``date``), ``python``, ``gpu`` (``nvidia-smi``'s ``gpu_fields``,
    comma-separated), each of ``tools``' version line, ``device`` (the GPU's short name, ``H200``, when
    ``device``), each of ``modules``' version, ``cubins_compiled_by`` (the Triton that built the cubins,
    when given)."""
    env = dict(date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())) if date else {}
    env["python"] = platform.python_version()
    env["gpu"] = tool_line(["nvidia-smi", f"--query-gpu={','.join(gpu_fields)}", "--format=csv,noheader"], timeout)
    for tool in tools:
        env[tool] = tool_line([tool, "--version"], timeout)
    if device:
        try:  # the device's short name (H100, H200): the cost table a fit on this run writes
            from linear_layouts.target import device_name

            env["device"] = device_name(env["gpu"].split(",")[0])
        except Exception:  # noqa: BLE001 - no GPU named
            env["device"] = ""
    for name in modules:
        env[name] = module_version(name)
    if compiled_by:
        env["cubins_compiled_by"] = compiled_by
    return env
