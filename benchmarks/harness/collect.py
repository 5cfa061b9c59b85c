"""Copying a device run's results into ``benchmarks/results/``: the folders ``advice``, ``kernels`` and ``cute``
(found at the given root or one or two levels below it) each hold ``STEM.json`` and ``STEM.md``; a pair is
copied only when its environment record names a device (a dry run's are refused)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from harness import RESULTS

#: the device folder -> the results' file stem
FILES = {"advice": "gpu_shared_advice", "kernels": "gpu_kernels", "cute": "gpu_cute"}


def _find(root: Path, sub: str, stem: str) -> Path | None:
    for candidate in [root / sub, *sorted(root.glob(f"*/{sub}")), *sorted(root.glob(f"*/*/{sub}"))]:
        if (candidate / f"{stem}.md").is_file() and (candidate / f"{stem}.json").is_file():
            return candidate
    return None


def _device(data: dict) -> str:
    env = data.get("environment") or data.get("meta", {}).get("environment") or {}
    return str(env.get("gpu") or data.get("meta", {}).get("device") or "")


def collect(root: Path, results: Path = RESULTS) -> list[str]:
    """Copy each found device result under ``root`` into ``results``; one line per stem says what happened."""
    lines = []
    for sub, stem in FILES.items():
        folder = _find(root, sub, stem)
        if folder is None:
            lines.append(f"{stem}: not found under {root}/{sub}")
            continue
        data = json.loads((folder / f"{stem}.json").read_text())
        device = _device(data)
        if not device or device.startswith(("unavailable", "none")):
            lines.append(f"{stem}: {folder} has no device in its environment record; not copied")
            continue
        for ext in ("md", "json"):
            shutil.copyfile(folder / f"{stem}.{ext}", results / f"{stem}.{ext}")
        summary = next((ln for ln in (folder / f"{stem}.md").read_text().splitlines() if ln.startswith("**Summary")), "")
        lines.append(f"{stem}: copied from {folder} ({device}) -> {results}/{stem}.{{md,json}}  {summary}")
    return lines
