"""The TTIR / TTGIR text reader on every stored IR of the corpus, and on hand-written edge cases."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from linear_layouts.core.errors import LayoutError
from linear_layouts.triton_model.ir_text import last_module, parse_module, split_top
from linear_layouts.core.element_type import ir_element_bits
from linear_layouts.triton_model.encodings import TypeInfo, module_types, parse_type
from linear_layouts.core.mlir_text import closing, find_top

IR = Path(__file__).resolve().parent.parent / "data" / "triton_kernels" / "ir"
FILES = sorted(IR.glob("*/*.tt*ir"))


def _op_lines(text: str) -> int:
    """Lines of the function body that are ops (not closers, block labels or aliases)."""
    return sum(1 for line in text.splitlines() if line.startswith("    ")
               and not line.strip().startswith(("}", "^")))


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.name}" for p in FILES])
def test_every_op_of_every_stored_ir_is_read_with_its_types(path):
    text = path.read_text()
    module = parse_module(text)
    ops = list(module.functions[0].walk())
    assert len(ops) == _op_lines(text)
    assert module.num_warps in (1, 2, 4, 8, 16) and module.threads_per_warp in (32, 64)
    for op in ops:
        if op.name in ("ttg.convert_layout", "ttg.local_load", "ttg.local_store", "tt.reduce"):
            assert op.operand_types and op.result_types, op.text
        if op.name in ("ttg.convert_layout", "tt.load") and "ttgir" in path.suffix:
            assert op.loc.file.endswith(".py") and op.loc.line > 0, op.text
    for t in module_types(module).values():  # every tensor / memdesc type splits into shape and element
        assert t.shape and t.bitwidth is not None, t.text


def test_regions_results_and_locations():
    m = parse_module('''#loc1 = loc("k.py":7:3)
#loc2 = loc("acc"(#loc1))
module attributes {"ttg.num-warps" = 8 : i32, ttg.target = "cuda:90"} {
  tt.func public @k(%n: i32 {tt.divisibility = 16 : i32} loc("n"(#loc1))) {
    %c0 = arith.constant 0 : i32
    %r:2 = scf.for %i = %c0 to %n step %c0 iter_args(%a = %c0, %b = %c0) -> (i32, i32)  : i32 {
      %s = "tt.reduce"(%x) <{axis = 1 : i32}> ({
      ^bb0(%p: f32, %q: f32):
        %t = arith.addf %p, %q : f32
        tt.reduce.return %t : f32
      }) : (tensor<4x8xf32, #a>) -> tensor<4xf32, #b> loc(#loc2)
      scf.yield %a, %b : i32, i32
    } {tt.num_stages = 3 : i32} loc(#loc1)
    tt.return
  }
}''')
    assert m.num_warps == 8 and m.target == "cuda:90"
    fn = m.functions[0]
    assert fn.args == (("%n", "i32"),)
    loop = fn.body.ops[1]
    assert loop.results == ("%r#0", "%r#1") and loop.result_types == ("i32", "i32")
    assert loop.attr_int("tt.num_stages") == 3 and str(loop.loc) == "k.py:7"
    red = loop.regions[0].ops[0]
    assert red.name == "tt.reduce" and red.attr_int("axis") == 1
    assert red.operand_types == ("tensor<4x8xf32, #a>",) and red.result_types == ("tensor<4xf32, #b>",)
    assert red.loc.name == "acc" and red.loc.line == 7
    assert [op.name for op in red.regions[0].ops] == ["arith.addf", "tt.reduce.return"]


def test_a_regions_block_arguments_survive_its_nested_regions():
    """An scf.while's after region keeps its ``^bb0`` arguments when its body holds an scf.for (the
    nested region's parse used to reset them: the region came out with none)."""
    m = parse_module('''module {
  tt.func public @k(%n: i32) {
    %c0 = arith.constant 0 : i32
    %w:2 = scf.while (%a = %c0, %b = %c0) : (i32, i32) -> (i32, i32) {
      %go = arith.cmpi slt, %a, %n : i32
      scf.condition(%go) %a, %b : i32, i32
    } do {
    ^bb0(%x: i32, %y: i32):
      %r = scf.for %i = %c0 to %n step %n iter_args(%s = %x) -> (i32)  : i32 {
        scf.yield %s : i32
      }
      scf.yield %r, %y : i32, i32
    }
    tt.return
  }
}''')
    loop = m.functions[0].body.ops[1]
    assert [r.args for r in loop.regions] == [(), (("%x", "i32"), ("%y", "i32"))]


