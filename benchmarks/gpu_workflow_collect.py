"""Copy the device results of ``benchmarks/gpu_workflow_run.sh OUT`` into benchmarks/results/:

    OUT/advice/gpu_shared_advice.{json,md} -> benchmarks/results/gpu_shared_advice.{json,md}   (issue 14)
    OUT/kernels/gpu_kernels.{json,md}      -> benchmarks/results/gpu_kernels.{json,md}         (issue 15)
    OUT/cute/gpu_cute.{json,md}            -> benchmarks/results/gpu_cute.{json,md}            (issue 16)

Usage: ``python3 benchmarks/gpu_workflow_collect.py OUT`` (OUT: the folder the device tool's files landed in,
i.e. its ``files_at``; the script also finds the three folders one or two levels below it). Prints each
file's summary line; copies only results that came from a device (a dry run's are refused).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)

RESULTS = Path(__file__).resolve().parent / "results"
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


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print(__doc__)
        return 2
    lines = collect(Path(argv[0]))
    print("\n".join(lines))
    return 0 if all("copied" in ln for ln in lines) else 1


if __name__ == "__main__":
    sys.exit(main())
