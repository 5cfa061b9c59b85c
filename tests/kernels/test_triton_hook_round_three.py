"""The Triton hook, third review (no GPU): a time per compile beyond what a thread can wait; the files the
package key hashes; decision-cache entries with numbers beyond any float, nested too deep or too large; tuple
arguments of a measured launch; a tensor argument that cannot be written back; our hook reached twice
through another hook chained to it; the mode changed by another thread between a compile's key and stages."""

from __future__ import annotations

import json
import sys
import types
import warnings
from pathlib import Path

import pytest

triton = pytest.importorskip("triton")
from triton.backends.compiler import GPUTarget, Language  # noqa: E402

import linear_layouts.triton as lt  # noqa: E402
from linear_layouts.codegen.ptx import CacheWarning  # noqa: E402
from linear_layouts.errors import LayoutError  # noqa: E402
from linear_layouts.pipeline.triton_hook import decisions, measure, stage  # noqa: E402
from linear_layouts.pipeline.triton_hook import settings as hook_settings  # noqa: E402
from linear_layouts.pipeline.triton_hook.decisions import Basis  # noqa: E402
from linear_layouts.pipeline.triton_hook.settings import Mode, Settings  # noqa: E402

TARGET = GPUTarget("cuda", 90, 32)
IDENTITY = {"kernel": "k", "source": "s", "compile": "c", "target": "cuda:90:32", "device": "H200",
            "triton": "3.9.0", "linear_layouts": "0.1.0-0"}


from .test_triton_hook import clean  # noqa: E402, F401  (autouse: a private cache per test, no hook left behind)


# --------------------------------------------------------------------------------------------------------------
# settings: the engine's time per compile must be one a thread can be waited for
# --------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("timeout", [10 ** 400, 1e300, hook_settings.MAX_TIMEOUT_S * 2],
                         ids=["int_beyond_float", "1e300", "twice_the_max"])
def test_a_timeout_no_thread_can_wait_is_a_layout_error(timeout, monkeypatch):
    with pytest.raises(LayoutError, match="timeout_s must be a positive number of seconds, at most"):
        lt.enable("model", timeout_s=timeout)
    monkeypatch.setenv(hook_settings.TIMEOUT_ENV, str(timeout))
    with pytest.raises(LayoutError, match=r"\$LINEAR_LAYOUTS_TRITON_TIMEOUT must be a positive number"):
        lt.enable("model")
    assert not lt.installed()


def test_the_longest_timeout_accepted_is_waited_for():
    seconds = hook_settings.settings_for("model", hook_settings.MAX_TIMEOUT_S).timeout_s
    assert stage._with_timeout(lambda: 7, seconds) == 7


def test_the_package_key_hashes_the_engine_and_its_cost_tables_wherever_they_lie(monkeypatch):
    """The key must change with the engine (``engine``, ``layouts``, ``triton_model``, ...) and the model's
    measured cost tables (``target/devices/*.json``), not only with ``pipeline``'s files."""
    import pathlib

    import linear_layouts

    read: list[str] = []
    original = pathlib.Path.read_bytes

    def spy(self):
        read.append(self.relative_to(Path(linear_layouts.__file__).resolve().parent).as_posix())
        return original(self)

    monkeypatch.setattr(pathlib.Path, "read_bytes", spy)
    hook_settings.package_key.cache_clear()
    try:
        hook_settings.package_key()
    finally:
        hook_settings.package_key.cache_clear()
    for expected in ("engine/transfer.py", "target/devices/H200.json", "pipeline/rewrite.py", "core/layout.py"):
        assert expected in read


# --------------------------------------------------------------------------------------------------------------
# the decision cache: entries no float holds, nested too deep, too large are refused (and replaced), not raised
# --------------------------------------------------------------------------------------------------------------
def test_a_decision_with_an_integer_beyond_any_float_is_a_layout_error():
    with pytest.raises(LayoutError, match="predicted_gain must be a finite number"):
        decisions.Decision("triton", Basis.ERROR, "x", predicted_gain=10 ** 400)
    with pytest.raises(LayoutError, match="triton_samples_us must be a sequence of non-negative finite numbers"):
        decisions.Decision("triton", Basis.MEASURED_NOT_FASTER, "x", triton_samples_us=(10 ** 400, 1.0))


