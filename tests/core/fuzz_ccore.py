"""Fuzzer of the compiled core (``linear_layouts.core._ccore._ext``): junk, huge bit counts, reference counts.

Every entry point is called with random junk (wrong types, negative and huge ints, 2**64 and beyond,
nested junk, subclasses of int/str/tuple, NumPy scalars, bytes, None), with layouts of up to 64 dims and
bases of 2**63 and 2**200, and with valid layouts. The contract checked: a call never crashes, never
raises anything but MemoryError (none expected) or TypeError for a wrong argument count, declines what it
does not handle (None / False / NotImplemented), and whatever it returns for a valid layout equals the
pure-Python answer. Reference counts of the container and layout arguments are unchanged after each call (``sys.getrefcount``;
shared singletons such as ``True`` or small ints move with unrelated code and are not checked).

The equivalence pass also pickles and unpickles every layout, tries to re-run ``__init__`` on it and to
write its hash cache, and evaluates layouts with in dims wider than 32 bits: both backends must give the
same answer or refuse with the same exception. :func:`reproducers` re-runs the compiled core's bugs of
issue 33 (a use after free through a dim name's ``__eq__``, re-initialization, the hash slot, unpickling
without validation, wide ``apply_array``).

Run it under a debug build for a report (what the issue asks):

    python3 -X dev tests/core/fuzz_ccore.py --iterations 200000
    python3 tests/core/fuzz_ccore.py --asan --iterations 2000   # the core rebuilt with AddressSanitizer

``--asan`` compiles ``_ext.c`` with ``-fsanitize=address,undefined`` into a temporary folder and re-runs this
script in a child process that loads that build (``LD_PRELOAD`` of the compiler's libasan,
``PYTHONMALLOC=malloc`` so that freed Python objects reach the sanitizer). The test suite runs a short seeded
pass (``test_backends.py::test_fuzz_short``) and the ASan pass (``tests/hardening/test_ccore_reproducers.py``).
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import os
import pickle
import random
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

import numpy as np


def load_ext(path: str) -> None:
    """Load the build at ``path`` as ``linear_layouts.core._ccore._ext`` (before ``linear_layouts`` is imported)."""
    spec = importlib.util.spec_from_file_location("linear_layouts.core._ccore._ext", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules["linear_layouts.core._ccore._ext"] = module


if __name__ == "__main__" and "--ext" in sys.argv:  # the child of --asan: the sanitized build, not the regular one
    load_ext(sys.argv[sys.argv.index("--ext") + 1])

from linear_layouts import LayoutError, LinearLayout  # noqa: E402
from linear_layouts.core import _ccore  # noqa: E402


class IntSub(int):
    pass


class StrSub(str):
    pass


class TupleSub(tuple):
    pass


#: Names planted among the junk (dim names of junk and valid layouts): no message of the core may carry one.
SECRETS = ("ghp_SECRETtokenAAAABBBBCCCCDDDDEEEE1234", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJTRUNSRVQifQ.SECRETsig",
           "SECRET_dim_name_0123456789")


def junk_scalar(rng: random.Random) -> Any:
    return rng.choice([*SECRETS, StrSub(SECRETS[2]),
        None, True, False, 0, 1, -1, 2, 3, 31, 32, 63, 64, 65, 1 << 31, (1 << 31) - 1, 1 << 62, 1 << 63, (1 << 64) - 1,
        1 << 64, 1 << 200, -(1 << 70), 2.0, float("nan"), "a", "", "dim0", "register", StrSub("dim0"), b"x",
        IntSub(4), np.int64(4), np.uint64(1 << 63), np.bool_(True), object(), [], (), {}, [1], (1,), [[1]], {"a": 1},
        "\udc80", "é",
    ])


def junk(rng: random.Random, depth: int = 0) -> Any:
    r = rng.random()
    if depth > 3 or r < 0.4:
        return junk_scalar(rng)
    n = rng.choice([0, 1, 2, 3, 5, 31, 32, 64, 65, 70]) if rng.random() < 0.2 else rng.randint(0, 4)
    items = [junk(rng, depth + 1) for _ in range(n)]
    if r < 0.6:
        return items
    if r < 0.75:
        return tuple(items)
    if r < 0.8:
        return TupleSub(items)
    keys = [rng.choice(["register", "lane", "dim0", "dim1", "", StrSub("lane"), 3, None, *SECRETS]) for _ in items]
    return dict(zip(keys, items))


def random_layout(rng: random.Random, wide: bool = False) -> LinearLayout:
    """A valid layout, sometimes with many dims, huge sizes, or more than 64 bits (the Python path)."""
    n_out = rng.choice([0, 1, 2, 3, 8, 40, 64, 65]) if wide else rng.randint(0, 3)
    out_dims = [(f"o{k}", 1 << rng.choice([0, 1, 5, 31] if wide else [0, 1, 2, 3, 5])) for k in range(n_out)]
    total = sum(s.bit_length() - 1 for _, s in out_dims)
    n_in = rng.choice([0, 1, 2, 64, 65]) if wide else rng.randint(0, 3)
    bases = []
    for d in range(n_in):
        k = rng.choice([0, 1, 3, 31]) if wide else rng.randint(0, 6)
        vecs = []
        for _ in range(k):
            flat = rng.getrandbits(total) if total else 0
            vec, sh = [], 0
            for _, s in out_dims:
                b = s.bit_length() - 1
                vec.append((flat >> sh) & (s - 1))
                sh += b
            vecs.append(vec)
        bases.append((rng.choice([f"i{d}", f"i{d}", f"{SECRETS[2]}{d}"]), vecs))
    return LinearLayout(bases, out_dims, require_surjective=False)


def _calls(ext: Any, rng: random.Random, layouts: list[LinearLayout]) -> list[tuple[str, tuple]]:
    def arg() -> Any:
        return rng.choice(layouts) if rng.random() < 0.5 else junk(rng)

    n = 1 << rng.randint(0, 6)
    buf = np.zeros(n, dtype=rng.choice([np.int64, np.int32, np.uint8, np.float64]))
    return [
        ("build_into", (rng.choice(layouts), junk(rng), junk(rng), rng.choice([True, False, None, 1]))),
        ("build_into", (rng.choice(layouts), [("i0", junk(rng))], junk(rng), False)),
        ("build_into", (junk(rng), junk(rng), junk(rng), True)),
        ("make", (junk(rng), junk(rng), junk(rng), junk(rng))),
        ("make", (("a",), ((rng.choice([1 << 63, 1 << 64, -1, 2]),),), ("o",), (rng.choice([0, 31, 32, 64]),))),
        ("apply", (arg(), junk(rng))),
        ("apply", (arg(), {"i0": junk_scalar(rng), "i1": junk_scalar(rng)})),
        ("apply_all_into", (arg(), buf)),
        ("apply_all_into", (arg(), junk(rng))),
        ("apply_arrays_into", (arg(), junk(rng), junk(rng), junk(rng))),
        ("apply_arrays_into", (arg(), (0,), (buf,), (buf, buf))),
        ("to_matrix_bytes", (arg(),)),
        ("to_string", (arg(),)),
        ("product", (arg(), arg())),
        ("compose", (arg(), arg())),
        ("invert_and_compose", (arg(), arg())),
        ("pseudoinvert", (arg(),)),
        ("invert", (arg(),)),
        ("move_bits", (junk(rng), junk(rng))),
        ("move_bits", (((1 << rng.randint(0, 70),),), [rng.randint(-3, 70) for _ in range(rng.randint(0, 70))])),
        ("echelon", (junk(rng),)),
        ("rank", (junk(rng),)),
        ("solve", (junk(rng), junk_scalar(rng))),
        ("echelon", ([rng.getrandbits(rng.choice([8, 64, 65])) for _ in range(rng.randint(0, 80))],)),
        ("solve", ([rng.getrandbits(64) for _ in range(rng.randint(0, 70))], rng.getrandbits(64))),
    ]


def run(iterations: int, seed: int = 0, check_refcounts: bool = True) -> dict[str, int]:
    """Fuzz ``iterations`` rounds; returns counts of outcomes. Raises AssertionError on a broken contract."""
    ext = _ccore._import_ext()
    assert ext is not None, "the C extension is not built"
    rng = random.Random(seed)
    stats = {"calls": 0, "declined": 0, "answered": 0, "type_errors": 0}
    with _ccore.using("c"):
        layouts = [random_layout(rng, wide=(i % 3 == 0)) for i in range(24)]
        for _ in range(iterations):
            if rng.random() < 0.05:
                layouts[rng.randrange(len(layouts))] = random_layout(rng, wide=rng.random() < 0.3)
            for name, args in _calls(ext, rng, layouts):
                tracked = [a for a in args if isinstance(a, (LinearLayout, list, tuple, dict, np.ndarray))
                           and sys.getrefcount(a) < 1000]  # not a shared singleton such as ()
                before = [sys.getrefcount(a) for a in tracked] if check_refcounts else None
                stats["calls"] += 1
                try:
                    result = getattr(ext, name)(*args)
                except TypeError as error:
                    assert not any(secret in str(error) for secret in SECRETS), "a planted name reached a message"
                    raise AssertionError(f"{name}{args!r:.300} raised {error!r}") from None
                if result is None or result is False or result is NotImplemented:
                    stats["declined"] += 1
                else:
                    stats["answered"] += 1
                del result
                if check_refcounts:
                    after = [sys.getrefcount(a) for a in tracked]
                    assert before == after, f"{name}: reference counts of the arguments changed {before} -> {after}"
        # whatever the C core answers for valid layouts equals the pure-Python answer
        for _ in range(max(1, iterations // 10)):
            a, b = rng.choice(layouts), rng.choice(layouts)
            wide = wide_layout(rng)
            values = {name: np.array([rng.getrandbits(min(len(dim), 63)) for _ in range(3)], dtype=np.int64)
                      for name, dim in zip(wide._in_names, wide._in_bases)}
            for op in (lambda: a * b, lambda: str(a), lambda: a.to_matrix().tolist(), lambda: a.pseudoinvert(),
                       lambda: a.invert_and_compose(b), lambda: a.compose(b), lambda: a == b,
                       lambda: pickle.loads(pickle.dumps(a)), lambda: (copy.deepcopy(a) is a, hash(a) == hash(
                           pickle.loads(pickle.dumps(a)))),
                       lambda: a.__init__(b.bases, b.out_dims, require_surjective=False),
                       lambda: object.__setattr__(a, "_hash", rng.choice([-1, 0, None, "x"])),
                       lambda: {k: v.tolist() for k, v in wide.apply_array(values).items()}, lambda: str(wide)):
                got = _outcome(op)
                with _ccore.using("python"):
                    want = _outcome(op)
                assert got == want, f"backends disagree: {got!r:.300} != {want!r:.300}"
    return stats


def wide_layout(rng: random.Random) -> LinearLayout:
    """A layout with in dims of 32 to 64 bits (wider than the constructor allows: made as ``_make`` makes
    internal layouts), out bits at most 63 so that ``apply_array`` evaluates it."""
    out_log2 = [rng.randint(0, 31), rng.randint(0, 31)]
    total = sum(out_log2)
    dims, used = [], 0
    for d in range(rng.randint(1, 2)):
        k = rng.randint(32, 64 - used) if used <= 32 else 64 - used
        used += k
        dims.append(tuple(rng.getrandbits(total) if total else 0 for _ in range(k)))
    return LinearLayout._make(tuple(f"i{d}" for d in range(len(dims))), tuple(dims), ("o0", "o1"), tuple(out_log2))


def _outcome(op: Any) -> Any:
    try:
        value = op()
    except (LayoutError, AttributeError) as error:
        return (type(error).__name__, str(error))
    if isinstance(value, LinearLayout):
        return ("layout", value._in_names, value._in_bases, value._out_names, value._out_log2, value.rank)
    return ("value", value)


# --- issue 33's reproducers of the compiled core ----------------------------------------------------------

def reproducers() -> list[str]:
    """Re-run the compiled core's bugs of issue 33 on the active backend (both must pass); raises
    AssertionError on a wrong answer, and crashes (or ASan reports) on a memory error. Returns one line each."""
    from linear_layouts.core.layout import _SLOTS, _rebuild

    done = []
    # 1. a dim name's __eq__ frees the tuple being compared (use after free, rc 139): names are now plain
    #    str copies (no user code runs), and the C comparison holds its tuples while it compares; the evil
    #    name below is planted through the private slot setter to reach that comparison anyway
    names = [f"d{i}" for i in range(24)]  # a tuple of more than 20 items is freed, not kept in a free list
    victim = LinearLayout({n: [] for n in names}, ["dim0"])

    class Evil(str):
        def __eq__(self, other: object) -> bool:
            _SLOTS["_in_names"].__set__(victim, tuple(f"x{i}" for i in range(24)))  # frees the old tuple
            return str.__eq__(self, other)

        __hash__ = str.__hash__

    planted = LinearLayout({n: [] for n in names}, ["dim0"])
    assert type(LinearLayout({Evil("d0"): []}, ["dim0"]).in_dim_names[0]) is str  # copied at construction
    _SLOTS["_in_names"].__set__(planted, (Evil("d0"),) + tuple(names[1:]))
    assert (planted == victim) is True  # the names held when the comparison began (as Python's tuple == does)
    assert victim.in_dim_names[1] == "x1"
    done.append("a dim name's __eq__ swapping the other layout's names: compared safely (True, as in Python)")
    # 2. __init__ again on a hashed layout
    layout = LinearLayout({"register": [[1]], "lane": [[2]]}, ["dim0"])
    table = {layout: 1}
    try:
        layout.__init__({"a": [[1]]}, ["b"])
        raise AssertionError("__init__ ran again on a constructed layout")
    except AttributeError as error:
        assert "immutable" in str(error)
    assert table[layout] == 1 and layout.in_dim_names == ("register", "lane")
    done.append("__init__ on a hashed layout: AttributeError, the layout unchanged and still in its dict")
    # 3. the hash slot: not writable; a junk value written through the private setter is recomputed
    try:
        object.__setattr__(layout, "_hash", -1)
        raise AssertionError("the hash slot was writable")
    except AttributeError:
        pass
    for junk_hash in (-1, "x", 1 << 70, None):
        _SLOTS["_hash"].__set__(layout, junk_hash)
        assert hash(layout) == hash(LinearLayout({"register": [[1]], "lane": [[2]]}, ["dim0"]))
    done.append("the hash slot: read-only; junk in it is recomputed (was SystemError)")
    # 4. unpickling goes through validation
    for fields in ((("i",), ((1 << 40,),), ("o",), (8,)), (("i",), (tuple(1 << k for k in range(40)),), ("o",), (40,)),
                   (("i", "i"), ((), ()), ("o",), (0,)), (("i",), ((1,),), ("o",), (-1,)), ((3,), ((1,),), ("o",), (1,))):
        forged = pickle.dumps(_Forged(fields))
        try:
            pickle.loads(forged)
            raise AssertionError(f"unpickled without validation: {fields!r:.100}")
        except LayoutError:
            pass
    assert pickle.loads(pickle.dumps(layout)) == layout
    done.append("forged pickles (a 40-bit dim, out-of-range bases, duplicate names): LayoutError")
    # 5. apply_array over a 40-bit in dim (made without the constructor's checks): the C core read 32 bits
    wide = LinearLayout._make(("i",), (tuple(1 << (k % 9) for k in range(40)),), ("o",), (9,))
    got = wide.apply_array({"i": np.array([2, (1 << 39) | 256, (1 << 40) - 1])})["o"].tolist()
    assert got == [2, 256 ^ 8, 15], got  # bits 0..3 are set by 5 bases each, bits 4..8 by 4
    assert got == [wide.apply({"i": int(x)})["o"] for x in (2, (1 << 39) | 256, (1 << 40) - 1)]
    done.append(f"apply_array over a 40-bit in dim: {got} (was [.., 0] on the C core)")
    return done


class _Forged:
    """Pickles as ``linear_layouts.core.layout._rebuild(*fields)``: what a crafted pickle of a layout calls."""

    def __init__(self, fields: tuple) -> None:
        self.fields = fields

    def __reduce__(self) -> tuple:
        from linear_layouts.core.layout import _rebuild

        return (_rebuild, self.fields)


# --- the AddressSanitizer build ---------------------------------------------------------------------------

SOURCE = Path(__file__).resolve().parents[2] / "src" / "linear_layouts" / "core" / "_ccore" / "_ext.c"


def asan_runtime() -> str | None:
    """The compiler's AddressSanitizer runtime (``gcc -print-file-name=libasan.so``), or None."""
    compiler = shutil.which("gcc") or shutil.which("cc")
    if compiler is None or sys.platform != "linux":
        return None
    found = subprocess.run([compiler, "-print-file-name=libasan.so"], capture_output=True, text=True).stdout.strip()
    return found if os.path.isabs(found) and os.path.exists(found) else None


