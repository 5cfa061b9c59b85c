"""The ``linear-layouts`` command.

argparse (standard library) keeps the core's only dependency NumPy; each subcommand is a small
function taking the parsed arguments and returning an exit code. Layout arguments are specs
(:mod:`linear_layouts.spec`): Gluon constructor calls such as ``BlockedLayout([1,4],[4,8],[4,1],[1,0])``,
or bases as JSON; ``@FILE`` reads the spec from a file. Bad input prints ``linear-layouts: error: ...``
and exits with status 2. This module only parses arguments and prints what the library returns: the
reports live in :mod:`linear_layouts.present.reports`, the pictures in :mod:`linear_layouts.present.viz`, the
explorer's HTTP server in :mod:`linear_layouts.present.viz.server`.

    show LAYOUT --shape 16,32 [--format text|grid|svg|png|html|...]  each element's owner / its name
    matrix LAYOUT [--shape ...]                                    the F2 matrix
    banks SHARED DIST --dtype fp16 [--store STORE]                 wavefronts of one access, step by step
    swizzle STORE LOAD|wgmma-a|wgmma-b|tma --dtype fp16 [--format cute|gluon|ttgir]  shared layouts ranked
    convert SRC DST --dtype fp16 [--emit cuda] [--run]             the conversion plan (and kernel)
    demo                                                           Layout A and a transpose, end to end
    explore [--port N | --output FILE]                             the explorer page on 127.0.0.1
    report KERNEL_OR_FILE [--target sm_90] [--format text|html]    every layout and conversion of a real kernel
    permute SHAPE DIMS --dtype bf16 [--device H200]                 what the layout ops launch for that permutation
"""

from __future__ import annotations

import argparse
import contextvars
import errno
import os
import re
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Callable, NoReturn, Sequence, TypeVar

from linear_layouts import __version__
from linear_layouts.core.errors import QUOTE_CHARS, LayoutError, cut_long_runs, did_you_mean
from linear_layouts.core.layout import LinearLayout
from linear_layouts.core.limits import (INT_RULE, MAX_ELEMENTS, MAX_INT_DIGITS, MAX_PICTURE_ELEMENTS, MAX_SPEC_CHARS,
                                        check_layout_size, parse_int, quote, shorten)

if TYPE_CHECKING:
    from linear_layouts.target import Target

# --------------------------------------------------------------------------------------------------
# Shared helpers of the subcommands


def _size(part: str) -> int | None:
    """One size of ``--shape``: ASCII digits, at most 10 (``limits.parse_int``); None where ``part`` is none."""
    try:
        return parse_int(part, "--shape", max_digits=10)
    except LayoutError:
        return None


def _shape(text: str | None) -> list[int] | None:
    """``"16,32"`` / ``"16x32"`` / ``"[16, 32]"`` -> ``[16, 32]``: powers of two, none empty or junk."""
    if text is None:
        return None
    cleaned = text.strip().strip("[]()").replace("x", ",").replace("×", ",")
    parts = cleaned.split(",")
    sizes = [_size(part) for part in parts]
    if not cleaned.strip() or None in sizes:
        bad = next((part for part, size in zip(parts, sizes) if size is None), "")
        raise LayoutError(f"--shape: expected sizes like 16,32, got {quote(text)}"
                          + (" (an empty size between commas)" if not bad.strip()
                             else f" ({quote(bad.strip())} is not a size: {INT_RULE})"))
    shape = [size for size in sizes if size is not None]
    if any(s <= 0 or s & (s - 1) for s in shape):
        raise LayoutError(f"--shape: every size must be a power of two, got {quote(text)}")
    return shape


#: The texts of the ``@FILE`` arguments read during one command (``main`` sets it), by argument: each file is
#: read once, and every message the command prints is checked against these texts (``core.files.redact``).
_FILE_TEXTS: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar("file_texts", default=None)

_T = TypeVar("_T")

#: The byte order mark some editors write at the start of a UTF-8 file: not part of the spec.
BOM = "\ufeff"


class _FileSpecError(LayoutError):
    """An error in the spec of an ``@FILE`` argument, reported by position only (it quotes nothing of the file)."""


def _spec_text(text: str) -> str:
    """The spec itself, or the text of the file ``@FILE`` names (UTF-8, at most ``limits.MAX_SPEC_CHARS``),
    read once per command through :func:`linear_layouts.core.files.read_text` (a regular file only, opened without
    blocking, its size checked before it is read)."""
    if not text.startswith("@"):
        return text
    texts = _FILE_TEXTS.get()
    if texts is not None and text in texts:
        return texts[text]
    from linear_layouts.core.files import read_text

    content = read_text(text[1:], "spec file", max_bytes=4 * MAX_SPEC_CHARS,  # UTF-8: at most 4 bytes a character
                        limit=f"a spec has at most {MAX_SPEC_CHARS} characters: linear_layouts.limits.MAX_SPEC_CHARS")
    if len(content) > MAX_SPEC_CHARS:
        raise LayoutError(f"spec file {quote(text[1:])}: longer than {MAX_SPEC_CHARS} characters "
                          "(linear_layouts.core.limits.MAX_SPEC_CHARS): not a layout spec")
    content = content.removeprefix(BOM)
    if texts is not None:
        texts[text] = content
    return content


def _from_spec(text: str, what: str, read: Callable[[str], _T]) -> _T:
    """``read(spec text)`` for the argument ``text``: the one path every spec argument takes. An inline spec's
    error is ``what: message``; an ``@FILE``'s is told by position and length only (:func:`_file_error`)."""
    source = _spec_text(text)
    try:
        return read(source)
    except _FileSpecError:
        raise
    except LayoutError as error:
        if text.startswith("@"):
            raise _file_error(what, text[1:], source, str(error)) from None
        raise LayoutError(f"{what}: {error}") from None


_POSITIONS = (re.compile(r"\bline ([0-9]+),? column ([0-9]+)"), re.compile(r"\bcolumn ([0-9]+)"),
              re.compile(r"\bcharacter ([0-9]+)"))


def _file_error(what: str, path: str, source: str, message: str) -> _FileSpecError:
    """The error of a spec read from ``path``: where it is (line and column, from ``message``) and how long
    the file is; ``message`` itself only when it quotes nothing of the file (``files.quotes_file``)."""
    from linear_layouts.core.files import quotes_file

    where = ""
    for pattern in _POSITIONS:
        found = pattern.search(message)
        if found and len(found.groups()) == 2:
            where = f"line {found[1]}, column {found[2]}"
        elif found:  # a column or character of the stripped text: count from the file's start
            index = len(source) - len(source.lstrip()) + int(found[1]) - 1
            line = source.count("\n", 0, index) + 1
            where = f"line {line}, column {index - (source.rfind(chr(10), 0, index) + 1) + 1}"
        if found:
            break
    first = message.splitlines()[0] if message else ""
    rule = "" if ("'" in first or '"' in first or quotes_file(first, [source])) else f": {first}"
    return _FileSpecError(f"{what}: {quote(path)}: not a valid layout spec{rule} ({'at ' + where + ' of ' if where else ''}"
                          f"{len(source)} characters; a file's text is never quoted: pass the spec itself instead of "
                          "@FILE to see the whole message)")


def _limit(args: argparse.Namespace) -> dict[str, int]:
    """``{"max_elements": N}`` from ``--max-elements N``, or ``{}`` for the library's defaults."""
    text = getattr(args, "max_elements", None)
    if text is None:
        return {}
    try:
        count = parse_int(text, "--max-elements", max_digits=19)
    except LayoutError:
        count = 0
    if count < 1:
        raise LayoutError(f"--max-elements: expected a positive number of elements, got {quote(text)} ({INT_RULE})")
    return {"max_elements": count}