def test_block_argument_types_keep_their_commas():
    """A block label's argument types are read whole, commas inside their brackets included (they were
    cut at the first comma: ``!ttg.memdesc<1024xf32``, so ``check_types`` refused the yield of the
    argument with its whole type, which Triton accepts)."""
    memdesc = "!ttg.memdesc<16xf32, #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>, " \
              "#ttg.shared_memory, mutable>"
    m = parse_module(f'''module {{
  tt.func public @k(%n: i32, %m: {memdesc}) {{
    %c0 = arith.constant 0 : i32
    %w:2 = scf.while (%a = %m, %i = %c0) : ({memdesc}, i32) -> ({memdesc}, i32) {{
      %go = arith.cmpi slt, %i, %n : i32
      scf.condition(%go) %a, %i : {memdesc}, i32
    }} do {{
    ^bb0(%b: {memdesc} loc("k.py":3:4), %j: i32 loc("k.py":3:9)):
      scf.yield %b, %j : {memdesc}, i32
    }}
    tt.return
  }}
}}''')
    loop = m.functions[0].body.ops[1]
    assert loop.regions[1].args == (("%b", memdesc), ("%j", "i32"))
    from linear_layouts.triton_model.ir_text import check_well_formed

    check_well_formed(m, "ttgir")


def test_casts_and_wgmma_types():
    m = parse_module('''module {
  tt.func @k() {
    %y = arith.truncf %x : tensor<4xf32, #a> to tensor<4xf16, #a>
    %d = ttng.warp_group_dot %a, %b, %c : !ttg.memdesc<64x16xf16, #s, #smem> * !ttg.memdesc<16x64xf16, #s, #smem> -> tensor<64x64xf32, #m>
    tt.return
  }
}''')
    cast, dot = m.functions[0].body.ops[:2]
    assert cast.operand_types == ("tensor<4xf32, #a>",) and cast.result_types == ("tensor<4xf16, #a>",)
    assert len(dot.operand_types) == 2 and dot.result_types == ("tensor<64x64xf32, #m>",)


def test_unsplat_gives_its_operands_element():
    """``tt.unsplat`` prints its operand's type only: the result is the element (Triton 3.9 pipelines a
    scalar load in a loop through shared memory as ``tensor<1xi32>`` and unsplats it: paged_decode_attention)."""
    m = parse_module('''module {
  tt.func @k() {
    %s = tt.unsplat %t : tensor<1xi32, #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>>
    %w = arith.extsi %s : i32 to i64
    tt.return
  }
}''')
    unsplat = m.functions[0].body.ops[0]
    assert unsplat.operand_types == ("tensor<1xi32, #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], "
                                     "warpsPerCTA = [4], order = [0]}>>",)
    assert unsplat.result_types == ("i32",) and parse_type("i32", m).kind != "tensor"


def test_mlir_dump_keeps_the_last_ttgir_module():
    dump = ("// -----// IR Dump After TritonCombineOps (triton-combine) //----- //\nmodule {\n  tt.func @a() {\n"
            "    tt.return\n  }\n}\n"
            "// -----// IR Dump After TritonGPUCoalesce (tritongpu-coalesce) //----- //\nmodule {\n  tt.func @b() {\n"
            "    tt.return\n  }\n}\n"
            "// -----// IR Dump After ConvertTritonGPUToLLVM (convert-triton-gpu-to-llvm) //----- //\nmodule {\n"
            "  llvm.func @b() {\n    llvm.return\n  }\n}\n")
    assert parse_module(last_module(dump)).functions[0].name == "b"
    assert parse_module(last_module(dump, after="Combine")).functions[0].name == "a"
    with pytest.raises(LayoutError, match="no module found after a pass matching 'Nope'"):
        last_module(dump, after="Nope")


def test_bad_text_is_refused():
    with pytest.raises(LayoutError, match="no tt.func found"):
        parse_module("module {\n}\n")
    with pytest.raises(LayoutError, match="text must be a string"):
        parse_module(b"module")


def test_types_and_element_widths():
    t = parse_type("!ttg.memdesc<2x64x128xi8, #ttg.swizzled_shared<{vec = 1}>, #ttg.shared_memory, mutable, 4x64x128>")
    assert (t.kind, t.shape, t.element, t.alloc_shape, t.bitwidth) == ("memdesc", (2, 64, 128), "i8", (4, 64, 128), 8)
    assert parse_type("tensor<16x!tt.ptr<f16>, #blocked>").bitwidth == 64
    assert [ir_element_bits(e) for e in ("i1", "bf16", "f8E4M3FN", "f32", "!tt.ptr<f32>", "foo")] == [8, 16, 8, 32, 64, None]
    assert isinstance(parse_type("tensor<4xi1>"), TypeInfo) and parse_type("tensor<4xi1>").bitwidth == 8
    assert split_top("a<b, c>, (d, e) -> f, g") == ["a<b, c>", "(d, e) -> f", "g"]


