"""EmbeddingBag (mode sum, per-sample weights) for recommendation features: each bag holds up to 32 ids
(padded layout, its own length), a [32, 256] bf16 tile of table rows gathered through the ids (rows past the
length masked), scaled by the per-sample weights and reduced along axis 0 into an fp32 row; two bags per
program as a [2, 32, 256] tile."""
import triton
import triton.language as tl


@triton.jit
def embedding_bag_kernel(table_ptr, idx_ptr, len_ptr, psw_ptr, out_ptr, NB, D: tl.constexpr, BAGS: tl.constexpr,
                         MAX_BAG: tl.constexpr):
    bag = tl.program_id(0) * BAGS + tl.arange(0, BAGS)
    bag_ok = bag < NB
    j = tl.arange(0, MAX_BAG)
    rd = tl.arange(0, D)
    n = tl.load(len_ptr + bag, mask=bag_ok, other=0)
    ok = (j[None, :] < n[:, None]) & bag_ok[:, None]
    slot = bag[:, None] * MAX_BAG + j[None, :]
    ids = tl.load(idx_ptr + slot, mask=ok, other=0)
    wts = tl.load(psw_ptr + slot, mask=ok, other=0.0)
    rows = tl.load(table_ptr + ids[:, :, None].to(tl.int64) * D + rd[None, None, :], mask=ok[:, :, None], other=0.0)
    s = tl.sum(rows.to(tl.float32) * wts[:, :, None], axis=1)
    tl.store(out_ptr + bag[:, None] * D + rd[None, :], s, mask=bag_ok[:, None])


V_, D_, NB_, MAX_BAG_ = 262144, 256, 16383, 32
KERNEL = embedding_bag_kernel
SIGNATURE = {"table_ptr": "*bf16", "idx_ptr": "*i32", "len_ptr": "*i32", "psw_ptr": "*fp32", "out_ptr": "*fp32",
             "NB": "i32"}
CONSTEXPRS = {"D": D_, "BAGS": 2, "MAX_BAG": MAX_BAG_}
SCALARS = {"NB": NB_}
TENSORS = {"table_ptr": [V_, D_], "idx_ptr": ([NB_, MAX_BAG_], ("randint", 0, V_)),
           "len_ptr": ([NB_], ("randint", 0, MAX_BAG_ + 1)), "psw_ptr": [NB_, MAX_BAG_], "out_ptr": [NB_, D_]}
GRID = ((NB_ + 1) // 2,)
OPTIONS = {"num_warps": 8}