def _layout(text: str, shape: list[int] | None, what: str = "LAYOUT") -> LinearLayout:
    from linear_layouts.spec import parse_spec

    return _from_spec(text, what, lambda source: parse_spec(source).to_linear(shape))


def _padding(text: str, what: str) -> tuple[tuple[int, int], ...]:
    """The ``(interval, padding)`` pairs of a ``PaddedSharedLayout`` spec (its linear layout leaves them out),
    else ``()``."""
    from linear_layouts.spec import parse_spec
    from linear_layouts.triton_model.ir_types import TensorType

    def read(source: str) -> tuple[tuple[int, int], ...]:
        value = parse_spec(source).value
        value = value.layout if isinstance(value, TensorType) else value
        return tuple((int(i), int(p)) for i, p in getattr(value, "interval_padding_pairs", ()))

    return _from_spec(text, what, read)


def _descriptor(text: str, shape: list[int] | None, what: str = "LAYOUT", bitwidth: int | None = None) -> object:
    """The catalog descriptor a spec names (a TTGIR type's layout), else the simplest one that produces
    its LinearLayout (:func:`linear_layouts.layouts.recognize`)."""
    from linear_layouts.layouts.recognize import recognize
    from linear_layouts.spec import parse_spec
    from linear_layouts.triton_model.ir_types import TensorType

    def read(source: str) -> object:
        value = parse_spec(source).value
        if isinstance(value, TensorType):
            value = value.layout
        if isinstance(value, LinearLayout) or not hasattr(value, "to_linear"):
            return recognize(parse_spec(source).to_linear(shape), dtype=bitwidth)
        return value

    return _from_spec(text, what, read)


def _cute_source(text: str) -> object | None:
    """The CuTe value a spec is written as (``Swizzle<3,4,3> o (8,64):(64,1)``), else None."""
    from linear_layouts.spec import parse_spec

    value = parse_spec(_spec_text(text)).value
    return value if type(value).__module__.startswith("linear_layouts.cute") else None


def _shared_text(args: argparse.Namespace, bits: int | None) -> tuple[str, list[str]]:
    """``show --format gluon|ttgir``: the descriptor's text, and notes. With ``--dtype``, a shared layout
    is given as a class of that element width: when none is the layout as written, a CuTe swizzle read on
    byte addresses (CuTe's ``smem_ptr_flag`` atoms) may be one, else the exact ``SharedLinearLayout``."""
    from linear_layouts.layouts import NVMMASharedLayout

    from linear_layouts.spec import parse_spec

    shape = _shape(args.shape)
    descriptor = _descriptor(args.layout, shape, bitwidth=bits)
    width = getattr(descriptor, "element_bitwidth", None)
    named = parse_spec(_spec_text(args.layout)).value == descriptor   # the user named this class
    if bits is None or named or not isinstance(descriptor, NVMMASharedLayout) or width == bits:
        return _layout_text(descriptor, args.format, shape), []
    from linear_layouts.layouts import SharedLinearLayout
    from linear_layouts.layouts.recognize import recognize

    layout = _layout(args.layout, shape)
    exact = SharedLinearLayout(layout.bases["offset"], layout.bases.get("block", []))
    unmatched = (f"no {bits}-bit NVMMASharedLayout is this layout as written (on element offsets it is "
                 f"{_layout_text(descriptor, args.format)}, for {width}-bit elements)")
    source = _cute_source(args.layout)
    outer = getattr(source, "outer", None)
    if outer is not None:
        from linear_layouts.cute import ComposedLayout, element_swizzle, to_linear

        try:
            swizzle = element_swizzle(outer, bits)
            byte_read = recognize(to_linear(ComposedLayout(swizzle, source.offset, source.inner)), dtype=bits)
        except LayoutError:
            byte_read = None
        if getattr(byte_read, "element_bitwidth", None) == bits:
            return _layout_text(byte_read, args.format, shape), [
                f"{outer} read on byte addresses, as CuTe's smem_ptr_flag atoms apply it: {swizzle} on {bits}-bit "
                "element offsets (docs/cute.md §2)",
                f"{unmatched}: {_layout_text(exact, args.format, shape)}"]
    return _layout_text(exact, args.format, shape), [unmatched]


def _layout_text(descriptor: object, form: str, shape: list[int] | None = None) -> str:
    """``descriptor`` as Gluon source (``form="gluon"``) or TTGIR attribute text (``"ttgir"``)."""
    if form == "gluon":
        from linear_layouts.layouts.gluon_text import gluon_expression

        return gluon_expression(descriptor, shape)
    from linear_layouts.layouts.ttgir_text import format_attribute

    return format_attribute(descriptor)


#: A run of more digits than an integer of user text may have (``limits.MAX_INT_DIGITS``).
_LONG_DIGITS = re.compile(r"[0-9]{%d,}" % (MAX_INT_DIGITS + 1))


def _bitwidth(dtype: str | None, default: int | None = None) -> int:
    """--dtype's width in bits (any spelling of :func:`linear_layouts.core.element_type.element_type`);
    a width of more than ``limits.MAX_INT_DIGITS`` digits is refused before ``int`` reads it."""
    from linear_layouts.core.element_type import bitwidth

    if dtype is None:
        if default is None:
            raise LayoutError("--dtype: required (e.g. fp16, fp32, i8)")
        return default
    digits = _LONG_DIGITS.search(dtype)
    if digits:
        raise LayoutError(f"--dtype: an integer of {len(digits[0])} digits; at most {MAX_INT_DIGITS} digits, "
                          f"got {quote(dtype)}")
    try:
        return bitwidth(dtype)
    except LayoutError as error:
        raise LayoutError(f"--dtype: {error}") from None


def _spec_bitwidth(text: str, what: str = "LAYOUT") -> int | None:
    """The element width a shared spec names itself (``NVMMASharedLayout(element_bitwidth=16)``)."""
    from linear_layouts.spec import parse_spec

    value = _from_spec(text, what, lambda source: parse_spec(source).value)
    width = getattr(value, "element_bitwidth", None)
    return width if isinstance(width, int) else None


#: The warnings of the running command (``main`` sets it), held until it writes its output: a command that
#: fails prints its one error line alone.
_WARNINGS: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("warnings", default=None)


def _warn(message: str) -> None:
    """Print a warning line, or hold it until the command writes its output (``_flush_warnings``)."""
    line = _one_line(f"linear-layouts: warning: {_unquoted(message)}")
    held = _WARNINGS.get()
    if held is None:
        print(line, file=sys.stderr)
    else:
        held.append(line)


def _flush_warnings() -> None:
    """Print the warnings held so far (before the command's output, as they came)."""
    held = _WARNINGS.get()
    while held:
        print(held.pop(0), file=sys.stderr)


def _unquoted(message: str) -> str:
    """``message`` with every word of an ``@FILE`` read by this command withheld (``core.files.redact``): the last
    guard of what a file may print, for messages raised after its spec was read (the layout's dim names)."""
    texts = _FILE_TEXTS.get()
    if not texts:
        return message
    from linear_layouts.core.files import redact

    return redact(message, texts.values())


_KINDS = {
    "distributed": "in dims register, lane, warp: e.g. BlockedLayout(...), NVMMADistributedLayout(...)",
    "shared": "in dim offset: e.g. NVMMASharedLayout(...), SwizzledSharedLayout(...)",
    "tensor memory": "in dims row, col: TensorMemoryLayout(...)",
}


def _kind(layout: LinearLayout) -> str:
    """``shared`` (in dim ``offset``), ``tensor memory`` (in dims ``row`` and ``col``, Blackwell's TMEM) or
    ``distributed`` (anything else: registers, lanes, warps)."""
    if layout.has_in_dim("offset"):
        return "shared"
    if layout.has_in_dim("row") and layout.has_in_dim("col"):
        return "tensor memory"
    return "distributed"


