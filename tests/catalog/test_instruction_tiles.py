"""Tests of catalog/instruction_tiles.py: the SIMD tiles of paper §5.3 against the PTX ISA fragment
descriptions (simulated lane by lane), the mma.m16n8k16 operand fragments they feed, and Thm 5.1
(an instruction lowers L = A^-1 o B iff its tile divides L on the left)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from linear_layouts import LayoutError, LinearLayout
from linear_layouts.layouts.instruction_tiles import (
    ldmatrix_offset_tile,
    ldmatrix_row_tile,
    ldmatrix_tile,
    stmatrix_offset_tile,
    stmatrix_tile,
    vectorized_shared_tile,
)
from linear_layouts.layouts.shared import SwizzledSharedLayout

VALID = [
    (num, bits, trans)
    for num in (1, 2, 4)
    for bits in (8, 16)
    for trans in (False, True)
    if not (trans and bits == 8)
]


def ptx_ldmatrix_fragment(num: int, bits: int, trans: bool, lane: int, register: int) -> tuple[int, int]:
    """PTX ISA, ldmatrix .m8n8 .b16: (stacked row, column in elements) received by ``lane`` in element
    ``register`` (32-bit destination register ``register // per_reg``, element ``register % per_reg``
    of it). Matrix j's row i is at the address supplied by lane 8j + i, and is stacked as row 8j + i."""
    per_reg = 32 // bits
    matrix, element = divmod(register, per_reg)
    if not trans:
        row = lane // 4  # "each thread receives 32 bits of row laneid / 4"
        byte = 4 * (lane % 4) + element * bits // 8  # "... bytes 4 * (laneid % 4) onward"
        return 8 * matrix + row, byte * 8 // bits
    # .trans: thread t holds elements (2 * (t % 4) + {0, 1}, t / 4) of the matrix as stored
    return 8 * matrix + 2 * (lane % 4) + element, lane // 4


