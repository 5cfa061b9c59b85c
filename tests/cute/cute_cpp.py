"""CuTe's own C++ on the CPU: seeded cases of every algebra operation as C++ over static ints, compiled with
g++ against the CuTe headers that the ``nvidia-cutlass`` wheel ships (``cutlass_library/source/include``)
and the CUDA toolkit's headers (host code only: nothing runs on a GPU). No pytest items here.

``OPERATIONS[name](rng)`` gives ``(ours, cpp)``: a thunk computing our result (or raising LayoutError)
and the C++ expression of the same call; the program prints each result as CuTe's ``print`` does.
"""

from __future__ import annotations

import importlib.util
import os
import pathlib
import random
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

from linear_layouts.cute import algebra as A
from linear_layouts.cute.layout import ComposedLayout, Layout, Swizzle
from linear_layouts.cute.source import to_cpp, to_text

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
TYPES = {8: "uint8_t", 16: "uint16_t", 32: "uint32_t", 64: "uint64_t"}


def program(expressions: list[str]) -> str:
    body = "\n".join(f'  {{ print("{k}|"); print({e}); print("\\n"); }}' for k, e in enumerate(expressions))
    return f"{HEADER}int main() {{\n{body}\n  return 0;\n}}\n"


def compile_and_run(expressions: list[str], includes: list[str], jobs: int = 2, per_program: int = 64) -> list[str]:
    """CuTe's printed result of every expression: programs of ``per_program`` expressions each (a
    translation unit of many layout types compiles slowly), ``jobs`` of them compiled side by side."""
    chunks = [expressions[i:i + per_program] for i in range(0, len(expressions), per_program)]
    with tempfile.TemporaryDirectory() as tmp:
        def build(k: int) -> list[str]:
            src, exe = pathlib.Path(tmp, f"p{k}.cpp"), pathlib.Path(tmp, f"p{k}")
            src.write_text(program(chunks[k]))
            flags = ["g++", "-std=c++17", "-O0", "-w", *[f"-I{d}" for d in includes], str(src), "-o", str(exe)]
            done = subprocess.run(flags, capture_output=True, text=True, timeout=900)
            if done.returncode:
                raise RuntimeError(f"CuTe C++ failed to compile:\n{done.stderr[-3000:]}")
            out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60, check=True).stdout
            return [line.split("|", 1)[1] for line in out.splitlines()]
        with ThreadPoolExecutor(jobs) as pool:
            return [line for part in pool.map(build, range(len(chunks))) for line in part]


def refused(expressions: list[str], includes: list[str]) -> tuple[list[bool], str]:
    """For each expression, whether CuTe's C++ refuses it (a compile error traced to its line: g++ reports
    every failing static_assert of one file), and all the compiler's messages. An instantiation that fails
    is reported once per file: give expressions that instantiate different templates (else ``refused_each``)."""
    lines = [f"void case{k}() {{\n  print({e});\n}}" for k, e in enumerate(expressions)]
    with tempfile.TemporaryDirectory() as tmp:
        src = pathlib.Path(tmp, "refused.cpp")
        src.write_text(HEADER + "\n".join(lines) + "\nint main() { return 0; }\n")
        done = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", "-w", *[f"-I{d}" for d in includes], str(src)],
                              capture_output=True, text=True, timeout=300)
    first = HEADER.count("\n") + 2  # the line of case 0's print
    return [f"refused.cpp:{first + 3 * k}:" in done.stderr for k in range(len(expressions))], done.stderr


def refused_each(expressions: list[str], includes: list[str], jobs: int = 2) -> list[bool]:
    """Whether CuTe's C++ refuses each expression, each in a file of its own (CuTe's headers precompiled)."""
    flags = ["g++", "-std=c++17", "-w", *[f"-I{d}" for d in includes]]
    with tempfile.TemporaryDirectory() as tmp:
        header = pathlib.Path(tmp, "cute_all.hpp")
        header.write_text(HEADER.replace("using namespace cute;\n", ""))
        subprocess.run([*flags, "-x", "c++-header", str(header), "-o", f"{header}.gch"], check=True, timeout=600)

        def one(k: int) -> bool:
            src = pathlib.Path(tmp, f"r{k}.cpp")
            src.write_text(f'#include "cute_all.hpp"\nusing namespace cute;\nint main() {{ print({expressions[k]}); }}\n')
            return subprocess.run([*flags, "-fsyntax-only", str(src)], capture_output=True, timeout=300).returncode != 0

        with ThreadPoolExecutor(jobs) as pool:
            return list(pool.map(one, range(len(expressions))))


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


def _call(f: Callable, *args: Any) -> Callable[[], Any]:
    return lambda: f(*args)


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
