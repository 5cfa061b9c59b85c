"""The Triton hook (``linear_layouts.triton.enable`` and friends) on the CPU: Triton 3.9 compiles a corpus
kernel through ``triton.compile`` with a ``GPUTarget`` (no GPU), with and without the hook; its TTGIR is
compared with ``rewrite_kernel``'s on Triton's own TTIR / TTGIR of the same compile (reprinted by Triton's
parser), its cache key with the plain compile's; failures on our path must leave Triton's TTGIR with one
warning. The measured choice's rule and its decision cache are tested without a GPU; its launches are a GPU
test."""

from __future__ import annotations

import json
import os
import statistics
import warnings
from pathlib import Path

import pytest

triton = pytest.importorskip("triton")
import triton.language as tl  # noqa: E402
from hypothesis import given, settings, strategies as st  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

import linear_layouts.triton as lt  # noqa: E402
from linear_layouts.errors import LayoutError  # noqa: E402
from linear_layouts.kernels.rewrite import rewrite_kernel  # noqa: E402
from linear_layouts.kernels.spec import load_kernel_file  # noqa: E402
from linear_layouts.pipeline.triton_hook import decisions, hook, measure, stage  # noqa: E402
from linear_layouts.pipeline.triton_hook import log as hook_log, settings as hook_settings  # noqa: E402
from linear_layouts.pipeline.triton_hook.decisions import Basis  # noqa: E402
from linear_layouts.pipeline.triton_hook.settings import Mode, Settings  # noqa: E402

CORPUS = Path(__file__).resolve().parent.parent / "data" / "triton_kernels"
TARGET = GPUTarget("cuda", 90, 32)


@pytest.fixture(autouse=True)
def clean(tmp_path, monkeypatch):
    """A private Triton cache and kernel cache per test; no hook, no mode variable, no warning remembered."""
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton"))
    monkeypatch.setenv("LINEAR_LAYOUTS_CACHE", str(tmp_path / "ours"))
    monkeypatch.delenv(hook_settings.MODE_ENV, raising=False)
    monkeypatch.delenv(hook_settings.TIMEOUT_ENV, raising=False)
    monkeypatch.setattr(stage, "_warned", set())
    before = triton.knobs.runtime.add_stages_inspection_hook
    yield
    lt.disable()
    triton.knobs.runtime.add_stages_inspection_hook = before


def compile_file(name: str):
    spec = load_kernel_file(CORPUS / f"{name}.py")
    signature, constexprs, attrs = spec.specialization()
    options = dict(spec.options, enable_fp_fusion=True)
    return triton.compile(ASTSource(fn=spec.kernel, signature=signature, constexprs=constexprs, attrs=attrs),
                          target=TARGET, options=options)


def hook_warnings(record) -> list[str]:
    return [str(w.message) for w in record if issubclass(w.category, lt.TritonHookWarning)]


# --------------------------------------------------------------------------------------------------------------
# install, uninstall, chain
# --------------------------------------------------------------------------------------------------------------
def test_enable_installs_and_disable_restores():
    assert triton.knobs.runtime.add_stages_inspection_hook is None
    assert lt.enable("model") is Mode.MODEL
    hook_object = triton.knobs.runtime.add_stages_inspection_hook
    assert isinstance(hook_object, hook._StagesHook) and lt.installed() and lt.mode() is Mode.MODEL
    key, digest = hook_object()
    assert key.startswith("-linear_layouts-") and "-model-" in key and digest.startswith("linear_layouts-model-")
    lt.enable("model")  # twice: one hook
    assert triton.knobs.runtime.add_stages_inspection_hook is hook_object
    lt.disable()
    assert triton.knobs.runtime.add_stages_inspection_hook is None and not lt.installed()
    assert lt.mode() is Mode.OFF


def test_context_manager_restores_the_previous_state():
    with lt.enabled("model") as mode:
        assert mode is Mode.MODEL and lt.installed()
        with lt.enabled("measured"):
            assert lt.mode() is Mode.MEASURED
        assert lt.mode() is Mode.MODEL and lt.installed()
    assert not lt.installed() and triton.knobs.runtime.add_stages_inspection_hook is None


def test_chains_with_a_users_hook():
    calls = []

    def users_hook(*args):
        if not args:
            return "-users-key", "users-hash"
        calls.append(args[3])

    triton.knobs.runtime.add_stages_inspection_hook = users_hook
    lt.enable("model")
    ours = triton.knobs.runtime.add_stages_inspection_hook
    key, digest = ours()
    assert key.endswith("-users-key") and key.startswith("-linear_layouts-") and digest.endswith("+users-hash")
    kernel = compile_file("vector_add")
    assert [str(c) for c in calls] == ["Language.TRITON"] and kernel.metadata.linear_layouts["rewritten"] is False
    lt.disable()
    assert triton.knobs.runtime.add_stages_inspection_hook is users_hook


def test_off_and_bad_modes(monkeypatch):
    assert lt.enable("off") is Mode.OFF and not lt.installed()
    with pytest.raises(LayoutError, match="mode must be one of"):
        lt.enable("fast")
    monkeypatch.setenv(hook_settings.MODE_ENV, "modle")
    with pytest.raises(LayoutError, match=r"\$LINEAR_LAYOUTS_TRITON must be one of .*did you mean 'model'"):
        lt.enable()
    monkeypatch.setenv(hook_settings.MODE_ENV, "model")
    assert lt.enable() is Mode.MODEL
    monkeypatch.setenv(hook_settings.TIMEOUT_ENV, "-3")
    with pytest.raises(LayoutError, match="TIMEOUT must be a positive number"):
        lt.enable()
    with pytest.raises(LayoutError, match="timeout_s must be a positive number"):
        lt.enable("model", timeout_s=0)


# --------------------------------------------------------------------------------------------------------------
# the cache key
# --------------------------------------------------------------------------------------------------------------
def test_cache_key_names_version_mode_and_limits(monkeypatch):
    model = Settings(Mode.MODEL)
    assert Settings(Mode.OFF).cache_key == Settings(Mode.MEASURED).cache_key == ""
    assert Settings(Mode.OFF).jit_hash != Settings(Mode.MEASURED).jit_hash != model.jit_hash
    assert Settings(Mode.MODEL, timeout_s=5).cache_key != model.cache_key
    assert Settings(Mode.MODEL, max_ops=10).cache_key != model.cache_key
    given = Settings(Mode.MEASURED, ttgir="a", ttgir_from="b")
    assert given.cache_key not in ("", model.cache_key)
    assert given.cache_key != Settings(Mode.MEASURED, ttgir="a", ttgir_from="c").cache_key
    before = model.cache_key
    monkeypatch.setattr(hook_settings, "package_key", lambda: "9.9.9-0123456789abcdef")
    assert model.cache_key != before and "9.9.9-0123456789abcdef" in model.cache_key