def test_function_arguments_end_at_their_closing_parenthesis():
    # a location after the attributes: the argument list is the header's first bracket group, not
    # everything up to the line's last ')'
    m = parse_module('module {\n  tt.func public @k(%x: i32 {tt.divisibility = 16 : i32} loc("a.py":1:0), '
                     '%y: f32 loc("a.py":1:0)) attributes {noinline = false} loc(#loc) {\n'
                     '    tt.return\n  }\n}')
    f = m.functions[0]
    assert f.args == (("%x", "i32"), ("%y", "f32"))
    assert f.arg_attrs[0] == ("%x", "tt.divisibility = 16 : i32")


def test_bracket_scan_helpers():
    assert closing("tensor<4x!tt.ptr<f32>, #a> rest", 6) == 25
    assert closing("(a, (b)) c", 0) == 7
    assert closing("(a, (b c", 0) == -1
    assert find_top('f("x : y") : t', " : ") == 10  # inside quotes does not count
    assert find_top("(a) -> b", ">") == -1  # an arrow is no bracket
    assert split_top("") == []
    with pytest.raises(LayoutError, match="start"):
        closing("abc", 1)


def _depth_zero_indices(text: str, start: int = 0) -> list[int]:
    """The bracket scan's rule, one character at a time (what ``mlir_text``'s span scan must agree with):
    an index is at the top level when no bracket or quote is open before it (counted from ``start``); the
    ``>`` of an arrow ``->`` is no bracket and not an index of its own."""
    out, depth, quoted, i = [], 0, False, start
    while i < len(text):
        if depth == 0 and not quoted:
            out.append(i)
        c = text[i]
        if c == '"':
            quoted = not quoted
        elif not quoted and text.startswith("->", i):
            i += 2
            continue
        elif not quoted and c in "<({[":
            depth += 1
        elif not quoted and c in ">)}]":
            depth -= 1
        i += 1
    return out


def test_bracket_scans_agree_with_the_character_rule():
    import random

    from linear_layouts.core.mlir_text import _top_level

    rng = random.Random(5)
    pieces = list('ab<>(){}[]"-, :x') + ["->", " : ", " to ", ", "]
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 24)))
        start = rng.randint(0, len(text))
        top = _depth_zero_indices(text, start)
        assert list(_top_level(text, start)) == top, (text, start)
        needle = rng.choice([",", " : ", "->", ">", ")", " to ", "-", '"', "x>"])
        hits = [i for i in top if text.startswith(needle, i)]
        assert find_top(text, needle, start=start) == (hits[0] if hits else -1), (text, needle, start)
        assert find_top(text, needle, start=start, last=True) == (hits[-1] if hits else -1), (text, needle, start)
        parts, begin = [], 0
        for i in _depth_zero_indices(text):
            if i >= begin and text.startswith(needle, i):
                parts.append(text[begin:i].strip())
                begin = i + len(needle)
        tail = text[begin:].strip()
        assert split_top(text, needle) == (parts + [tail] if tail or parts else []), (text, needle)


CORPUS = sorted(IR.rglob("*.tt*ir")) + sorted((IR.parents[1] / "triton36_sm90").glob("*.ttgir"))


def test_every_corpus_module_is_well_formed():
    """``check_well_formed`` accepts every real TTIR / TTGIR (Triton 3.6 and 3.9; sm_80, sm_90, gfx942):
    scf.for's induction variables and iter_args, region arguments, ``%true = arith.constant true`` and
    ``ttg.async_*`` tokens without types."""
    from linear_layouts.triton_model.ir_text import check_well_formed

    assert len(CORPUS) > 200
    for path in CORPUS:
        check_well_formed(parse_module(path.read_text()), path.name)


