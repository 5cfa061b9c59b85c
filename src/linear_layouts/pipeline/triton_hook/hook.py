"""Installing the hook into Triton: ``enable`` / ``disable`` / ``enabled`` for every ``@triton.jit`` compile of
the process, ``optimize`` for one kernel.

What is installed (``_install``), the same on Triton 3.6 and 3.9:

* ``triton.knobs.runtime.add_stages_inspection_hook`` = a ``_StagesHook`` chained to the hook found there
  (a user's own): called with no arguments it returns (key, hash) -- ``Settings.cache_key`` /
  ``Settings.jit_hash`` of the settings in force (Triton's own where ours cannot be computed), followed by the
  previous hook's where it gives one (a hook written for Triton 3.6 takes no call without arguments) --, which
  Triton appends to its on-disk cache key and to the JIT's in-memory key; called as ``hook(backend, stages,
  options, language, capability)`` by the backend's ``add_stages`` it puts our stage in
  (``stage.add_stages``), then calls the previous hook.
* Where Triton's ``compile`` does not append the hook's key to its cache key (3.6), its module's
  ``get_cache_key`` is wrapped to append it; where the JIT's ``run`` does not append the hook's hash to its
  key (3.6), the JIT module's ``compute_cache_key`` is wrapped to append it, as 3.9 does itself: a kernel
  compiled with the hook never shares a cache entry with one compiled without.
* ``JITFunction._do_compile`` is wrapped to ``measure.arm`` the kernel it returns where the mode in force is
  ``measured`` (not for Gluon kernels).

``disable`` puts back the previous hook and the wrapped functions (each only where it is still ours).
Install and removal hold a lock; the settings of a compile are read on the thread that runs it (the process's,
or an ``optimize``-d kernel's for the duration of its call: ``settings.overridden``), when its cache key is. A
call of an ``optimize``-d kernel inside ``triton.AsyncCompileMode`` submits its compile in a copy of its context
(``_CarryingContext``), so the executor's thread reads the kernel's settings too.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
import threading
from collections.abc import Callable, Iterator
from typing import Any

from linear_layouts.errors import LayoutError
from linear_layouts.limits import quote, shorten
from linear_layouts.pipeline.triton_hook.log import step
from linear_layouts.pipeline.triton_hook.settings import (Mode, Settings, current, overridden, set_global, settings_for)
from linear_layouts.pipeline.triton_hook.stage import add_stages, warn_once

__all__ = ["enable", "disable", "enabled", "optimize", "mode", "installed"]

_lock = threading.RLock()


#: per thread, the settings of the last cache key the hook gave (``_StagesHook``)
_keyed = threading.local()


class _StagesHook:
    """Triton's ``add_stages_inspection_hook``: ours, then ``previous`` (module doc). A compile's stages are
    those of the settings that made its cache key (the call without arguments that Triton's ``compile`` makes
    just before, on the same thread), not of settings another thread put in force in between: a compile
    stored under Triton's own key is always Triton's own."""

    def __init__(self, previous: Callable | None) -> None:
        self.previous = previous

    def __call__(self, *args: Any) -> Any:
        if not args:
            settings, key, digest = _own_key(current())
            _keyed.settings = settings
            theirs = _previous_key(self.previous) if self.previous is not None else None
            if theirs is not None:
                key, digest = key + theirs[0], f"{digest}+{theirs[1]}"
            return key, digest
        backend, stages, options, language = args[:4]
        settings, _keyed.settings = getattr(_keyed, "settings", None) or current(), None
        try:
            add_stages(backend, stages, options, language, settings)
        except Exception as error:  # noqa: BLE001 - never break a compile
            warn_once("compile", f"installing our stage failed: {type(error).__name__}: {shorten(str(error), 200)}")
        if self.previous is not None:
            return self.previous(*args)
        return None


def _own_key(settings: Settings) -> tuple[Settings, str, str]:
    """(settings, cache key, JIT hash) of a compile under ``settings``; Triton's own compile (``off``), warned
    once, where our key cannot be computed (e.g. a file of the package it hashes cannot be read)."""
    try:
        return settings, settings.cache_key, settings.jit_hash
    except Exception as error:  # noqa: BLE001 - never break a compile
        warn_once("hook", f"computing our cache key failed: {type(error).__name__}: {shorten(str(error), 200)}")
        off = Settings(Mode.OFF)
        return off, off.cache_key, off.jit_hash


def _previous_key(previous: Callable) -> tuple[str, str] | None:
    """The (key, hash) the hook ours chains to gives when called without arguments, or None where it gives none:
    a hook written for Triton 3.6 (which calls it only with a compile's stages) takes no such call."""
    try:
        found = previous()
    except Exception:  # noqa: BLE001 - e.g. a TypeError: it needs the stages' arguments
        return None
    if isinstance(found, tuple) and len(found) == 2 and all(isinstance(part, str) for part in found):
        return found
    return None


_hook: _StagesHook | None = None
_replaced: list[tuple[Any, str, Any, Any]] = []  # (owner, name, Triton's, ours)


def installed() -> bool:
    """Our hook is Triton's ``add_stages_inspection_hook`` now."""
    from triton import knobs

    return _hook is not None and knobs.runtime.add_stages_inspection_hook is _hook


def _install() -> None:
    global _hook
    from triton import knobs

    with _lock:
        present = knobs.runtime.add_stages_inspection_hook
        if _hook is not None and present is _hook:
            return
        hook = present if isinstance(present, _StagesHook) else _StagesHook(present)
        knobs.runtime.add_stages_inspection_hook = hook
        _hook = hook
        _wrap_triton()


def _uninstall() -> None:
    global _hook
    from triton import knobs

    with _lock:
        if _hook is None:
            return
        if knobs.runtime.add_stages_inspection_hook is _hook:
            knobs.runtime.add_stages_inspection_hook = _hook.previous
        while _replaced:
            owner, name, theirs, ours = _replaced.pop()
            if getattr(owner, name, None) is ours:
                setattr(owner, name, theirs)
        _hook = None


def _mentions_hook(function: Callable) -> bool:
    try:
        return "add_stages_inspection_hook" in inspect.getsource(function)
    except (OSError, TypeError):  # no source: assume the older Triton
        return False


def _replace(owner: Any, name: str, ours: Any) -> None:
    _replaced.append((owner, name, getattr(owner, name), ours))
    setattr(owner, name, ours)


def _hook_found() -> tuple[str, str] | None:
    from triton import knobs

    hook = knobs.runtime.add_stages_inspection_hook
    return None if hook is None else hook()


def _wrap_triton() -> None:
    """The wrapped functions of the module doc (once per install)."""
    if _replaced:
        return
    import triton.compiler.compiler as compiler_module
    import triton.runtime.jit as jit_module

    if not _mentions_hook(compiler_module.compile):
        get_cache_key = compiler_module.get_cache_key

        def cache_key_with_hook(*args: Any, **kwargs: Any) -> str:
            found = _hook_found()
            key = get_cache_key(*args, **kwargs)
            return key if found is None else key + found[0]

        _replace(compiler_module, "get_cache_key", cache_key_with_hook)
    if not _mentions_hook(jit_module.JITFunction.run):
        compute_cache_key = jit_module.compute_cache_key

        def jit_key_with_hook(kernel_key_cache: Any, specialization: Any, options: Any) -> Any:
            found = _hook_found()
            if found is not None:
                specialization = [*specialization, f'("custom_pipeline", {found[1]})']
            return compute_cache_key(kernel_key_cache, specialization, options)

        _replace(jit_module, "compute_cache_key", jit_key_with_hook)
    do_compile = jit_module.JITFunction._do_compile
    signature = inspect.signature(do_compile)

    def do_compile_then_arm(self: Any, *args: Any, **kwargs: Any) -> Any:
        kernel = do_compile(self, *args, **kwargs)
        settings = current()
        if settings.mode is not Mode.MEASURED or settings.ttgir is not None or kernel is None:
            return kernel
        name = getattr(kernel, "name", getattr(self, "__name__", "kernel"))
        if getattr(self, "is_gluon", lambda: False)():
            step(name, "JIT compile of a Gluon kernel: left alone")
            return kernel
        from linear_layouts.pipeline.triton_hook.decisions import Basis, Decision
        from linear_layouts.pipeline.triton_hook.measure import arm

        try:
            bound = signature.bind(self, *args, **kwargs).arguments
            ours = "linear_layouts" in str(bound.get("key"))
            step(name, f"JIT compile in measured mode (the JIT's key {'names' if ours else 'lacks'} our hook)")
            arm(kernel, bound.get("options"), settings)
        except Exception as error:  # noqa: BLE001 - Triton's kernel is returned as it is
            why = f"preparing the measured choice failed: {type(error).__name__}: {shorten(str(error), 200)}"
            step(name, why)
            warn_once(str(name), why)
            with contextlib.suppress(AttributeError):
                kernel._linear_layouts = Decision("triton", Basis.ERROR, why)
        return kernel

    _replace(jit_module.JITFunction, "_do_compile", do_compile_then_arm)
    import triton

    step("hook", f"installed on Triton {triton.__version__}: wrapped {', '.join(name for _, name, _, _ in _replaced)}")


def _require_triton() -> None:
    try:
        import triton  # noqa: F401
        from triton import knobs
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise LayoutError(f"the Triton hook needs triton >= 3.6 (pip install 'linear_layouts[triton]'): {error}") \
            from None
    if not hasattr(knobs.runtime, "add_stages_inspection_hook"):
        raise LayoutError(f"the Triton hook needs triton >= 3.6 (add_stages_inspection_hook); "
                          f"this is Triton {triton.__version__}")


def enable(mode: Mode | str | None = None, *, timeout_s: float | None = None) -> Mode:
    """Our layouts for every ``@triton.jit`` compile of the process from now on, in ``mode`` (``"measured"``,
    ``"model"`` or ``"off"``; default ``$LINEAR_LAYOUTS_TRITON``, else ``"measured"``); ``timeout_s``: our
    engine's time allowed per compile. ``"off"`` is ``disable()``. Returns the mode in force.

    Example: ``linear_layouts.triton.enable()`` before the first launch of a kernel."""
    settings = settings_for(mode, timeout_s)
    if settings.mode is Mode.OFF:
        disable()
        return Mode.OFF
    _require_triton()
    with _lock:
        set_global(settings)
        _install()
    return settings.mode


def disable() -> None:
    """Triton's own compiles from now on: the previous ``add_stages_inspection_hook`` is back (a kernel
    already compiled keeps its binary)."""
    with _lock:
        set_global(Settings(Mode.OFF))
        try:
            _uninstall()
        except ImportError:  # pragma: no cover - never installed without Triton
            pass


def mode() -> Mode:
    """The process's mode now."""
    from linear_layouts.pipeline.triton_hook.settings import _process_settings

    return _process_settings.mode


@contextlib.contextmanager
def enabled(mode: Mode | str | None = None, *, timeout_s: float | None = None) -> Iterator[Mode]:
    """``enable(mode)`` for the block, then the process's previous settings (``disable()`` where it had none)."""
    with _lock:
        from linear_layouts.pipeline.triton_hook import settings as settings_module

        before = settings_module._process_settings
    resolved = enable(mode, timeout_s=timeout_s)
    try:
        yield resolved
    finally:
        with _lock:
            if before.mode is Mode.OFF:
                disable()
            else:
                set_global(before)
                _install()


def _jit_function(kernel: Any) -> Any:
    """The ``JITFunction`` under ``kernel`` (itself, or what ``triton.autotune`` / ``triton.heuristics`` wrap)."""
    from triton.runtime.jit import JITFunction

    found = kernel
    while not isinstance(found, JITFunction) and hasattr(found, "fn"):
        found = found.fn
    if not isinstance(found, JITFunction):
        raise LayoutError(f"kernel must be a @triton.jit function (or triton.autotune / triton.heuristics of one), "
                          f"got {quote(kernel)}")
    return found


class _CarryingContext:
    """Triton's active ``AsyncCompileMode`` whose ``submit`` runs each compile in a copy of the submitting call's
    context: the settings an ``optimize``-decorated call put in force (``settings.overridden``, a context
    variable) then reach the compile on the executor's thread, where Triton computes the cache key and adds the
    stages. Every other attribute is the mode's own."""

    def __init__(self, mode: Any) -> None:
        self._mode = mode

    def submit(self, key: Any, compile_fn: Callable[[], Any], *rest: Any) -> Any:
        return self._mode.submit(key, functools.partial(contextvars.copy_context().run, compile_fn), *rest)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._mode, name)