def test_package_key_hashes_the_sources():
    key = hook_settings.package_key()
    version, digest = key.split("-")
    assert version == __import__("linear_layouts").__version__ and len(digest) == 16 and int(digest, 16) >= 0


def test_compile_hash_follows_the_hook(monkeypatch):
    plain = compile_file("vector_add")
    lt.enable("model")
    model = compile_file("vector_add")
    monkeypatch.setattr(hook_settings, "package_key", lambda: "9.9.9-0123456789abcdef")
    other_version = compile_file("vector_add")
    lt.enable("measured")  # the JIT's variant in measured mode is Triton's own compile: Triton's cache entry
    measured = compile_file("vector_add")
    assert len({plain.hash, model.hash, other_version.hash}) == 3 and measured.hash == plain.hash
    assert "linear_layouts" not in plain.metadata._fields and model.metadata.linear_layouts["mode"] == "model"


def test_older_triton_keys_are_wrapped(monkeypatch):
    """Triton 3.6 appends the hook's key nowhere: the install wraps ``get_cache_key`` and ``compute_cache_key``
    (forced here on 3.9 by pretending its functions do not mention the hook)."""
    import triton.compiler.compiler as compiler_module
    import triton.runtime.jit as jit_module

    theirs = compiler_module.get_cache_key, jit_module.compute_cache_key
    monkeypatch.setattr(hook, "_mentions_hook", lambda function: False)
    lt.enable("model")
    assert compiler_module.get_cache_key is not theirs[0] and jit_module.compute_cache_key is not theirs[1]
    key = jit_module.compute_cache_key({}, [("i32", "D")], "options")
    assert '("custom_pipeline", linear_layouts-model-' in key
    lt.disable()
    assert (compiler_module.get_cache_key, jit_module.compute_cache_key) == theirs
    assert "custom_pipeline" not in jit_module.compute_cache_key({}, [("i32", "D")], "options")


# --------------------------------------------------------------------------------------------------------------
# what the compile emits
# --------------------------------------------------------------------------------------------------------------
def reprinted(text: str) -> str:
    """``text`` parsed and printed by Triton (the form a compile's TTGIR has after our stage)."""
    from triton._C.libtriton import ir

    context = ir.context()
    ir.load_dialects(context)
    from triton.compiler.compiler import make_backend

    make_backend(TARGET).load_dialects(context)
    return str(stage.parse_ttgir(text, context))


def test_model_mode_emits_the_rewrite_where_chosen(monkeypatch):
    """The model made to predict int4_dequant_matmul's rewrite 50% faster (it predicts 0.1%: the hook's
    plumbing is under test, not the model): the compile emits it and records the gain."""
    import linear_layouts.pipeline.kernel_model as kernel_model

    monkeypatch.setattr(kernel_model, "predicted_gain", lambda triton, ours: 0.5)
    plain = compile_file("int4_dequant_matmul")
    chosen, _ = rewrite_kernel(plain.asm["ttir"], plain.asm["ttgir"])
    assert chosen.text != plain.asm["ttgir"]  # the model chooses ours for this kernel
    with lt.enabled("model"):
        ours = compile_file("int4_dequant_matmul")
    assert ours.asm["ttir"] == plain.asm["ttir"]
    assert ours.asm["ttgir"] == reprinted(chosen.text) != plain.asm["ttgir"]
    record = ours.metadata.linear_layouts
    assert record["rewritten"] and not record["failed"] and record["predicted_gain"] >= 0.02
    assert lt.decision(ours).choice == "ours" and lt.decision(plain) is None
    assert ours.asm["cubin"] != plain.asm["cubin"]


def test_model_mode_keeps_tritons_ttgir_otherwise():
    plain = compile_file("vector_add")
    kept, _ = rewrite_kernel(plain.asm["ttir"], plain.asm["ttgir"])
    assert kept.text == plain.asm["ttgir"]
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        with lt.enabled("model"):
            ours = compile_file("vector_add")
    assert ours.asm["ttgir"] == plain.asm["ttgir"] and ours.asm["cubin"] == plain.asm["cubin"]
    assert ours.metadata.linear_layouts["rewritten"] is False and not hook_warnings(record)
    assert lt.decision(ours).choice == "triton"


def test_gluon_kernels_are_left_alone(monkeypatch):
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon._runtime import GluonASTSource

    @gluon.jit
    def copy(x_ptr, y_ptr, BLOCK: gl.constexpr):
        offsets = gl.arange(0, BLOCK, layout=gl.BlockedLayout([1], [32], [4], [0]))
        gl.store(y_ptr + offsets, gl.load(x_ptr + offsets))

    def build():
        source = GluonASTSource(copy, {"x_ptr": "*fp32", "y_ptr": "*fp32", "BLOCK": "constexpr"}, {"BLOCK": 512})
        return triton.compile(source, target=TARGET, options={"num_warps": 4, "enable_fp_fusion": True})

    plain = build()
    seen = []
    original = stage.add_stages

    def spy(backend, stages, options, language, hook_settings_in_force):
        before = dict(stages)
        original(backend, stages, options, language, hook_settings_in_force)
        seen.append(stages == before)

    monkeypatch.setattr(hook, "add_stages", spy)
    with lt.enabled("model"):
        ours = build()
    assert seen == [True] and ours.asm["ttgir"] == plain.asm["ttgir"]
    assert "linear_layouts" not in ours.metadata._fields


# --------------------------------------------------------------------------------------------------------------
# failures keep Triton's TTGIR, with one warning per kernel
# --------------------------------------------------------------------------------------------------------------
def engine_raising(*args, **kwargs):
    raise RuntimeError("engine exploded")