@pytest.mark.parametrize("body, match", [
    ("%y = math.exp %x : f32", "uses '%x', which is not defined before it"),
    ("%y = arith.addf %a, %a : f32\n    %z = arith.addf %y : f32", "1 operands, 1 operand types"),
    ("%y = tt.get_program_id x", "results '%y' without a type"),
    ("%r = scf.for %i = %a to %a step %a iter_args(%s = %a) -> (i32) : i32", "scf.for at .* has no region"),
    ("%r = scf.for %i = %a to %a step %a iter_args(%s = %a) -> (i32) : i32 {\n"
     "      %t = arith.addi %s, %i : i32\n      scf.yield %t : i32\n    }\n    %u = arith.addi %t, %a : i32",
     "uses '%t', which is not defined before it"),
    # MLIR's scoping: a value defined in a region is not visible after it (an scf.if's branch)
    ("%c = arith.cmpi sgt, %a, %a : i32\n    %r = scf.if %c -> (i32) {\n      %t = arith.addi %a, %a : i32\n"
     "      scf.yield %t : i32\n    } else {\n      scf.yield %t : i32\n    }",
     "scf.yield at .* uses '%t', which is not defined before it or not visible here"),
    # a use inside a region of a value defined after its op
    ("%r = scf.for %i = %a to %a step %a iter_args(%s = %a) -> (i32) : i32 {\n      %t = arith.addi %s, %u : i32\n"
     "      scf.yield %t : i32\n    }\n    %u = arith.addi %a, %a : i32", "uses '%u', which is not defined before"),
    # a while's "(%w = %a)" are its before region's arguments only
    ("%r = scf.while (%w = %a) : (i32) -> i32 {\n      %c = arith.cmpi slt, %w, %a : i32\n"
     "      scf.condition(%c) %w : i32\n    } do {\n    ^bb0(%v: i32):\n      %t = arith.addi %w, %v : i32\n"
     "      scf.yield %t : i32\n    }", "arith.addi at .* uses '%w', which is not defined before it or not visible"),
    # a name defined again where it is visible (Triton: "redefinition of SSA value '%t'"), in a nested region
    ("%t = arith.addi %a, %a : i32\n    %r = scf.for %i = %a to %a step %a iter_args(%s = %a) -> (i32) : i32 {\n"
     "      %t = arith.addi %s, %i : i32\n      scf.yield %t : i32\n    }",
     "line 5 defines '%t' again where its definition at line 3 is visible"),
    # ... and in one block
    ("%t = arith.addi %a, %a : i32\n    %t = arith.muli %a, %a : i32", "line 4 defines '%t' again where its "
     "definition at line 3 is visible"),
    # a warp_specialize partition is isolated from above: it sees its arguments only
    ("ttg.warp_specialize(%a)\n    default {\n      ttg.warp_yield\n    }\n    partition0(%p: i32) num_warps(4) {\n"
     "      %t = arith.addi %p, %a : i32\n      ttg.warp_return\n    } : (i32) -> ()",
     "arith.addi at .* uses '%a', which is not defined before it or not visible"),
])
def test_check_well_formed_rules(body, match):
    from linear_layouts.triton_model.ir_text import check_well_formed

    text = f"module {{\n  tt.func @k(%a: i32) {{\n    {body}\n    tt.return\n  }}\n}}"
    with pytest.raises(LayoutError, match="ttgir: .*" + match):
        check_well_formed(parse_module(text), "ttgir")
    check_well_formed(parse_module(text.replace(body, "%y = arith.addi %a, %a : i32")), "ttgir")


def _well_formed_as_triton_says(text: str, match: str | None, tmp_path) -> None:
    """``check_well_formed`` accepts ``text`` (``match`` None) or refuses it with ``match``; Triton 3.9, where
    installed, parses and verifies it, or refuses it, alike."""
    from linear_layouts.triton_model.ir_text import check_well_formed

    if match is None:
        check_well_formed(parse_module(text), "ttgir")
    else:
        with pytest.raises(LayoutError, match="ttgir: " + match):
            check_well_formed(parse_module(text), "ttgir")
    if importlib.util.find_spec("triton") is not None:
        from ._triton_oracle import triton_module

        if match is None:
            triton_module(text, tmp_path)
        else:
            with pytest.raises(RuntimeError, match="Parse MLIR file failed"):
                triton_module(text, tmp_path)


_BLOCKS = {  # a function of several blocks (scf-to-cf's form): the text, and the rule it breaks (None: none)
    "a use of a block printed later that dominates it": (
        "%c = arith.cmpi sgt, %a, %n : i32\n    cf.br ^bb2\n  ^bb1:  // pred: ^bb2\n    %u = arith.addi %x, %x : i32\n"
        "    tt.return\n  ^bb2:  // pred: ^bb0\n    %x = arith.addi %a, %a : i32\n    cf.br ^bb1", None),
    "a use of a block that does not dominate it": (
        "%c = arith.cmpi sgt, %a, %n : i32\n    cf.cond_br %c, ^bb1, ^bb2\n  ^bb1:  // pred: ^bb0\n"
        "    %x = arith.addi %a, %a : i32\n    cf.br ^bb3\n  ^bb2:  // pred: ^bb0\n    cf.br ^bb3\n"
        "  ^bb3:  // 2 preds: ^bb1, ^bb2\n    %u = arith.addi %x, %x : i32\n    tt.return",
        "arith.addi at .* uses '%x', which is not defined before it or not visible here"),
    "any use in a block no branch reaches": (
        "tt.return\n  ^bb1:  // pred: ^bb2\n    %u = arith.addi %x, %y : i32\n    %y = arith.addi %a, %a : i32\n"
        "    tt.return\n  ^bb2:  // no predecessors\n    %x = arith.addi %a, %a : i32\n    cf.br ^bb1", None),
    "a block's arguments in it and in the blocks it dominates": (
        "cf.br ^bb1(%a : i32)\n  ^bb1(%y: i32):  // pred: ^bb0\n    cf.br ^bb2\n  ^bb2:  // pred: ^bb1\n"
        "    %u = arith.addi %y, %y : i32\n    tt.return", None),
    "a branch passing another count": (
        "cf.br ^bb1(%a, %a : i32, i32)\n  ^bb1(%y: i32):  // pred: ^bb0\n    tt.return",
        "cf.br at .* passes 2 operands to '\\^bb1', which has 1 arguments"),
    "a branch passing another type": (
        "%f = arith.constant 1.0 : f32\n    cf.br ^bb1(%f : f32)\n  ^bb1(%y: i32):  // pred: ^bb0\n    tt.return",
        "cf.br at .* passes 'f32' to argument 0 of '\\^bb1', whose type is 'i32'"),
    "a block argument used as another type": (
        "cf.br ^bb1(%a : i32)\n  ^bb1(%y: i32):  // pred: ^bb0\n    %u = arith.addf %y, %y : f32\n    tt.return",
        "arith.addf at .* uses '%y' as 'f32', but it is defined as 'i32'"),
    "a branch to a block of no region": ("cf.br ^bb7\n  ^bb1:  // no predecessors\n    tt.return",
                                         "cf.br at .* branches to '\\^bb7', which is no block of its region"),
}


