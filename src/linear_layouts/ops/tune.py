"""Autotuning of ``permute``, ``transpose`` and ``cast_transpose``: the planner's launches against the other tiles
(or kernels) of the same problem, timed on the GPU at the first call of a signature, the fastest kept for the
process.

The planner (``ops.launches``) picks a tile from a model of the device (its SMs and L2, ``kernels.GridShape``);
on a GPU or a shape the model reads wrongly another tile of the same problem can be faster. With ``AUTOTUNE`` on
(``LINEAR_LAYOUTS_AUTOTUNE=1`` in the environment when this module is imported, or ``ops.tune.AUTOTUNE = True``),
the first call of a signature moving ``AUTOTUNE_MIN_BYTES`` or more times the planner's launches and the others of
its problem (each compiled at its first use, into the kernel cache): for a tiled transpose of a dense input, the
tiles of ``launches.transpose_candidates``; for a cast-transpose, ``launches.cast_choices`` (tiles where its rows
align, the misaligned kernels where they do not). It times them on the call's stream once the work queued there
has ended, reading the call's input and writing scratch memory, and keeps the fastest, or the planner's where that
is within ``AUTOTUNE_MARGIN`` of it. Later calls of the signature launch the choice at no cost over the planner's.
The choices live for the process (``clear()`` forgets them), as ``torch.backends.cudnn.benchmark``'s do, the
latest ``AUTOTUNE_SIGNATURES`` of them (a program of ever-new shapes tunes each again once forgotten);
``tunings`` records what the latest tunings timed. A first call made while its stream is captured into a CUDA graph is
not tuned (it takes the planner's launches; the first call outside a capture tunes); the host waits for the
timing, once per signature.

Example (on a GPU)::

    from linear_layouts import ops
    ops.tune.AUTOTUNE = True
    y = ops.permute(x, (0, 3, 1, 2))     # the first call of this signature times its candidates
    ops.tune.tunings[-1].chosen          # e.g. '64x64/8w', or 'planned'
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from linear_layouts.core.errors import LayoutError
from linear_layouts.ops import driver as _driver
from linear_layouts.ops import launch as _launch
from linear_layouts.ops.kernels import ChunkedTile, GridShape, TileConfig
from linear_layouts.ops.launches import (
    Copy, _plan, cast_choices, cast_launches, permute_template, pointer_alignment, transpose_candidates,
)
from linear_layouts.ops.plan import MAX_VECTOR_BYTES, SECTOR_BYTES

__all__ = ["AUTOTUNE", "AUTOTUNE_MIN_BYTES", "AUTOTUNE_MARGIN", "AUTOTUNE_ROUNDS", "AUTOTUNE_WINDOW_US",
           "AUTOTUNE_SIGNATURES", "Tuning",
           "Candidate", "Untuned", "tunings", "tune_label", "tuned_template", "tuned_cast_launches", "tune",
           "after_tuning", "tuned_or_planned", "is_tuned", "enabled", "clear", "on_clear", "PLANNED"]

#: Whether ``permute``, ``transpose`` and ``cast_transpose`` tune (module doc); read at each call. Its default: on
#: where ``LINEAR_LAYOUTS_AUTOTUNE`` is set to anything but 0 when this module is imported (as
#: ``LINEAR_LAYOUTS_PURE_PYTHON`` is read).
AUTOTUNE = os.environ.get("LINEAR_LAYOUTS_AUTOTUNE", "").strip() not in ("", "0")
#: The fewest bytes a problem moves (read and written) for it to be tuned, read at a signature's first call: a tensor
#: of 16 MiB. Below, a call is a few µs, which launches from the host, one by one, do not time apart (the timing
#: would choose by its noise).
AUTOTUNE_MIN_BYTES = 32 << 20
#: How much faster than the planner's launches a candidate must time to be taken instead (0.02: 2%).
AUTOTUNE_MARGIN = 0.02
#: Rounds of timing: each candidate once a round, the rounds' median kept.
AUTOTUNE_ROUNDS = 5
#: Microseconds a candidate's timing window lasts at least (as many calls as that takes, at most 100).
AUTOTUNE_WINDOW_US = 200.0
#: The most signatures whose choice (or that they are not tuned) is kept, the least recently asked for forgotten
#: first, as ``ops.dispatch.PLANS`` bounds the call plans; ``tunings`` keeps as many of the latest tunings.
AUTOTUNE_SIGNATURES = 4096
#: The label of the planner's own launches.
PLANNED = "planned"

#: A signature: of ``permute``, ``(shape, dims, element bytes, source and output address mod SECTOR_BYTES,
#: device)``; of ``cast_transpose``, ``("cast", input format, fp8 format, m, n, x, out and out_t address mod
#: SECTOR_BYTES, device)``. The device is last.
Signature = tuple
#: What a tuning chooses: a tile (``permute``, an aligned ``cast_transpose``), a misaligned cast kernel's name, or
#: None for the planner's own launches.
Choice = TileConfig | ChunkedTile | str | None


@dataclass(frozen=True)
class Tuning:
    """One tuning: the ``signature``, the median µs a call of each candidate took (``us``, by ``tune_label``; the
    planner's as ``PLANNED``; a candidate the device does not load is absent, and all are where a launch failed),
    the ``chosen`` label and the wall ``seconds`` it took (compiles included)."""

    signature: Signature
    us: Mapping[str, float]
    chosen: str
    seconds: float


@dataclass(frozen=True)
class Candidate:
    """One launch list a tuning times: its ``choice`` and ``launches(source, scratch)``, the ``(kernel, CTAs,
    argument values)`` of each launch reading the call's input at ``source`` and writing scratch memory from
    ``scratch`` on (``Untuned.scratch_bytes`` of it)."""

    choice: Choice
    launches: Callable[[int, int], list[tuple[Any, int, tuple]]]


class Untuned(Exception):
    """Raised by ``tuned_template`` and ``tuned_cast_launches`` for a signature that is to be tuned and is not yet:
    ``tune`` it (or, inside a graph capture, plan without tuning) and ask again; ``scratch_bytes``: the scratch
    memory its timing writes."""

    def __init__(self, signature: Signature, grid: GridShape, scratch_bytes: int):
        super().__init__(f"signature {signature} is not tuned yet")
        self.signature, self.grid, self.scratch_bytes = signature, grid, scratch_bytes


#: The tunings of this process, in order (the latest ``AUTOTUNE_SIGNATURES``).
tunings: list[Tuning] = []
_choices: OrderedDict[Signature, Choice] = OrderedDict()  # least recently asked for first
_forgetting: list[Callable[[], None]] = []
_lock = threading.Lock()  # one tuning at a time
_choices_lock = threading.Lock()


def _keep(signature: Signature, choice: Choice) -> None:
    """Keep ``choice`` as the signature's, the most recently asked for; forget the least recently asked for beyond
    ``AUTOTUNE_SIGNATURES``."""
    with _choices_lock:
        _choices[signature] = choice
        _choices.move_to_end(signature)
        while len(_choices) > AUTOTUNE_SIGNATURES:
            _choices.popitem(last=False)


def tune_label(choice: TileConfig | ChunkedTile | str) -> str:
    """A candidate's label: ``rows x cols / warps``, with its vectors (elements an access, input / output) and
    blocks where they are not 16 bytes on both sides (in 4 x 4-byte blocks for bytes); ``chunked`` for the chunked
    transpose; a misaligned cast kernel's own name. Example: ``64x64/8w`` for 16-bit tiles of 16-byte vectors,
    ``256x32/4w v2/1`` for fp64 rows of 24."""
    if isinstance(choice, str):
        return choice
    if isinstance(choice, ChunkedTile):
        return "chunked"
    label = f"{choice.rows}x{choice.cols}/{choice.warps}w"
    w = choice.element_bytes
    if (choice.src_vector * w, choice.dst_vector * w, choice.block) != (MAX_VECTOR_BYTES, MAX_VECTOR_BYTES,
                                                                        4 if w == 1 else 1):
        label += f" v{choice.src_vector}/{choice.dst_vector}" + (f" b{choice.block}" if choice.block > 1 else "")
    return label


def _permute_candidates(signature: Signature, grid: GridShape) -> tuple[dict[str, Candidate], int]:
    """``({label: Candidate}, scratch bytes)``: the planner's launches (choice None) first, then each of
    ``transpose_candidates`` the problem takes whose launches differ, writing a scratch output; ``({}, 0)`` where the
    problem is not one to tune (not a tiled transpose, or moving under ``AUTOTUNE_MIN_BYTES``)."""
    shape, dims, itemsize, src, dst, _ = signature
    planned, nbytes = permute_template(shape, dims, itemsize, src, dst, grid)
    if not planned or 2 * nbytes < AUTOTUNE_MIN_BYTES:
        return {}, 0
    tiles = transpose_candidates(_plan(shape, dims, itemsize, pointer_alignment(src, dst)), src, dst, grid)
    templates = {PLANNED: (None, planned)}
    seen = {tuple(planned)}
    for tile in tiles:
        try:
            launches, _ = permute_template(shape, dims, itemsize, src, dst, grid, tile)
        except LayoutError:  # a tile the problem's sizes or addresses do not take
            continue
        if tuple(launches) not in seen:
            seen.add(tuple(launches))
            templates[tune_label(tile)] = (tile, launches)

    def at(template):
        return lambda x, out: [(kernel, ctas, (x + s, out + d) + tail) for kernel, ctas, tail, s, d in template]

    return {label: Candidate(choice, at(t)) for label, (choice, t) in templates.items()}, nbytes


def _cast_buffers(m: int, n: int, out: int, out_t: int) -> tuple[int, int, int]:
    """Offsets in a cast's scratch memory (256-byte aligned) of its ``out``, ``out_t`` and amax: each in a slot of
    its own, ``out`` and ``out_t`` at their addresses mod ``SECTOR_BYTES`` in theirs; the scratch spans the amax's
    offset and 256 bytes more. ``_cast_buffers(100, 100, 8, 3)`` is ``(8, 10243, 20480)``."""
    slot = -(-(m * n + SECTOR_BYTES) // 256) * 256
    return out % SECTOR_BYTES, slot + out_t % SECTOR_BYTES, 2 * slot


def _cast_candidates(signature: Signature, grid: GridShape) -> tuple[dict[str, Candidate], int]:
    """As ``_permute_candidates``, for a cast-transpose: the planner's launches, then each of ``cast_choices``
    whose launches differ, timed with the scale 1.0 by value into scratch ``out``, ``out_t`` and amax."""
    _, input_format, fp8, m, n, x, out, out_t, _ = signature
    input_bytes = 4 if input_format == "fp32" else 2
    if m * n * (input_bytes + 2) < AUTOTUNE_MIN_BYTES:
        return {}, 0
    co, to, ao = _cast_buffers(m, n, out, out_t)

    def launches(choice: Choice, src: int, scratch: int) -> list:
        option = {} if choice is None else {"misaligned": choice} if isinstance(choice, str) else {"tile": choice}
        return cast_launches(input_format, fp8, m, n, src, scratch + co, scratch + to, None, 1.0, scratch + ao, grid,
                             **option)

    def at(choice: Choice):  # a null scale pointer is 0 as a launch's value
        return lambda src, scratch: [(item.kernel, item.ctas, tuple(0 if v is None else v for v in item.values))
                                     for item in launches(choice, src, scratch)]

    base = 1 << 40  # made-up addresses with the signature's alignments: what tells the launch lists apart
    found: dict[str, Candidate] = {}
    seen: set = set()
    for choice in [None, *cast_choices(input_format, m, n, base + x, base + co, base + to)]:
        items = tuple(launches(choice, base + x, base))
        if any(isinstance(item, Copy) for item in items):  # a cast whose transpose is a copy: not timed apart
            continue
        if items not in seen:
            seen.add(items)
            found[PLANNED if choice is None else tune_label(choice)] = Candidate(choice, at(choice))
    return (found, ao + 256) if PLANNED in found else ({}, 0)


def _candidates(signature: Signature, grid: GridShape) -> tuple[dict[str, Candidate], int]:
    """``({label: Candidate}, scratch bytes)`` of a signature; ``({}, 0)`` where it is not one to tune."""
    found, nbytes = (_cast_candidates if signature[0] == "cast" else _permute_candidates)(signature, grid)
    return (found, nbytes) if len(found) > 1 else ({}, 0)


def _chosen(signature: Signature, grid: GridShape) -> Choice:
    """The signature's choice; raises ``Untuned`` where it is one to tune and is not tuned yet."""
    _check()
    with _choices_lock:
        if signature in _choices:
            _choices.move_to_end(signature)
            return _choices[signature]
    found, nbytes = _candidates(signature, grid)
    if found:
        raise Untuned(signature, grid, nbytes)
    _keep(signature, None)
    return None


def tuned_template(shape: tuple[int, ...], dims: tuple[int, ...], itemsize: int, src: int, dst: int, device: int,
                   grid: GridShape):
    """``permute_template``'s ``(launches, bytes)`` of a dense ``shape`` at addresses ``src``, ``dst`` (modulo
    ``SECTOR_BYTES``) on CUDA device ``device`` (whose ``GridShape`` is ``grid``), at the tile its tuning chose;
    the planner's where the problem is not one to tune. Raises ``Untuned`` where it is and is not tuned yet."""
    signature = (tuple(shape), tuple(dims), itemsize, src % SECTOR_BYTES, dst % SECTOR_BYTES, device)
    return permute_template(signature[0], signature[1], itemsize, signature[3], signature[4], grid,
                            _chosen(signature, grid))


def tuned_cast_launches(input_format: str, fp8: str, m: int, n: int, x: int, out: int, out_t: int,
                        scale: int | None, scale_value: float, amax: int, device: int, grid: GridShape) -> list:
    """``cast_launches`` of these arguments on CUDA device ``device`` (whose ``GridShape`` is ``grid``) with its
    tuning's choice (a tile, or a misaligned kernel); the planner's where the problem moves under
    ``AUTOTUNE_MIN_BYTES``. Raises ``Untuned`` where it is to be tuned and is not yet."""
    signature = ("cast", input_format, fp8, m, n, x % SECTOR_BYTES, out % SECTOR_BYTES, out_t % SECTOR_BYTES, device)
    choice = _chosen(signature, grid)
    option = {} if choice is None else {"misaligned": choice} if isinstance(choice, str) else {"tile": choice}
    return cast_launches(input_format, fp8, m, n, x, out, out_t, scale, scale_value, amax, grid, **option)


def _device_times(device: int, stream: int, src: int, dst: int,
                  candidates: Mapping[str, Candidate]) -> dict[str, float]:
    """Median µs a call of each candidate's launches takes on ``stream`` reading ``src`` and writing from ``dst``
    on (module doc); a candidate the device does not load (its shared memory over the device's, say) is left out."""
    planned = {}
    for label, candidate in candidates.items():
        try:
            planned[label] = candidate.launches(src, dst)
        except (LayoutError, RuntimeError):
            continue
    _launch.compile_ahead((kernel for launches in planned.values() for kernel, _, _ in launches), device)
    runs = {}
    for label, launches in planned.items():
        try:
            runs[label] = [(_launch.prepare(kernel, device, ctas, i > 0), values)
                           for i, (kernel, ctas, values) in enumerate(launches)]
        except (LayoutError, RuntimeError):
            continue

    def calls(label: str, n: int) -> Callable[[], None]:
        def run() -> None:
            for _ in range(n):
                for prepared, values in runs[label]:
                    prepared.run(stream, values)
        return run

    cuda, context = _driver.driver(), _launch.device_context(device)
    labels = list(runs)
    cuda.elapsed_ms(context, stream, [calls(label, 1) for label in labels])  # each one's first launch
    first = cuda.elapsed_ms(context, stream, [calls(label, 1) for label in labels])
    reps = {label: max(1, min(100, round(AUTOTUNE_WINDOW_US / max(1e3 * ms, 1.0)))) for label, ms in zip(labels, first)}
    order = [label for r in range(AUTOTUNE_ROUNDS) for label in (labels if r % 2 == 0 else labels[::-1])]
    times: dict[str, list[float]] = {label: [] for label in labels}
    for label, ms in zip(order, cuda.elapsed_ms(context, stream, [calls(label, reps[label]) for label in order])):
        times[label].append(1e3 * ms / reps[label])
    return {label: sorted(t)[len(t) // 2] for label, t in times.items()}


def tune(untuned: Untuned, src: int, stream: int, scratch: Callable[[int], int],
         times: Callable[..., Mapping[str, float]] | None = None) -> Tuning | None:
    """Tune ``untuned``'s signature (module doc): its candidates timed reading the input at ``src`` and writing the
    scratch memory ``scratch(untuned.scratch_bytes)`` returns the address of (new, kept alive by the caller), on
    ``stream``; None, and nothing kept, where ``stream`` is being captured into a CUDA graph. Where no scratch can
    be had or a launch fails, the planner's launches are kept, untimed. ``times``: what times the candidates
    (``_device_times``' arguments and result; tests pass their own)."""
    signature, grid = untuned.signature, untuned.grid
    if times is None:
        if _driver.driver().capturing(_launch.device_context(signature[-1]), stream):
            return None
        times = _device_times
    with _lock:
        if signature in _choices:
            return None
        start = time.perf_counter()
        candidates, nbytes = _candidates(signature, grid)
        try:
            us = dict(times(signature[-1], stream, src, scratch(nbytes), candidates))
        except (RuntimeError, MemoryError):  # a launch the driver refused, no memory for the scratch: the planner's
            us = {}
        best = min(us, key=us.__getitem__) if us else PLANNED
        chosen = PLANNED if PLANNED not in us or us[PLANNED] <= (1 + AUTOTUNE_MARGIN) * us[best] else best
        _keep(signature, candidates[chosen].choice if candidates else None)
        tuning = Tuning(signature, MappingProxyType(us), chosen, time.perf_counter() - start)
        tunings.append(tuning)
        del tunings[:-AUTOTUNE_SIGNATURES]
        return tuning


def after_tuning(untuned: Untuned, src: int, stream: int, scratch: Callable[[int], int],
                 plan: Callable[[bool], Any]) -> Any:
    """``untuned``'s signature tuned (``tune``: the input at ``src``, on ``stream``, into ``scratch``), then
    ``plan(True)`` (a plan at its choice), or ``plan(False)`` (the planner's) where it could not be tuned now (inside a
    capture)."""
    tune(untuned, src, stream, scratch)
    return plan(is_tuned(untuned.signature))


def tuned_or_planned(tuned: Callable[[], Any], planned: Callable[[], Any], src: int, stream: Callable[[], int],
                     scratch: Callable[[int], int]) -> Any:
    """``tuned()`` (a plan at its signature's choice: ``tuned_template``, ``tuned_cast_launches``, or what builds on
    them); where that raises ``Untuned``, ``after_tuning`` (the stream read only then) with ``tuned`` or ``planned``."""
    try:
        return tuned()
    except Untuned as untuned:
        return after_tuning(untuned, src, stream(), scratch, lambda ok: tuned() if ok else planned())


def is_tuned(signature: Signature) -> bool:
    """Whether ``signature`` has its choice (``tuned_template`` and ``tuned_cast_launches`` then raise nothing for
    it)."""
    return signature in _choices


def clear() -> None:
    """Forget every choice (the next call of each signature tunes again) and ``tunings``; what keeps plans made
    from the choices (``on_clear``: ``ops.dispatch``'s call plans) drops them too."""
    with _lock, _choices_lock:
        _choices.clear()
        tunings.clear()
        for forget in _forgetting:
            forget()


def on_clear(forget: Callable[[], None]) -> None:
    """Call ``forget`` at each ``clear()``: a cache of plans made from the choices registers its own clearing."""
    _forgetting.append(forget)


def enabled() -> bool:
    """``AUTOTUNE``, which must be ``True`` or ``False``: ``LayoutError`` for anything else (``0``, ``None`` or
    ``"no"`` would otherwise read as a setting the call silently took). ``enabled()`` is ``False`` by default."""
    if AUTOTUNE is True or AUTOTUNE is False:
        return AUTOTUNE
    raise LayoutError(f"AUTOTUNE: must be True or False, got {AUTOTUNE!r}")


def _check() -> None:
    """LayoutError where a setting of the module doc is out of its range."""
    enabled()
    for name, value in (("AUTOTUNE_MIN_BYTES", AUTOTUNE_MIN_BYTES), ("AUTOTUNE_ROUNDS", AUTOTUNE_ROUNDS),
                        ("AUTOTUNE_SIGNATURES", AUTOTUNE_SIGNATURES)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise LayoutError(f"{name}: must be an int, 1 or more, got {value!r}")
    for name, value in (("AUTOTUNE_MARGIN", AUTOTUNE_MARGIN), ("AUTOTUNE_WINDOW_US", AUTOTUNE_WINDOW_US)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < math.inf:
            raise LayoutError(f"{name}: must be a finite number, 0 or more, got {value!r}")
