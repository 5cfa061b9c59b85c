"""Kernels whose dependency chains are as long as the kernel (an unrolled loop of index math): the rewriter
walks them with stacks and worklists, so a chain deeper than Python's recursion limit is rewritten, not a
RecursionError (``rewrite._Rewriter.need`` recursed once per link: 600 links overflowed it)."""

from __future__ import annotations

import sys

from linear_layouts.layouts import BlockedLayout
from linear_layouts.pipeline.rewrite import rewrite_kernel, rewrite_ttgir

NARROW = "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>"
WIDE = BlockedLayout([4], [32], [4], [0])


def index_chain(links: int, encoding: str = ", #b") -> str:
    """A kernel loading and storing ``x[r + 4 * links]``, the offsets ``links`` ``arith.addi`` in one chain on
    a range (index math), in ``NARROW``; ``encoding=""``: its TTIR (no layouts)."""
    tensor = lambda element: f"tensor<512x{element}{encoding}>"
    lines = [f"#b = {NARROW}" if encoding else "",
             'module attributes {"ttg.num-warps" = 4 : i32} {',
             "  tt.func public @k(%x: !tt.ptr<f32> {tt.divisibility = 16 : i32}) {",
             f"    %r0 = tt.make_range {{end = 512 : i32, start = 0 : i32}} : {tensor('i32')}",
             f"    %c = arith.constant dense<4> : {tensor('i32')}"]
    lines += [f"    %r{k} = arith.addi %r{k - 1}, %c : {tensor('i32')}" for k in range(1, links + 1)]
    lines += [f"    %p = tt.splat %x : !tt.ptr<f32> -> {tensor('!tt.ptr<f32>')}",
              f"    %q = tt.addptr %p, %r{links} : {tensor('!tt.ptr<f32>')}, {tensor('i32')}",
              f"    %v = tt.load %q : {tensor('!tt.ptr<f32>')}",
              f"    tt.store %q, %v : {tensor('!tt.ptr<f32>')}",
              "    tt.return", "  }", "}", ""]
    return "\n".join(lines)


def test_index_chain_deeper_than_the_recursion_limit_is_recomputed():
    """``need``: the load in a wider layout recomputes its pointer's whole chain of index math there (no
    conversion), each link once; the originals, dead, are removed (``_dead_code_removed``)."""
    links = 600
    assert 2 * links > sys.getrecursionlimit() // 2  # need recursed twice per link (need, its dict comprehension)
    new = rewrite_ttgir(index_chain(links), {"%v": WIDE}, {0: WIDE})
    assert (new.conversions, new.triton_conversions) == (0, 0)
    assert new.layouts["%v"] == WIDE.to_linear([512])
    body = [line.strip() for line in new.text.splitlines() if " = arith.addi " in line]
    assert len(body) == links and all("sizePerThread = [4]" in line for line in body)
    assert not any(line.startswith("%r") for line in body)  # the originals, in NARROW, are gone
    assert body[-1].split(" = ")[0] in new.text.split("tt.addptr")[1].splitlines()[0]  # the pointer uses the last


def test_rewrite_kernel_of_a_deep_index_chain():
    """The same kernel through ``rewrite_kernel`` (TTIR and TTGIR, no source locations: every link has one
    key, ``rewrite._ties`` tells them apart by operands): the engine's coalesced layout, no conversion."""
    rewrite, assignment = rewrite_kernel(index_chain(600, ""), index_chain(600), choose=False)
    assert assignment.values["%v"] == WIDE and assignment.stores == {0: WIDE}
    assert (rewrite.conversions, rewrite.rejected) == (0, ())
    assert rewrite.layouts["%v"] == WIDE.to_linear([512])