def _check_roles(usage: str, *roles: tuple[str, LinearLayout, str]) -> None:
    """Each ``(name, layout, kind)``: the layout must be of that kind (``distributed`` / ``shared``).
    Two arguments of opposite kinds given the other way round are reported as swapped."""
    wrong = [(name, layout, kind) for name, layout, kind in roles if _kind(layout) != kind]
    if not wrong:
        return
    if len(roles) == 2 == len(wrong) and roles[0][2] != roles[1][2]:
        (a, _, ka), (b, _, kb) = roles
        raise LayoutError(f"{a} and {b} look swapped: {a} is a {kb} layout and {b} a {ka} one; "
                          f"the order is `{usage}`")
    name, layout, kind = wrong[0]
    hint = ""
    if (len(wrong) == 1 and len(roles) == 2 and all(k == "distributed" for _, _, k in roles)
            and _kind(layout) == "shared"):
        hint = " (a shared layout and the distributed layout that reads or writes it: `banks SHARED DIST`)"
    raise LayoutError(f"{name}: expected a {kind} layout ({_KINDS[kind]}); got a {_kind(layout)} layout "
                      f"(in dims {', '.join(layout.in_dim_names)}); usage: `{usage}`{hint}")


def _target(args: argparse.Namespace):
    """The ``Target`` that ``--target`` / ``--device`` select, or None (the default target) when neither is given."""
    arch, device = getattr(args, "target", None), getattr(args, "device", None)
    if arch is None and device is None:
        return None
    from linear_layouts.target import named_target

    try:
        return named_target(arch, device)
    except LayoutError as error:
        message = str(error)
        if message.startswith("device: "):
            raise LayoutError(f"--device: {message[len('device: '):]}") from None
        raise LayoutError(f"{'--device' if message.startswith('device') else '--target'}: {message}") from None


def _check_lanes(layout: LinearLayout, what: str, target=None, *, analyzed: bool = True) -> None:
    """A distributed layout's lanes against the target's (``--target``): another count is an error; without
    a target, a layout the command analyzes (``analyzed``) with 64 lanes (an AMD wavefront) asks for
    ``--target gfx942``; another count than 32 or 64 warns."""
    if _kind(layout) != "distributed":
        return
    lanes = layout.in_dim_size("lane", missing_ok=True)
    if target is not None:
        if lanes != target.lanes:
            raise LayoutError(f"{what} has {lanes} lane{'s' if lanes != 1 else ''} per warp; a warp of --target "
                              f"{target.arch} has {target.lanes}")
        return
    if lanes == 64 and analyzed:
        raise LayoutError(f"{what} has 64 lanes per warp (an AMD CDNA wavefront): pass --target gfx942 (the "
                          "default target, sm_90, has 32)")
    if lanes not in (32, 64):
        _warn(f"{what} has {lanes} lane{'s' if lanes != 1 else ''} per warp; a warp has 32 lanes on NVIDIA GPUs "
              "(64 on AMD CDNA): check threads_per_warp (its entries multiply to the lane count)")


def _check_dtype(text: str, bits: int, dtype: str | None, what: str) -> None:
    """Warns when --dtype disagrees with the element width a shared layout was built for."""
    named = _spec_bitwidth(text)
    if dtype is not None and named is not None and named != bits:
        _warn(f"--dtype {dtype} is {bits}-bit, but {what} was built for {named}-bit elements (element_bitwidth="
              f"{named}): its swizzle is laid out for {named}-bit elements, so the banks shown are those of the "
              "layout misused with another type")


#: The ``-o`` value that names standard output rather than a file (the POSIX convention; ``./-`` is a file named ``-``).
STDOUT = "-"


def _check_output(args: argparse.Namespace) -> None:
    """A LayoutError for ``-o ""``: an output is ``-`` (standard output) or a file path, never empty (an empty
    path was standard output, and ``explore`` served the page)."""
    if getattr(args, "output", None) == "":
        raise LayoutError(f"-o/--output: an empty path; write '{STDOUT}' for standard output, else a file path")


def _output_path(args: argparse.Namespace) -> str | None:
    """The file ``-o`` names, or None for standard output: ``-o FILE`` -> ``"FILE"``; no ``-o`` or ``-o -`` -> None."""
    output = getattr(args, "output", None)
    return None if output is None or output == STDOUT else output


def _write_file(path: str, content: str | bytes) -> None:
    """Write ``content`` to ``path``; a path that cannot be written (or is no path: a NUL character in it) is
    a LayoutError naming ``-o``."""
    data = content if isinstance(content, bytes) else content.encode("utf-8", "backslashreplace")
    if "\0" in path:
        raise LayoutError(f"-o {quote(path)}: not a valid path (a NUL character)")
    try:
        with open(path, "wb") as handle:
            handle.write(data)
    except OSError as error:
        raise LayoutError(f"-o {quote(path)}: cannot write there: {error.strerror or error}") from None
    _flush_warnings()


#: Width of text written to a file or a pipe (a terminal's own width is used when there is one).
DEFAULT_WIDTH = 100


def _width(args: argparse.Namespace, *, views: bool = False) -> int | None:
    """Columns to fit text to: ``None`` (everything, whole) with --wide or -o; the terminal's width when
    stdout is one; else :data:`DEFAULT_WIDTH` — except for Triton's views and grids (``views``), which a
    file or a pipe gets whole, character for character."""
    if getattr(args, "wide", False) or _output_path(args):
        return None
    if sys.stdout is not None and sys.stdout.isatty():
        return shutil.get_terminal_size((DEFAULT_WIDTH, 40)).columns
    return None if views else DEFAULT_WIDTH


def _write(args: argparse.Namespace, content: str | bytes) -> None:
    """Write ``content`` where ``-o`` says: its file, or standard output (no ``-o``, or ``-o -``): text as
    text (a newline ended), bytes (a PNG) through ``sys.stdout.buffer``."""
    output = _output_path(args)
    if output:
        _write_file(output, content)
        print(f"wrote {output}", file=sys.stderr)
    elif sys.stdout is None:
        raise LayoutError("stdout is closed: use -o FILE")
    elif isinstance(content, bytes) and sys.stdout.isatty():
        raise LayoutError("--format png: binary output; use -o FILE.png (or redirect stdout)")
    else:
        _flush_warnings()
        try:
            if isinstance(content, bytes):
                sys.stdout.buffer.write(content)
            else:
                sys.stdout.write(content if content.endswith("\n") else content + "\n")
            sys.stdout.flush()
        except BrokenPipeError:
            raise
        except OSError as error:  # a full disk, a device that refuses writes
            _discard_stdout()
            raise LayoutError(f"stdout: cannot write: {error.strerror or error}") from None


def _discard_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush of what could not be written
    neither fails nor prints a second error."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


# --------------------------------------------------------------------------------------------------
# show / matrix