@pytest.mark.parametrize("failure", ["exception", "refusal", "timeout", "parser"])
def test_a_failure_falls_back_with_one_warning(monkeypatch, failure):
    import linear_layouts.kernels.rewrite as rewrite_module

    plain = compile_file("vector_add")
    if failure == "exception":
        monkeypatch.setattr(rewrite_module, "rewrite_kernel", engine_raising)
    elif failure == "refusal":
        import linear_layouts.kernels.engine_compare as engine_compare

        monkeypatch.setattr(engine_compare, "MAX_ENGINE_OPS", 3)  # the engine refuses a kernel of more ops
    elif failure == "timeout":
        monkeypatch.setenv(hook_settings.TIMEOUT_ENV, "0.001")
    else:  # a TTGIR whose layout does not fit the module's warps: Triton's verifier says no
        wrong = plain.asm["ttgir"].replace("warpsPerCTA = [4]", "warpsPerCTA = [8]")
        assert wrong != plain.asm["ttgir"]
        monkeypatch.setattr(stage, "engine_ttgir", lambda *args, **kwargs: stage.Outcome(wrong, "ours"))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        lt.enable("model")
        ours = compile_file("vector_add")
        monkeypatch.setenv("TRITON_ALWAYS_COMPILE", "1")
        compile_file("vector_add")  # the same kernel again: no second warning
    assert ours.asm["ttgir"] == plain.asm["ttgir"] and ours.asm["cubin"] == plain.asm["cubin"]
    record_ = ours.metadata.linear_layouts
    assert record_["failed"] and not record_["rewritten"]
    expected = {"exception": "engine exploded", "refusal": "-op limit", "timeout": "took more than",
                "parser": "Triton rejects our TTGIR"}[failure]
    messages = hook_warnings(record)
    assert len(messages) == 1 and expected in messages[0] and f": {plain.name}: " in messages[0]


def test_a_later_stage_failing_on_ours_lowers_tritons_instead(monkeypatch):
    """The stages after ``ttgir`` run Triton's module again when one fails on ours (fake stages)."""
    from triton.backends.compiler import Language

    class Module:
        def __init__(self, text):
            self.text, self.context = text, None

        def __str__(self):
            return self.text

        def get_entry_func_name(self):
            return "k"

    ttgir_text = "tt.func public @k() {}"

    def llir(src, metadata):
        if src.text == "ours":
            raise RuntimeError("no lowering for this layout")
        return "llir:" + src.text

    stages = {"ttir": lambda src, md: Module("ttir"), "ttgir": lambda src, md: Module(ttgir_text), "llir": llir,
              "ptx": lambda src, md: "ptx:" + src}

    class Backend:
        target = TARGET

    settings_given = Settings(Mode.MEASURED, ttgir="ours", ttgir_from=stage.text_digest(ttgir_text))
    monkeypatch.setattr(stage, "parse_ttgir", lambda text, context: Module(text))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        stage.add_stages(Backend(), stages, None, Language.TRITON, settings_given)
        metadata: dict = {}
        module = None
        for name in ("ttir", "ttgir", "llir", "ptx"):
            module = stages[name](module, metadata)
    assert module == "ptx:llir:" + ttgir_text
    assert metadata["linear_layouts"]["failed"] and "llir stage fails" in metadata["linear_layouts"]["reason"]
    assert len(hook_warnings(record)) == 1


def test_a_given_ttgir_for_another_compile_is_refused():
    with lt.enabled("model"):
        with hook_settings.overridden(Settings(Mode.MEASURED, ttgir="module {}", ttgir_from="0" * 64)):
            with warnings.catch_warnings(record=True) as record:
                warnings.simplefilter("always")
                kernel = compile_file("vector_add")
    assert kernel.metadata.linear_layouts["failed"] and "another compile" in hook_warnings(record)[0]


# --------------------------------------------------------------------------------------------------------------
# the decorator
# --------------------------------------------------------------------------------------------------------------
def test_optimize_puts_its_settings_in_force_for_the_kernels_calls():
    spec = load_kernel_file(CORPUS / "vector_add.py")
    jit = spec.kernel
    seen = []
    jit.run = lambda *args, **kwargs: seen.append((hook_settings.current().mode, lt.installed(), args, kwargs))
    try:
        tuned = triton.autotune(configs=[triton.Config({}, num_warps=4)], key=[])(jit)
        assert lt.optimize(mode="model")(tuned) is tuned
        jit.run(1, grid=(1,), warmup=False)
        assert seen == [(Mode.MODEL, True, (1,), {"grid": (1,), "warmup": False})]
        assert hook_settings.current().mode is Mode.OFF
        lt.optimize(jit, mode="off")  # decorating again replaces the settings, not stacks them
        jit.run(2, grid=(1,), warmup=False)
        assert seen[-1][0] is Mode.OFF
    finally:
        del jit.run
        jit.__dict__.pop("_linear_layouts_run", None)
    with pytest.raises(LayoutError, match="kernel must be a @triton.jit function"):
        lt.optimize(lambda x: x)


# --------------------------------------------------------------------------------------------------------------
# the measured choice: the rule, the decision cache
# --------------------------------------------------------------------------------------------------------------
def test_choose_rule():
    assert measure.choose([10.0] * 8, [9.0] * 8)[0] == "ours"
    assert measure.choose([10.0] * 8, [9.95] * 8)[0] == "triton"  # 0.5% < MIN_MEASURED_GAIN
    overlapping = measure.choose([10, 10, 12, 12, 10, 12], [9.5, 9.5, 11.9, 9.5, 11.9, 9.5])
    assert overlapping[0] == "triton" and "within the spread" in overlapping[1]
    assert measure.choose([10.0], [1.0])[0] == "triton"


@settings(max_examples=50)
@given(st.lists(st.floats(0.5, 1000.0), min_size=2, max_size=40), st.floats(1.0, 3.0))
def test_choose_never_keeps_a_slower_variant(triton_us, slower):
    assert measure.choose(triton_us, [t * slower for t in triton_us])[0] == "triton"
    ours = [t * 0.5 for t in triton_us]
    choice = measure.choose(triton_us, ours)[0]
    q1, _, q3 = statistics.quantiles(triton_us, n=4, method="inclusive")
    assert choice == ("ours" if q3 * 0.5 < q1 else "triton")


IDENTITY = {"kernel": "k", "source": "s", "compile": "c", "target": "('cuda', 90, 32)", "device": "H200",
            "triton": "3.9.0", "linear_layouts": "0.1.0-0"}


