"""Summaries of measured times, and a cold start for CPU timings."""

from __future__ import annotations

import functools
import math
import sys


def geomean(values) -> float:
    """exp(mean(log v)) over the positive ``values`` (the others are not ratios: dropped); NaN if none.

    >>> geomean([1.0, 4.0]), geomean([2.0, 0.0, None])
    (2.0, 2.0)
    """
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def clear_caches() -> int:
    """Clear every ``functools`` cache of the loaded ``linear_layouts`` modules; the number cleared."""
    n = 0
    for name, module in list(sys.modules.items()):
        if not name.startswith("linear_layouts") or module is None:
            continue
        for obj in list(vars(module).values()):
            if isinstance(obj, functools._lru_cache_wrapper):
                obj.cache_clear()
                n += 1
    return n


def time_together(time, fns: dict) -> dict:
    """``{label: time(fn)}`` for every contender of ``fns`` timed twice, in order and then in reverse order, the
    faster of the two kept: contenders that share a run share the process's state (L2, clocks, what ran before),
    and none is always first or last.

    >>> calls = []
    >>> time_together(lambda f: calls.append(f()) or len(calls), {"a": lambda: "a", "b": lambda: "b"})
    {'a': 1, 'b': 2}
    >>> calls
    ['a', 'b', 'b', 'a']
    """
    first = {label: time(fn) for label, fn in fns.items()}
    second = {label: time(fns[label]) for label in reversed(list(fns))}
    return {label: min(first[label], second[label]) for label in fns}


def per_call_us(fn, calls: int) -> float:
    """Wall µs per call of ``calls`` calls of ``fn`` then one synchronization of the device: host and device
    together, what a program that launches back to back and does not capture graphs sees."""
    import time

    import torch

    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / calls * 1e6


def time_back_to_back(fn, repeats: int, inner: int = 10) -> float:
    """Median over ``repeats`` of the mean µs per call of ``inner`` back-to-back calls of ``fn`` between CUDA events
    on the current stream (after one call to warm up): what a program that does not capture graphs sees."""
    import torch

    fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(inner):
            fn()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) * 1000.0 / inner)
    return float(sorted(samples)[len(samples) // 2])
