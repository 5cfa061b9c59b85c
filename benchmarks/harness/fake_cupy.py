"""A NumPy stand-in for CuPy, so that a script's run step (inputs, launches, comparison, timing, results)
runs on the CPU: every kernel launch is recorded as ``(name, grid, block, parameter count)`` and none
computes; events time 2 ms between any two; one device is present.

In a test's own process, ``fake_cupy(launches)`` goes in ``sys.modules["cupy"]``; for a script run as a
child process, ``write_shim(folder, record)`` writes a ``cupy`` module into ``folder`` (put it on the
child's ``PYTHONPATH``) that records the launches as JSON lines in the file ``record``.
"""

from __future__ import annotations

import json
import types
from pathlib import Path

import numpy as np


def fake_cupy(launches: list) -> types.ModuleType:
    """A module named ``cupy``: NumPy's names, ``RawModule`` whose functions append their launches to
    ``launches``, ``cuda.Event`` / ``get_elapsed_time`` (2.0 ms), one device, a no-op memory pool."""
    fake = types.ModuleType("cupy")
    fake.__dict__.update({k: getattr(np, k) for k in dir(np) if not k.startswith("_")})
    fake.random = types.SimpleNamespace(default_rng=np.random.default_rng)

    class Function:
        max_dynamic_shared_size_bytes = 0

        def __init__(self, name):
            self.name = name

        def __call__(self, grid, block, params, shared_mem=0):
            launches.append((self.name, grid, block, len(params)))

    class Event:
        def record(self):
            pass

        def synchronize(self):
            pass

    fake.RawModule = lambda path: types.SimpleNamespace(get_function=Function, path=path)
    fake.cuda = types.SimpleNamespace(Event=Event, get_elapsed_time=lambda a, b: 2.0,
                                      runtime=types.SimpleNamespace(getDeviceCount=lambda: 1,
                                                                    deviceSynchronize=lambda: None))
    fake.get_default_memory_pool = lambda: types.SimpleNamespace(free_all_blocks=lambda: None)
    fake.__version__ = "fake"
    return fake


class _Recorded(list):
    """A list of launches that appends each one to a file as a JSON line."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path

    def append(self, launch) -> None:
        super().append(launch)
        with self.path.open("a") as f:
            f.write(json.dumps(launch) + "\n")


def install(record: str | Path) -> types.ModuleType:
    """``fake_cupy`` recording into the file ``record`` (what the shim calls)."""
    return fake_cupy(_Recorded(Path(record)))


def write_shim(folder: str | Path, record: str | Path) -> Path:
    """``folder/cupy.py``: importing it gives ``install(record)``; returns the file."""
    path = Path(folder) / "cupy.py"
    path.write_text("import sys\n\nfrom harness.fake_cupy import install\n\n"
                    f"sys.modules[__name__] = install({str(record)!r})\n")
    return path


def recorded(record: str | Path) -> list[tuple]:
    """The launches a shim recorded in ``record``, as ``(name, grid, block, parameter count)`` tuples."""
    path = Path(record)
    if not path.exists():
        return []
    return [tuple(tuple(x) if isinstance(x, list) else x for x in json.loads(line))
            for line in path.read_text().splitlines()]
