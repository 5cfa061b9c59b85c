"""The measured choices, kept on disk: one file per specialization of a kernel on a device, in the package's
private kernel cache (``codegen.ptx.cache_dir``: ``$LINEAR_LAYOUTS_CACHE``, else
``~/.cache/linear_layouts/kernels``; made 0700, refused when it is a link, not ours or writable by others).

A decision's identity (``identity``) is everything that can change it: the kernel's name and Triton's hash of
its source, specialization and constexprs (``ASTSource.hash``), Triton's hash of the whole compile (its
version and sources, the options, the target, ptxas), the device's name, Triton's version and this package's
``package_key``. The file ``triton-choice-<first 24 hex digits of the identity's SHA-256>.json`` holds the
identity's full hash, the decision (``Decision``) and the SHA-256 of the decision's canonical JSON; it is used
only when the file is ours, regular and private, at most ``MAX_ENTRY_BYTES``, and both hashes and every
field check. Anything else (a file planted by someone else, an edited decision, a truncated file, a collision
of the short name, JSON nested too deep to read, a number beyond any float) is refused with a
``CacheWarning`` and the choice is measured afresh.

>>> Decision("ours", Basis.MEASURED_FASTER, "measured", triton_samples_us=(10.0, 10.2, 9.8),
...          ours_samples_us=(8.0, 8.1, 7.9)).measured_gain
0.2
"""

from __future__ import annotations

import contextlib
import enum
import hashlib
import json
import math
import os
import statistics
import warnings
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from linear_layouts.errors import LayoutError
from linear_layouts.limits import quote, shorten

__all__ = ["Decision", "Basis", "OURS_BASES", "identity", "load", "store", "decision_path", "CHOICES",
           "MAX_ENTRY_BYTES"]

#: what a decision keeps: our TTGIR or Triton's
CHOICES = ("ours", "triton")
#: the largest decision file read: one holds one kernel's TTGIR (real ones are well below 1 MB)
MAX_ENTRY_BYTES = 1 << 26
_PREFIX = "triton-choice-"


class Basis(str, enum.Enum):
    """What a choice rests on: ``ours`` is kept only on a measured win (measured mode) or a predicted gain
    (model mode); each other basis keeps Triton's variant and says why."""

    MEASURED_FASTER = "measured faster"
    PREDICTED_GAIN = "predicted gain"
    MEASURED_NOT_FASTER = "measured not faster"
    NO_PREDICTED_GAIN = "no predicted gain"
    OUTPUTS_DIFFER = "outputs differ"
    NOT_MEASURABLE = "not measurable"
    ERROR = "error"


#: the bases on which our variant is kept
OURS_BASES = (Basis.MEASURED_FASTER, Basis.PREDICTED_GAIN)


@dataclass(frozen=True)
class Decision:
    """The choice for one specialization: ``choice`` (``"ours"`` / ``"triton"``), its ``basis`` and
    ``reason`` (one line), the model's predicted gain, the measured per-launch times of each variant
    (microseconds; one value per timed sample of ``inner`` launches) where measured, and -- for ``"ours"`` in
    measured mode -- our TTGIR and the SHA-256 of Triton's TTGIR it rewrites, from which the chosen variant
    is compiled again in a later process. ``triton_us`` / ``ours_us``: the medians.

    Requires: ``choice == "ours"`` exactly when ``basis`` is in ``OURS_BASES``."""

    choice: str
    basis: Basis
    reason: str
    predicted_gain: float | None = None
    triton_samples_us: tuple[float, ...] = ()
    ours_samples_us: tuple[float, ...] = ()
    inner: int = 0
    ttgir: str = field(default="", repr=False)
    ttgir_from: str = field(default="", repr=False)

    def __post_init__(self) -> None:
        if self.choice not in CHOICES:
            raise LayoutError(f"choice must be one of {list(CHOICES)}, got {quote(self.choice)}")
        try:
            object.__setattr__(self, "basis", Basis(self.basis))
        except ValueError:
            raise LayoutError(f"basis must be one of {[b.value for b in Basis]}, got {quote(self.basis)}") from None
        if (self.choice == "ours") != (self.basis in OURS_BASES):
            raise LayoutError(f"choice {quote(self.choice)} does not follow from the basis {quote(self.basis.value)}")
        if not isinstance(self.reason, str) or not isinstance(self.ttgir, str) or not isinstance(self.ttgir_from, str):
            raise LayoutError("reason, ttgir and ttgir_from must be strings")
        for name in ("triton_samples_us", "ours_samples_us"):
            values = getattr(self, name)
            if not isinstance(values, (list, tuple)) or not all(_finite(v) and v >= 0 for v in values):
                raise LayoutError(f"{name} must be a sequence of non-negative finite numbers, got {quote(values)}")
            object.__setattr__(self, name, tuple(float(v) for v in values))
        if self.predicted_gain is not None and not _finite(self.predicted_gain):
            raise LayoutError(f"predicted_gain must be a finite number or None, got {quote(self.predicted_gain)}")
        if isinstance(self.inner, bool) or not isinstance(self.inner, int) or self.inner < 0:
            raise LayoutError(f"inner must be a non-negative int, got {quote(self.inner)}")

    @property
    def samples(self) -> int:
        """Timed samples per variant (0: not measured)."""
        return min(len(self.triton_samples_us), len(self.ours_samples_us))

    @property
    def triton_us(self) -> float | None:
        """Median of Triton's per-launch times, where measured."""
        return round(statistics.median(self.triton_samples_us), 3) if self.triton_samples_us else None

    @property
    def ours_us(self) -> float | None:
        """Median of our variant's per-launch times, where measured."""
        return round(statistics.median(self.ours_samples_us), 3) if self.ours_samples_us else None

    @property
    def measured_gain(self) -> float | None:
        """1 - ours / Triton's median time per launch, where both were measured."""
        if self.triton_us and self.ours_us is not None:
            return round(1 - self.ours_us / self.triton_us, 4)
        return None