def test_decision_cache_round_trip():
    decision = decisions.Decision("ours", Basis.MEASURED_FASTER, "measured", 0.1, (10.0, 10.5, 9.5), (8.0, 8.2, 7.9),
                                  7, "module {}", "ab")
    assert decisions.load(IDENTITY) is None
    path = decisions.store(IDENTITY, decision)
    assert path.parent == Path(os.environ["LINEAR_LAYOUTS_CACHE"]) and oct(path.stat().st_mode & 0o777) == "0o600"
    loaded = decisions.load(IDENTITY)
    assert loaded == decision and loaded.basis is Basis.MEASURED_FASTER and loaded.ours_samples_us == (8.0, 8.2, 7.9)
    assert decision.measured_gain == 0.2 and decision.samples == 3 and "module" not in repr(decision)
    other = dict(IDENTITY, device="H100")
    assert decisions.load(other) is None


@pytest.mark.parametrize("tamper", ["edit", "rehash_other", "mode", "link", "truncate", "ours_without_ttgir"])
def test_decision_cache_refuses_tampered_entries(tamper, tmp_path):
    path = decisions.store(IDENTITY, decisions.Decision("triton", Basis.MEASURED_NOT_FASTER, "measured", None,
                                                        (10.0, 10.0), (10.0, 10.0)))
    entry = json.loads(path.read_text())
    if tamper == "edit":
        entry["decision"]["choice"] = "ours"
        path.write_text(json.dumps(entry))
    elif tamper == "rehash_other":  # a valid entry of another identity copied into this one's file
        path.write_text(decisions.store(dict(IDENTITY, device="H100"),
                                        decisions.Decision("triton", Basis.ERROR, "x")).read_text())
    elif tamper == "mode":
        os.chmod(path, 0o666)
    elif tamper == "link":
        target = tmp_path / "elsewhere.json"
        target.write_text(path.read_text())
        path.unlink()
        path.symlink_to(target)
    elif tamper == "truncate":
        path.write_text(path.read_text()[:40])
    else:
        entry["decision"].update(choice="ours", basis="measured faster", ttgir="")
        entry["decision_sha256"] = decisions._digest(entry["decision"])
        path.write_text(json.dumps(entry))
    from linear_layouts.codegen.ptx import CacheWarning

    with pytest.warns(CacheWarning, match="refused"):
        assert decisions.load(IDENTITY) is None
    decisions.store(IDENTITY, decisions.Decision("triton", Basis.ERROR, "again"))  # a refused entry is replaced
    assert decisions.load(IDENTITY).reason == "again"


def test_decision_fields_are_checked():
    with pytest.raises(LayoutError, match="choice must be one of"):
        decisions.Decision("mine", Basis.ERROR, "x")
    with pytest.raises(LayoutError, match="basis must be one of"):
        decisions.Decision("triton", "hunch", "x")
    with pytest.raises(LayoutError, match="does not follow from the basis 'no predicted gain'"):
        decisions.Decision("ours", Basis.NO_PREDICTED_GAIN, "x")
    with pytest.raises(LayoutError, match="triton_samples_us must be a sequence of non-negative finite numbers"):
        decisions.Decision("triton", Basis.MEASURED_NOT_FASTER, "x", triton_samples_us=(1.0, float("nan")))
    assert decisions.Decision("triton", "outputs differ", "x").basis is Basis.OUTPUTS_DIFFER  # as read from disk


# --------------------------------------------------------------------------------------------------------------
# on a GPU: a corpus kernel launched through the JIT in measured mode
# --------------------------------------------------------------------------------------------------------------
@pytest.mark.gpu
def test_measured_launch_keeps_outputs_and_stores_its_decision():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs PyTorch with a CUDA GPU")
    from harness import hook_launch

    spec = load_kernel_file(CORPUS / "int4_dequant_matmul.py")
    plain_args, measured_args = hook_launch.torch_args(spec), hook_launch.torch_args(spec)
    spec.kernel[spec.grid](*plain_args, **hook_launch.launch_kwargs(spec))
    with lt.enabled("measured"):
        kernel = spec.kernel[spec.grid](*measured_args, **hook_launch.launch_kwargs(spec))
    torch.cuda.synchronize()
    for a, b in zip(plain_args, measured_args):
        if torch.is_tensor(a):
            assert hook_launch.compare(b, a)[0]
    decision = lt.decision(kernel)
    assert decision is not None and decision.choice in ("ours", "triton") and decision.reason
    ident = decisions.identity(kernel, torch.cuda.get_device_name())
    assert decisions.load(ident) == decision


@triton.jit
def _append_ones(out_ptr, count_ptr, BLOCK: tl.constexpr):
    """Each program takes the next ``BLOCK`` slots of ``out`` from an atomic counter and fills them with ones: one
    launch from a zero counter fills ``out``, whatever the order; a second launch on its results writes past it."""
    base = tl.atomic_add(count_ptr, BLOCK)
    tl.store(out_ptr + base + tl.arange(0, BLOCK), tl.full((BLOCK,), 1, tl.int32))


