"""``linear-layouts permute SHAPE DIMS --dtype T``: ``ops.explain`` on the command line, without a GPU — the same text
as the library's, the device's SMs, L2 and architecture as options, and every bad argument an exit 2 with one line
naming the argument as the command line spells it."""

from __future__ import annotations

import pytest

from linear_layouts import ops
from linear_layouts.cli import main
from linear_layouts.ops.kernels import GridShape
from linear_layouts.target import named_target


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exit_:  # argparse's own exits (usage errors)
        code = exit_.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv, shape, dims, dtype, device, offsets", [
    (["32,28,28,512", "0,3,1,2", "--dtype", "bf16"], (32, 28, 28, 512), (0, 3, 1, 2), "bf16", GridShape(132), (0, 0)),
    (["[8, 2048, 1, 128]", "0,2,1,3", "--dtype", "fp16", "--l2-mib", "60"], (8, 2048, 1, 128), (0, 2, 1, 3), "fp16",
     GridShape(132, 60 << 20), (0, 0)),
    (["4,64,64,2", "0,-1,1,2", "--dtype", "u8", "--sms", "8"], (4, 64, 64, 2), (0, 3, 1, 2), "u8", GridShape(8),
     (0, 0)),
    (["4095,11007", "1,0", "--dtype", "fp32", "--target", "sm_80", "--src-offset", "4", "--dst-offset", "8"],
     (4095, 11007), (1, 0), "fp32", GridShape(108, 40 << 20, "sm_80"), (4, 8)),
    (["32,28,28,512", "0,3,1,2", "--dtype", "bf16", "--device", "h200"], (32, 28, 28, 512), (0, 3, 1, 2), "bf16",
     "H200", (0, 0)),
    (["32,28,28,512", "0,3,1,2", "--dtype", "bf16", "--device", "B200"], (32, 28, 28, 512), (0, 3, 1, 2), "bf16",
     GridShape(148, 126 << 20, "sm_100"), (0, 0)),
    (["32,28,28,512", "0,3,1,2", "--dtype", "bf16", "--device", "H200", "--sms", "66", "--l2-mib", "10"],
     (32, 28, 28, 512), (0, 3, 1, 2), "bf16", GridShape(66, 10 << 20), (0, 0)),
    (["32,512,28,28", "0,2,3,1", "--dtype", "fp16", "--target", "sm_90", "--device", "H200"], (32, 512, 28, 28),
     (0, 2, 3, 1), "fp16", GridShape.of(named_target(device="H200")), (0, 0)),
    (["[]", "[]", "--dtype", "fp64"], (), (), "fp64", GridShape(132), (0, 0)),
])
def test_the_command_prints_what_explain_says(capsys, argv, shape, dims, dtype, device, offsets):
    code, out, err = _run(capsys, "permute", *argv)
    assert code == 0 and err == ""
    plan = str(ops.explain(shape, dims, dtype, device, *offsets)) + "\n"
    if "--target" in argv and "--device" not in argv:  # a target alone: the device whose SMs and L2 it assumed
        assert out.startswith(plan) and out[len(plan):].startswith("  (as an A100: 108 SMs, 40 MiB L2;")
    else:
        assert out == plan


def test_it_writes_to_a_file(capsys, tmp_path):
    path = tmp_path / "plan.txt"
    code, out, err = _run(capsys, "permute", "64,4096", "1,0", "--dtype", "fp8", "-o", str(path))
    assert code == 0 and out == "" and f"wrote {path}" in err
    assert path.read_text() == str(ops.explain((64, 4096), (1, 0), "fp8")) + "\n"


