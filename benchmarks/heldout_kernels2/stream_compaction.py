"""Stream compaction of a boolean mask (nonzero): each program takes a 4096-wide chunk of an int8 mask,
ranks its set entries with ``tl.cumsum``, reserves room for them with one ``tl.atomic_add`` on a global
counter and scatters their indices there (chunks land in arrival order)."""
import triton
import triton.language as tl


@triton.jit
def stream_compaction_kernel(mask_ptr, out_ptr, count_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    keep = (tl.load(mask_ptr + offs, mask=offs < n_elements, other=0) != 0).to(tl.int32)
    rank = tl.cumsum(keep, axis=0)
    base = tl.atomic_add(count_ptr, tl.sum(keep, axis=0))
    tl.store(out_ptr + base + rank - 1, offs, mask=keep != 0)


N_ = (1 << 26) - 1000
KERNEL = stream_compaction_kernel
SIGNATURE = {"mask_ptr": "*i8", "out_ptr": "*i32", "count_ptr": "*i32", "n_elements": "i32"}
CONSTEXPRS = {"BLOCK": 4096}
SCALARS = {"n_elements": N_}
TENSORS = {"mask_ptr": ([N_], ("randint", 0, 2)), "out_ptr": [N_], "count_ptr": ([1], "zeros")}
GRID = ((N_ + 4095) // 4096,)
OPTIONS = {"num_warps": 8}
