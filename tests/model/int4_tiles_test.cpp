// The int4 tile layout of the CUDA W4A16 kernel (gpu/quant/int4_tiles.h), built and read back on
// the host (CI has no GPU): every value of random layers — act-order or not, every group size the
// layout takes, zero points anywhere in [-128, 127] — sits where the kernel's fragment mapping
// looks for it, and layers the layout cannot hold are refused with the reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "gpu/quant/int4_tiles.h"

namespace zinfer::gpu::quant {
namespace {

IntWeight random_weight(int64_t n, int64_t k, int64_t group, bool act_order, std::mt19937& rng) {
  IntWeight w;
  w.rows = n, w.cols = k, w.bits = 4, w.group_size = group, w.groups = k / group;
  std::uniform_int_distribution<int> nibble(0, 15), zero(-128, 127);
  w.q.resize(static_cast<size_t>(n * k));
  for (auto& q : w.q) q = static_cast<uint8_t>(nibble(rng));
  w.zero.resize(static_cast<size_t>(w.groups * n));
  w.scale.resize(w.zero.size());
  for (size_t i = 0; i < w.zero.size(); ++i) w.zero[i] = zero(rng), w.scale[i] = 0.001f * static_cast<float>(i % 97 + 1);
  if (act_order) {
    for (int64_t i = 0; i < k; ++i) w.g_idx.push_back(static_cast<int32_t>(i / group));
    std::shuffle(w.g_idx.begin(), w.g_idx.end(), rng);
  }
  return w;
}

TEST(Int4Tiles, FragmentSlotsCoverATileOnce) {
  std::vector<int> seen(256, 0);
  for (int32_t lane = 0; lane < 32; ++lane)
    for (int32_t j = 0; j < 8; ++j) {
      const TileSlot s = tile_slot(lane, j);
      ASSERT_GE(s.row, 0);
      ASSERT_LT(s.row, 16);
      ASSERT_GE(s.col, 0);
      ASSERT_LT(s.col, 16);
      ++seen[static_cast<size_t>(s.row * 16 + s.col)];
    }
  for (int c : seen) EXPECT_EQ(c, 1);
  // mma.m16n8k16's A fragment: register 0 = (row l/4, inputs 2(l%4), +1), register 1 the row 8
  // below, registers 2 and 3 the inputs 8 on; nibbles j and j + 4 are a register's halves.
  EXPECT_EQ(tile_slot(5, 0).row, 1);
  EXPECT_EQ(tile_slot(5, 0).col, 2);
  EXPECT_EQ(tile_slot(5, 4).col, 3);
  EXPECT_EQ(tile_slot(5, 1).row, 9);
  EXPECT_EQ(tile_slot(5, 2).col, 10);
  EXPECT_EQ(tile_slot(5, 7).row, 9);
  EXPECT_EQ(tile_slot(5, 7).col, 11);
}

TEST(Int4Tiles, EveryValueReadsBack) {
  std::mt19937 rng(1);
  struct Case {
    int64_t n, k, group;
    bool act_order;
  };
  for (const Case& c : {Case{16, 64, 64, false}, Case{48, 192, 64, true}, Case{32, 320, 64, false},
                        Case{16, 256, 128, true}, Case{80, 128, 128, false}, Case{32, 192, 192, true}}) {
    const IntWeight w = random_weight(c.n, c.k, c.group, c.act_order, rng);
    const Int4Tiles t = make_int4_tiles(w);
    EXPECT_EQ(t.words.size(), static_cast<size_t>(c.n * c.k / 8));
    EXPECT_EQ(t.perm.empty(), !c.act_order);
    for (int64_t n = 0; n < c.n; ++n)
      for (int64_t k = 0; k < c.k; ++k) {
        const TileValue v = tile_value(t, n, k);
        const int64_t g = w.group_of(k);
        ASSERT_EQ(v.q_minus_zero, int32_t{w.q[static_cast<size_t>(n * c.k + k)]} - w.zero[static_cast<size_t>(g * c.n + n)])
            << "n=" << n << " k=" << k;
        ASSERT_EQ(v.scale, w.scale[static_cast<size_t>(g * c.n + n)]);
      }
    if (c.act_order) {  // packed positions run through the groups in order
      for (int64_t kp = 0; kp < c.k; ++kp) EXPECT_EQ(w.g_idx[static_cast<size_t>(t.perm[kp])], kp / c.group);
    }
  }
}

TEST(Int4Tiles, RefusesWhatTheKernelCannotRead) {
  std::mt19937 rng(2);
  IntWeight w = random_weight(16, 64, 64, false, rng);
  EXPECT_EQ(int4_tiles_unsupported(w), "");
  IntWeight eight = w;
  eight.bits = 8;
  EXPECT_NE(int4_tiles_unsupported(eight).find("8-bit"), std::string::npos);
  EXPECT_NE(int4_tiles_unsupported(random_weight(24, 64, 64, false, rng)).find("24 outputs"), std::string::npos);
  EXPECT_NE(int4_tiles_unsupported(random_weight(16, 96, 32, false, rng)).find("96 inputs"), std::string::npos);
  EXPECT_NE(int4_tiles_unsupported(random_weight(16, 64 * 3, 32, false, rng)).find("group size 32"), std::string::npos);
  IntWeight far = w;
  far.zero[0] = 200;
  EXPECT_NE(int4_tiles_unsupported(far).find("zero point 200"), std::string::npos);
  IntWeight uneven = random_weight(16, 256, 64, true, rng);
  uneven.g_idx[0] = (uneven.g_idx[0] + 1) % 4;
  EXPECT_NE(int4_tiles_unsupported(uneven).find("unequal"), std::string::npos);
  EXPECT_THROW(make_int4_tiles(uneven), std::invalid_argument);
}

}  // namespace
}  // namespace zinfer::gpu::quant

