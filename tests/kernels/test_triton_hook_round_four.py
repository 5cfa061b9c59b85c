"""The Triton hook, fourth review (no GPU): a user's hook written for Triton 3.6 chained to ours; a cache key of
ours that cannot be computed; two threads probing Triton's parser at once; a cache folder whose path cannot be
resolved; a compile that must not initialize CUDA."""

from __future__ import annotations

import inspect
import os
import sys
import threading
import time
import types
import warnings

import pytest

triton = pytest.importorskip("triton")
from triton.backends.compiler import GPUTarget, Language  # noqa: E402

import linear_layouts.triton as lt  # noqa: E402
from linear_layouts.codegen.ptx import CacheWarning  # noqa: E402
from linear_layouts.pipeline.triton_hook import decisions, stage  # noqa: E402
from linear_layouts.pipeline.triton_hook import settings as hook_settings  # noqa: E402
from linear_layouts.kernels.spec import load_kernel_file  # noqa: E402
from linear_layouts.pipeline.triton_hook.decisions import Basis  # noqa: E402
from linear_layouts.pipeline.triton_hook.settings import Mode  # noqa: E402

from .test_triton_hook import CORPUS, clean, compile_file, hook_warnings  # noqa: E402, F401  (clean: autouse)

TARGET = GPUTarget("cuda", 90, 32)
IDENTITY = {"kernel": "k", "source": "s", "compile": "c", "target": "cuda:90:32", "device": "H200",
            "triton": "3.9.0", "linear_layouts": "0.1.0-0"}


# --------------------------------------------------------------------------------------------------------------
# the cache key: a previous hook that gives none, ours that cannot be computed
# --------------------------------------------------------------------------------------------------------------
def test_a_users_hook_written_for_triton_36_still_compiles_when_chained_to_ours():
    """Triton 3.6 calls the hook only as ``hook(backend, stages, options, language, capability)``: a user's hook
    of that form, found when ours is installed, must not be asked for a key in a way that breaks the compile."""
    calls = []

    def users_hook(backend, stages, options, language, capability):
        calls.append(language)

    triton.knobs.runtime.add_stages_inspection_hook = users_hook
    lt.enable("model")
    key, digest = triton.knobs.runtime.add_stages_inspection_hook()
    assert key.startswith("-linear_layouts-") and digest.startswith("linear_layouts-model-")
    kernel = compile_file("vector_add")
    assert calls == [Language.TRITON] and kernel.metadata.linear_layouts["failed"] is False


def test_a_cache_key_of_ours_that_cannot_be_computed_keeps_tritons_own_compile(monkeypatch):
    """A file of the package that cannot be read (``package_key``): Triton's own key and stages, one warning."""
    def unreadable():
        raise PermissionError(13, "Permission denied", "target/devices/H200.json")

    monkeypatch.setattr(hook_settings, "package_key", unreadable)
    lt.enable("model")
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        kernel = compile_file("vector_add")
    assert getattr(kernel.metadata, "linear_layouts", None) is None
    assert [m for m in hook_warnings(record) if "computing our cache key failed" in m] == hook_warnings(record)
    assert len(hook_warnings(record)) == 1


# --------------------------------------------------------------------------------------------------------------
# the parser probe: standard error put back where it was, whatever the threads
# --------------------------------------------------------------------------------------------------------------
def test_two_threads_probing_the_parser_at_once_leave_standard_error_as_it_was(monkeypatch):
    """Each probe silences file descriptor 2 while Triton parses; two at once (two first compiles on two threads)
    must not leave it pointing at /dev/null."""
    from triton._C.libtriton import ir

    parse = ir.parse_mlir_module
    started = []

    def slow_parse(path, context):
        started.append(path)
        time.sleep(0.2 if len(started) == 1 else 0.4)  # the second probe ends after the first
        return parse(path, context)

    monkeypatch.setattr(ir, "parse_mlir_module", slow_parse)
    stage.keeps_broadcast_registers.cache_clear()
    before = os.fstat(2)
    try:
        first = threading.Thread(target=stage.keeps_broadcast_registers)
        second = threading.Thread(target=stage.keeps_broadcast_registers)
        first.start()
        time.sleep(0.05)
        second.start()
        first.join()
        second.join()
        after = os.fstat(2)
    finally:
        stage.keeps_broadcast_registers.cache_clear()
    assert (after.st_dev, after.st_ino) == (before.st_dev, before.st_ino)


# --------------------------------------------------------------------------------------------------------------
# the cache folder: a path that cannot be resolved is an unusable cache, not an error
# --------------------------------------------------------------------------------------------------------------
def test_a_cache_folder_of_an_unknown_users_home_is_an_unusable_cache(monkeypatch):
    monkeypatch.setenv("LINEAR_LAYOUTS_CACHE", "~no_such_user_linear_layouts/cache")
    with pytest.warns(CacheWarning, match="cannot store a decision"):
        assert decisions.store(IDENTITY, decisions.Decision("triton", Basis.ERROR, "r")) is None
    with pytest.warns(CacheWarning, match="decision cache"):
        assert decisions.load(IDENTITY) is None
    with stage._ttgir_file("some ttgir") as path:
        assert path.read_text() == "some ttgir"


