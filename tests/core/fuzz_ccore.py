"""Fuzzer of the compiled core (``linear_layouts.core._ccore._ext``): junk, huge bit counts, reference counts.

Every entry point is called with random junk (wrong types, negative and huge ints, 2**64 and beyond,
nested junk, subclasses of int/str/tuple, NumPy scalars, bytes, None), with layouts of up to 64 dims and
bases of 2**63 and 2**200, and with valid layouts. The contract checked: a call never crashes, never
raises anything but MemoryError (none expected) or TypeError for a wrong argument count, declines what it
does not handle (None / False / NotImplemented), and whatever it returns for a valid layout equals the
pure-Python answer. Reference counts of the container and layout arguments are unchanged after each call (``sys.getrefcount``;
shared singletons such as ``True`` or small ints move with unrelated code and are not checked).

Run it under a debug build for a report (what the issue asks):

    python3 -X dev tests/core/fuzz_ccore.py --iterations 200000
    # ASan/UBSan build: see benchmarks/results/algebra.md ("Fuzzing the compiled core")

The test suite runs a short seeded pass (``test_backends.py::test_fuzz_short``).
"""

from __future__ import annotations

import argparse
import random
import sys
from typing import Any

import numpy as np

from linear_layouts import LayoutError, LinearLayout
from linear_layouts.core import _ccore


class IntSub(int):
    pass


class StrSub(str):
    pass


class TupleSub(tuple):
    pass


def junk_scalar(rng: random.Random) -> Any:
    return rng.choice([
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
    keys = [rng.choice(["register", "lane", "dim0", "dim1", "", StrSub("lane"), 3, None]) for _ in items]
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
        bases.append((f"i{d}", vecs))
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
            for op in (lambda: a * b, lambda: str(a), lambda: a.to_matrix().tolist(), lambda: a.pseudoinvert(),
                       lambda: a.invert_and_compose(b), lambda: a.compose(b), lambda: a == b):
                got = _outcome(op)
                with _ccore.using("python"):
                    want = _outcome(op)
                assert got == want, f"backends disagree: {got!r:.300} != {want!r:.300}"
    return stats


def _outcome(op: Any) -> Any:
    try:
        value = op()
    except LayoutError as error:
        return ("LayoutError", str(error))
    if isinstance(value, LinearLayout):
        return ("layout", value._in_names, value._in_bases, value._out_names, value._out_log2, value.rank)
    return ("value", value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-refcounts", action="store_true", help="skip the reference-count checks")
    args = parser.parse_args(argv)
    stats = run(args.iterations, args.seed, not args.no_refcounts)
    print(f"fuzz_ccore: {stats['calls']} calls ({stats['answered']} answered, {stats['declined']} declined), "
          f"seed {args.seed}: no crash, no exception, reference counts unchanged, answers equal pure Python")
    return 0


if __name__ == "__main__":
    sys.exit(main())
