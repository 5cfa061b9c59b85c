"""Issue 33, item 1: the compiled core's bugs, re-run on both backends and under AddressSanitizer.

A dim name's ``__eq__`` freed the tuple the C comparison was reading (use after free, rc 139); ``__init__``
ran again on a hashed layout; writing the hash slot made ``hash()`` raise ``SystemError``; unpickling skipped
validation; ``apply_array`` over a 40-bit in dim read 32 bits in C. The reproducers live in
``tests/core/fuzz_ccore.py`` (with the fuzz, which also compares pickles, re-initialization and wide
``apply_array`` between the backends); here they run under each backend, and once more with the core
rebuilt with ``-fsanitize=address,undefined`` (the use after free is reported there even when the freed
memory happens to still hold the old tuple).
"""

from __future__ import annotations

import importlib.util
import pickle
from pathlib import Path

import numpy as np
import pytest

from linear_layouts import LayoutError, LinearLayout, _ccore

_PATH = Path(__file__).resolve().parents[1] / "core" / "fuzz_ccore.py"
_SPEC = importlib.util.spec_from_file_location("fuzz_ccore_for_hardening", _PATH)
fuzz_ccore = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(fuzz_ccore)

BACKENDS = ["python"] + (["c"] if _ccore.available() else [])


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_reproducers(backend):
    with _ccore.using(backend):
        done = fuzz_ccore.reproducers()
    assert len(done) == 5


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_str_subclass_name_is_stored_as_a_plain_str(backend):
    """The decision: a ``str`` subclass is accepted as a dim name and copied to a plain ``str``, so neither
    core ever runs a name's ``__eq__`` / ``__hash__`` while comparing layouts."""
    calls = []

    class Loud(str):
        def __eq__(self, other):
            calls.append("eq")
            return str.__eq__(self, other)

        __hash__ = str.__hash__

    with _ccore.using(backend):
        a = LinearLayout({Loud("register"): [[1]]}, [Loud("dim0")])
        b = LinearLayout({"register": [[1]]}, ["dim0"])
        assert type(a.in_dim_names[0]) is str and type(a.out_dim_names[0]) is str
        calls.clear()
        assert a == b and hash(a) == hash(b) and a.rename_in_dim("register", Loud("lane")).in_dim_names == ("lane",)
        assert type(a.rename_in_dim("register", Loud("lane")).in_dim_names[0]) is str
        assert type(a.transpose_outs([Loud("dim0")]).out_dim_names[0]) is str
        assert calls == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_pickles_round_trip_and_forged_ones_are_refused(backend):
    with _ccore.using(backend):
        layout = LinearLayout({"register": [[1, 0]], "lane": [[0, 1], [0, 2]]}, ["dim0", "dim1"])
        assert pickle.loads(pickle.dumps(layout)) == layout
        with pytest.raises(LayoutError, match=r"2\*\*32 is above 2\*\*31"):
            pickle.loads(pickle.dumps(fuzz_ccore._Forged((("i",), (tuple(range(32)),), ("o",), (6,)))))
        with pytest.raises(LayoutError, match="must be valid Unicode text"):
            pickle.loads(pickle.dumps(fuzz_ccore._Forged((("\ud800",), ((1,),), ("o",), (1,)))))


@pytest.mark.parametrize("backend", BACKENDS)
def test_wide_in_dims_evaluate_as_in_python(backend):
    wide = LinearLayout._make(("i",), (tuple(1 << (k % 20) for k in range(40)),), ("o", "p"), (10, 10))
    x = np.array([0, 1, (1 << 32) + 5, (1 << 40) - 1, 1 << 39], dtype=np.int64)
    with _ccore.using(backend):
        got = {k: v.tolist() for k, v in wide.apply_array({"i": x}).items()}
    want = [wide.apply({"i": int(v)}) for v in x]
    assert got == {"o": [w["o"] for w in want], "p": [w["p"] for w in want]}


def test_under_address_sanitizer():
    """The reproducers and a short fuzz with the core rebuilt with AddressSanitizer and UBSan (a child
    process; PYTHONMALLOC=malloc, so a freed tuple is really freed)."""
    if not _ccore.available():
        pytest.skip("the C core is not built")
    if fuzz_ccore.asan_runtime() is None:
        pytest.skip("no C compiler with AddressSanitizer here")
    proc = fuzz_ccore.run_asan(iterations=15, seed=5, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.count("reproducer (c):") == 5 and "no crash" in proc.stdout, proc.stdout[-2000:]
    assert "ERROR: AddressSanitizer" not in proc.stderr and "runtime error" not in proc.stderr, proc.stderr[-3000:]
