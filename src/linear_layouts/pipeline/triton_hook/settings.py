"""What the Triton hook does for one compile (``Settings``), and the part of Triton's cache key that says so.

Three modes (``Mode``), chosen by ``enable(mode=...)``, the ``optimize`` decorator, or the environment
variable ``LINEAR_LAYOUTS_TRITON`` (``measured`` when unset):

=============  ==============================================================================================
``off``        Triton's own compile, untouched.
``model``      every compile takes our engine's TTGIR where the whole-kernel model predicts it faster by
               ``pipeline.rewrite.MIN_GAIN`` with no narrower global access, Triton's otherwise (``stage``).
``measured``   a JIT launch compiles Triton's TTGIR; the first launch of each specialization also compiles
               ours where the model does not predict it more than 10% slower (``measure.MEASURE_FLOOR``),
               times both on the call's arguments and keeps ours only
               if it wins beyond the measured spread (``measure``); the decision is kept on disk
               (``decisions``). A compile the JIT does not launch (``triton.compile``, Inductor) is Triton's.
=============  ==============================================================================================

The cache key (``Settings.cache_key``): Triton appends the hook's key to the key of its on-disk cache and
the hook's hash to the JIT's in-memory key (``knobs.runtime.add_stages_inspection_hook``). A compile that
rewrites has a key naming this package's version and the digest of its files (``package_key``: a changed
engine is a new key, as Triton's own ``triton_key`` hashes Triton's sources), the mode, the engine's limits
and, for the measured choice's variant, the digest of the TTGIR it is given; a compile that does not
rewrite has the empty key, so it shares Triton's own cache entries.

>>> Settings(Mode.OFF).cache_key
''
>>> Settings(Mode.MODEL).cache_key.startswith("-linear_layouts-0.1.0-")
True
>>> parse_mode("Model")
<Mode.MODEL: 'model'>
"""

from __future__ import annotations

import contextlib
import contextvars
import enum
import functools
import hashlib
import math
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from linear_layouts.errors import LayoutError, did_you_mean
from linear_layouts.limits import quote

__all__ = ["Mode", "Settings", "parse_mode", "mode_from_environment", "settings_for", "package_key", "current",
           "set_global", "overridden", "MODE_ENV", "TIMEOUT_ENV", "DEFAULT_TIMEOUT_S",
           "MAX_TIMEOUT_S"]

#: the environment variable naming the mode of ``enable()`` when it is given none
MODE_ENV = "LINEAR_LAYOUTS_TRITON"
#: the environment variable bounding our engine's time per compile (seconds)
TIMEOUT_ENV = "LINEAR_LAYOUTS_TRITON_TIMEOUT"
#: our engine's time per compile beyond which Triton's TTGIR is kept (seconds)
DEFAULT_TIMEOUT_S = 30.0
#: the longest time per compile that may be given: the longest wait of a thread (``threading.TIMEOUT_MAX``)
MAX_TIMEOUT_S = float(threading.TIMEOUT_MAX)


class Mode(str, enum.Enum):
    """What the hook does to a compile (module doc)."""

    OFF = "off"
    MODEL = "model"
    MEASURED = "measured"


def parse_mode(value: Any, what: str = "mode") -> Mode:
    """``value`` (a ``Mode`` or its name, any case) as a ``Mode``; anything else is a LayoutError naming ``what``."""
    if isinstance(value, Mode):
        return value
    if isinstance(value, str):
        try:
            return Mode(value.strip().lower())
        except ValueError:
            pass
    names = [m.value for m in Mode]
    raise LayoutError(f"{what} must be one of {names}, got {quote(value)}"
                      f"{did_you_mean(str(value), names) if isinstance(value, str) else ''}")


def mode_from_environment() -> Mode:
    """``$LINEAR_LAYOUTS_TRITON`` as a ``Mode`` (``measured`` when unset or empty)."""
    value = os.environ.get(MODE_ENV, "")
    return parse_mode(value, f"${MODE_ENV}") if value.strip() else Mode.MEASURED


def _timeout_from_environment() -> float:
    value = os.environ.get(TIMEOUT_ENV, "")
    if not value.strip():
        return DEFAULT_TIMEOUT_S
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not _valid_timeout(seconds):
        raise LayoutError(f"${TIMEOUT_ENV} must be a positive number of seconds, at most {MAX_TIMEOUT_S:g}, "
                          f"got {quote(value)}")
    return seconds