@pytest.mark.gpu
def test_a_measured_kernel_with_an_atomic_counter_is_launched_from_its_saved_tensors(monkeypatch):
    """The engine forced to offer Triton's own TTGIR, and its code taken as other code, so the launch is timed:
    every timed launch starts from the saved tensors (one a sample), the guard right after the output stays
    untouched, the result is one launch's."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs PyTorch with a CUDA GPU")
    monkeypatch.setattr(measure, "engine_ttgir", lambda ttir, ttgir, **kw: stage.Outcome(ttgir, "forced", 0.0))
    monkeypatch.setattr(measure, "same_code", lambda triton_asm, ours_asm: False)
    n, block = 1 << 20, 1024
    out, guard = torch.zeros(2 * n, dtype=torch.int32, device="cuda").split(n)
    count = torch.zeros(1, dtype=torch.int32, device="cuda")
    with lt.enabled("measured"):
        kernel = _append_ones[(n // block,)](out, count, BLOCK=block)
    torch.cuda.synchronize()
    decision = lt.decision(kernel)
    assert decision.basis in (Basis.MEASURED_FASTER, Basis.MEASURED_NOT_FASTER) and decision.inner == 1, decision
    assert int(count) == n and bool((out == 1).all()) and not guard.any()


# --------------------------------------------------------------------------------------------------------------
# the measured choice's launch path, with a fake kernel and fake device (no GPU)
# --------------------------------------------------------------------------------------------------------------
class FakeSource:
    constants = {(2,): 64}

    class fn:  # noqa: N801 - stands for the JITFunction
        arg_names = ["x_ptr", "n", "BLOCK"]

    def hash(self):
        return "source-hash"


class FakeKernel:
    """What the JIT returns: a launcher in ``_run``, its function handle and metadata, the asm."""

    def __init__(self, label, launches):
        from collections import namedtuple

        self.label, self.launches = label, launches
        self.src, self.hash, self.name = FakeSource(), f"{label}-compile-hash", "fake_kernel"
        self.asm = {"ttir": "ttir text", "ttgir": f"{label} ttgir"}
        self.metadata = namedtuple("Metadata", "target")(TARGET)
        self.module = self.function = self._run = None
        self.packed_metadata = f"{label}-packed"

    def _init_handles(self):
        if self.module is None:
            self.module, self.function = f"{self.label}-module", f"{self.label}-function"
            self._run = self.launch

    @property
    def run(self):
        self._init_handles()
        return self._run

    def launch(self, gx, gy, gz, stream, function, packed, launch_metadata, enter, exit_hook, *args):
        self.launches.append((self.label, function, packed, args))


@pytest.fixture
def fake_measurement(monkeypatch):
    """The steps of the measurement that need PyTorch on a GPU faked (saving tensors, the output check, the timed
    pairs, graph capture): ``state`` says what they answer; the engine's scalars are recorded."""
    state = {"differs": "", "times": ([10.0] * 12, [8.0] * 12, 5), "tensors": ["tensor"], "capturing": False}
    engine = measure.engine_ttgir

    def recording_engine(ttir, ttgir, **kwargs):
        state.setdefault("scalars", kwargs["scalars"])
        return engine(ttir, ttgir, **kwargs)

    monkeypatch.setattr(measure, "engine_ttgir", recording_engine)

    class Tensor:
        def clone(self):
            return self

        def copy_(self, other):
            state.setdefault("restored", 0)
            state["restored"] += 1

    def tensors(args):
        if state["tensors"] is None:
            raise measure._NotMeasurable("an argument of type Thing cannot be saved and restored")
        return [Tensor() for _ in state["tensors"]]

    monkeypatch.setattr(measure, "_tensors", tensors)
    monkeypatch.setattr(measure, "_capturing", lambda: state["capturing"])

    def outputs_differ(tensors_, saved, run_triton, run_ours):
        run_triton(), run_ours()
        return state["differs"]

    monkeypatch.setattr(measure, "_outputs_differ", outputs_differ)
    def time_pairs(run_triton, run_ours, fresh=None):
        state["fresh"] = fresh
        return state["times"]

    monkeypatch.setattr(measure, "_time_pairs", time_pairs)
    return state


@pytest.fixture
def fake_device(fake_measurement, monkeypatch):
    """``fake_measurement`` with the engine, our variant's compile and the device's name faked too."""
    state = fake_measurement
    state.update(outcome=stage.Outcome("our ttgir", "ours", 0.2), compiled=[], launches=[])
    monkeypatch.setattr(measure, "_device_name", lambda: "Fake GPU")
    monkeypatch.setattr(measure, "engine_ttgir", lambda ttir, ttgir, **kw: (state.setdefault("scalars", kw["scalars"]),
                                                                           state["outcome"])[1])

    def compile_variant(kernel, ttgir, ttgir_from, options, settings_in_force):
        state["compiled"].append((ttgir, ttgir_from))
        return FakeKernel("ours", state["launches"])

    monkeypatch.setattr(measure, "compile_variant", compile_variant)
    return state


def armed(state):
    kernel = FakeKernel("triton", state["launches"])
    measure.arm(kernel, {"num_warps": 4}, Settings(Mode.MEASURED))
    return kernel


def first_launch(kernel):
    kernel.run(4, 1, 1, "stream", kernel.function, kernel.packed_metadata, None, None, None, "x", 4096, 64)


def test_measured_first_launch_keeps_a_faster_variant_and_stores_it(fake_device):
    kernel = armed(fake_device)
    assert isinstance(kernel._run, measure._FirstLaunch)
    first_launch(kernel)
    labels = [launch[0] for launch in fake_device["launches"]]
    assert labels == ["triton", "ours", "ours"]  # the output check, then the call itself with the winner
    assert fake_device["launches"][-1][1:3] == ("ours-function", "ours-packed")
    assert fake_device["scalars"] == {"%n": 4096}
    assert fake_device["restored"] == 2  # written back once before any launch (it can be), once after the timing
    decision = lt.decision(kernel)
    assert decision.choice == "ours" and decision.basis is Basis.MEASURED_FASTER
    assert decision.triton_us == 10.0 and decision.ours_us == 8.0 and decision.samples == 12 and decision.inner == 5
    assert decision.triton_samples_us == (10.0,) * 12 and decision.predicted_gain == 0.2
    assert decision.ttgir == "our ttgir" and decision.ttgir_from == stage.text_digest("triton ttgir")
    first_launch(kernel)  # later launches: straight to ours
    assert [launch[0] for launch in fake_device["launches"]][-1] == "ours" and len(fake_device["launches"]) == 4
    # a later process: the stored decision, our variant compiled from it, no measurement
    fake_device["compiled"].clear()
    again = armed(fake_device)
    assert not isinstance(again._run, measure._FirstLaunch) and lt.decision(again) == decision
    assert fake_device["compiled"] == [("our ttgir", stage.text_digest("triton ttgir"))]
    assert again.function == "ours-function" and again.module == "triton-module"


@pytest.mark.parametrize("atomic", [True, False])
def test_a_kernel_with_atomics_is_timed_from_the_saved_tensors_every_launch(fake_device, atomic):
    """A kernel whose TTGIR has an atomic need not survive being launched on its own results (a counter that
    places its writes): its timing gets ``fresh``, which writes every saved tensor back; other kernels do not."""
    kernel = armed(fake_device)
    if atomic:
        kernel.asm["ttgir"] = "%3 = tt.atomic_rmw add, acq_rel, gpu, %1, %2 : (!tt.ptr<i32>, i32) -> i32"
    first_launch(kernel)
    fresh = fake_device["fresh"]
    assert (fresh is not None) == atomic and lt.decision(kernel).choice == "ours"
    if atomic:
        restored = fake_device["restored"]
        fresh()
        assert fake_device["restored"] == restored + len(fake_device["tensors"])