def cmd_show(args: argparse.Namespace) -> int:
    """Picture one layout: Triton's text view, SVG, PNG, HTML, its bases as JSON, or its CuTe form."""
    from linear_layouts.present.viz.text import is_shared_layout, layout_view

    bits = None if args.dtype is None else _bitwidth(args.dtype)   # checked even where a distributed layout ignores it
    if args.format in ("gluon", "ttgir"):
        from linear_layouts.present.viz.text import wrap_code

        text, notes = _shared_text(args, bits)
        language, marker = ("python", "#") if args.format == "gluon" else ("c", "//")
        _write(args, "\n".join([wrap_code(text, _width(args), "python" if args.format == "gluon" else "text")]
                               + [wrap_code(f"{marker} {note}", _width(args), language) for note in notes]))
        return 0
    layout = _layout(args.layout, _shape(args.shape))
    shared = is_shared_layout(layout)
    width = _bitwidth(args.dtype, _spec_bitwidth(args.layout) or 32) if shared else 32
    _check_lanes(layout, "LAYOUT", analyzed=False)
    if shared:
        _check_dtype(args.layout, width, args.dtype, "LAYOUT")
    title = args.title or args.layout.strip()
    limit = _limit(args)
    padding = _padding(args.layout, "LAYOUT")
    pads = ", ".join(f"{p} unused after every {i}" for i, p in padding)
    if padding and args.format in ("json", "cute"):
        raise LayoutError(f"LAYOUT: a PaddedSharedLayout ({pads} elements) is no linear layout: its {args.format} "
                          "form would be the unpadded one; --format text, grid, svg, png or html show it")
    note = f"\n(offsets of the linear part; the padding inserts {pads} elements)" if padding else ""
    if args.format == "text":
        _write(args, layout_view(layout, args.hw, max_width=_width(args, views=True), **limit) + note)
    elif args.format == "grid":
        from linear_layouts.present.viz.grid import distributed_grid, shared_grid
        from linear_layouts.present.viz.grid_text import grid_text

        picture = (shared_grid(layout, width, view=args.view, title=title, **limit) if shared
                   else distributed_grid(layout, label=args.label, title=title, **limit))
        _write(args, grid_text(picture, max_width=_width(args, views=True)) + note)
    elif args.format == "json":
        from linear_layouts.present.viz.text import wrap_code

        _write(args, wrap_code(layout.to_json(), _width(args), "text"))
    elif args.format == "cute":
        from linear_layouts.present.reports import cute_report

        _write(args, cute_report(layout, source=_cute_source(args.layout), width=_width(args)))
    elif args.format == "svg":
        from linear_layouts.present.viz.svg import distributed_svg, shared_svg

        _write(args, shared_svg(layout, width, view=args.view, title=title, **limit) if shared
               else distributed_svg(layout, title=title, label=args.label, **limit))
    elif args.format == "png":
        from linear_layouts.present.viz.png import distributed_png, shared_png

        _write(args, shared_png(layout, width, title=title, view=args.view, **limit) if shared
               else distributed_png(layout, title=title, label=args.label, **limit))
    else:
        from linear_layouts.present.viz.page import layout_html

        _write(args, layout_html(layout, title=title, dtype=width, **limit))
    return 0


def cmd_matrix(args: argparse.Namespace) -> int:
    """The layout's F2 matrix (rows: output bits, columns: input bits, least significant first)."""
    from linear_layouts.present.viz.text import matrix_text

    layout = _layout(args.layout, _shape(args.shape))
    if args.format == "svg":
        from linear_layouts.present.viz.svg import matrix_svg

        _write(args, matrix_svg(layout, title=args.layout.strip(), **_limit(args)))
    else:
        _write(args, matrix_text(layout, **_limit(args)))
    return 0


# --------------------------------------------------------------------------------------------------
# banks / swizzle


def cmd_banks(args: argparse.Namespace) -> int:
    """Wavefronts of DIST storing to / loading from SHARED, with the per-step bank hits."""
    steps = parse_int(args.steps, "--steps", signed=True)
    if steps < 0:
        raise LayoutError(f"--steps: the number of steps to list must be 0 or more, got {quote(steps)}")
    wrong = "--load" if args.op == "load" and args.load else "--store" if args.op == "store" and args.store else None
    if wrong:
        raise LayoutError(f"{wrong}: not with --op {args.op}; the other layout of a --op load is --store (the one that "
                          "stored the tile), of a --op store --load (the one that will load it)")
    if args.format == "svg" and (args.store or args.load):
        raise LayoutError(f"{'--store' if args.store else '--load'}: the ranked table is text; not with --format svg")
    shape = _shape(args.shape)
    dist = _layout(args.dist, shape, "DIST")
    shared = _layout(args.shared, shape or list(dist.out_dims.values()), "SHARED")
    _check_roles("banks SHARED DIST", ("SHARED", shared, "shared"), ("DIST", dist, "distributed"))
    bits = _bitwidth(args.dtype, _spec_bitwidth(args.shared))
    target = _target(args)
    _check_lanes(dist, "DIST", target)
    _check_dtype(args.shared, bits, args.dtype, "SHARED")
    on = {} if target is None else {"target": target}
    padding = _padding(args.shared, "SHARED")
    if padding:
        on["padding"] = padding
    if args.format == "svg":
        from linear_layouts.present.viz.bank_steps import bank_steps
        from linear_layouts.present.viz.svg import bank_hits_svg

        steps = bank_steps(shared, dist, bits, op=args.op, **_limit(args), **on)
        _write(args, bank_hits_svg(steps, title=f"{args.op}: bank hits per step ({bits}-bit)"))
        return 0
    from linear_layouts.present.reports import banks_report

    out = banks_report(shared, dist, bits, op=args.op, steps=steps, width=_width(args),
                       **_limit(args), **on)
    other = args.store if args.op == "load" else args.load
    if other:
        from linear_layouts.analysis.shared_advice import suggest_shared_layout

        option = "--store" if args.op == "load" else "--load"
        other_layout = _layout(other, shape or list(dist.out_dims.values()), option)
        _check_roles(f"banks SHARED DIST {option} LAYOUT", (option, other_layout, "distributed"))
        _check_lanes(other_layout, option, target)
        store, load = (other_layout, dist) if args.op == "load" else (dist, other_layout)
        given = _descriptor(args.shared, shape or list(dist.out_dims.values()), "SHARED", bits)
        advice = suggest_shared_layout(store, load, args.dtype or bits, given=given,
                                       **{k: v for k, v in on.items() if k != "padding"})
        from linear_layouts.present.reports import advice_report

        out += "\n\nSHARED is the 'given' row:\n" + advice_report(advice, width=_width(args))
    _write(args, out)
    return 0


#: LOAD keywords of ``swizzle`` that name a consumer without a register layout.
_CONSUMERS = {"wgmma-a": ("wgmma", 0), "wgmma-b": ("wgmma", 1), "tma": ("tma", None)}


def cmd_swizzle(args: argparse.Namespace) -> int:
    """The shared layouts for STORE then LOAD (a layout, or a consumer: wgmma-a, wgmma-b, tma), ranked,
    and the one recommended (``reports.swizzle.RULE``); with a LOAD layout, after the optimal swizzle's
    construction."""
    from linear_layouts.analysis.shared_advice import Consumer, suggest_shared_layout

    shape = _shape(args.shape)
    store = _layout(args.store, shape, "STORE")
    bits = _bitwidth(args.dtype)
    target = _target(args)
    on = {} if target is None else {"target": target}
    _check_lanes(store, "STORE", target)
    keyword = args.load.strip().lower()
    if args.ldmatrix and keyword in _CONSUMERS:
        raise LayoutError(f"--ldmatrix: LOAD {keyword} is a consumer that reads shared memory itself; --ldmatrix "
                          "says a LOAD layout is read with ldmatrix")
    if args.ldmatrix and args.format == "cute":
        raise LayoutError("--ldmatrix: --format cute ranks CuTe swizzles for LOAD read element by element; "
                          "use --format text (or gluon / ttgir) with --ldmatrix")
    load = None
    if keyword in _CONSUMERS:
        _check_roles("swizzle STORE LOAD", ("STORE", store, "distributed"))
        kind, operand = _CONSUMERS[keyword]
        consumer = Consumer.wgmma(operand) if kind == "wgmma" else Consumer.tma()
    else:
        load = _layout(args.load, shape or list(store.out_dims.values()), "LOAD")
        _check_roles("swizzle STORE LOAD", ("STORE", store, "distributed"), ("LOAD", load, "distributed"))
        _check_lanes(load, "LOAD", target)
        consumer = Consumer.ldmatrix(load) if args.ldmatrix else Consumer.local_load(load)
    width = _width(args)
    if args.format == "cute" and load is not None:
        from linear_layouts.present.reports import cute_swizzle_report

        _write(args, cute_swizzle_report(store, load, bits, width=width))
        return 0
    advice = suggest_shared_layout(store, consumer, args.dtype, **on)
    if args.format in ("gluon", "ttgir"):
        from linear_layouts.present.viz.text import wrap_code

        _write(args, wrap_code(_layout_text(advice.best.descriptor, args.format, list(store.out_dims.values())),
                               width, "python" if args.format == "gluon" else "text"))
        return 0
    from linear_layouts.present.reports import advice_report

    if args.format == "cute":  # a consumer: the recommended NVMMA layout in CuTe's words
        from linear_layouts.present.reports import cute_advice_report

        _write(args, cute_advice_report(advice, width=width))
        return 0
    if load is None:
        _write(args, advice_report(advice, width=width))
        return 0
    from linear_layouts.present.reports import swizzle_report

    # the construction and its baselines first, then every Gluon layout ranked and the one recommended
    _write(args, swizzle_report(store, load, bits, width=width, **_limit(args), **on) + "\n\n" +
           advice_report(advice, width=width))
    return 0