def _valid_timeout(seconds: Any) -> bool:
    """``seconds`` is a number (not a bool) in ``(0, MAX_TIMEOUT_S]``: a time a thread can be waited for."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        return False
    try:
        return 0 < float(seconds) <= MAX_TIMEOUT_S
    except OverflowError:  # an int beyond any float
        return False


#: the files of the package that the key hashes: its sources and the data its model reads (``target``'s
#: measured cost tables)
KEYED_SUFFIXES = (".py", ".c", ".json")


@functools.lru_cache(maxsize=1)
def package_key() -> str:
    """``VERSION-DIGEST``: this package's version and the SHA-256 (first 16 hex digits) of every file of the
    ``linear_layouts`` package with a suffix in ``KEYED_SUFFIXES`` (the engine, the model and its cost
    tables, wherever they lie in the package), the part of a compile's cache key that changes whenever our
    engine or model may."""
    import linear_layouts

    root = Path(linear_layouts.__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.suffix in KEYED_SUFFIXES and p.is_file()):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return f"{linear_layouts.__version__}-{digest.hexdigest()[:16]}"


@dataclass(frozen=True)
class Settings:
    """The hook's settings for one compile. ``ttgir`` / ``ttgir_from``: the TTGIR to emit and the SHA-256
    of Triton's TTGIR it rewrites (the measured choice's variant: the engine already ran at the launch);
    ``max_ops``: the largest kernel the engine runs on (``rewrite_kernel``'s, default
    ``engine_compare.MAX_ENGINE_OPS``); ``timeout_s``: the engine's time allowed per compile."""

    mode: Mode
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_ops: int | None = None
    ttgir: str | None = None
    ttgir_from: str | None = None

    @property
    def rewrites(self) -> bool:
        """A compile under these settings may take our TTGIR (else it is Triton's own)."""
        return self.mode is Mode.MODEL or self.ttgir is not None

    @property
    def cache_key(self) -> str:
        """The hook's part of Triton's cache key (module doc): empty where the compile is Triton's own."""
        if not self.rewrites:
            return ""
        from linear_layouts.pipeline.engine_compare import MAX_ENGINE_OPS
        from linear_layouts.pipeline.rewrite import MIN_GAIN

        limits = f"max_ops={self.max_ops or MAX_ENGINE_OPS}-min_gain={MIN_GAIN}-timeout={self.timeout_s:g}"
        if self.ttgir is not None:
            given = hashlib.sha256(f"{self.ttgir_from}\0{self.ttgir}".encode()).hexdigest()
            return f"-linear_layouts-{package_key()}-given-{given}"
        return f"-linear_layouts-{package_key()}-{self.mode.value}-{limits}"

    @property
    def jit_hash(self) -> str:
        """The hook's part of the JIT's in-memory key: the mode, and the cache key's digest."""
        return f"linear_layouts-{self.mode.value}-{hashlib.sha256(self.cache_key.encode()).hexdigest()[:16]}"


def settings_for(mode: Mode | str | None, timeout_s: float | None = None) -> Settings:
    """Settings of ``mode`` (``None``: ``$LINEAR_LAYOUTS_TRITON``) with our engine's time per compile
    ``timeout_s`` (``None``: ``$LINEAR_LAYOUTS_TRITON_TIMEOUT``, else ``DEFAULT_TIMEOUT_S``)."""
    resolved = mode_from_environment() if mode is None else parse_mode(mode)
    if timeout_s is None:
        return Settings(resolved, timeout_s=_timeout_from_environment())
    if not _valid_timeout(timeout_s):
        raise LayoutError(f"timeout_s must be a positive number of seconds, at most {MAX_TIMEOUT_S:g}, "
                          f"got {quote(timeout_s)}")
    return Settings(resolved, timeout_s=float(timeout_s))


# --------------------------------------------------------------------------------------------------------------
# The settings in force: the process's (``enable`` / ``disable``), or, in the calls of an ``optimize``-decorated
# kernel and in the compile of the measured choice's variant, those of the current thread's context.
# --------------------------------------------------------------------------------------------------------------
_process_settings = Settings(Mode.OFF)
_context_settings: contextvars.ContextVar[Settings | None] = contextvars.ContextVar("linear_layouts_triton",
                                                                                   default=None)


def current() -> Settings:
    """The settings of a compile started now on this thread."""
    local = _context_settings.get()
    return _process_settings if local is None else local


def set_global(settings: Settings) -> Settings:
    """Make ``settings`` the process's; returns the previous ones."""
    global _process_settings
    previous, _process_settings = _process_settings, settings
    return previous


@contextlib.contextmanager
def overridden(settings: Settings) -> Iterator[None]:
    """``settings`` in force on this thread (this context) for the duration of the block."""
    token = _context_settings.set(settings)
    try:
        yield
    finally:
        _context_settings.reset(token)