# --------------------------------------------------------------------------------------------------------------
# the compile's target: the device is asked for only where CUDA is initialized already
# --------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("initialized", [False, True])
def test_a_compile_asks_the_device_only_where_cuda_is_initialized(monkeypatch, initialized):
    """An ahead-of-time ``triton.compile`` with the hook must not initialize CUDA (``torch.cuda.current_device``
    does): a process that forks workers afterwards could no longer use the GPU in them."""
    from triton.runtime import driver as driver_config

    asked = []
    cuda = types.SimpleNamespace(is_initialized=lambda: initialized,
                                 current_device=lambda: asked.append("current_device") or 0,
                                 get_device_name=lambda device: "NVIDIA H200")
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(cuda=cuda))
    monkeypatch.setattr(driver_config, "_active", types.SimpleNamespace(get_device_interface=lambda: cuda))
    target = stage.compile_target(types.SimpleNamespace(target=TARGET))
    assert target.arch == "sm_90" and asked == (["current_device"] if initialized else [])
    if initialized:
        assert target.device == "H200"


def test_the_parser_probe_runs_with_standard_error_closed():
    """With file descriptor 2 closed, ``os.dup(2)`` raised out of the probe at every compile: the engine's rewrite
    failed (a warning a kernel) instead of the probe answering."""
    import subprocess
    import sys

    code = ("import os; os.close(2)\n"
            "from linear_layouts.pipeline.triton_hook.stage import _parses_broadcast_probe\n"
            "print(type(_parses_broadcast_probe()).__name__)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 0 and done.stdout.strip() == "bool", (done.returncode, done.stdout)


def test_engine_runs_that_outlive_their_timeout_do_not_pile_up(monkeypatch):
    """Each timed-out engine run keeps its thread (Python cannot stop it): with many large kernels and a tight
    timeout they piled up. Past ``MAX_OVERDUE_ENGINES`` still running, a compile starts none."""
    import threading

    from linear_layouts.pipeline.triton_hook import stage

    monkeypatch.setattr(stage, "_overdue", [])
    release, started = threading.Event(), []

    def slow() -> int:
        started.append(1)
        release.wait(30)
        return 1

    try:
        for _ in range(stage.MAX_OVERDUE_ENGINES):
            with pytest.raises(TimeoutError, match="took more than"):
                stage._with_timeout(slow, 0.01)
        with pytest.raises(TimeoutError, match="still running: not starting another"):
            stage._with_timeout(slow, 0.01)
        assert len(started) == stage.MAX_OVERDUE_ENGINES
    finally:
        release.set()
    for thread in list(stage._overdue):
        thread.join(5)
    assert stage._with_timeout(lambda: 7, 5) == 7  # the overdue ones ended: the engine runs again


# --------------------------------------------------------------------------------------------------------------
# an optimize-d kernel compiled on the executor of triton.AsyncCompileMode reads its own settings there
# --------------------------------------------------------------------------------------------------------------
def test_optimize_settings_reach_async_compile_workers():
    from concurrent.futures import ThreadPoolExecutor

    from triton.runtime import _async_compile

    spec = load_kernel_file(CORPUS / "vector_add.py")
    jit = spec.kernel
    seen = []

    def submitting_run(*args, **kwargs):  # what JITFunction._do_compile does under an active AsyncCompileMode
        mode = _async_compile.active_mode.get()
        return mode.submit(("key", args), lambda: seen.append(hook_settings.current().mode) or "compiled",
                           *([lambda kernel: None] * (len(inspect.signature(triton.AsyncCompileMode.submit).parameters) - 3)))

    jit.run = submitting_run
    try:
        lt.optimize(jit, mode="model")
        with ThreadPoolExecutor(1) as executor, triton.AsyncCompileMode(executor) as async_mode:
            future = jit.run(1, grid=(1,), warmup=True)
            assert _async_compile.active_mode.get() is async_mode  # put back after the call
        assert future.result() == "compiled" and seen == [Mode.MODEL]
        assert hook_settings.current().mode is Mode.OFF
        seen.clear()
        lt.optimize(jit, mode="off")  # "off" keeps the kernel Triton's while the process is enabled
        with lt.enabled("model"), ThreadPoolExecutor(1) as executor, triton.AsyncCompileMode(executor):
            jit.run(2, grid=(1,), warmup=True).result()
        assert seen == [Mode.OFF]
    finally:
        del jit.run
        jit.__dict__.pop("_linear_layouts_run", None)


@pytest.mark.gpu
def test_an_optimized_kernel_compiled_by_async_compile_mode_takes_its_mode():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs PyTorch with a CUDA GPU")
    from concurrent.futures import ThreadPoolExecutor

    from harness import hook_launch

    spec = load_kernel_file(CORPUS / "vector_add.py")
    lt.optimize(spec.kernel, mode="model")
    try:
        with lt.enabled("measured"), ThreadPoolExecutor(2) as executor, triton.AsyncCompileMode(executor):
            kernel = spec.kernel[spec.grid](*hook_launch.torch_args(spec), **hook_launch.launch_kwargs(spec))
        torch.cuda.synchronize()
    finally:
        del spec.kernel.run
        spec.kernel.__dict__.pop("_linear_layouts_run", None)
    assert kernel.metadata.linear_layouts["mode"] == "model"  # the process's "measured" before


# --------------------------------------------------------------------------------------------------------------
# a decision entry is opened once through the checked cache folder, never blocking on what is not a file
# --------------------------------------------------------------------------------------------------------------
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_decision_entry_that_is_a_pipe_is_refused_without_blocking():
    path = decisions.store(IDENTITY, decisions.Decision("triton", Basis.ERROR, "stored"))
    path.unlink()
    os.mkfifo(path, 0o600)
    found: list = []

    def load() -> None:
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            found.append((decisions.load(IDENTITY), [str(w.message) for w in record]))

    reader = threading.Thread(target=load, daemon=True)
    reader.start()
    reader.join(10)
    assert found and found[0][0] is None and "not a regular file" in found[0][1][0]