# --------------------------------------------------------------------------------------------------
# convert


def cmd_convert(args: argparse.Namespace) -> int:
    """Plan the conversion SRC -> DST; --emit cuda prints the kernel; --run verifies it on a GPU."""
    if args.format != "text" and (args.emit or args.run):
        raise LayoutError(f"{'--emit' if args.emit else '--run'}: goes with the plan (--format text); --format "
                          f"{args.format} prints only the layouts")
    shape = _shape(args.shape)
    src = _layout(args.src, shape, "SRC")
    dst = _layout(args.dst, shape or list(src.out_dims.values()), "DST")
    _check_roles("convert SRC DST", ("SRC", src, "distributed"), ("DST", dst, "distributed"))
    if dict(src.out_dims) != dict(dst.out_dims):
        raise LayoutError(f"DST: tensor {dict(dst.out_dims)} differs from SRC's {dict(src.out_dims)}")
    bits = _bitwidth(args.dtype)
    target = _target(args)
    on = {} if target is None else {"target": target}
    _check_lanes(src, "SRC", target)
    _check_lanes(dst, "DST", target)
    from linear_layouts.analysis.conversion import plan_conversion

    if args.format in ("gluon", "ttgir"):
        shape_of = list(src.out_dims.values())
        lines = [f"src = {_layout_text(_descriptor(args.src, shape, 'SRC', bits), args.format, shape_of)}",
                 f"dst = {_layout_text(_descriptor(args.dst, shape, 'DST', bits), args.format, shape_of)}"]
        plan = plan_conversion(src, dst, bits, **on)
        if plan.shared_layout is not None:
            from linear_layouts.layouts.recognize import recognize

            scratch = recognize(plan.shared_layout, dtype=bits)
            lines.append(f"shared = {_layout_text(scratch, args.format, shape_of)}  # the plan's scratch layout")
        from linear_layouts.present.viz.text import wrap_code

        _write(args, wrap_code("\n".join(lines), _width(args), "python" if args.format == "gluon" else "text"))
        return 0
    from linear_layouts.present.reports import plan_report

    out = [plan_report(src, dst, bits, width=_width(args), **_limit(args), **on)]
    if args.emit == "cuda":
        from linear_layouts.codegen.plan import conversion_kernel

        from linear_layouts.present.viz.text import wrap_code

        kernel = conversion_kernel(src, dst, bits, **_limit(args), **on)
        out += ["", wrap_code(kernel.source, _width(args), "c")]   # its opening comment explains the launch
    _write(args, "\n".join(out))
    if args.run:
        from linear_layouts.codegen.verify import verify_conversion

        try:
            result = verify_conversion(src, dst, bits, list(src.out_dims.values()), **on)
        except (ImportError, RuntimeError, OSError) as error:
            raise LayoutError(f"--run: needs an NVIDIA GPU with CuPy; {error}") from None
        verdict = "ok" if result.ok else "WRONG"
        print(f"ran {result.kernel} on the GPU: {result.checked} elements checked, {result.wrong} wrong: {verdict}")
        return 0 if result.ok else 1
    return 0


# --------------------------------------------------------------------------------------------------
# demo / explore


def cmd_demo(args: argparse.Namespace) -> int:
    """Layout A of the paper, then the tutorial's 16x32 transpose end to end."""
    from linear_layouts.present.reports import demo_report

    _write(args, demo_report(_width(args)))
    return 0


def _explorer_page(args: argparse.Namespace) -> str:
    """The page: each --layout (a distributed one) as its own scenario, the first of them selected; the
    --store/--load pair next; then the default scenarios. A --layout that cannot be shown is a warning."""
    from linear_layouts.present.viz.explorer import default_catalog, default_scenarios, explorer_data, explorer_html
    from linear_layouts.present.viz.scenarios import layout_scenario, pair_scenario

    scenarios = default_scenarios()
    catalog = default_catalog()
    limit = _limit(args).get("max_elements", MAX_PICTURE_ELEMENTS)  # the page draws every element
    shape, bits = _shape(args.shape), _bitwidth(args.dtype, 32)      # checked even where no layout reads them

    def drawable(layout: LinearLayout, what: str) -> LinearLayout:
        check_layout_size(layout, limit, f"{what}: the explorer page")
        return layout

    own = []
    for spec in args.layout or []:
        layout = drawable(_layout(spec, shape, "--layout"), "--layout")
        if _kind(layout) != "distributed":
            _warn(f"--layout {quote(spec.strip())}: a {_kind(layout)} layout; the explorer shows distributed layouts "
                  "there" + (" (type its bases under 'Type shared bases' to use it as a scenario's shared layout)"
                             if _kind(layout) == "shared" else ""))
            continue
        catalog.append((spec.strip(), layout))
        scenario = layout_scenario(layout, bits, spec.strip())
        try:
            explorer_data([scenario], [])    # what the page needs of it: one CTA, 32-lane warps, ...
        except LayoutError as error:
            _warn(f"--layout {quote(spec.strip())}: not shown as a scenario: {error}")
            continue
        own.append(scenario)
    if args.store or args.load:
        if not (args.store and args.load):
            raise LayoutError("--store and --load go together")
        store = drawable(_layout(args.store, shape, "--store"), "--store")
        load = drawable(_layout(args.load, shape or list(store.out_dims.values()), "--load"), "--load")
        _check_roles("explore --store STORE --load LOAD", ("--store", store, "distributed"),
                     ("--load", load, "distributed"))
        try:
            pair = pair_scenario(store, load, bits, args.store, args.load)
            explorer_data([pair], [])    # what the page needs of it, told by option
        except LayoutError as error:
            message = str(error)
            for name, option in (("store_layout: ", "--store: "), ("load_layout: ", "--load: ")):
                if message.startswith(name):
                    raise LayoutError(option + message[len(name):]) from None
            raise
        scenarios = [pair] + scenarios
    return explorer_html(own + scenarios, catalog)


def cmd_explore(args: argparse.Namespace) -> int:
    """Write the explorer page (--output) or serve it on 127.0.0.1 only."""
    port = parse_int(args.port, "--port", signed=True)
    if not 0 <= port <= 65535:
        raise LayoutError(f"--port: a TCP port is 0..65535 (0: any free port), got {quote(port)}")
    if args.output == STDOUT:
        _write(args, _explorer_page(args))
        return 0
    page = _explorer_page(args).encode("utf-8")
    if args.output:
        _write_file(args.output, page)
        print(f"wrote {args.output} (open it in a browser; it works offline)")
        return 0
    from linear_layouts.present.viz.server import explorer_server, serve_until_interrupted

    try:
        server = explorer_server(page, port)
    except OSError as error:
        if error.errno == errno.EADDRINUSE:
            raise LayoutError(f"--port {port}: 127.0.0.1:{port} is already in use (another explorer?); "
                              "choose another with --port N, or --port 0 for any free port") from None
        raise LayoutError(f"--port {port}: cannot listen on 127.0.0.1:{port}: {error.strerror}"
                          + ("; ports below 1024 need privileges, try --port 0" if error.errno == errno.EACCES
                             else "")) from None
    _flush_warnings()
    print(f"serving the explorer on http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C stops)", flush=True)
    serve_until_interrupted(server)
    return 0


