"""The known targets by device and architecture, and the ways to name one.

* ``named_target(arch, device)``: what the CLI's ``--target`` / ``--device`` select (``sm_90``,
  ``H200``, both, or neither: ``DEFAULT_TARGET``);
* ``target_for_module("cuda:90")``: the target a TTGIR module names (``ttg.target``);
* ``device_name("NVIDIA H200")``: a device's short name from what PyTorch or nvidia-smi print;
* ``resolve(target)``: an entry point's ``target`` argument: a ``Target``, a device or architecture name
  (``"H200"``, ``"sm_90"``), or ``None``: ``DEFAULT_TARGET`` (H100).

>>> named_target("sm_90", "H200").name, named_target(device="A100").arch, named_target("gfx942").lanes
('sm_90 (H200)', 'sm_80', 64)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

from linear_layouts.core.errors import LayoutError, did_you_mean
from linear_layouts.core.limits import parse_int, quote
from linear_layouts.target.amd import MI300X, amd_target
from linear_layouts.target.nvidia import A100, B200, H100, H200, nvidia_target
from linear_layouts.target.target import Target

__all__ = ["TARGETS", "ARCHS", "DEFAULT_TARGET", "named_target", "target_for_module", "resolve", "device_name",
           "parse_arch"]

#: the known targets by device name
TARGETS: Mapping[str, Target] = MappingProxyType({t.device: t for t in (A100, H100, H200, B200, MI300X)})
#: each known architecture's default device (what ``--target`` alone selects)
ARCHS: Mapping[str, str] = MappingProxyType({"sm_80": "A100", "sm_90": "H100", "sm_100": "B200", "gfx942": "MI300X"})
#: the target of ``target=None``: sm_90 on an H100, whose tables and facts the package was built on
DEFAULT_TARGET = H100


def parse_arch(arch: str) -> tuple[str, int | str]:
    """``"sm_90"`` / ``"sm_90a"`` -> ``("cuda", 90)``; ``"gfx942"`` -> ``("hip", "gfx942")``; else a LayoutError."""
    if not isinstance(arch, str):
        raise LayoutError(f"target must be a string like sm_90 or gfx942, got {quote(arch)}")
    m = re.fullmatch(r"sm_(\d{2,3})a?", arch)
    if m:
        return "cuda", parse_int(m.group(1), f"target {quote(arch)}: the compute capability")
    if re.fullmatch(r"gfx[0-9a-f]{3,4}", arch):
        return "hip", arch
    raise LayoutError(f"target must be sm_<cc> (e.g. sm_80, sm_90) or gfx<arch> (e.g. gfx942), got {quote(arch)}")


def _arch_target(arch: str) -> Target:
    """The target of an architecture name: a known one, else ``nvidia_target`` / ``amd_target``'s stand-in."""
    backend, value = parse_arch(arch)
    return nvidia_target(int(value)) if backend == "cuda" else amd_target(str(value))


def named_target(arch: str | None = None, device: str | None = None) -> Target:
    """The target of an architecture and / or a device name (case-insensitive); neither: ``DEFAULT_TARGET``.
    A device on another architecture than ``arch`` is a LayoutError, as is an unknown device."""
    if device is None:
        return DEFAULT_TARGET if arch is None else _arch_target(arch)
    if not isinstance(device, str):
        raise LayoutError(f"device must be a name such as 'H100', got {quote(device)}")
    by_folded = {name.lower(): t for name, t in TARGETS.items()}
    found = by_folded.get(device.lower())
    if found is None:
        raise LayoutError(f"device: unknown {quote(device)}{did_you_mean(device, TARGETS)}; known: {sorted(TARGETS)}")
    if arch is not None:
        wanted = _arch_target(arch)
        if wanted.arch != found.arch:
            raise LayoutError(f"device: {found.device} is {found.arch}, not the target {wanted.arch}")
    return found


def target_for_module(module_target: str | None) -> Target:
    """The target a module's ``ttg.target`` names (``cuda:90``, ``cuda:90a``, ``hip:gfx942``; ``""`` or None:
    ``DEFAULT_TARGET``), on the architecture's default device. A compute capability is two or three ASCII
    digits, as ``parse_arch`` reads ``sm_90``; anything else is a LayoutError."""
    if not module_target:
        return DEFAULT_TARGET
    m = re.fullmatch(r"cuda:([0-9]{2,3})[af]?|hip:(gfx[0-9a-f]+)(?::[\w+-]+)*", module_target)
    if not m:
        raise LayoutError(f"target: {quote(module_target)} is not a module target such as \"cuda:90\" or "
                          "\"hip:gfx942\"")
    return nvidia_target(int(m.group(1))) if m.group(1) else _arch_target(m.group(2))


def resolve(target: Target | str | None) -> Target:
    """An entry point's ``target``: a ``Target`` itself; a name, as ``named_target`` reads it: a known device
    (case-insensitive, ``TARGETS``) or an architecture (``parse_arch``); None: ``DEFAULT_TARGET``. Anything
    else is a LayoutError naming ``target``.

    >>> resolve("h200") is named_target(device="H200"), resolve("sm_80") is named_target("sm_80")
    (True, True)
    """
    if target is None:
        return DEFAULT_TARGET
    if isinstance(target, Target):
        return target
    if not isinstance(target, str):
        raise LayoutError(f"target must be a Target, a device name ({', '.join(TARGETS)}) or an architecture "
                          f"(sm_<cc> or gfx<arch>, e.g. sm_90, gfx942), got {quote(target)}")
    return _named(target)


def _named(name: str) -> Target:
    """The target a name selects: the device it names (``named_target(device=name)``), else its architecture
    (``named_target(name)``); a name that is neither is a LayoutError naming ``target`` and what is accepted."""
    if name.lower() in (device.lower() for device in TARGETS):
        return named_target(device=name)
    try:
        return named_target(name)
    except LayoutError:
        raise LayoutError(f"target: unknown {quote(name)}{did_you_mean(name, (*TARGETS, *ARCHS))}; give a device "
                          f"({', '.join(TARGETS)}) or an architecture (sm_<cc> or gfx<arch>, e.g. "
                          f"{', '.join(ARCHS)})") from None


def device_name(raw: str) -> str:
    """A device's short name from its long one (``torch.cuda.get_device_name``, ``nvidia-smi``): the known
    device it names, else its first model-like word.

    >>> device_name("NVIDIA H100 80GB HBM3"), device_name("NVIDIA H200"), device_name("AMD Instinct MI300X")
    ('H100', 'H200', 'MI300X')
    >>> device_name("NVIDIA GeForce RTX 4090")
    'RTX-4090'
    """
    if not isinstance(raw, str) or not raw.strip():
        raise LayoutError(f"device name must be a non-empty string, got {quote(raw)}")
    words = re.findall(r"[A-Za-z0-9]+", raw)
    for word in words:
        for name in TARGETS:
            if word.upper() == name.upper():
                return name
    for word in words:
        if word.upper().startswith(tuple(n.upper() for n in TARGETS)):
            return next(n for n in TARGETS if word.upper().startswith(n.upper()))
    models = [w for w in words if re.search(r"\d", w) and w.upper() not in ("NVIDIA", "AMD")
              and not re.fullmatch(r"\d+GB?", w, re.IGNORECASE)]
    if models:
        i = words.index(models[0])
        prefix = words[i - 1] if i and words[i - 1].isalpha() and words[i - 1].upper() not in (
            "NVIDIA", "AMD", "GEFORCE", "INSTINCT", "TESLA") else ""
        return f"{prefix}-{models[0]}" if prefix else models[0]
    return words[-1] if words else "unknown"
