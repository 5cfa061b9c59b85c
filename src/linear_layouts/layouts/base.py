"""Base classes of the layout catalog, parameter validation, and Triton's layout-building helpers.

Every catalog class is a frozen dataclass named and parameterized as Gluon's class of the same name
(triton 3.9). `to_linear(shape)` returns the class's `LinearLayout`, bit for bit Triton's C++
`toLinearLayout`:

- distributed layouts (`DistributedLayout`): in dims ``register, lane, warp, block``;
- shared-memory layouts (`SharedLayout`): in dims ``offset, block``;
- out dims ``dim0 .. dim{rank-1}`` with sizes equal to ``shape``.

The helpers below are the Python equivalents of Triton's ``LayoutUtils`` / ``LinearLayoutConversions``
building blocks (``identityStandardND``, ``ensureLayoutNotSmallerThan``, ``ensureLayoutNotLargerThan``,
``combineCtaCgaWithShape``, ``actionRemoveBroadcastedRegs``).
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from linear_layouts.core.arguments import checked
from linear_layouts.core.errors import LayoutError, not_a_layout
from linear_layouts.core.layout import LinearLayout
from linear_layouts.core.limits import quote

__all__ = [
    "DistributedLayout",
    "SharedLayout",
    "Shape",
    "Bases",
    "standard_out_dim_names",
    "identity_standard_nd",
    "get_matrix_order",
    "get_order_for_dot_operand",
    "order_from_bases",
    "ensure_layout_not_smaller_than",
    "ensure_layout_not_larger_than",
    "make_cga_layout",
    "combine_cta_cga_with_shape",
    "cga_layout_from_split_params",
    "split_params_from_cga_layout",
    "remove_broadcast_registers",
    "is_power_of_two",
    "check_int",
    "check_bool",
    "check_power_of_two",
    "check_int_tuple",
    "check_bases",
    "check_order",
    "check_shape",
    "check_cga_layout",
    "freeze_fields",
]

Shape = tuple[int, ...]
Bases = tuple[tuple[int, ...], ...]


# --------------------------------------------------------------------------------------------------
# Validation helpers: each raises LayoutError naming the parameter and the rule.
# --------------------------------------------------------------------------------------------------


def is_power_of_two(value: int) -> bool:
    """True iff ``value`` is 1, 2, 4, 8, ... (``value & (value - 1) == 0`` and ``value > 0``)."""
    return isinstance(value, int) and value > 0 and value & (value - 1) == 0


def check_int(name: str, value: Any, *, minimum: int | None = None) -> int:
    """Return ``value`` as an ``int``; reject bools, floats, strings and values below ``minimum``.

    >>> check_int("k_width", 8)
    8
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise LayoutError(f"{name} must be an integer, got {quote(value)}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise LayoutError(f"{name} must be >= {minimum}, got {value}")
    return value


def check_bool(name: str, value: Any) -> bool:
    """Return ``value`` as a ``bool``; only ``True``/``False`` (or NumPy bools) are accepted."""
    if isinstance(value, bool):
        return value
    if type(value).__name__ == "bool_":  # numpy.bool_
        return bool(value)
    raise LayoutError(f"{name} must be a bool, got {quote(value)}")


def check_power_of_two(name: str, value: Any, *, allow_zero: bool = False) -> int:
    """Return ``value`` if it is a power of two (or 0 when ``allow_zero``), else raise.

    >>> check_power_of_two("vec", 4)
    4
    """
    value = check_int(name, value)
    if allow_zero and value == 0:
        return 0
    if not is_power_of_two(value):
        raise LayoutError(f"{name} must be a power of two, got {value}")
    return value


def check_int_tuple(
    name: str,
    value: Any,
    *,
    length: int | None = None,
    power_of_two: bool = False,
    minimum: int | None = None,
) -> tuple[int, ...]:
    """Return ``value`` (a list or tuple of ints) as a tuple, checking its length and entries.

    >>> check_int_tuple("warps_per_cta", [4, 1], length=2, power_of_two=True)
    (4, 1)
    """
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        if hasattr(value, "tolist"):  # NumPy arrays (a NumPy scalar gives an int: refused below)
            value = value.tolist()
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
            raise LayoutError(f"{name} must be a list of integers, got {quote(value)}")
    items = []
    for i, item in enumerate(value):
        if power_of_two:
            items.append(check_power_of_two(f"{name}[{i}]", item))
        else:
            items.append(check_int(f"{name}[{i}]", item, minimum=minimum))
    if length is not None and len(items) != length:
        raise LayoutError(f"{name} must have {length} entries (the rank), got {len(items)}")
    return tuple(items)


def check_bases(name: str, value: Any, rank: int | None = None) -> Bases:
    """Return a list of basis vectors as a tuple of tuples of non-negative ints, each of length ``rank``.

    >>> check_bases("cga_layout", [[1, 0], [0, 1]], 2)
    ((1, 0), (0, 1))
    """
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        if hasattr(value, "tolist"):
            value = value.tolist()
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
            raise LayoutError(f"{name} must be a list of basis vectors, got {quote(value)}")
    bases = []
    for i, vector in enumerate(value):
        vector = check_int_tuple(f"{name}[{i}]", vector, minimum=0)
        if rank is not None and len(vector) != rank:
            raise LayoutError(
                f"{name}[{i}] must have one entry per tensor dimension ({rank}), got {len(vector)}"
            )
        bases.append(vector)
    return tuple(bases)


def check_order(name: str, order: Any, rank: int) -> tuple[int, ...]:
    """Return ``order`` as a tuple if it is a permutation of ``0 .. rank-1``.

    >>> check_order("order", [1, 0], 2)
    (1, 0)
    """
    order = check_int_tuple(name, order, length=rank)
    if sorted(order) != list(range(rank)):
        raise LayoutError(f"{name} must be a permutation of 0..{rank - 1}, got {list(order)}")
    return order


def check_shape(shape: Any, rank: int | None = None, name: str = "shape") -> Shape:
    """Return a tensor shape as a tuple of powers of two, of length ``rank`` when given.

    >>> check_shape([16, 32], 2)
    (16, 32)
    """
    shape = check_int_tuple(name, shape, power_of_two=True)
    if rank is not None and len(shape) != rank:
        raise LayoutError(f"{name} must have rank {rank} (the layout's rank), got {len(shape)} entries")
    if len(shape) == 0:
        raise LayoutError(f"{name} must have at least one dimension")
    return shape


def check_cga_layout(name: str, cga_layout: Any, rank: int | None) -> Bases:
    """Validate a 3.9 ``cga_layout``: one ``block`` basis vector per CTA bit, ``rank`` entries each.

    Triton's rule: after removing the zero (broadcast) bases, the bases form a permutation matrix,
    i.e. each has one non-zero entry, a power of two, and along each dim they are 1, 2, 4, ...
    in some order.

    >>> check_cga_layout("cga_layout", [[0, 1], [0, 0]], 2)
    ((0, 1), (0, 0))
    """
    bases = check_bases(name, cga_layout, rank)
    check_permutation_bases({name: bases}, "the CGA bases must form a permutation matrix")
    return bases


def check_permutation_bases(groups: Mapping[str, Bases], rule: str) -> None:
    """Triton's rule for broadcast-free layouts: over all ``groups`` (parameter name -> bases), the
    non-zero vectors each have one non-zero entry, a power of two, no vector repeats, and along each
    dim the entries are 1, 2, 4, ... (a permutation matrix once the zero vectors are dropped).

    >>> check_permutation_bases({"warp_bases": [[0, 1], [1, 0]]}, "must be a permutation matrix")
    """
    seen: dict[int, set[int]] = {}
    for name, bases in groups.items():
        for i, vector in enumerate(bases):
            nonzero = [(d, x) for d, x in enumerate(vector) if x]
            if not nonzero:
                continue
            if len(nonzero) > 1 or not is_power_of_two(nonzero[0][1]):
                raise LayoutError(
                    f"{name}[{i}] must be 0 or have a single non-zero entry, a power of two ({rule}), "
                    f"got {list(vector)}"
                )
            d, x = nonzero[0]
            if x in seen.setdefault(d, set()):
                raise LayoutError(f"{name}[{i}] = {list(vector)} repeats a basis of {', '.join(groups)} ({rule})")
            seen[d].add(x)
    for d, values in seen.items():
        if max(values) != 1 << (len(values) - 1):
            raise LayoutError(
                f"{', '.join(groups)}: the bases along dim {d} must be 1, 2, 4, ... ({rule}), got {sorted(values)}"
            )


def freeze_fields(obj: Any, **values: Any) -> None:
    """Set fields of a frozen dataclass from ``__post_init__`` (normalized, validated values)."""
    for key, value in values.items():
        object.__setattr__(obj, key, value)


# --------------------------------------------------------------------------------------------------
# Base classes
# --------------------------------------------------------------------------------------------------


class DistributedLayout:
    """A layout of a tensor held in registers: ``to_linear(shape)`` maps register, lane, warp, block -> dims.

    Subclasses are frozen dataclasses; they implement ``rank`` and ``to_linear``. Parents of a
    ``DotOperandLayout`` also implement ``dot_operand_to_linear(operand_index, k_width, shape)``.
    """

    @property
    def rank(self) -> int:
        raise LayoutError(f"{type(self).__name__} is a base class: use a concrete layout such as BlockedLayout")

    def to_linear(self, shape: Sequence[int]) -> LinearLayout:
        """The ``LinearLayout`` (register, lane, warp, block) -> (dim0, ..) of a tensor of ``shape``."""
        raise LayoutError(f"{type(self).__name__} is a base class: use a concrete layout such as BlockedLayout")

    def dot_operand_to_linear(self, operand_index: int, k_width: int, shape: Sequence[int]) -> LinearLayout:
        """The layout of operand ``operand_index`` (0 = A, 1 = B) of a dot whose result has this layout."""
        raise LayoutError(f"parent: {type(self).__name__} cannot be the parent of a DotOperandLayout")


class SharedLayout:
    """A layout of a tensor in shared memory: ``to_linear(shape)`` maps offset, block -> dims."""

    def to_linear(self, shape: Sequence[int]) -> LinearLayout:
        """The ``LinearLayout`` (offset, block) -> (dim0, ..) of a tensor of ``shape``."""
        raise LayoutError(f"{type(self).__name__} is a base class: use a concrete layout such as "
                          "NVMMASharedLayout")


# --------------------------------------------------------------------------------------------------
# Triton's layout-building helpers
# --------------------------------------------------------------------------------------------------


def standard_out_dim_names(rank: int) -> tuple[str, ...]:
    """``("dim0", "dim1", ..., "dim{rank-1}")``.

    >>> standard_out_dim_names(2)
    ('dim0', 'dim1')
    """
    return tuple(f"dim{i}" for i in range(rank))


def get_matrix_order(rank: int, row_major: bool) -> tuple[int, ...]:
    """Triton's ``getMatrixOrder``: ``(rank-1, .., 0)``, with the two minor dims swapped when not ``row_major``.

    >>> get_matrix_order(3, False)
    (1, 2, 0)
    """
    order = list(reversed(range(rank)))
    if not row_major and rank >= 2:
        order[0], order[1] = order[1], order[0]
    return tuple(order)


def get_order_for_dot_operand(operand_index: int, rank: int, k_contig: bool) -> tuple[int, ...]:
    """Triton's ``getOrderForDotOperand``: K first when ``k_contig`` (K = dim ``rank-1`` for A, ``rank-2`` for B).

    >>> get_order_for_dot_operand(1, 2, True)
    (0, 1)
    """
    return get_matrix_order(rank, row_major=bool(operand_index) != k_contig)


def order_from_bases(bases: Iterable[Sequence[int]], rank: int) -> tuple[int, ...]:
    """Triton's ``getOrder`` read off bases, fastest dim first: the dims in the order the ``bases`` (vectors
    over ``dim0 .. dim{rank-1}``) first move them, then the dims never moved from ``rank-1`` down to 0.

    >>> order_from_bases([[0, 1], [0, 2], [1, 0]], 3)
    (1, 0, 2)
    """
    order: list[int] = []
    for vector in bases:
        for d, x in enumerate(vector):
            if x and d not in order:
                order.append(d)
    order += [d for d in reversed(range(rank)) if d not in order]
    return tuple(order)


def identity_standard_nd(in_dim: str, shape: Sequence[int], order: Sequence[int]) -> LinearLayout:
    """Triton's ``identityStandardND``: a 1D -> ND identity, filling ``order[0]`` (most minor) first.

    It equals a 1D identity of ``prod(shape)`` elements reshaped to ``shape`` permuted by ``order``;
    the out dims come in ``order`` order (most minor first), as in Triton.

    >>> L = identity_standard_nd("warp", [2, 4], [1, 0])
    >>> L.out_dim_names, L.bases["warp"]
    (('dim1', 'dim0'), [[1, 0], [2, 0], [0, 1]])
    """
    names = standard_out_dim_names(len(shape))
    result = LinearLayout.empty()
    for dim in order:
        result = result * LinearLayout.identity_1d(shape[dim], in_dim, names[dim])
    return result


def _labeled_shape(layout: LinearLayout, shape: Mapping[str, int] | Sequence[int]) -> dict[str, int]:
    if isinstance(shape, Mapping):
        labeled = dict(shape)
    else:
        labeled = dict(zip(standard_out_dim_names(len(shape)), shape))
    if set(labeled) != set(layout.out_dim_names):
        raise LayoutError(
            f"shape: its dims {sorted(labeled)} must be the layout's out dims {list(layout.out_dim_names)}"
        )
    return labeled


def ensure_layout_not_smaller_than(
    layout: LinearLayout, shape: Mapping[str, int] | Sequence[int]
) -> LinearLayout:
    """Triton's ``ensureLayoutNotSmallerThan``: grow each out dim to ``shape`` by adding bases to the
    first in dim (``register`` or ``offset``): ``L * identity_1d(shape[d] / size[d], first_in, d)``.

    ``shape`` is a mapping out dim -> size, or a sequence for ``dim0, dim1, ...``.

    >>> L = LinearLayout.identity_1d(4, "register", "dim0")
    >>> ensure_layout_not_smaller_than(L, [16]).bases["register"]
    [[1], [2], [4], [8]]
    """
    labeled = _labeled_shape(layout, shape)
    if not labeled:
        return layout
    first_in = layout.in_dim_names[0]
    result = layout
    for out_dim in layout.out_dim_names:
        actual, desired = layout.out_dim_size(out_dim), labeled[out_dim]
        if desired > actual:
            result = result * LinearLayout.identity_1d(desired // actual, first_in, out_dim)
    return result


def ensure_layout_not_larger_than(
    layout: LinearLayout,
    shape: Mapping[str, int] | Sequence[int],
    broadcast_registers: bool = True,
) -> LinearLayout:
    """Triton's ``ensureLayoutNotLargerThan``: shrink each out dim ``d`` to ``shape[d]`` without changing
    the in dims, by zeroing the bases with the largest ``d`` coordinates (ties: in-dim order, then index).

    With ``broadcast_registers=False`` such register bases are removed instead of zeroed.
    The out sizes of the result are inferred from its bases (the result must be surjective).

    >>> L = LinearLayout.identity_1d(8, "register", "dim0")
    >>> ensure_layout_not_larger_than(L, [2]).bases["register"]
    [[1], [0], [0]]
    """
    labeled = _labeled_shape(layout, shape)
    if not labeled:
        return layout
    bases = layout.bases
    removed_registers: set[int] = set()
    changed = False
    for out_index, out_dim in enumerate(layout.out_dim_names):
        actual, desired = layout.out_dim_size(out_dim), labeled[out_dim]
        if actual <= desired:
            continue
        candidates = [
            (vectors[i][out_index], in_dim, i)
            for in_dim, vectors in bases.items()
            for i in range(len(vectors))
            if vectors[i][out_index] != 0
        ]
        candidates.sort(key=lambda item: -item[0])  # stable: largest coordinate first
        for _, in_dim, i in candidates:
            if actual <= desired:
                break
            if not broadcast_registers and in_dim == "register":
                removed_registers.add(i)
            else:
                bases[in_dim][i][out_index] = 0
            actual >>= 1
            changed = True
    if not changed:
        return layout
    if removed_registers:
        bases["register"] = [v for i, v in enumerate(bases["register"]) if i not in removed_registers]
    return LinearLayout(bases, list(layout.out_dim_names))


def make_cga_layout(cga_layout: Sequence[Sequence[int]], rank: int, *, name: str = "cga_layout") -> LinearLayout:
    """The CGA layout ``block -> (dim0, .., dim{rank-1})`` of 3.9's ``cga_layout`` (one basis per CTA bit).

    Out sizes are inferred (twice the largest coordinate, 1 where all are 0); an empty
    ``cga_layout`` is the single-CTA layout (``block`` of size 1).

    >>> make_cga_layout([[0, 1], [1, 0]], 2).out_dims
    {'dim0': 2, 'dim1': 2}
    """
    names = list(standard_out_dim_names(rank))
    vectors = [list(v) for v in cga_layout]
    if not vectors:
        return LinearLayout({"block": []}, {n: 1 for n in names})
    try:
        return LinearLayout({"block": vectors}, names)
    except LayoutError as error:
        raise LayoutError(f"{name} must be a linearly independent set of bases spanning its tile: {error}") from None


@checked
def cga_layout_from_split_params(
    ctas_per_cga: Sequence[int], cta_split_num: Sequence[int], cta_order: Sequence[int]
) -> Bases:
    """3.9's ``cga_layout`` bases of the classic CGA parameters (Triton's ``CGAEncodingAttr::fromSplitParams``).

    Walking ``cta_order`` (most minor first), dim ``d`` gets ``cta_split_num[d]`` CTAs that split it
    (bases 1, 2, 4, .. along ``d``) and then ``ctas_per_cga[d] / cta_split_num[d]`` that repeat it (zero bases).

    >>> cga_layout_from_split_params([2, 2], [2, 1], [1, 0])
    ((0, 0), (1, 0))
    """
    rank = len(cta_order)
    ctas_per_cga = check_int_tuple("ctas_per_cga", ctas_per_cga, length=rank, power_of_two=True)
    cta_split_num = check_int_tuple("cta_split_num", cta_split_num, length=rank, power_of_two=True)
    cta_order = check_order("cta_order", cta_order, rank)
    bases: list[tuple[int, ...]] = []
    for dim in cta_order:
        if ctas_per_cga[dim] % cta_split_num[dim] != 0:
            raise LayoutError(
                f"cta_split_num[{dim}] must divide ctas_per_cga[{dim}], got {cta_split_num[dim]} and {ctas_per_cga[dim]}"
            )
        split = 1
        while split < cta_split_num[dim]:
            bases.append(tuple(split if d == dim else 0 for d in range(rank)))
            split *= 2
        for _ in range((ctas_per_cga[dim] // cta_split_num[dim]).bit_length() - 1):
            bases.append((0,) * rank)
    return tuple(bases)


@checked
def split_params_from_cga_layout(cga_layout: Sequence[Sequence[int]], rank: int) -> tuple[Shape, Shape, Shape]:
    """The classic ``(ctas_per_cga, cta_split_num, cta_order)`` of a ``cga_layout`` (Triton 3.6 interop).

    Inverse of ``cga_layout_from_split_params``; raises ``LayoutError`` when ``cga_layout`` is not of that form.

    >>> split_params_from_cga_layout([[0, 0], [1, 0]], 2)
    ((2, 2), (2, 1), (1, 0))
    """
    bases = check_cga_layout("cga_layout", cga_layout, rank)
    ctas = [1] * rank
    split = [1] * rank
    order: list[int] = []
    pending_zeros = 0
    # Each nonzero basis names its dim; zero bases repeat the dim whose split bases precede them.
    current: int | None = None
    for vector in bases:
        nonzero = [d for d, x in enumerate(vector) if x]
        if not nonzero:
            if current is None:
                pending_zeros += 1
            else:
                ctas[current] *= 2
            continue
        if len(nonzero) != 1:
            raise LayoutError(f"cga_layout: basis {list(vector)} moves several dims; it has no split-parameter form")
        d = nonzero[0]
        if d != current:
            if d in order:
                raise LayoutError("cga_layout: the split bases of a dim must be contiguous to have a split-parameter form")
            order.append(d)
            current = d
        split[d] *= 2
        ctas[d] *= 2
    if pending_zeros:
        free = [d for d in reversed(range(rank)) if d not in order]
        if not free:
            raise LayoutError("cga_layout: leading zero bases have no split-parameter form")
        order.insert(0, free[0])
        ctas[free[0]] *= 2**pending_zeros
    order += [d for d in reversed(range(rank)) if d not in order]
    result = (tuple(ctas), tuple(split), tuple(order))
    if cga_layout_from_split_params(*result) != bases:
        raise LayoutError(f"cga_layout {[list(v) for v in bases]} has no split-parameter form")
    return result


@checked
def combine_cta_cga_with_shape(
    cta_layout: LinearLayout,
    cga_layout: Sequence[Sequence[int]] | LinearLayout,
    shape: Sequence[int],
) -> LinearLayout:
    """Triton's ``combineCtaCgaWithShape``: ``(cta' * cga').transpose_outs(dim0..)`` with out sizes = ``shape``.

    ``cga'`` is the CGA layout (``cga_layout`` bases, or a ``block -> dims`` ``LinearLayout``) shrunk
    to ``shape``; ``cta'`` is ``cta_layout`` grown (registers / offsets repeat) and then shrunk
    (broadcast) to ``shape / size(cga')`` per dim.

    >>> cta = LinearLayout.identity_1d(4, "register", "dim0")
    >>> combine_cta_cga_with_shape(cta, [[1]], [16]).bases
    {'register': [[1], [2], [4]], 'block': [[8]]}
    """
    rank = len(shape)
    names = standard_out_dim_names(rank)
    if cta_layout.num_out_dims != rank:
        raise LayoutError(f"cta_layout must have {rank} out dims (the rank of shape), got {cta_layout.num_out_dims}")
    if isinstance(cga_layout, LinearLayout):
        cga = cga_layout
    else:
        cga = make_cga_layout(cga_layout, rank)
    labeled = dict(zip(names, shape))
    cga = ensure_layout_not_larger_than(cga, labeled).transpose_outs(list(cta_layout.out_dim_names))
    cta_shape = {d: max(1, labeled[d] // cga.out_dim_size(d)) for d in cta_layout.out_dim_names}
    cta = ensure_layout_not_smaller_than(cta_layout, cta_shape)
    cta = ensure_layout_not_larger_than(cta, cta_shape)
    result = (cta * cga).transpose_outs(list(names))
    for d in names:
        if result.out_dim_size(d) != labeled[d]:  # pragma: no cover - Triton asserts the same
            raise LayoutError(f"shape: cannot fit the layout to size {labeled[d]} along {d}")
    return result


@checked
def remove_broadcast_registers(layout: LinearLayout) -> LinearLayout:
    """Drop the zero ``register`` bases (Triton's ``actionRemoveBroadcastedRegs``); out sizes are kept.

    Gluon 3.9's ``to_linear_layout`` returns blocked layouts in this form.

    >>> L = LinearLayout({"register": [[1], [0]], "lane": [[2]]}, {"dim0": 4})
    >>> remove_broadcast_registers(L).bases["register"]
    [[1]]
    """
    if not isinstance(layout, LinearLayout):
        raise not_a_layout(layout, "layout")
    if not layout.has_in_dim("register"):
        return layout
    bases = layout.bases
    kept = [v for v in bases["register"] if any(v)]
    if len(kept) == len(bases["register"]):
        return layout
    bases["register"] = kept
    return LinearLayout(bases, layout.out_dims, require_surjective=False)