@pytest.mark.parametrize("case", ["slower", "model_declines", "outputs_differ", "not_measurable"])
def test_measured_first_launch_keeps_tritons_otherwise(fake_device, case):
    stored = case != "not_measurable"
    if case == "slower":
        fake_device["times"] = ([10.0] * 12, [10.5] * 12, 5)
    elif case == "model_declines":
        fake_device["outcome"] = stage.Outcome(None, "the model keeps Triton's layouts")
    elif case == "outputs_differ":
        fake_device["differs"] = "tensor argument 0: largest difference 3"
    else:
        fake_device["tensors"] = None
    kernel = armed(fake_device)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        first_launch(kernel)
    assert fake_device["launches"][-1][:3] == ("triton", "triton-function", "triton-packed")
    assert kernel._run == kernel.launch and lt.decision(kernel).choice == "triton"
    assert lt.decision(kernel).basis is {"slower": Basis.MEASURED_NOT_FASTER, "model_declines": Basis.NO_PREDICTED_GAIN,
                                         "outputs_differ": Basis.OUTPUTS_DIFFER,
                                         "not_measurable": Basis.NOT_MEASURABLE}[case]
    assert len(hook_warnings(record)) == (case == "outputs_differ")
    ident = decisions.identity(kernel, "Fake GPU")
    assert (decisions.load(ident) is not None) == stored


def test_no_measurement_inside_graph_capture(fake_device):
    kernel = armed(fake_device)
    fake_device["capturing"] = True
    first_launch(kernel)
    assert [launch[0] for launch in fake_device["launches"]] == ["triton"]
    assert isinstance(kernel._run, measure._FirstLaunch)  # still armed: the next launch outside capture measures
    fake_device["capturing"] = False
    first_launch(kernel)
    assert lt.decision(kernel).choice == "ours"


# --------------------------------------------------------------------------------------------------------------
# the measured choice through Triton's own JIT (JITFunction.run, _do_compile, compile, CompiledKernel), on a
# fake device: Triton's driver answers with stand-ins for the module loader and the launcher; the steps that
# need PyTorch on a GPU (saving tensors, the output check, the timed pairs) are the fakes above
# --------------------------------------------------------------------------------------------------------------
class FakeDriver:
    """Triton's ``driver.active`` for the JIT on a CPU: each launch is recorded as (kernel name, function)."""

    def __init__(self):
        self.launches: list[tuple[str, str]] = []
        driver = self

        class Launcher:
            def __init__(self, src, metadata):
                self.name = metadata.name

            def __call__(self, gx, gy, gz, stream, function, packed_metadata, launch_metadata, enter, exit_hook,
                         *args):
                driver.launches.append((self.name, function))

        class Utils:
            def load_binary(self, name, binary, shared, device):
                return f"module {len(binary)}", f"function {hash(binary) & 0xffff:x}", 32, 0, 1024

            def get_device_properties(self, device):
                return {"max_shared_mem": 232448}

            def unload_module(self, module):
                pass

        class Device:
            def current_device(self):
                return 0

            def get_device_name(self, device):
                return "Fake H200"

        self.launcher_cls, self.utils, self.device = Launcher, Utils(), Device()

    def get_current_device(self):
        return 0

    def get_current_stream(self, device=None):
        return 0

    def get_current_target(self):
        return TARGET

    def get_device_interface(self):
        return self.device


class StandIn:
    """A tensor argument for Triton's binder: a 16-byte aligned address and a dtype."""

    def __init__(self, address, dtype):
        self.address, self.dtype = address, dtype

    def data_ptr(self):
        return self.address


@pytest.fixture
def fake_jit_device(fake_measurement, monkeypatch, tmp_path_factory):
    """``fake_measurement``, Triton's driver faked, one Triton cache for these tests (compiles are slow);
    ``state["load"](name)`` loads a corpus kernel file whose compiled kernels are released before the driver is
    put back (Triton 3.9 unloads a kernel's module through the driver when it is collected)."""
    import gc

    from triton.runtime import driver as driver_config

    fake = FakeDriver()
    monkeypatch.setattr(driver_config, "_active", fake)
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "triton_jit_cache"))
    loaded = []

    def load(name):
        loaded.append(load_kernel_file(CORPUS / f"{name}.py"))
        return loaded[-1]

    fake_measurement.update(jit_launches=fake.launches, load=load)
    yield fake_measurement
    for spec in loaded:
        spec.kernel.device_caches.clear()
    loaded.clear()
    gc.collect()


def jit_launch(spec):
    """One launch of a kernel file through Triton's JIT, as a user writes it: ``kernel[grid](*args, **constexprs)``."""
    dtypes = {"fp16": "torch.float16", "fp32": "torch.float32", "i32": "torch.int32"}
    args = [StandIn((i + 1) << 20, dtypes[spec.signature[p][1:]]) if spec.signature[p].startswith("*")
            else spec.scalars[p] for i, p in enumerate(spec.params) if p not in spec.constexprs]
    return spec.kernel[spec.grid](*args, **spec.constexprs, **spec.options)


def forced_engine(state):
    """An engine that predicts a 10% gain for vector_add with 8 elements a thread instead of Triton's 4 (1024
    elements over 4 warps either way: a valid layout of another binary), whatever the model says today."""

    def engine(ttir, ttgir, **kwargs):
        state.setdefault("scalars", kwargs["scalars"])
        ours = ttgir.replace("sizePerThread = [4]", "sizePerThread = [8]")
        assert ours != ttgir
        return stage.Outcome(ours, "forced by the test", 0.1)

    return engine


