"""``shared_memory_need`` against Triton 3.9 on buffers that flow through control flow: Gluon kernels
compiled for sm_90 on the CPU (once per module), each TTGIR's ``ttg.shared`` from Triton's own
``AllocateSharedMemory`` (``_triton_oracle.triton_shared``) and ours.

Each kernel keeps a buffer alive only through the construct it tests (an ``scf.for`` / ``scf.while``
iter_arg, an ``scf.if`` result, an ``arith.select``, a ``ttg.warp_specialize`` partition), then allocates
another buffer while the first must still be live: a count that loses the buffer in the construct comes
out a buffer short."""

from __future__ import annotations

import pytest

from linear_layouts.triton_model.ir_text import parse_module
from linear_layouts.pipeline.report import analyze_module
from linear_layouts.pipeline.shared_memory import shared_memory_need

from ._triton_oracle import triton_shared

pytest.importorskip("triton")
gluon_runtime = pytest.importorskip("triton.experimental.gluon._runtime")
from triton.experimental import gluon  # noqa: E402
from triton.experimental.gluon import language as gl  # noqa: E402

L: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0])
L2: gl.constexpr = gl.BlockedLayout([4], [32], [4], [0])
S: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, [0])


@gluon.jit
def loop_fresh_buffer(x, n):
    """Each iteration allocates the next buffer and yields it: the iter_arg may be the first buffer or
    any later one, so Triton keeps the first and the loop's (4096 bytes each) live until the result's
    last use, with ``c`` (4096) after the loop."""
    offs = gl.arange(0, 1024, L)
    v = gl.load(x + offs)
    a = gl.allocate_shared_memory(gl.float32, [1024], S, v)
    for i in range(n):
        w = a.load(L)
        a = gl.allocate_shared_memory(gl.float32, [1024], S, w + 1.0)
    c = gl.allocate_shared_memory(gl.float32, [1024], S, v * 2.0)
    gl.store(x + offs, a.load(L) + c.load(L))


@gluon.jit
def loop_fresh_after_conversion(x, n):
    """The loop's buffer is live from the loop's head, so a conversion before its alloc in the body
    holds both buffers (8192) and its scratch (2048)."""
    offs = gl.arange(0, 1024, L)
    a = gl.allocate_shared_memory(gl.float32, [1024], S, gl.load(x + offs))
    for i in range(n):
        w = gl.convert_layout(a.load(L), L2)
        a = gl.allocate_shared_memory(gl.float32, [1024], S, gl.convert_layout(w + 1.0, L))
    gl.store(x + offs, a.load(L))


@gluon.jit
def loop_swap(x, n):
    """Two buffers swapped each iteration: the result may be either, both live after the loop."""
    offs = gl.arange(0, 1024, L)
    v = gl.load(x + offs)
    a = gl.allocate_shared_memory(gl.float32, [1024], S, v)
    b = gl.allocate_shared_memory(gl.float32, [1024], S, v)
    for i in range(n):
        b.store(a.load(L) + 1.0)
        a, b = b, a
    c = gl.allocate_shared_memory(gl.float32, [1024], S, v * 2.0)
    gl.store(x + offs, a.load(L) + c.load(L))


@gluon.jit
def if_allocates(x, n):
    """Each branch allocates the buffer it yields: the if's result may be either, both live."""
    offs = gl.arange(0, 1024, L)
    v = gl.load(x + offs)
    if n > 3:
        a = gl.allocate_shared_memory(gl.float32, [1024], S, v)
    else:
        a = gl.allocate_shared_memory(gl.float32, [1024], S, v * 3.0)
    c = gl.allocate_shared_memory(gl.float32, [1024], S, v * 2.0)
    gl.store(x + offs, a.load(L) + c.load(L))


@gluon.jit
def if_picks(x, n):
    """An if choosing one of two buffers (Triton folds it to an ``arith.select``): both live while the
    choice is."""
    offs = gl.arange(0, 1024, L)
    v = gl.load(x + offs)
    a = gl.allocate_shared_memory(gl.float32, [1024], S, v)
    b = gl.allocate_shared_memory(gl.float32, [1024], S, v * 3.0)
    if n > 3:
        p = a
    else:
        p = b
    c = gl.allocate_shared_memory(gl.float32, [1024], S, v * 2.0)
    gl.store(x + offs, p.load(L) + c.load(L))


