"""Planning a permutation (``ops.plan``) against NumPy: the reduced permutation moves every element where
``np.transpose`` does, it is the smallest one, and the tiled problem (rows x cols at row strides lda / ldb,
batch dims with their strides), read back with NumPy index arithmetic, is the same permutation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from linear_layouts.core.errors import LayoutError
from linear_layouts.ops.plan import (
    PermuteKind, normalize_dims, plan_permutation, reduce_permutation, row_major_strides, vector_elements,
)


@st.composite
def permutations(draw, max_rank: int = 6):
    rank = draw(st.integers(0, max_rank))
    shape = tuple(draw(st.lists(st.sampled_from([1, 1, 2, 3, 4, 5, 7, 8]), min_size=rank, max_size=rank)))
    dims = tuple(draw(st.permutations(range(rank))))
    return shape, dims


def _apply(problem, a: np.ndarray, out_size: int) -> np.ndarray:
    """The tiled problem's element moves, by index arithmetic: element ``(b..., m, n)`` of ``A`` (flat
    ``sum b_k src_k + m lda + n``) to ``B`` (``sum b_k dst_k + n ldb + m`` transposed, else ``m ldb + n``)."""
    flat = a.reshape(-1)
    out = np.full(out_size, -1, dtype=np.int64)
    sizes = [size for size, _, _ in problem.batch]
    for index in np.ndindex(*sizes) if sizes else [()]:
        s0 = sum(i * b[1] for i, b in zip(index, problem.batch))
        d0 = sum(i * b[2] for i, b in zip(index, problem.batch))
        m, n = np.meshgrid(np.arange(problem.rows), np.arange(problem.cols), indexing="ij")
        src = s0 + m * problem.lda + n
        dst = d0 + (n * problem.ldb + m if problem.transposed else m * problem.ldb + n)
        out[dst.reshape(-1)] = flat[src.reshape(-1)]
    return out


@settings(max_examples=150)
@given(permutations())
def test_reduced_permutation_moves_every_element_as_numpy(case):
    shape, dims = case
    a = np.arange(math.prod(shape)).reshape(shape)
    reduced = reduce_permutation(shape, dims)
    assert 1 not in reduced.shape
    assert all(reduced.dims[k + 1] != reduced.dims[k] + 1 for k in range(reduced.rank - 1))
    assert sorted(reduced.dims) == list(range(reduced.rank))
    assert math.prod(reduced.shape) == a.size
    got = np.transpose(a.reshape(reduced.shape), reduced.dims).reshape(-1)
    assert np.array_equal(got, np.transpose(a, dims).reshape(-1))


@settings(max_examples=150)
@given(permutations(), st.sampled_from([1, 2, 4, 8]))
def test_tiled_problem_is_the_permutation(case, element_bytes):
    shape, dims = case
    a = np.arange(math.prod(shape)).reshape(shape)
    expected = np.transpose(a, dims).reshape(-1)
    problem = plan_permutation(shape, dims, element_bytes)
    if a.size == 0:
        assert problem.kind is PermuteKind.EMPTY
        return
    if problem.kind is PermuteKind.COPY:
        assert np.array_equal(a.reshape(-1), expected)
        return
    word = problem.element_bytes // element_bytes  # the elements of one moved word (a ROWS row of 2-8 bytes)
    words = a.reshape(-1, word)[:, 0] // word  # word i holds elements word*i ... (one number per word)
    got = _apply(problem, words, a.size // word)
    assert np.array_equal(got, expected.reshape(-1, word)[:, 0] // word)
    assert problem.kind is (PermuteKind.TRANSPOSE if problem.transposed else PermuteKind.ROWS)


def test_worked_examples():
    """The module doc's table, the attention head transpose and NCHW -> NHWC."""
    assert reduce_permutation((8, 1, 4, 6), (1, 0, 2, 3)) == reduce_permutation((192,), (0,))
    assert plan_permutation((8, 1, 4, 6), (1, 0, 2, 3), 2).kind is PermuteKind.COPY
    p = plan_permutation((2, 5, 3, 7), (0, 3, 1, 2), 4)
    assert (p.kind, p.rows, p.cols, p.lda, p.ldb, p.batch) == (PermuteKind.TRANSPOSE, 15, 7, 7, 15, ((2, 105, 105),))
    # [B, S, H, D] -> [B, H, S, D], D = 128 fp16: rows of 256 bytes move whole; batch (B, H)
    p = plan_permutation((4, 1024, 32, 128), (0, 2, 1, 3), 2)
    assert (p.kind, p.rows, p.cols, p.lda, p.ldb) == (PermuteKind.ROWS, 1024, 128, 32 * 128, 128)
    assert p.batch == ((4, 1024 * 32 * 128, 32 * 1024 * 128), (32, 128, 1024 * 128))
    # D = 2 fp16: a row is one 4-byte word; the words are transposed (S x H per batch)
    p = plan_permutation((4, 1024, 32, 2), (0, 2, 1, 3), 2)
    assert (p.kind, p.element_bytes, p.rows, p.cols, p.batch) == (PermuteKind.TRANSPOSE, 4, 1024, 32,
                                                                   ((4, 1024 * 32, 1024 * 32),))
    assert plan_permutation((4, 1024, 32, 2), (0, 2, 1, 3), 2, max_word_bytes=2).kind is PermuteKind.ROWS
    # NCHW -> NHWC: (N, C, HW) -> (N, HW, C), a batched transpose of C x HW
    p = plan_permutation((32, 256, 56, 56), (0, 2, 3, 1), 2)
    assert (p.kind, p.rows, p.cols, p.lda, p.ldb) == (PermuteKind.TRANSPOSE, 256, 56 * 56, 56 * 56, 256)
    assert p.batch == ((32, 256 * 3136, 256 * 3136),)


def test_strides_and_vectors():
    assert row_major_strides((2, 3, 4)) == (12, 4, 1)
    assert vector_elements(1, 4096, 0) == 16 and vector_elements(4, 4096, 0) == 4 and vector_elements(8, 6, 0) == 2
    assert vector_elements(2, 11008, 1 << 40, (2 << 40) + 4) == 2  # the second address: 4-byte aligned only
    assert vector_elements(1, 7, 0) == 1


@pytest.mark.parametrize("dims, message", [
    ((0, 1), "not a permutation of the 3 dims"),
    ((0, 1, 1), "not a permutation"),
    ((0, 1, 3), "dim 3 is out of range"),
    ((0, 1.0, 2), "must hold ints"),
    (7, "must be a sequence of ints"),
])
def test_bad_dims(dims, message):
    with pytest.raises(LayoutError, match=f"dims: .*{message}"):
        normalize_dims(dims, 3)
    assert normalize_dims((-1, 0, 1), 3) == (2, 0, 1)
