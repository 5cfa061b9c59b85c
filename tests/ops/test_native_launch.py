"""The C launch extension ``linear_layouts.ops._claunch`` against the ``ctypes`` path it replaces: it packs every
parameter list and value exactly as ``struct`` does with ``ArgumentPacking``'s format (property test), refuses
what ``struct`` refuses, validates its packing, and is used only where it is built, of the expected interface
version, and not switched off. Its launches through the ops are tested in ``test_dispatch.py`` (both paths)."""

from __future__ import annotations

import ctypes
import math
import struct

import pytest
from hypothesis import given, settings, strategies as st

from linear_layouts.ops import driver
from linear_layouts.ops.driver import ArgumentPacking, Driver, native_module

from harness.fakes import FakeCuda, LAUNCH

native = native_module()
pytestmark = pytest.mark.skipif(native is None, reason="the C launch extension ops._claunch is not built")

_TYPES = {"const float* __restrict__": "Q", "unsigned": "I", "int": "i", "float": "f", "unsigned long long": "Q"}
_RANGES = {"Q": (0, 2**64 - 1), "I": (0, 2**32 - 1), "i": (-2**31, 2**31 - 1)}


def _launcher(packing: ArgumentPacking, entry: int = 1):
    return native.Launcher(entry, 0x1234, 3, 128, 0, packing.codes, packing.offsets, packing.size)


def _value(code: str):
    if code == "f":
        return st.floats(width=64, allow_nan=True, allow_infinity=True).filter(
            lambda v: not math.isfinite(v) or abs(v) <= 3.4028234663852886e38)
    low, high = _RANGES[code]
    return st.integers(low, high)


@st.composite
def _calls(draw):
    ctypes_ = draw(st.lists(st.sampled_from(sorted(_TYPES)), min_size=1, max_size=24))
    packing = ArgumentPacking.of(tuple((t, f"p{i}") for i, t in enumerate(ctypes_)))
    values = tuple(draw(_value(code)) for code in packing.codes)
    return packing, values


@settings(max_examples=300, deadline=None)
@given(_calls())
def test_packs_the_bytes_struct_packs(call):
    packing, values = call
    assert len(packing.codes) == len(values) and struct.calcsize(packing.format) == packing.size
    assert _launcher(packing).pack(values) == struct.pack(packing.format, *values)
    assert _launcher(packing).pack(list(values)) == struct.pack(packing.format, *values)


@pytest.mark.parametrize("ctype, value", [
    ("unsigned", -1), ("unsigned", 2**32), ("int", 2**31), ("int", -2**31 - 1), ("unsigned long long", 2**64),
    ("const char*", -5), ("float", 1e39), ("float", -1e300), ("unsigned", 1.5), ("float", "x"),
])
def test_refuses_what_struct_refuses(ctype, value):
    packing = ArgumentPacking.of(((ctype, "v"),))
    refused = "out of range|too large|not an integer|format requires|must be real number|not a float|cannot be interpreted"
    with pytest.raises((struct.error, TypeError, OverflowError), match=refused):
        struct.pack(packing.format, value)
    with pytest.raises((TypeError, OverflowError), match=refused):
        _launcher(packing).pack((value,))


def test_rounds_floats_and_keeps_their_specials_as_struct():
    packing = ArgumentPacking.of((("float", "s"),))
    for value in (0.1, -0.0, 3.4028235e38, 1e-46, math.inf, -math.inf, math.nan, 7):
        assert _launcher(packing).pack((value,)) == struct.pack("<f", value)


def test_counts_and_validates_its_packing():
    packing = ArgumentPacking.of((("unsigned", "a"), ("unsigned long long", "b")))
    with pytest.raises(ValueError, match="values: the kernel takes 2 arguments, got 1"):
        _launcher(packing).pack((1,))
    with pytest.raises(ValueError, match="entry"):
        _launcher(packing, entry=0)
    with pytest.raises(ValueError, match="codes: d is not one of"):
        native.Launcher(1, 2, 1, 32, 0, "d", (0,), 8)
    with pytest.raises(ValueError, match="offsets: parameter 0 at 4"):
        native.Launcher(1, 2, 1, 32, 0, "Q", (4,), 16)
    with pytest.raises(ValueError, match="offsets: parameter 0 at 8"):
        native.Launcher(1, 2, 1, 32, 0, "I", (8,), 8)
    with pytest.raises(ValueError, match="offsets: one per code"):
        native.Launcher(1, 2, 1, 32, 0, "II", (0,), 8)
    with pytest.raises(ValueError, match="codes: at most"):
        native.Launcher(1, 2, 1, 32, 0, "I", (0,), 5000)


def test_calls_the_entry_with_the_launch_and_its_arguments():
    """A C callback standing in for ``cuLaunchKernel`` sees the grid, block, shared bytes, stream, no extras,
    and each parameter's address holding its packed value."""
    seen = []
    packing = ArgumentPacking.of((("const float*", "src"), ("unsigned", "n"), ("float", "s")))

    def entry(function, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        seen.append((function, (gx, gy, gz), (bx, by, bz), shared, stream, extra,
                     [ctypes.string_at(params[i], w) for i, w in enumerate((8, 4, 4))]))
        return 0 if stream else 400

    callback = LAUNCH(entry)
    address = ctypes.cast(callback, ctypes.c_void_p).value
    launcher = native.Launcher(address, 0xABC, 7, 256, 1024, packing.codes, packing.offsets, packing.size)
    assert launcher(0x5000, (2**40 + 8, 99, 0.5)) == 0
    assert launcher(0, (1, 2, 3.0)) == 400
    assert seen[0] == (0xABC, (7, 1, 1), (256, 1, 1), 1024, 0x5000, None,
                       [struct.pack("<Q", 2**40 + 8), struct.pack("<I", 99), struct.pack("<f", 0.5)])
    assert seen[1][4] is None  # a null stream: the legacy default


def test_used_only_where_built_current_and_not_switched_off(monkeypatch):
    assert Driver(FakeCuda(native=True)).native_entry is not None
    assert Driver(FakeCuda(native=False)).native_entry is None  # a Python callable is not a C entry
    monkeypatch.setenv("LINEAR_LAYOUTS_PURE_PYTHON", "1")
    assert native_module() is None and Driver(FakeCuda(native=True)).native_entry is None
    monkeypatch.setenv("LINEAR_LAYOUTS_PURE_PYTHON", "0")
    assert native_module() is native
    monkeypatch.setattr(driver, "NATIVE_ABI_VERSION", driver.NATIVE_ABI_VERSION + 1)
    assert native_module() is None  # a stale build