@pytest.mark.parametrize("case", list(_BLOCKS))
def test_blocks_follow_dominance(case, tmp_path):
    """A function of several blocks (as scf-to-cf prints it): a value is visible in its block after its
    definition and in the blocks its block dominates, whatever their text order; MLIR checks no use in a
    block the entry does not reach; a branch passes its target's arguments, as many and of their types.
    Triton 3.9 agrees on each (where it is installed)."""
    body, match = _BLOCKS[case]
    text = f"module {{\n  tt.func @k(%a: i32, %n: i32) {{\n    {body}\n  }}\n}}"
    _well_formed_as_triton_says(text, match, tmp_path)


_WS_TWO = """module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90"} {
  tt.func @k(%a: i32) {
    %0:2 = ttg.warp_specialize(%a)
    default {
      %t = arith.addi %a, %a : i32
      %f = arith.constant 1.0 : f32
      YIELD
    }
    partition0(%p: i32) num_warps(4) {
      ttg.warp_return
    } : (i32) -> (i32, f32)
    %u = arith.addi %0#0, %0#0 : i32
    USE
    tt.return
  }
}"""


@pytest.mark.parametrize("yielded, use, match", [
    ("ttg.warp_yield %t, %f : i32, f32", "%v = arith.addf %0#1, %0#1 : f32", None),
    ("ttg.warp_yield %t, %f : i32, f32", "%v = arith.addi %0#1, %0#1 : i32",
     "arith.addi at .* uses '%0#1' as 'i32', but it is defined as 'f32'"),
    ("ttg.warp_yield %f, %f : f32, f32", "%v = arith.addf %0#1, %0#1 : f32",
     "ttg.warp_yield at .* yields 'f32, f32', but its ttg.warp_specialize's results are 'i32, f32'"),
    ("ttg.warp_yield %t : i32", "%v = arith.addf %0#1, %0#1 : f32",
     "ttg.warp_yield at .* yields 'i32', but its ttg.warp_specialize's results are 'i32, f32'"),
])
def test_a_warp_specialize_result_is_used_as_its_type(yielded, use, match, tmp_path):
    """A ``ttg.warp_specialize``'s results have the types on its last region's closing line: its default
    region yields them (as many, of those types) and every use takes them as such. Triton 3.9 agrees."""
    text = _WS_TWO.replace("YIELD", yielded).replace("USE", use)
    _well_formed_as_triton_says(text, match, tmp_path)


_A = "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>"
_B = "#ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>"
_SLICE = "#ttg.slice<{dim = 1, parent = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], " \
         "warpsPerCTA = [4, 1], order = [1, 0]}>}>"


def _typed(body: str) -> str:
    return (f"#a = {_A}\nmodule {{\n  tt.func @k(%p: tensor<128x!tt.ptr<f32>, #a>, %n: i32) {{\n    {body}\n"
            "    tt.return\n  }\n}")