def build_asan(folder: Path) -> Path:
    """``_ext.c`` compiled with ``-fsanitize=address,undefined`` into ``folder``; its path."""
    compiler = shutil.which("gcc") or shutil.which("cc")
    out = folder / "_ext_asan.so"
    cmd = [compiler, "-shared", "-fPIC", "-O1", "-g", "-fno-omit-frame-pointer", "-fsanitize=address,undefined",
           "-fno-sanitize-recover=undefined", f"-I{sysconfig.get_paths()['include']}", str(SOURCE), "-o", str(out)]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return out


def run_asan(iterations: int, seed: int, *, timeout: float = 600) -> subprocess.CompletedProcess:
    """Build the ASan core and run the reproducers and ``iterations`` rounds of the fuzz under it, in a child
    process; its completed process (exit 0 and the summary on stdout when clean)."""
    runtime = asan_runtime()
    if runtime is None:
        raise RuntimeError("no C compiler with AddressSanitizer (gcc -print-file-name=libasan.so)")
    with tempfile.TemporaryDirectory(prefix="linear_layouts_asan_") as folder:
        build = build_asan(Path(folder))
        env = dict(os.environ, LD_PRELOAD=runtime, PYTHONMALLOC="malloc",
                   ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:exitcode=99",
                   UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=98")
        env.pop("LINEAR_LAYOUTS_PURE_PYTHON", None)
        return subprocess.run([sys.executable, __file__, "--ext", str(build), "--iterations", str(iterations),
                               "--seed", str(seed), "--no-refcounts"], capture_output=True, text=True, env=env,
                              timeout=timeout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-refcounts", action="store_true", help="skip the reference-count checks")
    parser.add_argument("--asan", action="store_true", help="rebuild the core with AddressSanitizer and run under it")
    parser.add_argument("--ext", help=argparse.SUPPRESS)  # the child of --asan: the build to load
    args = parser.parse_args(argv)
    if args.asan:
        proc = run_asan(args.iterations, args.seed)
        sys.stdout.write(proc.stdout)
        sys.stderr.write(proc.stderr[-20000:])
        return proc.returncode
    for line in reproducers():
        print(f"reproducer ({_ccore.backend()}): {line}")
    stats = run(args.iterations, args.seed, not args.no_refcounts)
    print(f"fuzz_ccore: {stats['calls']} calls ({stats['answered']} answered, {stats['declined']} declined), "
          f"seed {args.seed}: no crash, no exception, reference counts unchanged, answers equal pure Python")
    return 0


if __name__ == "__main__":
    sys.exit(main())
