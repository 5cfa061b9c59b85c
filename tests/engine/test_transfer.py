"""Transfer functions (Thm 9.3): every shape op under its transfer is a no-op, checked by simulation.

The simulator lays the operand's element indices out by the operand layout, applies the op in NumPy,
and checks that every thread (lane, warp) finds each element of its result registers among its own
operand registers: no data crosses threads. Layouts are random distributed layouts (Def. 4.10).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from linear_layouts import LayoutError, LinearLayout
from linear_layouts.layouts import BlockedLayout, NVMMADistributedLayout, SliceLayout, is_distributed_layout
from linear_layouts.engine import transfer
from linear_layouts.engine.transfer import make_layout, shape_of


def random_layout(rng: random.Random, shape, lanes=5, warps=2, zero_registers=0) -> LinearLayout:
    """A random distributed layout onto ``shape``: the unit bases shuffled over lanes, warps, registers
    (zero bases where the tensor is smaller than a warp / CTA)."""
    units = [[0] * d + [1 << i] + [0] * (len(shape) - d - 1) for d, s in enumerate(shape) for i in range(s.bit_length() - 1)]
    rng.shuffle(units)
    zero = [0] * len(shape)
    slots = ["lane"] * lanes + ["warp"] * warps
    bases = {"register": [], "lane": [], "warp": [], "block": []}
    for slot in slots:
        if units and rng.random() < 0.85:
            bases[slot].append(units.pop())
        else:
            bases[slot].append(zero)
    bases["register"] = units + [zero] * zero_registers
    rng.shuffle(bases["register"])
    return make_layout(bases, shape)


def thread_values(layout, values: np.ndarray) -> np.ndarray:
    """``values[L(r, t, w)]`` as an array [threads, registers]."""
    regs = np.arange(layout.in_dim_size("register"))
    threads = np.arange(layout.in_dim_size("lane") * layout.in_dim_size("warp"))
    lane = threads % layout.in_dim_size("lane")
    warp = threads // layout.in_dim_size("lane")
    coords = layout.apply_array({"register": regs[None, :], "lane": lane[:, None], "warp": warp[:, None]})
    index = tuple(coords[f"dim{d}"] for d in range(layout.num_out_dims))
    return values[index]


def assert_no_movement(operands, operand_values, result, result_values):
    held = [thread_values(lay, vals) for lay, vals in zip(operands, operand_values)]
    need = thread_values(result, result_values)
    for t in range(need.shape[0]):
        have = set(np.concatenate([h[t] for h in held]).tolist())
        assert set(need[t].tolist()) <= have, f"thread {t} needs data from another thread"


def random_shape(rng, rank, max_log2=9):
    while True:
        shape = tuple(1 << rng.randint(0, 4) for _ in range(rank))
        if sum(s.bit_length() - 1 for s in shape) <= max_log2:
            return shape


def test_trans_reshape_expand_dims_are_no_ops():
    rng = random.Random(0)
    for _ in range(150):
        rank = rng.randint(1, 4)
        shape = random_shape(rng, rank)
        L = random_layout(rng, shape, zero_registers=rng.randint(0, 1))
        x = np.arange(int(np.prod(shape))).reshape(shape)
        perm = list(range(rank))
        rng.shuffle(perm)
        out = transfer.trans_forward(L, perm)
        assert is_distributed_layout(out) and transfer.trans_backward(out, perm) == L
        assert_no_movement([L], [x], out, np.transpose(x, perm))
        flat = [1 << b for b in range(int(np.log2(x.size)) + 1)]
        new_shape = []
        left = x.size
        while left > 1:
            f = rng.choice([f for f in flat if 1 < f <= left])
            new_shape.append(f)
            left //= f
        new_shape = new_shape or [1]
        out = transfer.reshape_forward(L, new_shape)
        assert is_distributed_layout(out) and transfer.reshape_backward(out, shape) == L
        assert_no_movement([L], [x], out, x.reshape(new_shape))
        axis = rng.randint(0, rank)
        out = transfer.expand_dims_forward(L, axis)
        assert is_distributed_layout(out) and transfer.expand_dims_backward(out, axis) == L
        assert_no_movement([L], [x], out, np.expand_dims(x, axis))


def test_join_split_broadcast_reduce_are_no_ops():
    rng = random.Random(1)
    for _ in range(150):
        rank = rng.randint(1, 3)
        shape = random_shape(rng, rank, 8)
        L = random_layout(rng, shape)
        x = np.arange(int(np.prod(shape))).reshape(shape)
        joined = transfer.join_forward(L)
        assert is_distributed_layout(joined)
        assert_no_movement([L, L], [x, x + x.size], joined, np.stack([x, x + x.size], -1))
        assert transfer.split_forward(joined) == L and transfer.join_backward(joined) == L
        # broadcast a dim of size 1 (made by a reduction)
        if rank >= 2:
            axis = rng.randrange(rank)
            red = transfer.reduce_forward(L, axis)
            assert is_distributed_layout(red)
            rows = np.arange(red.total_out_dim_size).reshape(shape_of(red))
            labels = np.broadcast_to(np.expand_dims(rows, axis), shape)  # each element labeled by its row
            assert_no_movement([L], [labels], red, rows)  # a thread keeps only rows it has a piece of
            one = transfer.expand_dims_forward(red, axis)
            xs = np.expand_dims(np.arange(red.total_out_dim_size).reshape(shape_of(red)), axis)
            wide = transfer.broadcast_forward(one, shape)
            assert is_distributed_layout(wide) and transfer.broadcast_backward(wide, shape_of(one)) == one
            assert_no_movement([one], [xs], wide, np.broadcast_to(xs, shape))
            back = transfer.reduce_backward(red, axis, shape[axis])
            assert transfer.reduce_forward(back, axis) == red and is_distributed_layout(back)


def test_split_needs_the_minor_dim_in_registers():
    L = make_layout({"register": [[1, 0]], "lane": [[0, 1], [2, 0]]}, [4, 2])
    assert transfer.split_forward(L) is None
    assert transfer.join_backward(L) is None
    L = make_layout({"register": [[1, 0], [0, 1]], "lane": [[2, 0]]}, [4, 2])
    assert transfer.split_forward(L) == make_layout({"register": [[1]], "lane": [[2]]}, [4])


def test_transposed_mma_is_distributed_and_not_a_legacy_layout():
    """§4.4: the transpose of an MMA layout is a distributed layout no blocked / mma descriptor gives."""
    mma = NVMMADistributedLayout([2, 0], [2, 2], [16, 8]).to_linear([64, 64])
    t = transfer.trans_forward(mma, [1, 0])
    assert is_distributed_layout(t) and t != mma
    assert t.apply({"lane": 4}) == {"dim0": 0, "dim1": 1}  # lanes 4.. walk the rows of mma -> columns of t
    legacy = [NVMMADistributedLayout([2, 0], w, [16, 8]) for w in ([1, 4], [4, 1], [2, 2])]
    legacy += [BlockedLayout([a, b], [c, 32 // c], [w, 4 // w], o) for a in (1, 2) for b in (1, 2) for c in (1, 4, 8)
               for w in (1, 2, 4) for o in ([0, 1], [1, 0])]
    assert all(transfer.standard_outs(d.to_linear([64, 64])) != t for d in legacy)


def test_slice_layout_is_reduce_forward():
    parent = BlockedLayout([1, 4], [4, 8], [2, 2], [1, 0])
    for axis in (0, 1):
        L = parent.to_linear([32, 64])
        assert transfer.reduce_forward(L, axis) == transfer.standard_outs(SliceLayout(axis, parent).to_linear([[32, 64][1 - axis]]))


def test_bad_arguments_raise_layout_error():
    L = make_layout({"register": [[1, 0]], "lane": [[0, 1]]}, [2, 2])
    with pytest.raises(LayoutError, match="perm"):
        transfer.trans_forward(L, [0, 0])
    with pytest.raises(LayoutError, match="shape"):
        transfer.reshape_forward(L, [8])
    with pytest.raises(LayoutError, match="axis"):
        transfer.expand_dims_forward(L, 5)
    with pytest.raises(LayoutError, match="shape"):
        transfer.broadcast_forward(L, [4, 4])
    with pytest.raises(LayoutError, match="size 2"):
        transfer.split_forward(make_layout({"register": [[1, 0]], "lane": [[0, 1], [0, 2]]}, [2, 4]))
    with pytest.raises(LayoutError, match="LinearLayout"):
        transfer.standard_outs("blocked")
