"""Discounted returns G_t = r_t + gamma_t * G_{t+1} for [T, E] fp32 rewards (T time steps down axis 0, E
environments across): one reverse ``tl.associative_scan`` along axis 0 of a (gamma, reward) pair of
[T, BLOCK_E] tiles with an affine combine."""
import triton
import triton.language as tl


@triton.jit
def _affine(a1, b1, a2, b2):
    return a1 * a2, b1 * a2 + b2


@triton.jit
def discounted_returns_kernel(r_ptr, done_ptr, g_ptr, E, gamma, T: tl.constexpr, BLOCK_E: tl.constexpr):
    env = tl.program_id(0) * BLOCK_E + tl.arange(0, BLOCK_E)
    t = tl.arange(0, T)
    offs = t[:, None] * E + env[None, :]
    ok = env[None, :] < E
    r = tl.load(r_ptr + offs, mask=ok, other=0.0)
    done = tl.load(done_ptr + offs, mask=ok, other=1)
    g = tl.where(done != 0, 0.0, gamma)
    _, ret = tl.associative_scan((g, r), axis=0, combine_fn=_affine, reverse=True)
    tl.store(g_ptr + offs, ret, mask=ok)


T_, E_ = 256, 16384
KERNEL = discounted_returns_kernel
SIGNATURE = {"r_ptr": "*fp32", "done_ptr": "*i8", "g_ptr": "*fp32", "E": "i32", "gamma": "fp32"}
CONSTEXPRS = {"T": T_, "BLOCK_E": 32}
SCALARS = {"E": E_, "gamma": 0.99}
TENSORS = {"r_ptr": [T_, E_], "done_ptr": ([T_, E_], ("randint", 0, 2)), "g_ptr": [T_, E_]}
GRID = (E_ // 32,)
OPTIONS = {"num_warps": 4}