def rewrite_entry(path, **decision_fields):
    entry = json.loads(path.read_text())
    entry["decision"].update(decision_fields)
    entry["decision_sha256"] = decisions._digest(entry["decision"])
    path.write_text(json.dumps(entry))


@pytest.mark.parametrize("corruption", ["huge_int_sample", "huge_int_gain", "deep_nesting", "too_large"])
def test_a_corrupt_decision_file_is_refused_and_replaced(corruption, monkeypatch):
    path = decisions.store(IDENTITY, decisions.Decision("triton", Basis.ERROR, "first"))
    if corruption == "huge_int_sample":
        rewrite_entry(path, triton_samples_us=[10 ** 400])
    elif corruption == "huge_int_gain":
        rewrite_entry(path, predicted_gain=10 ** 400)
    elif corruption == "deep_nesting":
        path.write_text("[" * 200_000)
    else:
        monkeypatch.setattr(decisions, "MAX_ENTRY_BYTES", 64)
    with pytest.warns(CacheWarning, match="refused"):
        assert decisions.load(IDENTITY) is None
    monkeypatch.undo()
    decisions.store(IDENTITY, decisions.Decision("triton", Basis.ERROR, "again"))
    assert decisions.load(IDENTITY).reason == "again"


# --------------------------------------------------------------------------------------------------------------
# the measured launch: what is saved and restored around it
# --------------------------------------------------------------------------------------------------------------
class FakeTensor:
    """A tensor on a fake device: ``data`` a list; ``copy_`` fails where its elements share memory."""

    def __init__(self, data, expanded=False):
        self.data, self.expanded = list(data), expanded

    def clone(self):
        return FakeTensor(self.data)

    def copy_(self, other):
        if self.expanded:
            raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to "
                               "a single memory location")
        self.data = list(other.data)

    def numel(self):
        return len(self.data)

    def element_size(self):
        return 4

    def data_ptr(self):
        return id(self)


@pytest.fixture
def fake_torch(monkeypatch):
    """``torch`` as ``measure._tensors`` uses it: ``is_tensor`` and the free device memory."""
    torch = types.ModuleType("torch")
    torch.is_tensor = lambda value: isinstance(value, FakeTensor)
    torch.cuda = types.SimpleNamespace(mem_get_info=lambda: (1 << 30, 1 << 30))
    monkeypatch.setitem(sys.modules, "torch", torch)
    return torch


def test_the_tensors_inside_tuple_arguments_are_saved(fake_torch):
    a, b, c, d = (FakeTensor([i]) for i in range(4))
    found = measure._tensors(((a, (b, 3)), 4096, c, [d], None))
    assert found == [a, b, c, d]
    looped: list = [a]
    looped.append(looped)  # a list that holds itself is expanded once
    assert measure._tensors((looped,)) == [a]


def test_restore_writes_every_tensor_back_even_when_one_fails():
    bad, good = FakeTensor([1], expanded=True), FakeTensor([2])
    saved = [FakeTensor([1]), FakeTensor([5])]
    with pytest.raises(RuntimeError, match="single memory location"):
        measure._restore([bad, good], saved)
    assert good.data == [5]


class FakeSource:
    constants: dict = {}

    class fn:  # noqa: N801 - stands for the JITFunction
        arg_names = ["bias_ptr", "y_ptr", "n"]


class FakeKernel:
    def __init__(self, label, launches):
        self.label, self.launches, self.name, self.src = label, launches, "fake_kernel", FakeSource()
        self.asm = {"ttir": "ttir text", "ttgir": f"{label} ttgir"}
        self.function, self.packed_metadata = f"{label}-function", f"{label}-packed"

    def run(self, gx, gy, gz, stream, function, packed, launch_metadata, enter, exit_hook, *args):
        self.launches.append(self.label)
        args[1].data = [v + 1 for v in args[1].data]  # y += 1: in place


