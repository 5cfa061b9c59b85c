"""Warp-local gather by warp shuffles (paper §5.5): ``out[y] = src[y with y[axis] = index[y]]``.

The gather stays inside a warp when neither layout's warp (or block) bases move along ``axis`` and
both map warps identically onto the other dims; with the lanes also mapped identically onto the
other dims (Triton's ``GatherLoweringHelper::isWarpLocal``), the lane that holds a source element
differs from the reader only in its axis lane bits. Then, for each output register and each choice
``c`` of the source's axis *register* bits, one round: every lane sends the source register
``base(out register) ⊕ c``, every lane reads from the lane its index value names, and keeps the value
when the index's register bits equal ``c``. ``2**|src axis register bits|`` rounds per output register;
sub-word elements of consecutive rounds share one ``shfl`` word (``GatherPlan.elements_per_shuffle``).

>>> from linear_layouts import LinearLayout
>>> src = LinearLayout({"register": [[1]], "lane": [[2], [4]]}, ["dim0"])   # 8 elements, 4 lanes
>>> plan = plan_gather(src, src, axis=0)
>>> plan.warp_local, plan.num_shuffles, plan.source(lane=3, index_value=5)
(True, 4, (2, 1))
"""

from __future__ import annotations

from dataclasses import dataclass

from linear_layouts.analysis.shuffles import check_permutation_layout
from linear_layouts.core.arguments import checked
from linear_layouts.core.element_type import DTypeLike, element_type
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout
from linear_layouts.core.limits import MAX_ELEMENTS, check_layout_size, quote

__all__ = ["is_warp_local", "GatherRound", "GatherPlan", "plan_gather", "PACKED_REGISTER_BUDGET"]

REGISTER, LANE, WARP, BLOCK = "register", "lane", "warp", "block"
#: Registers per thread (source, index, output and packed words) up to which sub-word gathers pack
#: their rounds; above it the tile already spills (a [512, 32] 16-bit tile on 4 warps: 384 + 64).
PACKED_REGISTER_BUDGET = 128


def _check(src: LinearLayout, index: LinearLayout, axis: int) -> None:
    if src.out_dim_names != index.out_dim_names:
        raise LayoutError(
            f"src and index must have the same out dims, got {src.out_dim_names} and {index.out_dim_names}"
        )
    if not isinstance(axis, int) or not 0 <= axis < src.num_out_dims:
        raise LayoutError(f"axis must be an int in [0, {src.num_out_dims}), got {quote(axis)}")
    for i, d in enumerate(src.out_dim_names):
        if i != axis and src.out_dim_size(d) != index.out_dim_size(d):
            raise LayoutError(f"src and index must have the same size along every dim but the axis; {d} differs")
    if src.in_dim_size(LANE) != index.in_dim_size(LANE):
        raise LayoutError("src and index must have the same number of lanes")


def _sub(layout: LinearLayout, ins: list[str], outs: list[str]) -> LinearLayout:
    return layout.sublayout([d for d in ins if layout.has_in_dim(d)], outs)


@checked
def is_warp_local(src: LinearLayout, index: LinearLayout, axis: int) -> bool:
    """Whether ``gather(src, index, axis)`` can be done with warp shuffles only (§5.5):
    ``L_Wrp^axis = 0`` for both layouts, equal warp/block and lane maps onto the other dims (Triton's
    ``GatherLoweringHelper::isWarpLocal``; layouts may broadcast: ``plan_gather`` needs permutations).

    >>> L = LinearLayout({"register": [[1]], "lane": [[2]], "warp": [[4]]}, ["dim0"])
    >>> is_warp_local(L, L, 0)
    False
    """
    _check(src, index, axis)
    axis_name = src.out_dim_names[axis]
    others = [d for i, d in enumerate(src.out_dim_names) if i != axis]
    for layout in (src, index):
        if not layout.sublayout_is_zero([d for d in (WARP, BLOCK) if layout.has_in_dim(d)], [axis_name]):
            return False

    def flat(layout: LinearLayout, dims: list[str]) -> tuple[int, ...]:
        sub = _sub(layout, dims, others)
        return tuple(b for d in dims if sub.has_in_dim(d) for b in sub.flat_bases(d))

    return flat(src, [WARP, BLOCK]) == flat(index, [WARP, BLOCK]) and flat(src, [LANE]) == flat(index, [LANE])


@dataclass(frozen=True)
class GatherRound:
    """One shuffle round: every lane sends source register ``send_register``; a lane whose index value
    selects register bits ``select`` stores the received value in output register ``output_register``."""

    output_register: int
    send_register: int
    select: int