@contextlib.contextmanager
def _carried_into_async_compiles() -> Iterator[None]:
    """For the block, Triton's active ``AsyncCompileMode`` (``with triton.AsyncCompileMode(executor):``) seen
    through ``_CarryingContext``; nothing where none is active (or this Triton has none)."""
    try:
        from triton.runtime import _async_compile
    except ImportError:  # pragma: no cover - a Triton without asynchronous compiles
        yield
        return
    active = getattr(_async_compile, "active_mode", None)
    mode = active.get() if active is not None else None
    if mode is None or isinstance(mode, _CarryingContext):
        yield
        return
    token = active.set(_CarryingContext(mode))
    try:
        yield
    finally:
        active.reset(token)


def optimize(kernel: Any = None, *, mode: Mode | str | None = None, timeout_s: float | None = None) -> Any:
    """Decorator: our layouts for this kernel's compiles only, in ``mode`` (as ``enable``'s, read when
    decorating; ``"off"`` keeps a kernel Triton's while the process is enabled). Returns the kernel
    itself: its ``JITFunction``'s ``run`` is wrapped to put the settings in force for each call.

    Example::

        @linear_layouts.triton.optimize            # or @optimize(mode="model")
        @triton.jit
        def kernel(x_ptr, ...): ...
    """
    settings = settings_for(mode, timeout_s)

    def apply(target: Any) -> Any:
        _require_triton()
        jit = _jit_function(target)
        run = getattr(jit, "_linear_layouts_run", None) or jit.run

        def run_with_settings(*args: Any, **kwargs: Any) -> Any:
            if settings.mode is not Mode.OFF and not installed():
                _install()
            with overridden(settings), _carried_into_async_compiles():
                return run(*args, **kwargs)

        jit._linear_layouts_run = run
        jit.run = run_with_settings
        return target

    return apply if kernel is None else apply(kernel)