def _ints(text: str, what: str, *, signed: bool = False) -> tuple[int, ...]:
    """``"32,28,28,512"`` / ``"[0, 3, 1, 2]"`` -> a tuple of ints (ASCII digits, ``limits.parse_int``; a sign where
    ``signed``); ``""`` / ``"[]"``: none (a 0-d tensor); LayoutError naming ``what`` for an empty or junk part."""
    cleaned = text.strip().strip("[]()")
    if not cleaned.strip():
        return ()
    out = []
    for part in cleaned.split(","):
        if not part.strip():
            raise LayoutError(f"{what}: expected integers separated by commas, like 0,3,1,2, got {quote(text)} (an "
                              "empty part between commas)")
        out.append(parse_int(part, what, signed=signed, max_digits=12))
    return tuple(out)


#: ``ops.explain``'s argument names -> the ``permute`` command's, for its messages.
_PERMUTE_NAMES = (("shape: ", "SHAPE: "), ("dims: ", "DIMS: "), ("src_offset: ", "--src-offset: "),
                  ("dst_offset: ", "--dst-offset: "))


def cmd_permute(args: argparse.Namespace) -> int:
    """What ``ops.permute`` launches for a contiguous tensor of SHAPE permuted by DIMS (``ops.explain``), on the GPU
    ``--device`` / ``--target`` name (its SMs and L2, or ``--sms`` and ``--l2-mib``), told on the CPU."""
    from linear_layouts.ops import explain
    from linear_layouts.ops.explain import moved_element
    from linear_layouts.ops.kernels import GridShape
    from linear_layouts.ops.launch import MIN_ARCH
    from linear_layouts.target import DEFAULT_TARGET

    shape = _ints(args.shape, "SHAPE")
    dims = _ints(args.dims, "DIMS", signed=True)
    try:
        _bitwidth(args.dtype)   # its errors named --dtype
    except LayoutError as error:
        try:  # the ops also move complex types, by their size
            moved_element(args.dtype)
        except LayoutError:
            raise error from None
    target = _target(args) or DEFAULT_TARGET
    if target.backend != "cuda" or target.capability < MIN_ARCH:
        option, named = ("--device", f"{args.device} ({target.arch})") if args.device else ("--target", target.arch)
        raise LayoutError(f"{option}: the layout ops compile for NVIDIA GPUs of sm_{MIN_ARCH} and later "
                          f"(linear_layouts.ops.launch.MIN_ARCH), not {named}")
    sms = target.sms if args.sms is None else parse_int(args.sms, "--sms", max_digits=4)
    l2_mib = target.l2_bytes >> 20 if args.l2_mib is None else parse_int(args.l2_mib, "--l2-mib", max_digits=5)
    if sms < 1:
        raise LayoutError(f"--sms: a device has 1 SM or more, got {sms}")
    if l2_mib < 1:
        raise LayoutError(f"--l2-mib: a device has 1 MiB of L2 or more, got {l2_mib}")
    device = GridShape(sms, l2_mib << 20, target.arch)
    offsets = (parse_int(args.src_offset, "--src-offset", max_digits=4),
               parse_int(args.dst_offset, "--dst-offset", max_digits=4))
    try:
        summary = explain(shape, dims, args.dtype, device, *offsets)
    except LayoutError as error:
        message = str(error)
        for name, option in _PERMUTE_NAMES:
            if message.startswith(name):
                raise LayoutError(option + message[len(name):]) from None
        raise
    note = _assumed_device(target, sms_given=args.sms is not None, l2_given=args.l2_mib is not None) \
        if args.target is not None and args.device is None else ""
    _write(args, str(summary) + "\n" + (f"  {note}\n" if note else ""))
    return 0


def _article(name: str) -> str:
    """``"an"`` before a device name read letter by letter from a vowel sound (an A100, an H100, an MI300X), else
    ``"a"`` (a B200)."""
    return "an" if name[:1].upper() in "AEFHILMNORSX" else "a"


def _assumed_device(target: Target, *, sms_given: bool, l2_given: bool) -> str:
    """The note naming the device whose SMs and L2 ``permute`` planned on, for ``--target`` without ``--device``
    (the architecture's device, or a stand-in's: sm_86 plans as an A100), or ``""`` when ``--sms`` and
    ``--l2-mib`` gave both."""
    facts = ([] if sms_given else [(f"{target.sms} SMs", "--sms")]) + \
        ([] if l2_given else [(f"{target.l2_bytes >> 20} MiB L2", "--l2-mib")])
    if not facts:
        return ""
    options = "/".join(option for _, option in facts)
    them = "them" if len(facts) > 1 else "it"
    return (f"(as {_article(target.device)} {target.device}: {', '.join(fact for fact, _ in facts)}; "
            f"{options} to set {them})")


def _kernel_file_target(arch: str) -> None:
    """``--target`` of ``report KERNEL.py``: an architecture Triton compiles kernel files for
    (``triton_model.kernel_file.parse_target``), checked before the file runs; else a LayoutError naming
    ``--target``."""
    from linear_layouts.triton_model.kernel_file import parse_target

    try:
        parse_target(arch)
    except LayoutError as error:
        message = str(error)
        message = message[len("target: "):] if message.startswith("target: ") else message
        raise LayoutError(f"--target: {message}") from None


def cmd_report(args: argparse.Namespace) -> int:
    """The layouts and shared-memory traffic of a real kernel (a .py kernel file or TTGIR / dump text)."""
    from linear_layouts.pipeline.from_file import analysis_target, report_for_file
    from linear_layouts.present.reports.kernel import kernel_report_html, kernel_report_text

    if args.target is not None or args.device is not None:
        _target(args)  # a misspelt or mismatched --target / --device is refused before the compile
    if args.target is not None and Path(args.kernel).suffix == ".py":
        _kernel_file_target(args.target)
    report = report_for_file(args.kernel, target=args.target, device=args.device,
                             with_triton_estimate=not args.no_triton_estimate)
    target = analysis_target(report.target, args.target, args.device)
    if args.format == "html":
        text = kernel_report_html(report, pictures=not args.no_pictures, target=target)
    else:
        text = kernel_report_text(report, layouts=not args.no_layouts, width=_width(args), target=target)
    _write(args, text)
    return 0


# --------------------------------------------------------------------------------------------------
# The parser


class _Parser(argparse.ArgumentParser):
    """argparse, with "did you mean" for a mistyped subcommand or choice (exit status 2, one line);
    ``subcommands`` maps each subcommand to its parser."""

    subcommands: dict[str, argparse.ArgumentParser]

    def error(self, message: str) -> NoReturn:
        """One line of error (not argparse's whole usage) with a pointer to ``-h``, exit status 2."""
        match = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if match:
            message += did_you_mean(match[1], [c.strip(" '") for c in match[2].split(",")])
        # argparse quotes the argument whole ('invalid int value: ...'): at most ~80 characters of it
        message = cut_long_runs(re.sub(r"'([^']{%d,})'" % (QUOTE_CHARS + 1), lambda m: quote(m[1]), message))
        self.exit(2, _one_line(f"{self.prog}: error: {message} (`{self.prog} -h` lists the arguments)") + "\n")


#: A negative number or a list of integers that starts with one (``-1,0``): a value, never an option.
_NEGATIVE_VALUE = re.compile(r"^-[0-9]+(\s*,\s*[+-]?[0-9]+)*$|^-[0-9]*\.[0-9]+$")