@pytest.mark.parametrize("num,bits,trans", VALID)
def test_ldmatrix_tile_matches_ptx_fragment(num, bits, trans):
    tile = ldmatrix_tile(num, bits, trans)
    per_reg = 32 // bits
    assert tile.in_dims == {"register": num * (per_reg if not trans else 2), "lane": 32}
    assert tile.out_dims == {"dim0": 8 * num, "dim1": 128 // bits}
    seen = set()
    for lane in range(32):
        for register in range(tile.in_dim_size("register")):
            got = tile.apply({"register": register, "lane": lane})
            expected = ptx_ldmatrix_fragment(num, bits, trans, lane, register)
            assert (got["dim0"], got["dim1"]) == expected, (lane, register)
            seen.add(expected)
    assert len(seen) == 8 * num * 128 // bits  # every element of the tile moved exactly once
    assert tile.is_invertible()
    assert stmatrix_tile(num, bits, trans) == tile
    assert stmatrix_offset_tile(num, bits, trans) == ldmatrix_offset_tile(num, bits, trans)


@pytest.mark.parametrize("num,bits,trans", VALID)
def test_offset_tile_is_row_major_storage(num, bits, trans):
    tile, flat = ldmatrix_tile(num, bits, trans), ldmatrix_offset_tile(num, bits, trans)
    columns = 128 // bits
    for lane, register in itertools.product(range(32), range(tile.in_dim_size("register"))):
        coords = tile.apply({"register": register, "lane": lane})
        assert flat.apply({"register": register, "lane": lane})["offset"] == coords["dim0"] * columns + coords["dim1"]


def test_ldmatrix_x4_gives_the_mma_m16n8k16_a_fragment():
    """ldmatrix.x4 of the four 8x8 quadrants of a 16x16 f16 A tile, addresses in the order
    (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15), gives each lane
    the mma.m16n8k16 A fragment of the PTX ISA: a_i at row groupID + 8 * ((i // 2) % 2),
    column 2 * (laneid % 4) + (i % 2) + 8 * (i // 4)."""
    tile = ldmatrix_tile(4, 16)
    # stacked (R, C) -> A (row, k): matrix j = R // 8 holds rows 8 * (j % 2) .., k 8 * (j // 2) ..
    quadrants = LinearLayout(
        {"dim0": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 8]], "dim1": [[0, 1], [0, 2], [0, 4]]}, ["row", "k"]
    )
    fragment = tile.compose(quadrants)
    for lane in range(32):
        group, thread_in_group = lane >> 2, lane % 4
        for i in range(8):
            got = fragment.apply({"register": i, "lane": lane})
            assert got == {"row": group + 8 * ((i // 2) % 2), "k": 2 * thread_in_group + (i % 2) + 8 * (i // 4)}


def test_ldmatrix_x2_trans_gives_the_mma_m16n8k16_b_fragment():
    """ldmatrix.x2.trans of a row-major 16x8 (k x n) f16 B tile (matrix j = k rows 8j..8j+7) gives
    the PTX B fragment: b_i at k = 2 * (laneid % 4) + (i % 2) + 8 * (i // 2), n = laneid / 4."""
    tile = ldmatrix_tile(2, 16, transposed=True)
    for lane in range(32):
        for i in range(4):
            got = tile.apply({"register": i, "lane": lane})
            assert got == {"dim0": 2 * (lane % 4) + (i % 2) + 8 * (i // 2), "dim1": lane // 4}


def test_ldmatrix_8bit_gives_the_mma_m16n8k32_int8_a_fragment():
    """8-bit elements through the b16 instruction: ldmatrix.x4 of a 16x32 s8 A tile gives the PTX
    mma.m16n8k32 (.s8) A fragment: a_i at row groupID + 8 * ((i // 4) % 2),
    column 4 * (laneid % 4) + (i % 4) + 16 * (i // 8)."""
    tile = ldmatrix_tile(4, 8)
    quadrants = LinearLayout(
        {"dim0": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 16]], "dim1": [[0, 1], [0, 2], [0, 4], [0, 8]]}, ["row", "k"]
    )
    fragment = tile.compose(quadrants)
    for lane in range(32):
        for i in range(16):
            got = fragment.apply({"register": i, "lane": lane})
            assert got == {"row": lane // 4 + 8 * ((i // 4) % 2), "k": 4 * (lane % 4) + (i % 4) + 16 * (i // 8)}


def test_paper_row_tile_divides_the_plain_offset_tile():
    """The paper's id_k x id_2 tile (k = log2(4 / byte width)) is the left factor of the plain
    ldmatrix fragment stored row-major; not of the transposed one."""
    for bits in (8, 16):
        row = ldmatrix_row_tile(bits)
        k = (32 // bits).bit_length() - 1
        assert row.bases == {"register": [[1 << i] for i in range(k)], "lane": [[1 << k], [2 << k]]}
        for num in (1, 2, 4):
            quotient = ldmatrix_offset_tile(num, bits).divide_left(row)
            assert quotient is not None
            assert quotient.in_dims == {"register": num, "lane": 8}
        if bits == 16:
            assert ldmatrix_offset_tile(4, 16, transposed=True).divide_left(row) is None


def test_vectorized_tile_and_theorem_5_1():
    """A thread holding 8 consecutive fp16 of a row stores them with one 128-bit st.shared iff the
    shared layout keeps those 8 consecutive in memory: divide_left(A^-1 o B, tile) exists for an
    unswizzled or vec=8 swizzled layout and not for a vec=1 swizzle; a 64-bit tile also fits vec=4."""
    assert vectorized_shared_tile(32, 8) == LinearLayout.identity_1d(4, "register", "offset")
    assert vectorized_shared_tile(64, 64).bases == {"register": []}
    # B: 8 registers along dim1, 8 lanes along dim1, 4 lanes along dim0, 2 warps along dim0 -> [8, 64]
    distributed = LinearLayout(
        {
            "register": [[0, 1], [0, 2], [0, 4]],
            "lane": [[0, 8], [0, 16], [0, 32], [1, 0], [2, 0]],
            "warp": [[4, 0]],
            "block": [],
        },
        ["dim0", "dim1"],
    )
    tile128, tile64 = vectorized_shared_tile(128, 16), vectorized_shared_tile(64, 16)

    def lowered(vec: int, per_phase: int, max_phase: int, tile: LinearLayout) -> bool:
        shared = SwizzledSharedLayout(vec, per_phase, max_phase, [1, 0]).to_linear([8, 64])
        cvt = distributed.invert_and_compose(shared)
        return cvt.divide_left(tile) is not None

    assert lowered(1, 1, 1, tile128)
    assert lowered(8, 1, 8, tile128)
    assert lowered(8, 2, 4, tile128)
    assert not lowered(1, 1, 8, tile128)
    assert not lowered(4, 1, 8, tile128)
    assert lowered(4, 1, 8, tile64)
    assert not lowered(2, 1, 8, tile64)


_INVALID = [
    (lambda: vectorized_shared_tile(256, 16), r"bits must be one of \(8, 16, 32, 64, 128\) \(one ld/st\.shared\)"),
    (lambda: vectorized_shared_tile(24, 8), r"bits must be one of \(8, 16, 32, 64, 128\) \(one ld/st\.shared\)"),
    (lambda: vectorized_shared_tile(32, 4), r"dtype as a bit width must be one of \(8, 16, 32, 64, 128\)"),
    (lambda: vectorized_shared_tile(32, 64), r"element_bitwidth \(64\) must be at most bits \(32\)"),
    (lambda: vectorized_shared_tile(32.0, 16), r"vectorized_shared_tile: bits must be an int"),
    (lambda: vectorized_shared_tile("128", 16), r"vectorized_shared_tile: bits must be an int"),
    (lambda: ldmatrix_row_tile(32), r"dtype must be \(8, 16\) bits wide here"),
    (lambda: ldmatrix_row_tile(4), r"dtype as a bit width must be one of \(8, 16, 32, 64, 128\)"),
    (lambda: ldmatrix_tile(3, 16), r"num_matrices must be one of \(1, 2, 4\) \(\.x1, \.x2, \.x4\)"),
    (lambda: ldmatrix_tile(8, 16), r"num_matrices must be one of \(1, 2, 4\) \(\.x1, \.x2, \.x4\)"),
    (lambda: ldmatrix_tile(0, 16), r"num_matrices must be one of \(1, 2, 4\) \(\.x1, \.x2, \.x4\)"),
    (lambda: ldmatrix_tile(True, 16), r"ldmatrix_tile: num_matrices must be an int"),
    (lambda: ldmatrix_tile(4, 32), r"dtype must be \(8, 16\) bits wide here"),
    (lambda: ldmatrix_tile(4, 8, transposed=True), r"transposed \(\.trans\) requires element_bitwidth 16: \.m8n8"),
    (lambda: ldmatrix_tile(4, 16, transposed=1), r"ldmatrix_tile: transposed must be True or False"),
    (lambda: stmatrix_tile(4, 8, transposed=True), r"transposed \(\.trans\) requires element_bitwidth 16: \.m8n8"),
    (lambda: stmatrix_offset_tile(2, 64), r"dtype must be \(8, 16\) bits wide here"),
    (lambda: ldmatrix_offset_tile(16, 16), r"num_matrices must be one of \(1, 2, 4\) \(\.x1, \.x2, \.x4\)"),
]


@pytest.mark.parametrize("index", range(len(_INVALID)))
def test_invalid_arguments_raise_layout_error(index):
    make, rule = _INVALID[index]
    with pytest.raises(LayoutError, match=rule):
        make()


# ------------------------------------------------------------------------------ on the hardware

_PROBE_CU = r"""
#include <cstdio>
#include <cstdint>

// Shared tile: 32 rows of 16 bytes. pass 0: byte (r, b) = r; pass 1: byte (r, b) = b.
// Lane i supplies the address of stacked row i % (8 * num).
#define LDM(NUM, TRANS, ASM) \
  if (num == NUM && trans == TRANS) { asm volatile(ASM : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]) : "r"(addr)); }

__global__ void ld_kernel(int num, int trans, int pass, uint32_t* out) {
  __shared__ __align__(16) uint8_t tile[512];
  int lane = threadIdx.x;
  for (int i = lane; i < 512; i += 32) tile[i] = pass == 0 ? i / 16 : i % 16;
  __syncwarp();
  uint32_t addr = (uint32_t)__cvta_generic_to_shared(tile + (lane % (8 * num)) * 16);
  uint32_t d[4] = {0, 0, 0, 0};
  if (num == 1 && trans == 0) asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(d[0]) : "r"(addr));
  if (num == 1 && trans == 1) asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(d[0]) : "r"(addr));
  if (num == 2 && trans == 0) asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];" : "=r"(d[0]), "=r"(d[1]) : "r"(addr));
  if (num == 2 && trans == 1) asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];" : "=r"(d[0]), "=r"(d[1]) : "r"(addr));
  LDM(4, 0, "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];")
  LDM(4, 1, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];")
  for (int j = 0; j < 4; ++j) out[lane * 4 + j] = d[j];
}

// Registers: pass 0: every byte of lane t = t; pass 1: byte k of register j = 4 j + k.
__global__ void st_kernel(int num, int trans, int pass, uint8_t* out) {
  __shared__ __align__(16) uint8_t tile[512];
  int lane = threadIdx.x;
  for (int i = lane; i < 512; i += 32) tile[i] = 255;
  __syncwarp();
  uint32_t d[4];
  for (int j = 0; j < 4; ++j) {
    uint32_t w = 0;
    for (int k = 0; k < 4; ++k) w |= (uint32_t)(pass == 0 ? lane : 4 * j + k) << (8 * k);
    d[j] = w;
  }
  uint32_t addr = (uint32_t)__cvta_generic_to_shared(tile + (lane % (8 * num)) * 16);
  if (num == 1 && trans == 0) asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};" :: "r"(addr), "r"(d[0]));
  if (num == 1 && trans == 1) asm volatile("stmatrix.sync.aligned.m8n8.x1.trans.shared.b16 [%0], {%1};" :: "r"(addr), "r"(d[0]));
  if (num == 2 && trans == 0) asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};" :: "r"(addr), "r"(d[0]), "r"(d[1]));
  if (num == 2 && trans == 1) asm volatile("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1, %2};" :: "r"(addr), "r"(d[0]), "r"(d[1]));
  if (num == 4 && trans == 0) asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" :: "r"(addr), "r"(d[0]), "r"(d[1]), "r"(d[2]), "r"(d[3]));
  if (num == 4 && trans == 1) asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};" :: "r"(addr), "r"(d[0]), "r"(d[1]), "r"(d[2]), "r"(d[3]));
  __syncwarp();
  for (int i = lane; i < 512; i += 32) out[i] = tile[i];
}

int main() {
  uint32_t* words; uint8_t* bytes;
  cudaMallocManaged(&words, 128 * sizeof(uint32_t));
  cudaMallocManaged(&bytes, 512);
  for (int num = 1; num <= 4; num *= 2)
    for (int trans = 0; trans < 2; ++trans)
      for (int pass = 0; pass < 2; ++pass) {
        ld_kernel<<<1, 32>>>(num, trans, pass, words);
        cudaDeviceSynchronize();
        printf("ld %d %d %d", num, trans, pass);
        for (int i = 0; i < 128; ++i) printf(" %u", words[i]);
        printf("\n");
        st_kernel<<<1, 32>>>(num, trans, pass, bytes);
        cudaDeviceSynchronize();
        printf("st %d %d %d", num, trans, pass);
        for (int i = 0; i < 512; ++i) printf(" %u", bytes[i]);
        printf("\n");
      }
  cudaError_t err = cudaGetLastError();
  printf("status %s\n", cudaGetErrorString(err));
  return err == cudaSuccess ? 0 : 1;
}
"""


def _run_probe(tmp_path) -> dict:
    import shutil
    import subprocess

    nvcc = shutil.which("nvcc")
    if nvcc is None and Path("/usr/local/cuda/bin/nvcc").exists():
        nvcc = "/usr/local/cuda/bin/nvcc"
    if nvcc is None or shutil.which("nvidia-smi") is None:
        pytest.skip("needs nvcc and an NVIDIA GPU")
    capability = subprocess.run(
        ["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"], capture_output=True, text=True
    ).stdout.split()
    if not capability or float(capability[0]) < 9.0:
        pytest.skip("stmatrix needs sm_90 or newer")
    source = tmp_path / "probe.cu"
    source.write_text(_PROBE_CU)
    binary = tmp_path / "probe"
    subprocess.run([nvcc, "-arch=sm_90", "-o", str(binary), str(source)], check=True, capture_output=True)
    lines = subprocess.run([str(binary)], check=True, capture_output=True, text=True).stdout.splitlines()
    assert lines[-1] == "status no error", lines[-1]
    results = {}
    for line in lines[:-1]:
        kind, num, trans, pass_, *values = line.split()
        results[(kind, int(num), bool(int(trans)), int(pass_))] = [int(v) for v in values]
    return results


@pytest.mark.gpu
def test_tiles_match_ldmatrix_and_stmatrix_on_the_gpu(tmp_path):
    """On an sm_90 GPU: every byte ldmatrix / stmatrix (.m8n8 .b16, x1/x2/x4, plain/.trans) moves
    between the stacked row-major tile and lane registers is where our tiles put it, for 16-bit and
    (plain) 8-bit elements."""
    results = _run_probe(tmp_path)
    for num, bits, trans in VALID:
        tile = ldmatrix_tile(num, bits, trans)
        ebytes = bits // 8
        for lane in range(32):
            for register in range(tile.in_dim_size("register")):
                expected = tile.apply({"register": register, "lane": lane})
                word, element = divmod(register, 4 // ebytes)
                # ldmatrix: the element's first byte carries its row (pass 0) and byte column (pass 1)
                shift = 8 * ebytes * element
                row = (results[("ld", num, trans, 0)][lane * 4 + word] >> shift) & 0xFF
                byte = (results[("ld", num, trans, 1)][lane * 4 + word] >> shift) & 0xFF
                assert (row, byte // ebytes) == (expected["dim0"], expected["dim1"]), ("ld", num, bits, trans)
                # stmatrix: the memory byte at the element's first byte names the lane and register byte
                position = expected["dim0"] * 16 + expected["dim1"] * ebytes
                assert results[("st", num, trans, 0)][position] == lane, ("st", num, bits, trans)
                assert results[("st", num, trans, 1)][position] == 4 * word + ebytes * element
