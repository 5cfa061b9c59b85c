"""CuTe's own C++ on the CPU: seeded cases of every algebra operation as C++ over static ints, compiled with
g++ against the CuTe headers that the ``nvidia-cutlass`` wheel ships (``cutlass_library/source/include``)
and the CUDA toolkit's headers (host code only: nothing runs on a GPU). No pytest items here.

``OPERATIONS[name](rng)`` gives ``(ours, cpp)``: a thunk computing our result (or raising LayoutError)
and the C++ expression of the same call; the program prints each result as CuTe's ``print`` does.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import io
import os
import pathlib
import random
import re
import shutil
import subprocess
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

from linear_layouts.cute import algebra as A
from linear_layouts.cute.layout import ComposedLayout, Layout, Swizzle
from linear_layouts.core.errors import LayoutError
from linear_layouts.cute.source import to_cpp, to_pycute, to_text

try:
    from . import random_cute as R
except ImportError:  # run as a script
    import random_cute as R  # type: ignore[no-redef]

Case = tuple[Callable[[], Any], str]


def include_dirs() -> list[str] | None:
    """CuTe's headers (the nvidia-cutlass wheel) and the CUDA toolkit's (``cuda_runtime_api.h``, CCCL), or
    None when either is missing."""
    spec = importlib.util.find_spec("cutlass_library")
    if spec is None or not spec.submodule_search_locations or shutil.which("g++") is None:
        return None
    cute = pathlib.Path(list(spec.submodule_search_locations)[0]) / "source" / "include"
    homes = [os.environ.get("CUDA_HOME", ""), "/usr/local/cuda", *sorted(map(str, pathlib.Path("/usr/local").glob("cuda-*")))]
    nvcc = shutil.which("nvcc")
    if nvcc:
        homes.insert(0, str(pathlib.Path(nvcc).resolve().parents[1]))
    for home in homes:
        cuda = pathlib.Path(home) / "include"
        if home and (cuda / "cuda_runtime_api.h").exists() and (cuda / "cccl").is_dir() and (cute / "cute").is_dir():
            return [str(cute), str(cuda), str(cuda / "cccl")]
    return None


HEADER = "#include <cute/layout.hpp>\n#include <cute/swizzle_layout.hpp>\nusing namespace cute;\n"
PRECOMPILED = '#include "cute_all.hpp"\nusing namespace cute;\n'  #: HEADER through ``precompiled_header``
TYPES = {8: "uint8_t", 16: "uint16_t", 32: "uint32_t", 64: "uint64_t"}
_FLAGS = ["g++", "-std=c++17", "-w"]


def program(expressions: list[str], header: str = HEADER) -> tuple[str, int]:
    """A program printing ``k|<CuTe's print of expression k>`` per line, and the source line of case 0 (case
    k is on line ``first + k``). A static result (an empty type: every value in its type) is printed as
    ``T{}`` of its type ``T``, so CuTe's algebra is instantiated only to deduce ``T`` and g++ emits no code
    for it -- the same text as ``print(expression)``, in under half the compile time."""
    cases = [f'  {{ using T = decltype({e}); print("{k}|"); if constexpr (is_static<T>::value) print(T{{}}); '
             f'else print({e}); print("\\n"); }}' for k, e in enumerate(expressions)]
    return f"{header}int main() {{\n" + "\n".join(cases) + "\n  return 0;\n}\n", header.count("\n") + 2


def _failed_lines(stderr: str, source: str) -> set[int]:
    """The lines of ``source`` that g++'s messages name (a failing case's line: ``required from here``)."""
    mark = re.compile(rf"^(?:.*/)?{re.escape(source)}:(\d+):")
    return {int(m.group(1)) for m in map(mark.match, stderr.splitlines()) if m}


def compile_and_print(expressions: list[str], includes: list[str], directory: str, name: str = "p",
                      header: str = HEADER, timeout: int = 1800) -> tuple[list[str | None], float]:
    """CuTe's printed result of every expression (one program), None where CuTe's C++ refuses it (a compile
    error traced to its line; the program is rebuilt without it), and the compiler's CPU seconds."""
    results: list[str | None] = [None] * len(expressions)
    live, seconds = list(range(len(expressions))), 0.0
    while live:
        text, first = program([expressions[k] for k in live], header)
        src, exe = pathlib.Path(directory, f"{name}.cpp"), pathlib.Path(directory, name)
        src.write_text(text)
        code, stderr, cpu = _run([*_FLAGS, "-O0", *[f"-I{d}" for d in includes], src.name, "-o", exe.name],
                                 directory, timeout)
        seconds += cpu
        if code == 0:
            out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=600, check=True).stdout
            for line in out.splitlines():
                k, printed_ = line.split("|", 1)
                results[live[int(k)]] = printed_
            return results, seconds
        failed = {live[n - first] for n in _failed_lines(stderr, src.name) if 0 <= n - first < len(live)}
        if not failed:
            raise RuntimeError(f"CuTe C++ failed to compile:\n{stderr[-3000:]}")
        live = [k for k in live if k not in failed]
    return results, seconds