@pytest.mark.parametrize("keys", ["as installed", "wrapped"])
def test_measured_mode_through_the_jit_after_plain_and_model_launches(fake_jit_device, monkeypatch, keys):
    """The benchmark's sequence on one JITFunction: a launch without the hook, one in model mode, one in measured
    mode. The measured launch must compile anew (the JIT's key names the hook), arm, measure at that first
    launch (the engine's prediction forced: ``forced_engine``) and run the winner; a fresh JITFunction then
    takes the stored decision without measuring. ``wrapped``: the keys wrapped as on Triton 3.6 (whose ``run``
    and ``compile`` do not append the hook's)."""
    if keys == "wrapped":
        monkeypatch.setattr(hook, "_mentions_hook", lambda function: False)
    launches = fake_jit_device["jit_launches"]
    spec = fake_jit_device["load"]("vector_add")
    plain = jit_launch(spec)
    with lt.enabled("model"):
        model = jit_launch(spec)
    monkeypatch.setattr(measure, "engine_ttgir", forced_engine(fake_jit_device))
    with lt.enabled("measured"):
        measured = jit_launch(spec)
    assert len({id(plain), id(model), id(measured)}) == 3  # three compiles: the JIT's key follows the hook
    assert lt.decision(plain) is None and lt.decision(model).basis is Basis.NO_PREDICTED_GAIN
    decision = lt.decision(measured)
    assert decision is not None and decision.basis is Basis.MEASURED_FASTER and decision.choice == "ours"
    assert decision.samples == 12 and decision.predicted_gain == 0.1
    assert fake_jit_device["scalars"] == {"%n_elements": 98432}
    triton_function = plain.function
    assert measured.function != triton_function and "sizePerThread = [8]" in measured.asm["ttgir"]
    # the launches: plain, model, then Triton's and ours for the output check, then the call itself with ours
    assert [f == triton_function for _, f in launches[-3:]] == [True, False, False]
    assert launches[-1][1] == measured.function and len(launches) == 5
    assert decisions.load(decisions.identity(measured, "Fake H200")) == decision
    fake_jit_device["times"] = ([1.0] * 12, [9.0] * 12, 5)  # a second measurement would choose Triton's
    with lt.enabled("measured"):
        stored = jit_launch(fake_jit_device["load"]("vector_add"))
    assert lt.decision(stored) == decision and stored.function == measured.function and len(launches) == 6


def test_the_log_switch_traces_each_step_on_stderr(fake_device, monkeypatch, capfd):
    kernel = armed(fake_device)
    first_launch(kernel)
    assert "linear_layouts.triton" not in capfd.readouterr().err  # off by default
    monkeypatch.setenv(hook_log.LOG_ENV, "1")
    fake_device["times"] = ([10.0] * 12, [9.99] * 12, 5)
    kernel = FakeKernel("other", fake_device["launches"])
    kernel.hash = "another-compile-hash"
    measure.arm(kernel, {"num_warps": 4}, Settings(Mode.MEASURED))
    first_launch(kernel)
    lines = [line for line in capfd.readouterr().err.splitlines() if line.startswith("linear_layouts.triton: ")]
    steps = [line.split(": ", 2)[2].split(":")[0].split(" (")[0] for line in lines]
    assert steps == ["armed", "first launch", "engine", "saving 1 tensor arguments, then an output check and the "
                     "timed pairs", "outputs", "timed 12 pairs of 5 launches", "stored", "decision"], lines
    assert lines[-1].endswith("decision: triton (measured not faster): measured: ours 9.99 us vs Triton's 10.00 us "
                              "per launch (gain +0.1% < 1%)")
    monkeypatch.setenv(hook_log.LOG_ENV, "0")
    measure.arm(FakeKernel("third", fake_device["launches"]), None, Settings(Mode.MEASURED))
    assert "linear_layouts.triton" not in capfd.readouterr().err


def test_measured_mode_through_the_jit_says_why_it_keeps_tritons(fake_jit_device, monkeypatch):
    """No predicted gain (stored, no timing); a failure while arming is an error decision on the kernel with one
    warning, and the call still launches Triton's kernel."""
    launches = fake_jit_device["jit_launches"]
    monkeypatch.setattr(measure, "engine_ttgir", lambda ttir, ttgir, **kwargs: stage.Outcome(None, "the model keeps"))
    with lt.enabled("measured"):
        kernel = jit_launch(fake_jit_device["load"]("vector_add"))
    decision = lt.decision(kernel)
    assert decision.basis is Basis.NO_PREDICTED_GAIN and decision.samples == 0 and len(launches) == 1
    assert decisions.load(decisions.identity(kernel, "Fake H200")) == decision

    def failing_arm(*args, **kwargs):
        raise RuntimeError("no device name")

    monkeypatch.setattr(measure, "arm", failing_arm)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        with lt.enabled("measured"):
            kernel = jit_launch(fake_jit_device["load"]("vector_add"))
    decision = lt.decision(kernel)
    assert decision.basis is Basis.ERROR and "RuntimeError: no device name" in decision.reason
    assert len(hook_warnings(record)) == 1 and len(launches) == 2 and launches[-1][1] == kernel.function


def test_the_log_switch_gives_back_the_applications_level(monkeypatch):
    """Turning the stderr trace on and off again leaves the logger at the level the application had set."""
    import logging

    logger = logging.getLogger(hook_log.LOGGER_NAME)
    monkeypatch.setattr(logger, "level", logging.WARNING)
    monkeypatch.setenv(hook_log.LOG_ENV, "1")
    hook_log.step("k", "on")
    assert logger.level == logging.DEBUG
    monkeypatch.setenv(hook_log.LOG_ENV, "0")
    hook_log.step("k", "off")
    assert logger.level == logging.WARNING