@pytest.mark.parametrize("body, match", [
    # a use in another layout than the definition's (layer_norm_fwd's legacy candidate, before the fix)
    (f"%x = tt.load %p : tensor<128x!tt.ptr<f32>, #a>\n    %y = math.exp %x : tensor<128xf32, {_B}>",
     "uses '%x' as .*, but it is defined as .*one type"),
    # a comparison's result is i1 in its operand's layout
    ("%x = tt.load %p : tensor<128x!tt.ptr<f32>, #a>\n    %c = arith.cmpf olt, %x, %x : tensor<128xf32, #a>\n"
     f"    %s = arith.select %c, %x, %x : tensor<128xi1, {_B}>, tensor<128xf32, #a>", "uses '%c'"),
    # an iter_arg has its loop result's type (attention_fwd's legacy candidate, before the fix)
    (f"%x = tt.load %p : tensor<128x!tt.ptr<f32>, #a>\n    %r = scf.for %i = %n to %n step %n iter_args(%m = %x) "
     f"-> (tensor<128xf32, #a>)  : i32 {{\n      %e = math.exp %m : tensor<128xf32, {_B}>\n"
     "      scf.yield %m : tensor<128xf32, #a>\n    }", "uses '%m'"),
    # a yield has its op's result types
    (f"%x = tt.load %p : tensor<128x!tt.ptr<f32>, #a>\n    %y = ttg.convert_layout %x : tensor<128xf32, #a> -> "
     f"tensor<128xf32, {_B}>\n    %r = scf.for %i = %n to %n step %n iter_args(%m = %x) -> (tensor<128xf32, #a>)  "
     f": i32 {{\n      scf.yield %y : tensor<128xf32, {_B}>\n    }}", "yields .* as result 0 of scf.for"),
    # an element-wise op has one layout (sm_80's matmul_fp8 candidate with wgmma layouts, before the fix)
    (f"%x = tt.load %p : tensor<128x!tt.ptr<f32>, #a>\n    %h = arith.truncf %x : tensor<128xf32, #a> to "
     f"tensor<128xf16, {_B}>", "mixes the layouts"),
])
def test_check_types_rules(body, match):
    """Each rule refuses its break and accepts the text with the break mended (one layout throughout)."""
    from linear_layouts.triton_model.ir_text import check_types, check_well_formed

    with pytest.raises(LayoutError, match="ttgir: .*" + match):
        check_well_formed(parse_module(_typed(body)), "ttgir")
    check_types(parse_module(_typed(body.replace(_B, "#a"))), "ttgir")


def test_names_reused_where_mlir_allows_them_are_well_formed():
    """Sibling regions may reuse a name (an scf.if's branches, two loops), and so may an isolated region (a
    warp_specialize partition reusing the function's ``%a``); a partition sees its own arguments."""
    from linear_layouts.triton_model.ir_text import check_well_formed

    body = "\n".join([
        "%c = arith.cmpi sgt, %a, %a : i32",
        "%r = scf.if %c -> (i32) {", "  %t = arith.addi %a, %a : i32", "  scf.yield %t : i32",
        "} else {", "  %t = arith.muli %a, %a : i32", "  scf.yield %t : i32", "}",
        "%t = arith.addi %r, %a : i32",
        "ttg.warp_specialize(%t)", "default {", "  %u = arith.addi %t, %a : i32", "  ttg.warp_yield", "}",
        "partition0(%a: i32) num_warps(4) {", "  %u = arith.addi %a, %a : i32", "  ttg.warp_return", "}",
        "partition1(%a: i32) num_warps(4) {", "  %u = arith.addi %a, %a : i32", "  ttg.warp_return",
        "} : (i32) -> ()"])
    text = "module {\n  tt.func @k(%a: i32) {\n" + "\n".join("    " + line for line in body.split("\n")) + \
        "\n    tt.return\n  }\n}"
    module = parse_module(text)
    assert module.functions[0].redefined == ()
    check_well_formed(module, "ttgir")


_WS_RESULT = """module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90"} {
  tt.func @k(%a: i32) {
    %0 = ttg.warp_specialize(%a)
    default {
      %t = arith.addi %a, %a : i32
      ttg.warp_yield %t : i32
    }
    partition0(%p: i32) num_warps(4) {
      ttg.warp_return
    } : (i32) -> i32
    %u = arith.addi %0, %0 : i32
    tt.return
  }
}"""


@pytest.mark.parametrize("closer, accepted", [("} : (i32) -> i32", True), ("} : (i32) -> ()", False)])
def test_a_warp_specialize_result_is_typed_on_its_last_region(closer, accepted, tmp_path):
    """Triton prints a ``ttg.warp_specialize``'s result types on its last partition's closing line (a
    Gluon kernel whose default region returns a buffer was refused: "results '%0' without a type");
    without them Triton refuses the text too ("cannot name an operation with no results")."""
    from linear_layouts.triton_model.ir_text import check_well_formed

    text = _WS_RESULT.replace("} : (i32) -> i32", closer)
    if accepted:
        check_well_formed(parse_module(text), "ttgir")
    else:
        with pytest.raises(LayoutError, match="ttgir: ttg.warp_specialize at .* results '%0' without a type"):
            check_well_formed(parse_module(text), "ttgir")
    if importlib.util.find_spec("triton") is not None:
        from ._triton_oracle import triton_module

        if accepted:
            triton_module(text, tmp_path)
        else:
            with pytest.raises(RuntimeError, match="Parse MLIR file failed"):
                triton_module(text, tmp_path)