def test_a_tensor_that_cannot_be_written_back_is_not_measured(monkeypatch):
    """``y += 1`` with an expanded (broadcast) bias: nothing is launched before the arguments are known to be
    restorable; the call then gets one launch's effect."""
    launches: list[str] = []
    kernel = FakeKernel("triton", launches)
    monkeypatch.setattr(measure, "engine_ttgir", lambda *args, **kwargs: stage.Outcome("our ttgir", "ours", 0.2))
    monkeypatch.setattr(measure, "compile_variant", lambda *args, **kwargs: FakeKernel("ours", launches))
    monkeypatch.setattr(measure, "_tensors", lambda args: [a for a in args if isinstance(a, FakeTensor)])

    def outputs_differ(tensors, saved, run_triton, run_ours):
        run_triton()
        measure._restore(tensors, saved)
        run_ours()
        return ""

    monkeypatch.setattr(measure, "_outputs_differ", outputs_differ)
    monkeypatch.setattr(measure, "_time_pairs", lambda run_triton, run_ours: ([10.0] * 12, [8.0] * 12, 5))
    first = measure._FirstLaunch(kernel, kernel.run, dict(IDENTITY), {"num_warps": 4}, Settings(Mode.MEASURED))
    bias, y = FakeTensor([0], expanded=True), FakeTensor([10, 20])

    def launcher(k, run):
        return lambda: run(1, 1, 1, "stream", k.function, k.packed_metadata, None, None, None, bias, y, 2)

    decision, winner = first.decide((bias, y, 2), launcher)
    assert decision.basis is Basis.NOT_MEASURABLE and "cannot be written back" in decision.reason
    assert winner is None and launches == [] and y.data == [10, 20]


# --------------------------------------------------------------------------------------------------------------
# chained hooks: ours reached twice puts our stage in once
# --------------------------------------------------------------------------------------------------------------
def test_our_stage_goes_in_once_when_another_hook_chains_to_ours():
    """A tool that installs its hook over ours and calls the one it found, then ``enabled()`` again: the chain
    is ours -> the tool's -> ours; a compile must run our engine once, on Triton's TTGIR."""
    lt.enable("model")
    found = triton.knobs.runtime.add_stages_inspection_hook

    def tools_hook(*args):
        return found(*args)

    triton.knobs.runtime.add_stages_inspection_hook = tools_hook

    def tritons_ttgir(src, metadata):
        return src

    class Backend:
        target = TARGET

    stages = {"ttir": lambda src, metadata: src, "ttgir": tritons_ttgir, "llir": lambda src, metadata: src}
    with lt.enabled("model"):
        triton.knobs.runtime.add_stages_inspection_hook(Backend(), stages, None, Language.TRITON, 90)
    ours = stages["ttgir"].__self__
    assert isinstance(ours, stage._Compile) and ours.originals["ttgir"] is tritons_ttgir
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lt.disable()


# --------------------------------------------------------------------------------------------------------------
# threads: the stages of a compile follow the settings of its cache key
# --------------------------------------------------------------------------------------------------------------
def test_a_compile_keyed_as_tritons_own_is_not_rewritten_when_the_mode_changes_before_its_stages():
    """Triton's ``compile`` asks the hook for its cache key, then for its stages; another thread's
    ``enable("model")`` in between must not put our stage into a compile stored under Triton's own key."""
    lt.enable("measured")
    installed = triton.knobs.runtime.add_stages_inspection_hook
    key, _ = installed()
    assert key == ""  # Triton's own cache entry

    def tritons_ttgir(src, metadata):
        return src

    class Backend:
        target = TARGET

    stages = {"ttir": lambda src, metadata: src, "ttgir": tritons_ttgir, "llir": lambda src, metadata: src}
    hook_settings.set_global(Settings(Mode.MODEL))  # what another thread's enable("model") does now
    installed(Backend(), stages, None, Language.TRITON, 90)
    assert stages["ttgir"] is tritons_ttgir
    stages["ttgir"] = tritons_ttgir
    key, _ = installed()  # the next compile: keyed and staged in model mode
    installed(Backend(), stages, None, Language.TRITON, 90)
    assert key.startswith("-linear_layouts-") and isinstance(stages["ttgir"].__self__, stage._Compile)
