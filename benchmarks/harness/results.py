"""Results files: a run's record as ``STEM.json`` (indented, anything not JSON-able as its ``str``) and its
table as ``STEM.md``, side by side in the output folder."""

from __future__ import annotations

import json
from pathlib import Path


def write_outputs(out: Path, stem: str, data: dict, markdown: str) -> None:
    """``out/STEM.json`` and ``out/STEM.md`` (``out`` made)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stem}.json").write_text(json.dumps(data, indent=1, default=str))
    (out / f"{stem}.md").write_text(markdown)
