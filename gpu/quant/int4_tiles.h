// The layout the CUDA W4A16 kernel (gpu/cuda/w4/) reads an int4 linear layer in, made once at load
// from the one integer form (int_weight.h), whatever format the checkpoint used.
//
// The kernel computes y = x · Wᵀ on tensor cores with the weights as the A operand of
// mma.m16n8k16 (16 outputs × 16 inputs a tile) and x as B, so a decode step of a few rows still
// fills the instruction's 16-wide dimension with weights. W [N, K] is cut into 16 × 16 tiles; lane
// l of a warp owns, in each tile, the 8 values of its A fragment: rows r = l / 4 and r + 8,
// inputs c = 2 (l % 4), c + 1, c + 8, c + 9. They are one 32-bit word, nibble j holding
//   j:      0       1         2         3           4         5           6         7
//   value: (r,c)  (r+8,c)  (r,c+8)  (r+8,c+8)  (r,c+1)  (r+8,c+1)  (r,c+9)  (r+8,c+9)
// so that nibbles j and j + 4 are the two bf16 halves of fragment register j: one shift and one
// lop3 (mask, then the exponent bits of 128.0) make register j = 128 + q exactly.
// Words are ordered [N / 16][K / 64][32 lanes][4]: a lane's 16-byte load covers four tiles along K
// and a warp's load is 512 contiguous bytes (one full line per 128 bytes, no partial sectors).
//
// Groups: the kernel subtracts the zero point in bf16 (128 + q − (128 + zero), an exact small
// integer), sums a group's products in float32, and multiplies the sum by the group's scale in
// float32: the only rounding is float32 accumulation (no bf16 rounding of scale · (q − zero)).
// The wide kernel of many rows (w4_wide_kernel.cuh) reads the same words into wgmma's A fragment
// (the same per-warp layout) and multiplies by the group's scale in bf16 instead.
// scales float [groups, N] and zeros uint32 [groups, N] (bf16(128 + zero) in both halves) — a group
// is group_size consecutive packed inputs, a multiple of 64 (the kernel scales once per 16-byte
// load of 64 inputs).
// Act-order (GPTQ desc_act): the packed inputs are the original ones sorted by group; perm[k'] is
// the original input at packed position k' (the kernel reads x through it). A layer whose sorted
// groups are not all group_size long cannot use the layout.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/quant/int_weight.h"

namespace zinfer::gpu::quant {

struct Int4Tiles {
  static constexpr int64_t kRowTile = 16;  // outputs per tile
  static constexpr int64_t kColStep = 64;  // inputs per 16-byte load (4 tiles)

  int64_t rows = 0;        // N
  int64_t cols = 0;        // K
  int64_t group_size = 0;  // packed inputs per group
  int64_t groups = 0;
  std::vector<uint32_t, UninitializedAllocator<uint32_t>> words;  // N · K / 8, every one written
  std::vector<float> scales;    // [groups, N]
  std::vector<uint32_t> zeros;  // [groups, N]
  std::vector<int32_t> perm;    // [K], or empty for the identity
};

// Why `w` cannot be laid out as Int4Tiles ("" when it can): bits other than 4, N not a multiple
// of 16, K not a multiple of 64, a group size not a multiple of 64, zero points past bf16's
// exact range, or act-order groups of unequal size.
std::string int4_tiles_unsupported(const IntWeight& w);
// The same for the parts of a fused layer (q, k, v; gate, up) stacked by rows, which must also
// agree in bits, inputs, groups and act-order permutation.
std::string int4_tiles_unsupported(const std::vector<const IntWeight*>& parts);
// Throws std::invalid_argument with that reason.
Int4Tiles make_int4_tiles(const IntWeight& w);
// The layout of the parts stacked by rows (part 2's outputs after part 1's), read where they lie:
// a fused layer's values are not copied into one IntWeight first.
Int4Tiles make_int4_tiles(const std::vector<const IntWeight*>& parts);
// The tile of 8 values lane `lane` holds at nibble j: its row and packed input within the tile.
struct TileSlot {
  int32_t row, col;
};
TileSlot tile_slot(int32_t lane, int32_t nibble);
// q − zero and the scale the layout holds for W[n, k] (k an original input): what the kernel
// multiplies by, for tests that read the layout back.
struct TileValue {
  int32_t q_minus_zero;
  float scale;
};
TileValue tile_value(const Int4Tiles& t, int64_t n, int64_t k);

}  // namespace zinfer::gpu::quant