@gluon.jit
def while_swap(x, n):
    """``loop_swap`` as a while loop: the buffers pass through the before region's arguments, the
    ``scf.condition`` and the after region's arguments."""
    offs = gl.arange(0, 1024, L)
    v = gl.load(x + offs)
    a = gl.allocate_shared_memory(gl.float32, [1024], S, v)
    b = gl.allocate_shared_memory(gl.float32, [1024], S, v)
    i = 0
    while i < n:
        b.store(a.load(L) + 1.0)
        a, b = b, a
        i += 1
    c = gl.allocate_shared_memory(gl.float32, [1024], S, v * 2.0)
    gl.store(x + offs, a.load(L) + c.load(L))


@gluon.jit
def while_fresh_buffer(x, n):
    """``loop_fresh_buffer`` as a while loop."""
    offs = gl.arange(0, 1024, L)
    v = gl.load(x + offs)
    a = gl.allocate_shared_memory(gl.float32, [1024], S, v)
    i = 0
    while i < n:
        a = gl.allocate_shared_memory(gl.float32, [1024], S, a.load(L) + 1.0)
        i += 1
    c = gl.allocate_shared_memory(gl.float32, [1024], S, v * 2.0)
    gl.store(x + offs, a.load(L) + c.load(L))


@gluon.jit
def _default(x):
    offs = gl.arange(0, 1024, L)
    d = gl.allocate_shared_memory(gl.float32, [1024], S, gl.load(x + offs))
    gl.store(x + offs, d.load(L))


@gluon.jit
def _one_buffer(x, a):
    layout: gl.constexpr = gl.BlockedLayout([1], [32], [gl.num_warps()], [0])
    offs = gl.arange(0, 512, layout)
    b = gl.allocate_shared_memory(gl.float32, [512], S, gl.load(x + offs))
    a.slice(0, 512).store(b.load(layout))


@gluon.jit
def _two_buffers(x, a):
    layout: gl.constexpr = gl.BlockedLayout([1], [32], [gl.num_warps()], [0])
    offs = gl.arange(0, 256, layout)
    b = gl.allocate_shared_memory(gl.float32, [256], S, gl.load(x + offs))
    gl.store(x + offs, b.load(layout))
    c = gl.allocate_shared_memory(gl.float32, [256], S, gl.load(x + offs))
    gl.store(x + offs, c.load(layout))


@gluon.jit
def warp_specialized(x, n):
    """A buffer (4096) captured by a 1-warp partition that allocates its own (2048) while the default
    region holds another (4096): the regions run at once, so 10240, and a byte per partition warp, 1
    padded to a warp group: 4. (The captures, a pointer and a rank-1 shared descriptor, 8 + 12 bytes,
    are live at the ``ttg.warp_specialize`` only.)"""
    offs = gl.arange(0, 1024, L)
    a = gl.allocate_shared_memory(gl.float32, [1024], S, gl.load(x + offs))
    gl.warp_specialize([(_default, (x,)), (_one_buffer, (x, a))], [1])
    gl.store(x + offs, a.load(L))


@gluon.jit
def warp_specialized_regions(x, n):
    """A captured buffer (4096), the default region's (4096) and three partitions' (two buffers of 1024
    one after the other, 1024 each; 2048) run at once: their buffers never share bytes, 12288; partitions
    of 4 + 1 + 2 warps, padded to 8 bytes."""
    offs = gl.arange(0, 1024, L)
    a = gl.allocate_shared_memory(gl.float32, [1024], S, gl.load(x + offs))
    gl.warp_specialize([(_default, (x,)), (_two_buffers, (x, a)), (_two_buffers, (x, a)), (_one_buffer, (x, a))],
                       [4, 1, 2])


@gluon.jit
def _returns_a_buffer(x):
    offs = gl.arange(0, 1024, L)
    return gl.allocate_shared_memory(gl.float32, [1024], S, gl.load(x + offs))


@gluon.jit
def _idle(x):
    pass


@gluon.jit
def warp_specialized_result(x, n):
    """The default region returns its buffer: the ``ttg.warp_specialize``'s result is that buffer, live
    with ``c`` after it (8192), and a byte per partition warp, padded: 4."""
    offs = gl.arange(0, 1024, L)
    d = gl.warp_specialize([(_returns_a_buffer, (x,)), (_idle, (x,))], [1])
    c = gl.allocate_shared_memory(gl.float32, [1024], S, gl.load(x + offs))
    gl.store(x + offs, d.load(L) + c.load(L))


#: Triton 3.9's ``ttg.shared`` for each kernel (sm_90, 4 warps), which ``shared_memory_need`` must give
EXPECTED = {"loop_fresh_buffer": 12288, "loop_fresh_after_conversion": 10240, "loop_swap": 12288,
            "if_allocates": 12288, "if_picks": 12288, "while_swap": 12288, "while_fresh_buffer": 12288,
            "warp_specialized": 10244, "warp_specialized_regions": 12296, "warp_specialized_result": 8196}
