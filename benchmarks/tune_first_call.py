"""What a tuning's first call costs the host, with the candidates' kernels compiled ahead on threads
(``ops.launch.compile_ahead``) or one after another (as before it): ``ops_fuzz``'s calls of one seed with
``ops.tune.AUTOTUNE`` on, from an empty kernel cache, every output checked as ``ops_fuzz`` checks it. Run once per
setting, each in a fresh process (device only):

    LINEAR_LAYOUTS_CACHE=$(mktemp -d) PYTHONPATH=src:benchmarks python3 benchmarks/tune_first_call.py on 15 DIR
    LINEAR_LAYOUTS_CACHE=$(mktemp -d) PYTHONPATH=src:benchmarks python3 benchmarks/tune_first_call.py off 15 DIR

Prints one ``tune_first_call`` JSON line: the setting, the CPUs, the run's wall seconds and each tuning's signature,
choice, candidates and seconds (``Tuning.seconds``: planning, compiling, loading and timing its candidates).
"""

from __future__ import annotations

import json
import os
import runpy
import sys
import time
from pathlib import Path

os.environ["LINEAR_LAYOUTS_AUTOTUNE"] = "1"
HERE = Path(__file__).resolve().parent


def main(setting: str, seed: str, out: str) -> None:
    from linear_layouts.ops import launch, tune

    if setting not in ("on", "off"):
        raise SystemExit("tune_first_call: SETTING must be on or off")
    if setting == "off":
        launch.compile_ahead = lambda kernels, device: None
    sys.argv = ["ops_fuzz.py", "--seed", seed, "--out", out]
    start = time.time()
    try:
        runpy.run_path(str(HERE / "ops_fuzz.py"), run_name="__main__")
    finally:
        rows = [{"signature": repr(t.signature), "chosen": t.chosen, "candidates": len(t.us),
                 "seconds": round(t.seconds, 3)} for t in tune.tunings]
        print("tune_first_call", json.dumps({"compile_ahead": setting, "cpus": os.cpu_count(),
                                             "wall_s": round(time.time() - start, 1), "tunings": rows}), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:4])