def print_each(expressions: list[str], includes: list[str], jobs: int = 2) -> list[str | None]:
    """``compile_and_print`` of ``expressions`` split into ``jobs`` programs compiled side by side."""
    size = max(1, -(-len(expressions) // jobs))
    parts = [expressions[i:i + size] for i in range(0, len(expressions), size)]
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(jobs) as pool:
        done = pool.map(lambda k: compile_and_print(parts[k], includes, tmp, name=f"p{k}")[0], range(len(parts)))
        return [r for part in done for r in part]


def refused_in_batch(expressions: list[str], includes: list[str], directory: str, name: str = "r",
                     header: str = HEADER, timeout: int = 1800) -> tuple[list[bool], str, float]:
    """Which expressions CuTe's C++ certainly refuses: a compile error traced to the expression's line, all
    in one file compiled ``-fsyntax-only``. An instantiation that fails is reported once per file, so an
    expression not named may still be refused (compile it again without the ones named, or alone)."""
    lines = [f"void case{k}() {{ print({e}); }}" for k, e in enumerate(expressions)]
    src = pathlib.Path(directory, f"{name}.cpp")
    src.write_text(header + "\n".join(lines) + "\nint main() { return 0; }\n")
    _, stderr, cpu = _run([*_FLAGS, "-fsyntax-only", *[f"-I{d}" for d in includes], src.name], directory, timeout)
    first = header.count("\n") + 1
    failed = _failed_lines(stderr, src.name)
    return [first + k in failed for k in range(len(expressions))], stderr, cpu


def precompiled_header(includes: list[str], directory: str) -> None:
    """CuTe's headers precompiled into ``directory`` (``cute_all.hpp.gch``): programs with the header
    ``PRECOMPILED`` and ``directory`` first among their includes use it."""
    header = pathlib.Path(directory, "cute_all.hpp")
    header.write_text(HEADER.replace("using namespace cute;\n", ""))
    code, stderr, _ = _run([*_FLAGS, "-O0", *[f"-I{d}" for d in includes], "-x", "c++-header", header.name,
                            "-o", f"{header.name}.gch"], directory, 900)
    if code:
        raise RuntimeError(f"CuTe's headers failed to precompile:\n{stderr[-3000:]}")


def _run(command: list[str], directory: str, timeout: int) -> tuple[int, str, float]:
    """Run a compiler: its exit status, stderr and CPU seconds (user + system)."""
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(command, cwd=directory, stdout=subprocess.DEVNULL, stderr=err, text=True)
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode < 0:
            raise RuntimeError(f"{command[0]} killed after {timeout} s in {directory}")
        err.seek(0)
        return proc.returncode, err.read(), usage.ru_utime + usage.ru_stime


# -- C++ text of the arguments -------------------------------------------------------------------------


def cpp_tiler(t: Any) -> str:
    if isinstance(t, tuple):
        return "make_tile(" + ", ".join(cpp_tiler(e) for e in t) + ")"
    if t is None:
        return "_"
    return to_cpp(t) if isinstance(t, (Layout, Swizzle, ComposedLayout)) else f"Int<{t}>{{}}"


def cpp_tuple(t: Any, make: str = "make_shape") -> str:
    if isinstance(t, tuple):
        return f"{make}(" + ", ".join(cpp_tuple(e, make) for e in t) + ")"
    return "_" if t is None else f"Int<{t}>{{}}"


def printed(x: Any) -> str:
    """Our result as CuTe prints it with static ints."""
    if isinstance(x, tuple):  # slice_and_offset
        return f"({printed(x[0])},{printed(x[1])})"
    return f"_{x}" if isinstance(x, int) else to_text(x, static=True)


def pycute_text(x: Layout | ComposedLayout) -> str | None:
    """NVIDIA's pycute's own ``str`` of ``x`` (``SW_1_0_-1 o 0 o (2, 8):(1, 2)``), None without pycute."""
    try:
        import pycute
    except ImportError:
        return None
    if isinstance(x, ComposedLayout):
        outer = pycute.Swizzle(x.outer.bits, x.outer.base, x.outer.shift)
        return str(pycute.ComposedLayout(outer, x.offset, pycute.Layout(x.inner.shape, x.inner.stride)))
    return str(pycute.Layout(x.shape, x.stride))


def round_trip(cpp_text: str, value: Any) -> list[str]:
    """What fails of the round trip of one result (empty: nothing). CuTe's C++ print (``cpp_text``, e.g.
    ``Sw<1,0,-1> o _0 o (_2,_8):(_1,_2)``, ``(_4,_8):(_-1,_4)``) and pycute's ``str`` of the same value
    (``SW_1_0_-1 o 0 o (2, 8):(1, 2)``) parse back to ``value``; ``show TEXT --format cute`` prints a CuTe
    form of the same F2 map, or where the value has none (not F2-linear) exits 2 with one line."""
    from linear_layouts.cli import main
    from linear_layouts.cute.linear import to_linear
    from linear_layouts.cute.parse import parse_cute

    if isinstance(value, tuple):  # slice_and_offset: (layout,_offset)
        cpp_text, value = cpp_text[1:cpp_text.rindex(",")], value[0]
    if not isinstance(value, (Layout, ComposedLayout)):
        return []
    problems = []
    texts = [("C++ print", cpp_text)]
    pycute_form = pycute_text(value)
    if pycute_form is not None:
        texts.append(("pycute str", pycute_form))
        if pycute_form != to_pycute(value):
            problems.append(f"to_pycute {to_pycute(value)!r} is not pycute's {pycute_form!r}")
    for what, text in texts:
        try:
            if parse_cute(text) != value:
                problems.append(f"{what} {text!r} parses to {parse_cute(text)}, not {value}")
        except LayoutError as error:
            problems.append(f"{what} {text!r} is refused: {error}")
    try:
        linear = to_linear(value)
    except LayoutError:
        linear = None
    for what, text in texts:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["show", text, "--format", "cute"])
        first = out.getvalue().splitlines()[0] if out.getvalue() else ""
        if linear is None:
            if code != 2 or err.getvalue().count("\n") != 1:
                problems.append(f"show {text!r}: exit {code} (2 expected: no F2 form), stderr {err.getvalue()!r}")
        elif code != 0 or not first.startswith("CuTe: ") or to_linear(parse_cute(first[6:])) != linear:
            problems.append(f"show {text!r}: exit {code}, first line {first!r}, stderr {err.getvalue()!r}")
    return problems


# -- cases ---------------------------------------------------------------------------------------------


def _layout(rng: random.Random, size: int = 1024, **kwargs: Any) -> Layout:
    return R.random_int_layout(rng, max_size=size, **kwargs)


def _tiler(rng: random.Random, layout: Layout, nones: bool = True) -> Any:
    out = []
    for _ in range(layout.rank):
        k = rng.random()
        out.append(None if nones and k < 0.1 else rng.choice([1, 2, 3, 4, 6, 8]) if k < 0.4
                   else R.random_int_layout(rng, max_size=64))
    return tuple(out)


def _call(f: Callable, *args: Any) -> functools.partial:
    """Our call: ``f`` and its arguments (``.func``, ``.args``)."""
    return functools.partial(f, *args)


def case_coalesce(rng):
    L = _layout(rng, negative=True)
    if rng.random() < 0.5:
        return _call(A.coalesce, L), f"coalesce({to_cpp(L)})"
    profile = (1,) * rng.randint(1, L.rank)
    return _call(A.coalesce, L, profile), f"coalesce({to_cpp(L)}, {cpp_tuple(profile, 'make_tuple')})"


def case_filter(rng):
    L = _layout(rng)
    return _call(A.filter, L), f"filter({to_cpp(L)})"


def case_make_layout(rng):
    parts = [_layout(rng, 64) for _ in range(rng.randint(1, 3))]
    return _call(A.make_layout, *parts), "make_layout(" + ", ".join(map(to_cpp, parts)) + ")"


def case_cosize(rng):
    L = _layout(rng, negative=True)
    if rng.random() < 0.5:
        return _call(A.cosize, L), f"cosize({to_cpp(L)})"
    C = ComposedLayout(R.random_swizzle(rng, 10), 0, L)
    return _call(A.cosize, C), f"cosize({to_cpp(C)})"


def case_composition(rng):
    a = _layout(rng, pow2=rng.random() < 0.5)
    if rng.random() < 0.2:
        b = _tiler(rng, a)
        return _call(A.composition, a, b), f"composition({to_cpp(a)}, {cpp_tiler(b)})"
    b = _layout(rng, 256)
    return _call(A.composition, a, b), f"composition({to_cpp(a)}, {to_cpp(b)})"


def case_swizzle_composition(rng):
    sw, L = R.random_swizzle(rng, 10, within=False), _layout(rng)
    return _call(A.composition, sw, L), f"composition({to_cpp(sw)}, {to_cpp(L)})"


def case_complement(rng):
    L, m = _layout(rng, 512), rng.choice([1, 8, 24, 64, 96, 128, 1000])
    return _call(A.complement, L, m), f"complement({to_cpp(L)}, Int<{m}>{{}})"


def case_right_inverse(rng):
    L = _layout(rng, negative=True)
    return _call(A.right_inverse, L), f"right_inverse({to_cpp(L)})"


def case_left_inverse(rng):
    L = _layout(rng, 512)
    return _call(A.left_inverse, L), f"left_inverse({to_cpp(L)})"


def _divide_like(name: str, tuples_nones: bool):
    def case(rng):
        a = _layout(rng)
        b = _tiler(rng, a, nones=tuples_nones) if rng.random() < 0.3 else _layout(rng, 64)
        return _call(getattr(A, name), a, b), f"{name}({to_cpp(a)}, {cpp_tiler(b)})"
    return case


def _rank_sensitive(name: str):
    def case(rng):
        block, tiler = _layout(rng, 256), _layout(rng, 64)
        return _call(getattr(A, name), block, tiler), f"{name}({to_cpp(block)}, {to_cpp(tiler)})"
    return case


def case_tile_to_shape(rng):
    block = _layout(rng, 64)
    rank = max(block.rank, rng.randint(1, 3))
    sizes = [block.mode(i).size for i in range(block.rank)] + [1] * (rank - block.rank)
    shape = tuple(s * rng.choice([1, 2, 3, 4]) for s in sizes)
    if rng.random() < 0.5:
        return _call(A.tile_to_shape, block, shape), f"tile_to_shape({to_cpp(block)}, {cpp_tuple(shape)})"
    order = tuple(rng.sample(range(rank), rank))
    return (_call(A.tile_to_shape, block, shape, order),
            f"tile_to_shape({to_cpp(block)}, {cpp_tuple(shape)}, {cpp_tuple(order, 'make_step')})")


def _coordinate(rng, shape):
    if isinstance(shape, tuple):
        return tuple(_coordinate(rng, s) for s in shape)
    return None if rng.random() < 0.4 else rng.randrange(shape)


def case_slice_and_offset(rng):
    L = _layout(rng, negative=True)
    if not isinstance(L.shape, tuple):
        L = Layout((L.shape,), (L.stride,))
    crd = _coordinate(rng, L.shape)
    return _call(A.slice_and_offset, crd, L), f"slice_and_offset({cpp_tuple(crd, 'make_coord')}, {to_cpp(L)})"


def _cast(name: str):
    def case(rng):
        L, n = _layout(rng, negative=True), rng.choice([1, 2, 4, 8, 16])
        return _call(getattr(A, name), L, n), f"{name}<{n}>({to_cpp(L)})"
    return case


def case_recast_layout(rng):
    L = _layout(rng)
    old, new = rng.choice(list(TYPES)), rng.choice(list(TYPES))
    return _call(A.recast_layout, L, old, new), f"recast_layout<{TYPES[old]}, {TYPES[new]}>({to_cpp(L)})"


def _compact(rng, shape):
    leaves = list(R._flatten(shape))
    order = list(range(len(leaves)))
    rng.shuffle(order)
    strides, current = [0] * len(leaves), 1
    for i in order:
        strides[i] = current
        current *= leaves[i]
    it = iter(strides)

    def like(t):
        return tuple(like(e) for e in t) if isinstance(t, tuple) else next(it)
    return Layout(shape, like(shape))


def _common(name: str):
    def case(rng):
        shape = _layout(rng).shape
        a, b = _compact(rng, shape), _compact(rng, shape)
        return _call(getattr(A, name), a, b), f"{name}({to_cpp(a)}, {to_cpp(b)})"
    return case


OPERATIONS: dict[str, Callable[[random.Random], Case]] = {
    "coalesce": case_coalesce,
    "filter": case_filter,
    "make_layout": case_make_layout,
    "cosize": case_cosize,
    "composition": case_composition,
    "composition (swizzle)": case_swizzle_composition,
    "complement": case_complement,
    "right_inverse": case_right_inverse,
    "left_inverse": case_left_inverse,
    **{n: _divide_like(n, tuples_nones=n == "logical_divide" or n == "logical_product")
       for n in ("logical_divide", "zipped_divide", "tiled_divide", "flat_divide",
                 "logical_product", "zipped_product", "tiled_product", "flat_product")},
    "blocked_product": _rank_sensitive("blocked_product"),
    "raked_product": _rank_sensitive("raked_product"),
    "tile_to_shape": case_tile_to_shape,
    "slice_and_offset": case_slice_and_offset,
    "upcast": _cast("upcast"),
    "downcast": _cast("downcast"),
    "recast_layout": case_recast_layout,
    "max_common_vector": _common("max_common_vector"),
    "max_common_layout": _common("max_common_layout"),
}