def test_check_well_formed_agrees_with_triton(tmp_path, capfd):
    """On 1000 seeded random TTGIRs (``test_allocation.random_ttgir``: 200 with buffers through scf.for /
    scf.if / scf.while, 200 straight-line, 200 around a ttg.warp_specialize, 200 whose warp_specialize
    results are used after it, 200 of several blocks joined by cf.br / cf.cond_br as scf-to-cf prints them)
    ``check_well_formed`` accepts exactly the texts Triton 3.9's parser and verifier accept. Triton refuses
    24 of the control-flow ones (the generator names an scf.if's result ``%r2``, which its head already
    defines: "redefinition of SSA value"), 66 of the warp_specialize-results ones (a result used as another
    type or one it lacks, a yield of other types or count) and 82 of the block ones (a use its definition's
    block does not dominate, a branch's operands of other types or count than its target's arguments).
    Before the fixes ours refused 61 control-flow texts Triton accepts (block arguments' types cut at their
    first comma), accepted 10 it refuses (no rule against a redefinition) and refused every
    warp_specialize one (a partition's arguments taken for uses); then, reading blocks in text order, it
    refused 62 block texts Triton accepts (54: a block's arguments taken for undefined, 8: a use of a value
    of a dominating block printed after it), accepted 2 it refuses (a use of a block printed before it
    that does not dominate it) and accepted the 34 warp_specialize-results texts Triton refuses (the
    results' types unread)."""
    from linear_layouts.triton_model.ir_text import check_well_formed

    from ._triton_oracle import triton_module
    from .test_allocation import random_ttgir

    differ, refused = [], {}
    for flow in (True, False, "warp_specialize", "warp_specialize_results", "branches"):
        refused[flow] = 0
        for seed in range(200):
            text = random_ttgir(seed, flow)
            capfd.readouterr()
            try:
                triton_module(text, tmp_path)
                triton = None
            except RuntimeError as error:  # Triton's diagnostic goes to stderr
                triton = f"{error} {capfd.readouterr().err.strip()}"
                refused[flow] += 1
            try:
                check_well_formed(parse_module(text), "ttgir")
                ours = None
            except LayoutError as error:
                ours = str(error)
            if (triton is None) != (ours is None):
                differ.append((flow, seed, triton, ours))
    assert differ == []
    assert refused == {True: 24, False: 0, "warp_specialize": 0, "warp_specialize_results": 66, "branches": 82}


def test_check_types_reads_an_alias_as_its_body():
    from linear_layouts.triton_model.ir_text import check_types

    body = f"%x = tt.load %p : tensor<128x!tt.ptr<f32>, #a>\n    %y = math.exp %x : tensor<128xf32, {_A}>"
    check_types(parse_module(_typed(body)), "ttgir")


def test_loop_result_types_may_hold_braces():
    """An scf.for's result types are read whole when an encoding is spelled inline (``#ttg.slice<{...}>``):
    they were cut at the first '{' (attention_fwd's loop)."""
    text = _typed(f"%x = tt.splat %n : i32 -> tensor<128xi32, {_SLICE}>\n"
                  f"    %r:2 = scf.for %i = %n to %n step %n iter_args(%u = %x, %v = %n) -> "
                  f"(tensor<128xi32, {_SLICE}>, i32)  : i32 {{\n      scf.yield %u, %v : tensor<128xi32, {_SLICE}>, i32\n"
                  "    }")
    loop = parse_module(text).functions[0].body.ops[1]
    assert loop.result_types == (f"tensor<128xi32, {_SLICE}>", "i32")


def test_unique_value_names_renames_sibling_regions_only():
    """Two loops' bodies define %x and %i (MLIR reuses names across sibling regions): the second loop's
    are renamed with their uses; a use after both loops of a function-level %x_1 is not confused; a name
    in a string (inline PTX) is text."""
    from linear_layouts.triton_model.ir_text import unique_value_names

    text = "\n".join([
        "tt.func @k(%n: i32) {",
        "  scf.for %i = %n to %n step %n  : i32 {",
        "    %x = arith.addi %i, %n : i32",
        "  }",
        "  %x_1 = arith.addi %n, %n : i32",
        "  scf.for %i = %n to %n step %n  : i32 {",
        "    %x = arith.muli %i, %x_1 : i32",
        '    %s = tt.elementwise_inline_asm "mov.u32 $0, %x;" {pure = true} %x : i32 -> i32',
        "    %12 = arith.addi %x, %s : i32",
        "  }",
        "  %12 = arith.addi %x_1, %n : i32",
        "}",
    ])
    lines = unique_value_names(text).splitlines()
    assert lines[5:9] == [
        "  scf.for %i_1 = %n to %n step %n  : i32 {",
        "    %x_2 = arith.muli %i_1, %x_1 : i32",
        '    %s = tt.elementwise_inline_asm "mov.u32 $0, %x;" {pure = true} %x_2 : i32 -> i32',
        "    %12 = arith.addi %x_2, %s : i32"]
    assert lines[10] == "  %v12_1 = arith.addi %x_1, %n : i32"
    assert unique_value_names(unique_value_names(text)) == unique_value_names(text)
    module = parse_module(text)  # the parser reads the renamed text
    assert [op.results for op in module.functions[0].body.ops if op.results][-1] == ("%v12_1",)