def _finite(value: Any) -> bool:
    """``value`` is an int or float (not a bool) of a finite float value (an int beyond any float is not)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def identity(kernel: Any, device: str) -> dict[str, str]:
    """The identity of the decision for the compiled kernel ``kernel`` (Triton's variant: a
    ``CompiledKernel`` of an ``ASTSource``) on the device named ``device`` (module doc)."""
    import triton

    from linear_layouts.pipeline.triton_hook.settings import package_key

    return {"kernel": str(kernel.name), "source": str(kernel.src.hash()), "compile": str(kernel.hash),
            "target": _target_text(kernel.metadata.target), "device": str(device), "triton": triton.__version__,
            "linear_layouts": package_key()}


def _target_text(target: Any) -> str:
    """A compile's target as text: ``"cuda:90:32"`` for Triton's ``GPUTarget("cuda", 90, 32)`` (a dataclass;
    a kernel read back from Triton's cache has the same), or a triple's ``str`` where it is one."""
    if all(hasattr(target, name) for name in ("backend", "arch", "warp_size")):
        return f"{target.backend}:{target.arch}:{target.warp_size}"
    return ":".join(str(part) for part in target)


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def decision_path(ident: dict[str, str], root: Path | None = None) -> Path:
    """The file of the decision of ``ident`` in ``root`` (default: the kernel cache folder)."""
    from linear_layouts.codegen.ptx import cache_dir

    return (root or cache_dir()) / f"{_PREFIX}{_digest(ident)[:24]}.json"


def load(ident: dict[str, str], root: Path | None = None) -> Decision | None:
    """The stored decision of ``ident``, or ``None`` where there is none or the entry is refused (with a
    ``CacheWarning`` naming the file and why) or the cache folder cannot be used."""
    from linear_layouts.codegen.ptx import CacheWarning, CompileError, _open_cache, _read_entry

    try:
        path = decision_path(ident, root)
    except (CompileError, RuntimeError) as error:  # RuntimeError: e.g. no home folder to put the cache in
        warnings.warn(f"decision cache: {error}", CacheWarning, stacklevel=2)
        return None
    if not os.path.lexists(path):
        return None
    try:  # opened once through the checked folder, not through a link, checked on its descriptor, never blocking
        folder = _open_cache(path.parent)
    except (CompileError, OSError) as error:
        problem = f"its folder cannot be used ({shorten(str(error), 160)})"
    else:
        try:
            data, problem = _read_entry(folder, path.name, MAX_ENTRY_BYTES)
        finally:
            os.close(folder)
        if data is None and problem is None:  # gone since
            return None
        if problem is None:
            try:
                problem, decision = _checked(json.loads(data.decode("utf-8")), ident)
            except (ValueError, RecursionError) as error:  # RecursionError: JSON nested too deep
                problem = f"unreadable ({type(error).__name__}: {shorten(str(error), 120)})"
            else:
                if problem is None:
                    return decision
    warnings.warn(f"decision cache: refused {path}: {problem}; measuring afresh", CacheWarning, stacklevel=2)
    return None


def _checked(entry: Any, ident: dict[str, str]) -> tuple[str | None, Decision | None]:
    """(why ``entry`` may not be used, None) or (None, its decision)."""
    if not isinstance(entry, dict) or set(entry) != {"key", "identity", "decision", "decision_sha256"}:
        return "not a decision entry", None
    if entry["key"] != _digest(ident) or entry["identity"] != ident:
        return "the entry is for another kernel, device or version (identity mismatch)", None
    record = entry["decision"]
    if not isinstance(record, dict) or set(record) != {f.name for f in fields(Decision)}:
        return "the decision's fields are not Decision's", None
    if entry["decision_sha256"] != _digest(record):
        return "the decision does not match the hash recorded with it", None
    try:
        decision = Decision(**record)
    except (LayoutError, TypeError) as error:
        return f"an invalid decision: {error}", None
    if decision.choice == "ours" and not (decision.ttgir and decision.ttgir_from):
        return "a choice of our TTGIR without the TTGIR (ttgir) and the digest of Triton's (ttgir_from)", None
    return None, decision


def store(ident: dict[str, str], decision: Decision, root: Path | None = None) -> Path | None:
    """Write ``decision`` for ``ident`` (atomically, 0600); a foreign entry in its place is removed first.
    Returns the file, or ``None`` (with a ``CacheWarning``) where the cache folder cannot be used."""
    from linear_layouts.codegen.ptx import CacheWarning, CompileError, _unsafe, _write_private

    try:
        path = decision_path(ident, root)
        if os.path.lexists(path) and _unsafe(path):
            with contextlib.suppress(OSError):
                os.unlink(path)
        record = dict(asdict(decision), basis=decision.basis.value)
        entry = {"key": _digest(ident), "identity": ident, "decision": record, "decision_sha256": _digest(record)}
        _write_private(path, json.dumps(entry, indent=1, sort_keys=True).encode("utf-8"))
    except (CompileError, OSError, RuntimeError) as error:  # RuntimeError: e.g. no home folder for the cache
        warnings.warn(f"decision cache: cannot store a decision: {error}", CacheWarning, stacklevel=2)
        return None
    return path