namespace zinfer::gpu::quant {
namespace {

// Fused layers (q/k/v, gate/up) are their parts stacked by rows, read where they lie: values,
// zeros and scales of part 2 follow part 1's in every group (the rows of one part need not be a
// multiple of 16, only the stack's); parts quantized differently cannot be one layout.
TEST(Int4Tiles, StacksFusedPartsByRows) {
  std::mt19937 rng(4);
  for (bool act_order : {false, true}) {
    IntWeight a = random_weight(24, 128, 64, act_order, rng), b = random_weight(40, 128, 64, false, rng);
    b.g_idx = a.g_idx;  // one act-order permutation for the fused layer, as the format stores it
    const std::vector<const IntWeight*> parts{&a, &b};
    ASSERT_EQ(int4_tiles_unsupported(parts), "");
    const Int4Tiles t = make_int4_tiles(parts);
    EXPECT_EQ(t.rows, 64);
    for (int64_t n = 0; n < 64; ++n) {
      const IntWeight& part = n < 24 ? a : b;
      const int64_t pn = n < 24 ? n : n - 24;
      for (int64_t k = 0; k < 128; ++k) {
        const TileValue v = tile_value(t, n, k);
        const int64_t g = part.group_of(k);
        ASSERT_EQ(v.q_minus_zero, int32_t{part.q[static_cast<size_t>(pn * 128 + k)]} -
                                      part.zero[static_cast<size_t>(g * part.rows + pn)])
            << "n=" << n << " k=" << k;
        ASSERT_EQ(v.scale, part.scale[static_cast<size_t>(g * part.rows + pn)]);
      }
    }
  }
  const IntWeight a = random_weight(16, 128, 64, false, rng);
  const IntWeight act1 = random_weight(16, 128, 64, true, rng), act2 = random_weight(16, 128, 64, true, rng);
  if (act1.g_idx != act2.g_idx) {
    EXPECT_NE(int4_tiles_unsupported({&act1, &act2}).find("act-order"), std::string::npos);
  }
  const IntWeight other_groups = random_weight(16, 128, 128, false, rng);
  EXPECT_NE(int4_tiles_unsupported({&a, &other_groups}).find("quantized differently"), std::string::npos);
  const IntWeight odd = random_weight(8, 128, 64, false, rng);  // 24 rows stacked: not a multiple of 16
  EXPECT_NE(int4_tiles_unsupported({&a, &odd}).find("24 outputs"), std::string::npos);
  EXPECT_THROW(make_int4_tiles({&a, &odd}), std::invalid_argument);
}

}  // namespace
}  // namespace zinfer::gpu::quant