def test_unique_value_names_keeps_a_text_whose_names_are_unique():
    from linear_layouts.triton_model.ir_text import unique_value_names

    text = (IR / "sm_90" / "matmul_fp16.ttgir").read_text()
    assert unique_value_names(text) is text


def test_pointee_is_what_a_pointer_or_a_tensor_of_pointers_points_to():
    """mlir_text.pointee: the one reading of ``!tt.ptr<T>`` (address space dropped; a tensor of pointers
    gives the tensor a load of it gives, spelled as it was); a bad pointer type is a LayoutError naming text."""
    from linear_layouts.core.mlir_text import pointee

    assert pointee("!tt.ptr<f16>") == "f16" and pointee(" !tt.ptr<f32, 3> ") == "f32"
    assert pointee("tensor<64x32x!tt.ptr<bf16>, #blocked>") == "tensor<64x32xbf16, #blocked>"
    assert pointee("!tt.ptr<tensor<4x8xf16, #b>>") == "tensor<4x8xf16, #b>"
    assert [pointee(t) for t in ("f16", "tensor<4xf32, #a>", "!ttg.memdesc<4xf32, #s, #smem>")] == [None] * 3
    for bad in ("!tt.ptr<>", "!tt.ptr<f32", "!tt.ptr<f32>x", "!tt.ptr<f32, global>", "tensor<4x!tt.ptr<f32>"):
        with pytest.raises(LayoutError, match="^text: "):
            pointee(bad)
    # each reader of a pointer type agrees with it: the type checker's load, the layouts' kind, the widths
    assert parse_type("!tt.ptr<f32, 3>").kind == "ptr" and parse_type("tensor<4x!tt.ptr<f32>>").element == "!tt.ptr<f32>"
    assert ir_element_bits("!tt.ptr<f16>") == 64
    with pytest.raises(LayoutError, match="^element: the pointer type '!tt.ptr<f16'"):  # the caller's argument
        ir_element_bits("!tt.ptr<f16")


def test_loop_bounds_reads_an_scf_for_head_once_for_every_reader():
    """ir_text.loop_bounds: induction variable, lower, upper, step of an scf.for head (results, unsigned,
    iter_args and types around it); no head is a LayoutError naming text. trips and ttir_import read it."""
    from linear_layouts.triton_model.ir_text import LoopBounds, loop_bounds

    head = ("    %acc_73:9 = scf.for %acc_79 = %c0_i32 to %N_CTX step %c64_i32 iter_args(%m_i = %cst) "
            "-> (f32)  : i32 {")
    assert loop_bounds(head) == LoopBounds("%acc_79", "%c0_i32", "%N_CTX", "%c64_i32")
    assert loop_bounds("scf.for unsigned %i = %a to %b step %c : i32 {").induction == "%i"
    for bad in ("scf.for %i = %a to %b {", "%x = arith.addi %a, %b : i32", "scf.for %i = %a to %b step %c#1 {"):
        with pytest.raises(LayoutError, match="^text: .* is no scf.for head"):
            loop_bounds(bad)


def test_module_target_is_the_backend_and_arch_of_ttg_target():
    """ir_text.module_target: ``cuda:CC[a]`` -> ("cuda", CC), ``hip:gfx...`` -> ("hip", arch), "" -> None;
    other text is a LayoutError naming target. Module.compute_capability / backend read it."""
    from linear_layouts.triton_model.ir_text import module_target

    assert module_target("cuda:80") == ("cuda", 80) and module_target("cuda:90a") == ("cuda", 90)
    assert module_target("hip:gfx942") == ("hip", "gfx942") and module_target("hip:gfx90a:xnack-") == ("hip",
                                                                                                     "gfx90a:xnack-")
    assert module_target("") is None
    for bad in ("cuda:", "cuda:sm_90", "sm_90", "hip:942", "cuda:90 "):
        with pytest.raises(LayoutError, match="^target: "):
            module_target(bad)
    body = "  tt.func @k() {\n    tt.return\n  }\n}"
    hip = parse_module('module attributes {ttg.target = "hip:gfx942"} {\n' + body)
    cuda = parse_module('module attributes {ttg.target = "cuda:90a"} {\n' + body)
    none = parse_module("module {\n" + body)
    assert [(m.backend, m.compute_capability) for m in (hip, cuda, none)] == [("hip", None), ("cuda", 90), ("", None)]
    with pytest.raises(LayoutError, match="^target: 'cuda:sm90'"):
        parse_module('module attributes {ttg.target = "cuda:sm90"} {\n' + body).compute_capability