_LAYOUT_HELP = ("a layout spec: Gluon syntax such as 'BlockedLayout([1,4],[4,8],[4,1],[1,0])', its bases as JSON "
                "(LinearLayout.to_json), CuTe text such as 'Swizzle<3,4,3> o (8,64):(64,1)', or @FILE")
_OUTPUT_HELP = "write to this file instead of stdout ('-': stdout itself; ./- is a file named -)"
_DTYPE_HELP = "element type: fp8, fp16, bf16, fp32, i8, i32, fp64, float8_e4m3fn, ... (or the width in bits)"


def _core_description() -> str:
    """Which algebra core runs: the compiled one, or pure Python and why (pip hides the build's own note)."""
    from linear_layouts.core import _ccore

    if _ccore.backend() == "c":
        return "compiled core"
    if _ccore.available():
        return "pure-Python core: LINEAR_LAYOUTS_PURE_PYTHON is set"
    return "pure-Python core: the C extension was not built at install (pip install -v . shows why)"


def build_parser() -> tuple[_Parser, dict[str, Callable[[argparse.Namespace], int]]]:
    parser = _Parser(
        prog="linear-layouts",
        description="Tensor layouts as linear maps over F2: see them, cost them, convert between them.",
        epilog="LAYOUT specs: Gluon syntax, e.g. 'BlockedLayout([1,4],[4,8],[4,1],[1,0])', JSON bases "
               "'{\"bases\": {\"register\": [[0,1]], ...}, \"out_dims\": {\"dim0\": 16, ...}}', or CuTe text "
               "'Swizzle<3,4,3> o (8,64):(64,1)'; @FILE reads a file. Exit status: 0 done; 1 a kernel run by "
               "convert --run gave a wrong result; 2 bad input or a missing requirement (such as a GPU for --run), "
               "told in one line.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__} ({_core_description()})",
                        help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser,
                                help="what to do; `linear-layouts COMMAND -h` explains each")
    handlers: dict[str, Callable[[argparse.Namespace], int]] = {}
    parser.subcommands = {}

    def add(name: str, handler: Callable[[argparse.Namespace], int], help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        handlers[name] = handler
        parser.subcommands[name] = p
        return p

    def wide(p: argparse.ArgumentParser) -> None:
        p.add_argument("--wide", action="store_true",
                       help="print every column and line whole (default: fit the terminal's width, "
                            f"{DEFAULT_WIDTH} columns when not a terminal; Triton's views and --format grid go whole to files and "
                            "pipes)")

    def shape_and_output(p: argparse.ArgumentParser) -> None:
        p.add_argument("--shape", help="tensor shape, e.g. 16,32 (needed by Gluon descriptors)")
        p.add_argument("-o", "--output", help=_OUTPUT_HELP)
        p.add_argument("--max-elements", metavar="N",
                       help="refuse layouts with more than N inputs or elements (default: "
                            f"{MAX_PICTURE_ELEMENTS} for pictures and views, {MAX_ELEMENTS} for analyses and "
                            "kernels; see SECURITY.md)")

    def device(p: argparse.ArgumentParser) -> None:
        p.add_argument("--device", help="the device whose measured cost table prices the plans: H100, H200, A100, "
                                        "B200, MI300X (default: the target's; a device without a table is priced "
                                        "by the nearest one, and the output says which)")

    def target_and_device(p: argparse.ArgumentParser) -> None:
        p.add_argument("--target", help="the GPU architecture: sm_80, sm_90, sm_100, gfx942 (default: sm_90, or "
                                        "--device's): its lanes per warp, bank model and instructions")
        device(p)

    p = add("show", cmd_show, "picture a layout: who holds each element (distributed) or where it lives (shared)")
    p.add_argument("layout", metavar="LAYOUT", help=_LAYOUT_HELP)
    shape_and_output(p)
    p.add_argument("--format", choices=["text", "grid", "svg", "png", "html", "json", "cute", "gluon", "ttgir"],
                   default="text",
                   help="text: Triton's view (default); grid: the picture as text (cells as --label says, "
                        "| and --- between warps, * on replicated cells); svg / png / html: a picture; json: the bases; "
                        "cute: the simplest CuTe form (print form, C++, CuTe DSL) or why there is none; "
                        "gluon / ttgir: the simplest Gluon descriptor (Python source) / Triton's attribute text")
    p.add_argument("--hw", action="store_true", help="text: the hardware point of view (per warp / per offset)")
    wide(p)
    p.add_argument("--dtype", help="shared layouts: element type for the bank colours (default: the spec's or 32-bit)")
    p.add_argument("--view", choices=["logical", "physical"], default="logical",
                   help="shared layouts, svg/png/grid: the tensor grid coloured by bank (logical), or memory itself, "
                        "one 128-byte row of the 32 banks per line (physical)")
    p.add_argument("--label", choices=["auto", "thread", "lane", "register", "warp"], default="auto",
                   help="distributed layouts, svg/png/grid: what each cell says (auto: thread T over register r)")
    p.add_argument("--title", help="picture title (default: the LAYOUT spec)")

    p = add("matrix", cmd_matrix, "the layout's matrix over F2")
    p.add_argument("layout", metavar="LAYOUT", help=_LAYOUT_HELP)
    shape_and_output(p)
    p.add_argument("--format", choices=["text", "svg"], default="text",
                   help="text (default) or an SVG picture (a dark cell is a 1)")

    p = add("banks", cmd_banks, "shared-memory wavefronts of one access (Lemma 9.4 and the brute-force model)")
    p.add_argument("shared", metavar="SHARED", help="the shared-memory layout (in dim offset), e.g. "
                                                     "'NVMMASharedLayout(128, 16)'; " + _LAYOUT_HELP.split(": ", 1)[1])
    p.add_argument("dist", metavar="DIST", help="the distributed layout that accesses it (in dims register, lane, "
                                                 "warp), e.g. 'BlockedLayout([1,8],[4,8],[4,1],[1,0])'")
    shape_and_output(p)
    p.add_argument("--dtype", help=_DTYPE_HELP + "; default: the width SHARED was built for")
    p.add_argument("--op", choices=["load", "store"], default="load", help="DIST reads (load, default) or writes")
    p.add_argument("--steps", default="16", help="text: how many steps to list")
    p.add_argument("--store", help="--op load: the layout that stored the tile; ranks SHARED against every "
                                   "shared layout a Gluon author can use (the swizzle command's table)")
    p.add_argument("--load", help="--op store: the layout that will load the tile (same table)")
    p.add_argument("--format", choices=["text", "svg"], default="text", help="text (default) or SVG bar charts")
    target_and_device(p)
    wide(p)

    p = add("swizzle", cmd_swizzle, "the shared layouts for STORE then LOAD, ranked: NVMMA (every swizzle), swizzled, "
                                    "padded, the optimal swizzle (LOAD: a layout, or wgmma-a / wgmma-b / tma)")
    p.add_argument("store", metavar="STORE", help="the distributed layout that writes shared memory; " + _LAYOUT_HELP)
    p.add_argument("load", metavar="LOAD", help="the distributed layout that reads it back, or a consumer: "
                                               "wgmma-a, wgmma-b (a wgmma operand), tma (a TMA copy)")
    shape_and_output(p)
    p.add_argument("--dtype", required=True, help=_DTYPE_HELP)
    p.add_argument("--ldmatrix", action="store_true", help="LOAD is read with ldmatrix (16-byte rows needed)")
    target_and_device(p)
    p.add_argument("--format", choices=["text", "cute", "gluon", "ttgir"], default="text",
                   help="text (default): the ranked shared layouts and the §9.2 construction; cute: the best CuTe "
                        "Swizzle<B,M,S> o (row- or column-major) beside the optimum; gluon / ttgir: only the best "
                        "layout, as Gluon source / Triton attribute text")
    wide(p)

    p = add("convert", cmd_convert, "plan the conversion SRC -> DST step by step (and emit / run its kernel)")
    p.add_argument("src", metavar="SRC", help="the distributed layout the data is in; " + _LAYOUT_HELP)
    p.add_argument("dst", metavar="DST", help="the distributed layout it should be in (same tensor shape)")
    shape_and_output(p)
    p.add_argument("--dtype", required=True, help=_DTYPE_HELP)
    p.add_argument("--emit", choices=["cuda"], help="also print the generated CUDA kernel")
    p.add_argument("--format", choices=["text", "gluon", "ttgir"], default="text",
                   help="gluon / ttgir: SRC, DST and the plan's shared layout as Gluon source / Triton attribute text")
    p.add_argument("--run", action="store_true", help="compile, run and verify the kernel (needs a GPU and CuPy)")
    target_and_device(p)
    wide(p)

    wide(add("demo", cmd_demo, "the paper's Layout A, then a 16x32 transpose through shared memory end to end, in six steps"))

    p = add("explore", cmd_explore, "the interactive explorer page, served on 127.0.0.1 (or written with -o)")
    p.add_argument("--port", default="8000", help="port on 127.0.0.1 (0: any free port)")
    p.add_argument("-o", "--output", help="write the page to this file instead of serving it ('-': to stdout)")
    p.add_argument("--layout", action="append", metavar="LAYOUT",
                   help="show a distributed layout: a scenario of its own (the first selected) and an entry of the "
                        "layout picker for scenarios of its shape (repeatable)")
    p.add_argument("--store", help="add a scenario: the layout that writes shared memory")
    p.add_argument("--load", help="... and the layout that reads it")
    p.add_argument("--shape", help="tensor shape for --layout / --store / --load given as Gluon descriptors")
    p.add_argument("--dtype", help=_DTYPE_HELP + " of the --layout and --store/--load scenarios (default: fp32)")
    p.add_argument("--max-elements", metavar="N", help=f"refuse layouts with more than N elements (default: "
                                                      f"{MAX_PICTURE_ELEMENTS}: the page draws every one)")

    p = add("permute", cmd_permute, "what the layout ops (linear_layouts.ops) launch to permute a contiguous "
                                    "tensor: the reduced problem, each kernel, tile, warps and CTAs, told on the CPU")
    p.add_argument("shape", metavar="SHAPE", help="the tensor's shape, e.g. 32,28,28,512")
    p.add_argument("dims", metavar="DIMS", help="the permutation, e.g. 0,3,1,2 (NHWC -> NCHW; negative dims count "
                                                "from the end)")
    p.add_argument("--dtype", required=True, help=_DTYPE_HELP)
    p.add_argument("--target", help="the GPU architecture: sm_80, sm_90, sm_100 (default sm_90, on an H100)")
    p.add_argument("--device", help="a known GPU, whose SMs, L2 and architecture are planned for: A100, H100, H200, "
                                    "B200 (default: --target's device, an H100 for sm_90)")
    p.add_argument("--sms", help="the device's SMs, 1 to 9999, in place of the device's own (an H100 or an H200: "
                                 "132)")
    p.add_argument("--l2-mib", help="its L2 in whole MiB, 1 to 99999, which decides what is L2-resident, in place of "
                                    "the device's own (an H100: 50; an H200: 60)")
    p.add_argument("--src-offset", default="0", help="bytes past a 16-byte aligned address the input starts at "
                                                     "(narrower accesses follow from odd offsets; default 0)")
    p.add_argument("--dst-offset", default="0", help="the same of the output (default 0)")
    p.add_argument("-o", "--output", help=_OUTPUT_HELP)
    p._negative_number_matcher = _NEGATIVE_VALUE   # DIMS -1,0 is a value, as argparse reads DIMS -1

    p = add("report", cmd_report, "every layout and conversion of a real kernel, with Triton's and our "
            "shared-memory traffic (a .py kernel file, which is EXECUTED: imported as Python, then compiled on the "
            "CPU; or TTGIR / MLIR_ENABLE_DUMP text, which is only read)")
    p.add_argument("kernel", metavar="KERNEL_OR_FILE",
                   help="a Triton kernel file (.py: it is executed -- imported as Python, as `python KERNEL.py` "
                        "would run it -- to compile its kernel on the CPU; only this file, only because you name "
                        "it: pass only files you would run yourself) or a TTGIR / MLIR_ENABLE_DUMP text file "
                        "(read, never run)")
    p.add_argument("--target", help=".py kernels: compile for sm_80, sm_90, gfx942, ... (default: --device's "
                                    "architecture, else sm_90); an IR file is analyzed for the target it names "
                                    "(--target, if given, must agree)")
    device(p)
    p.add_argument("--format", choices=["text", "html"], default="text", help="text (default) or one HTML page")
    p.add_argument("-o", "--output", help=_OUTPUT_HELP)
    p.add_argument("--no-layouts", action="store_true", help="text: leave out the list of layouts")
    p.add_argument("--no-pictures", action="store_true", help="html: leave out the pictures")
    p.add_argument("--no-triton-estimate", action="store_true",
                   help="do not ask the installed Triton for its own bank-conflict estimate")
    wide(p)
    return parser, handlers


def _one_line(message: str) -> str:
    """An error message as one line (``errors.one_line``)."""
    from linear_layouts.core.errors import one_line

    return one_line(message)


def _restore_double_dash(command: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """``--opt=--`` as the value ``--`` it writes: Python 3.11's argparse drops that ``--`` and leaves ``[]``."""
    for action in command._actions:
        value = getattr(args, action.dest, None)
        if action.option_strings and action.nargs is None and isinstance(value, list) and value is not action.default:
            setattr(args, action.dest, "--" if value == [] else ["--" if item == [] else item for item in value])


def _undecodable(argv: Sequence[str]) -> str | None:
    """The first argument that is not valid UTF-8 (Python keeps undecodable bytes as lone surrogates)."""
    for position, argument in enumerate(argv, 1):
        try:
            argument.encode("utf-8")
        except UnicodeEncodeError as error:
            return f"argument {position} is not UTF-8 text (character {error.start + 1}): {quote(argument)}"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``). Exit status 0 on success; 1 when ``--run``'s
    kernel gives a wrong result; 2 with one line ``linear-layouts: error: ...`` on stderr for any bad input or
    a missing requirement (``--run`` without a GPU)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    problem = _undecodable(argv)
    if problem:
        print(_one_line(f"linear-layouts: error: {problem}"), file=sys.stderr)
        return 2
    parser, handlers = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:   # the subcommand's parser knows what it accepts: suggest the nearest option
        command = parser.subcommands.get(args.command, parser)
        options = [o for action in command._actions for o in action.option_strings]
        hint = did_you_mean(extra[0].split("=")[0], options) if extra[0].startswith("-") else ""
        command.error(f"unrecognized arguments: {shorten(' '.join(extra))}{hint}")
    if args.command is None:
        parser.print_help()
        return 2
    _restore_double_dash(parser.subcommands[args.command], args)
    texts = _FILE_TEXTS.set({})
    warnings = _WARNINGS.set([])
    try:
        _check_output(args)
        status = handlers[args.command](args)
        _flush_warnings()
        return status
    except LayoutError as error:
        message = str(error) if isinstance(error, _FileSpecError) else _unquoted(str(error))
        print(_one_line(f"linear-layouts: error: {message}"), file=sys.stderr)
        return 2
    except MemoryError:  # a limit raised past what this machine holds (--max-elements)
        print("linear-layouts: error: out of memory: the layout needs more memory than this machine has; lower "
              "--max-elements (the defaults keep every command under 1 GB)", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `linear-layouts demo | head`
        _discard_stdout()
        return 0
    finally:
        _WARNINGS.reset(warnings)
        _FILE_TEXTS.reset(texts)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