@pytest.mark.gpu
def test_a_variant_of_tritons_own_code_is_not_timed(monkeypatch):
    """The engine forced to offer Triton's own TTGIR: the variant lowers to Triton's PTX, so the choice is
    Triton's with no predicted gain, no launch timed (the counter shows the output check's and the call's)."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs PyTorch with a CUDA GPU")
    monkeypatch.setattr(measure, "engine_ttgir", lambda ttir, ttgir, **kw: stage.Outcome(ttgir, "forced", 0.0))
    n, block = 1 << 16, 512  # a BLOCK of its own: the JIT's in-memory kernel of another test is decided already
    out = torch.zeros(n, dtype=torch.int32, device="cuda")
    count = torch.zeros(1, dtype=torch.int32, device="cuda")
    with lt.enabled("measured"):
        kernel = _append_ones[(n // block,)](out, count, BLOCK=block)
    torch.cuda.synchronize()
    decision = lt.decision(kernel)
    assert decision.basis is Basis.NO_PREDICTED_GAIN and "Triton's own code" in decision.reason, decision
    assert int(count) == n and bool((out == 1).all())  # one launch: nothing timed, no output check


@pytest.mark.gpu
def test_outputs_that_differ_say_when_tritons_own_reruns_differ():
    """``_outputs_differ`` launches Triton's variant again where ours differs: a Triton that writes another
    value each launch (a race, an atomic's order) is named in the reason; a deterministic one is not."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs PyTorch with a CUDA GPU")
    x = torch.zeros(4, device="cuda")
    saved = [x.clone()]
    launches = []

    def racy_triton():
        launches.append("triton")
        x.fill_(float(len(launches)))

    def steady_triton():
        x.fill_(1.0)

    def ours():
        x.fill_(5.0)

    said = measure._outputs_differ([x], saved, racy_triton, ours)
    assert said.startswith("tensor argument 0: largest difference 4") and "Triton's own kernel" in said
    said = measure._outputs_differ([x], saved, steady_triton, ours)
    assert said == "tensor argument 0: largest difference 4"
    assert measure._outputs_differ([x], saved, steady_triton, steady_triton) == ""


# --------------------------------------------------------------------------------------------------------------
# a variant that is Triton's own code is not timed
# --------------------------------------------------------------------------------------------------------------
def _renamed(ttgir: str) -> str:
    """Triton's TTGIR with every SSA value renamed and each op's location dropped: what our stage gives when
    the engine chooses Triton's own layouts (it rebuilds the ops it visits under new names)."""
    import re

    names = {}
    out = re.sub(r"%([A-Za-z_][\w$.]*)", lambda m: "%" + names.setdefault(m.group(1), f"ll{len(names)}_{m.group(1)}")
                 if not m.group(1)[0].isdigit() else m.group(0), ttgir)
    return re.sub(r" loc\(#loc\d+\)$", "", out, flags=re.M)


@pytest.mark.parametrize("name", ["fused_softmax", "matmul_fp16"])
def test_triton_layouts_under_other_names_are_the_same_code(name):
    plain = compile_file(name)
    text = _renamed(plain.asm["ttgir"])
    assert text != plain.asm["ttgir"]
    settings = Settings(Mode.MEASURED, ttgir=text, ttgir_from=stage.text_digest(plain.asm["ttgir"]))
    with lt.enabled("model"), hook_settings.overridden(settings):
        ours = compile_file(name)
    assert ours.metadata.linear_layouts["rewritten"] and ours.asm["ptx"] != plain.asm["ptx"]  # line numbers
    assert measure.same_code(plain.asm, ours.asm)
    assert stage.same_ttgir(text, plain.asm["ttgir"])


def test_the_engine_offers_no_candidate_of_tritons_own_layouts(monkeypatch):
    """A rewrite that is Triton's TTGIR under other names is no candidate (nothing to compile or time); one that
    changes a layout is."""
    from linear_layouts.pipeline import rewrite

    plain = compile_file("fused_softmax")
    ttir, ttgir = plain.asm["ttir"], plain.asm["ttgir"]

    class Chosen:
        def __init__(self, text):
            self.text, self.gain = text, 0.0

    monkeypatch.setattr(rewrite, "rewrite_kernel", lambda *a, **k: (Chosen(_renamed(ttgir)), None))
    outcome = stage.engine_ttgir(ttir, ttgir, timeout_s=60.0, min_gain=-0.1)
    assert outcome.ttgir is None and "Triton's own layouts" in outcome.reason and not outcome.failed
    other = _renamed(ttgir).replace("sizePerThread = [1]", "sizePerThread = [2]", 1)
    assert other != _renamed(ttgir)
    monkeypatch.setattr(rewrite, "rewrite_kernel", lambda *a, **k: (Chosen(other), None))
    assert stage.engine_ttgir(ttir, ttgir, timeout_s=60.0, min_gain=-0.1).ttgir == other


def test_a_rewrite_is_not_the_same_code(monkeypatch):
    """int4_dequant_matmul's rewrite (the model made to choose it, as above) lowers to other code."""
    import linear_layouts.pipeline.kernel_model as kernel_model

    monkeypatch.setattr(kernel_model, "predicted_gain", lambda triton, ours: 0.5)
    plain = compile_file("int4_dequant_matmul")
    with lt.enabled("model"):
        ours = compile_file("int4_dequant_matmul")
    assert ours.metadata.linear_layouts["rewritten"]
    assert not measure.same_code(plain.asm, ours.asm) and measure.same_code(plain.asm, plain.asm)
    assert not measure.same_code({}, plain.asm) and not measure.same_code({"ptx": ""}, {"ptx": ""})


def test_measured_mode_through_the_jit_does_not_time_tritons_own_code(fake_jit_device, monkeypatch):
    """The engine offering Triton's own TTGIR: the variant compiles to Triton's PTX (``same_code``), so nothing is
    launched but the call itself, and the choice is Triton's with no predicted gain."""
    launches = fake_jit_device["jit_launches"]
    monkeypatch.setattr(measure, "engine_ttgir", lambda ttir, ttgir, **kwargs: stage.Outcome(ttgir, "forced", 0.0))
    with lt.enabled("measured"):
        kernel = jit_launch(fake_jit_device["load"]("vector_add"))
    decision = lt.decision(kernel)
    assert decision.basis is Basis.NO_PREDICTED_GAIN and "Triton's own code" in decision.reason, decision
    assert decision.samples == 0 and len(launches) == 1


def test_decision_takes_the_jit_function_after_its_launch(fake_jit_device, monkeypatch):
    """``decision(kernel)`` of the ``@triton.jit`` function: a LayoutError before any compile, then the choice of
    its one compiled kernel; two compiled kernels with different choices ask for the compiled kernel."""
    monkeypatch.setattr(measure, "engine_ttgir", lambda ttir, ttgir, **kwargs: stage.Outcome(None, "the model keeps"))
    spec = fake_jit_device["load"]("vector_add")
    with pytest.raises(LayoutError, match="has no compiled kernel yet"):
        lt.decision(spec.kernel)
    with lt.enabled("measured"):
        compiled = jit_launch(spec)
    assert lt.decision(spec.kernel) == lt.decision(compiled) and lt.decision(compiled).basis is Basis.NO_PREDICTED_GAIN
    with lt.enabled("model"):
        jit_launch(spec)  # another compile (the JIT's key names the hook's mode), another choice
    with pytest.raises(LayoutError, match="2 compiled kernels with 2 different choices"):
        lt.decision(spec.kernel)