KERNELS = {fn.__name__: fn for fn in (loop_fresh_buffer, loop_fresh_after_conversion, loop_swap, if_allocates,
                                      if_picks, while_swap, while_fresh_buffer, warp_specialized,
                                      warp_specialized_regions, warp_specialized_result)}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> dict[str, tuple[str, int]]:
    """Each kernel's TTGIR for sm_90 and Triton's ``ttg.shared`` of it, compiled once for the module."""
    import triton
    from triton.backends.compiler import GPUTarget

    out = {}
    directory = tmp_path_factory.mktemp("flow")
    for name, fn in KERNELS.items():
        source = gluon_runtime.GluonASTSource(fn, {"x": "*fp32", "n": "i32"}, {}, {(0,): [["tt.divisibility", 16]]})
        options = {"num_warps": 4, "enable_fp_fusion": True}
        ttgir = triton.compile(source, target=GPUTarget("cuda", 90, 32), options=options).asm["ttgir"]
        out[name] = (ttgir, triton_shared(ttgir, directory))
    return out


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_we_count_what_triton_allocates(name, compiled):
    ttgir, triton = compiled[name]
    module = parse_module(ttgir)
    ours = shared_memory_need(module, analyze_module(module, with_triton_estimate=False)).bytes
    assert (ours, triton) == (EXPECTED[name], EXPECTED[name])


@pytest.mark.parametrize("name, construct", [("loop_swap", "scf.for"), ("if_allocates", "scf.if"),
                                             ("if_picks", "arith.select"),
                                             ("while_swap", "scf.while"), ("warp_specialized", "ttg.warp_specialize")])
def test_each_kernel_has_its_construct(name, construct, compiled):
    """The TTGIR really carries a buffer through the construct (Triton did not fold it away)."""
    text = compiled[name][0]
    assert construct in text and "!ttg.memdesc" in text


#: a while loop whose after region only forwards its arguments (MLIR lowers it as a do-while: the
#: condition branches back to the before region), written by hand: Gluon's while loops have a body
DO_WHILE = """#b = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#s = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @k(%x: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32, #b>
    %p = tt.splat %x : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>, #b>
    %q = tt.addptr %p, %r : tensor<1024x!tt.ptr<f32>, #b>, tensor<1024xi32, #b>
    %v = tt.load %q : tensor<1024x!tt.ptr<f32>, #b>
    %a = ttg.local_alloc %v : (tensor<1024xf32, #b>) -> !ttg.memdesc<1024xf32, #s, #smem>
    %out:2 = scf.while (%m = %a, %i = %c0) : (!ttg.memdesc<1024xf32, #s, #smem>, i32) -> (!ttg.memdesc<1024xf32, #s, #smem>, i32) {
      %w = ttg.local_load %m : !ttg.memdesc<1024xf32, #s, #smem> -> tensor<1024xf32, #b>
      %fresh = ttg.local_alloc %w : (tensor<1024xf32, #b>) -> !ttg.memdesc<1024xf32, #s, #smem>
      %j = arith.addi %i, %c1 : i32
      %go = arith.cmpi slt, %j, %n : i32
      scf.condition(%go) %fresh, %j : !ttg.memdesc<1024xf32, #s, #smem>, i32
    } do {
    ^bb0(%m2: !ttg.memdesc<1024xf32, #s, #smem>, %i2: i32):
      scf.yield %m2, %i2 : !ttg.memdesc<1024xf32, #s, #smem>, i32
    }
    %c = ttg.local_alloc %v : (tensor<1024xf32, #b>) -> !ttg.memdesc<1024xf32, #s, #smem>
    %y = ttg.local_load %out#0 : !ttg.memdesc<1024xf32, #s, #smem> -> tensor<1024xf32, #b>
    %z = ttg.local_load %c : !ttg.memdesc<1024xf32, #s, #smem> -> tensor<1024xf32, #b>
    %s = arith.addf %y, %z : tensor<1024xf32, #b>
    tt.store %q, %s : tensor<1024x!tt.ptr<f32>, #b>
    tt.return
  }
}
"""


def test_a_do_while_loop(tmp_path):
    """The buffer allocated in the before region is the loop's result, live with ``c`` after the loop;
    the first buffer only until its last load through the before region's argument: 8192 bytes."""
    module = parse_module(DO_WHILE)
    assert shared_memory_need(module).bytes == 8192 == triton_shared(DO_WHILE, tmp_path)