@dataclass(frozen=True)
class GatherPlan:
    """The warp-local gather schedule (§5.5). At run time a lane with index value ``k`` reads from
    ``source(lane, k)[0]`` and keeps the round whose ``select`` equals ``source(lane, k)[1]``.

    ``index_lane_bits[i]`` / ``index_register_bits[i]``: the source lane bit / selector bit that bit ``i``
    of the index value sets (-1 where it sets none). ``lane_keep_mask``: reader lane bits kept.
    Not warp-local: ``rounds`` is empty and the gather goes through shared memory
    (``shared_memory_bytes`` for the whole source tensor, as Triton allocates).
    """

    src: LinearLayout
    index: LinearLayout
    axis: int
    bitwidth: int
    warp_local: bool
    rounds: tuple[GatherRound, ...]
    lane_keep_mask: int
    index_lane_bits: tuple[int, ...]
    index_register_bits: tuple[int, ...]
    shared_memory_bytes: int

    @property
    def words_per_shuffle(self) -> int:
        return max(1, self.bitwidth // 32)

    @property
    def elements_per_shuffle(self) -> int:
        """Rounds one ``shfl`` serves: sub-word elements of the ``2**s`` source registers a selector
        chooses among (``s`` = axis register bits) travel packed, up to ``32 / bitwidth`` to a word;
        the reader keeps its element with one byte permute."""
        if self.bitwidth >= 32 or not self.warp_local:
            return 1
        per = min(32 // self.bitwidth, 1 << sum(1 for b in self.index_register_bits if b >= 0))
        n_src, n_idx = self.src.in_dim_size(REGISTER), self.index.in_dim_size(REGISTER)
        if n_src + 2 * n_idx + n_src // per > PACKED_REGISTER_BUDGET:
            return 1  # the packed words would add to registers that already spill: no packing
        return per

    @property
    def num_shuffles(self) -> int:
        """``shfl.sync`` instructions per warp."""
        return len(self.rounds) // self.elements_per_shuffle * self.words_per_shuffle

    def source(self, lane: int, index_value: int) -> tuple[int, int]:
        """(source lane, register selector) for a reader ``lane`` holding ``index_value``."""
        src_lane, select = lane & self.lane_keep_mask, 0
        for i, (lb, rb) in enumerate(zip(self.index_lane_bits, self.index_register_bits)):
            if index_value >> i & 1:
                if lb >= 0:
                    src_lane |= 1 << lb
                if rb >= 0:
                    select |= 1 << rb
        return src_lane, select


@checked
def plan_gather(src: LinearLayout, index: LinearLayout, axis: int, dtype: DTypeLike = 32, *,
                max_elements: int = MAX_ELEMENTS) -> GatherPlan:
    """Decide whether ``gather(src, index, axis)`` is warp-local and, if so, its shuffle rounds (§5.5).

    Rounds: ``index registers * 2**(src register bits along axis)``; see the module docstring.
    Layouts above ``max_elements`` inputs or elements (``limits.MAX_ELEMENTS``) are refused.
    """
    bits = element_type(dtype).bits
    check_permutation_layout(src, "src")
    check_permutation_layout(index, "index")
    local = is_warp_local(src, index, axis)
    check_layout_size(src, max_elements, "plan_gather: src")
    check_layout_size(index, max_elements, "plan_gather: index")
    elements = src.total_out_dim_size
    if not local:
        return GatherPlan(src, index, axis, bits, False, (), 0, (), (), elements * max(1, bits // 8))
    axis_name = src.out_dim_names[axis]
    others = [d for i, d in enumerate(src.out_dim_names) if i != axis]

    src_reg_axis = [b[axis] for b in src.bases[REGISTER]]
    src_lane_axis = [b[axis] for b in src.bases[LANE]]
    axis_regs = [j for j, v in enumerate(src_reg_axis) if v]          # selector bit t <-> register bit axis_regs[t]
    n_axis = src.out_dim_size_log2(axis_name)
    lane_bits, reg_bits = [-1] * n_axis, [-1] * n_axis
    for i in range(n_axis):
        if (1 << i) in src_lane_axis:
            lane_bits[i] = src_lane_axis.index(1 << i)
        elif (1 << i) in src_reg_axis:
            reg_bits[i] = axis_regs.index(src_reg_axis.index(1 << i))
        # else: src is surjective, so bit i is owned by a lane or a register (warps do not move along axis)
    keep = sum(1 << j for j, b in enumerate(src.bases[LANE]) if any(b[o] for o in range(len(b)) if o != axis))

    # source register of the other-dims part: solve src_Reg^other(r) = index_Reg^other(r')
    src_other = src.sublayout([REGISTER], others)
    idx_other = index.sublayout([REGISTER], others)
    owner = {v: j for j, v in enumerate(src_other.flat_bases(REGISTER)) if v}
    rounds = []
    for r_out in range(index.in_dim_size(REGISTER)):
        target = idx_other.apply_flat(r_out) if others else 0
        base = 0
        for p in range(target.bit_length() if target else 0):
            if target >> p & 1:
                if (1 << p) not in owner:  # pragma: no cover - excluded by is_warp_local
                    raise LayoutError("index register data is not held by src registers")
                base |= 1 << owner[1 << p]
        for c in range(1 << len(axis_regs)):
            reg = base
            for t, j in enumerate(axis_regs):
                if c >> t & 1:
                    reg |= 1 << j
            rounds.append(GatherRound(r_out, reg, c))
    return GatherPlan(src, index, axis, bits, True, tuple(rounds), keep, tuple(lane_bits), tuple(reg_bits), 0)