@pytest.mark.parametrize("argv, message", [
    (["3,x", "1,0", "--dtype", "bf16"], "SHAPE: expected a non-negative integer, got 'x'"),
    (["3,,4", "1,0", "--dtype", "bf16"], "SHAPE: expected integers separated by commas"),
    (["3,-4", "1,0", "--dtype", "bf16"], "SHAPE: expected a non-negative integer, got '-4'"),
    (["3,4", "1,1", "--dtype", "bf16"], r"DIMS: \(1, 1\) is not a permutation of the 2 dims"),
    (["3,4", "1,0,2", "--dtype", "bf16"], "DIMS: dim 2 is out of range"),
    (["3,4", "1,0", "--dtype", "fp61"], "dtype 'fp61' is not a known element type"),
    (["3,4", "1,0", "--dtype", "fp4"], "dtype 'fp4' is not a known element type"),
    (["3,4", "1,0", "--dtype", "bf16", "--sms", "0"], "--sms: a device has 1 SM or more, got 0"),
    (["3,4", "1,0", "--dtype", "bf16", "--sms", "12345"], "--sms: .*at most 4 digits"),
    (["3,4", "1,0", "--dtype", "bf16", "--l2-mib", "-1"], "--l2-mib: expected a non-negative integer"),
    (["3,4", "1,0", "--dtype", "bf16", "--target", "gfx942"], "--target: the layout ops compile for NVIDIA GPUs of sm_75 and later .* not gfx942"),
    (["3,4", "1,0", "--dtype", "bf16", "--target", "sm_77x"], "--target: target must be sm_<cc>"),
    (["3,4", "1,0", "--dtype", "bf16", "--device", "MI300X"], "--device: the layout ops compile for NVIDIA GPUs of sm_75 and later .* not MI300X"),
    (["3,4", "1,0", "--dtype", "bf16", "--device", "H20"], r"--device: unknown 'H20' \(did you mean 'H200'\?\)"),
    (["3,4", "1,0", "--dtype", "bf16", "--device", "A100", "--target", "sm_90"], "--device: A100 is sm_80, not the "
                                                                                "target sm_90"),
    (["3,4", "1,0", "--dtype", "bf16", "--src-offset", "3"], "--src-offset: must be an int >= 0 and a multiple of "
                                                             "the 2-byte elements, got 3"),
    (["100000000000,100000000000", "1,0", "--dtype", "fp64"], r"SHAPE: .* over the 1099511627776 \(1 TiB\) explain "
                                                              "plans"),
    (["3,4", "1,0"], "the following arguments are required: --dtype"),
])
def test_bad_arguments_exit_2_with_one_line(capsys, argv, message):
    import re

    code, out, err = _run(capsys, "permute", *argv)
    assert code == 2 and out == "" and err.count("\n") <= 2 and "Traceback" not in err, err
    assert re.search(message, err), err


def test_the_help_states_the_range_of_sms_and_l2_and_its_edges_hold(capsys):
    from linear_layouts.cli import build_parser

    help_text = " ".join(build_parser()[0].subcommands["permute"].format_help().split())
    assert "--sms SMS the device's SMs, 1 to 9999," in help_text
    assert "--l2-mib L2_MIB its L2 in whole MiB, 1 to 99999," in help_text
    base = ("permute", "4,4", "1,0", "--dtype", "bf16")
    assert _run(capsys, *base, "--l2-mib", "99999", "--sms", "9999")[0] == 0
    for option, value in (("--l2-mib", "0"), ("--l2-mib", "100000"), ("--sms", "0"), ("--sms", "10000")):
        code, _, err = _run(capsys, *base, option, value)
        assert code == 2 and err.startswith(f"linear-layouts: error: {option}: "), (option, value, err)


def test_dtype_takes_what_the_ops_move(capsys):
    """--dtype names what ops.explain takes, complex types included (moved by their size), errors named --dtype."""
    from linear_layouts.cli import main
    from linear_layouts.ops import explain

    assert main(["permute", "4096,11008", "1,0", "--dtype", "complex64"]) == 0
    out, _ = capsys.readouterr()
    assert out == str(explain((4096, 11008), (1, 0), "complex64")) + "\n" and "(344 MiB each way)" in out
    assert main(["permute", "4,4", "1,0", "--dtype", "complex65"]) == 2
    assert capsys.readouterr().err.startswith("linear-layouts: error: --dtype: dtype 'complex65' is not a known")
