#include "gpu/quant/int4_tiles.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <stdexcept>

namespace zinfer::gpu::quant {
namespace {

constexpr uint32_t kBf16Of128 = 0x4300u;  // bf16 128.0: mantissa ulp 1, so 0x4300 | q = 128 + q

uint32_t bf16_integer(int32_t v) {  // an integer in [0, 256) as bf16 bits, exactly
  if (v < 128) {
    // 0..127: use float conversion (exact for 8-bit integers) and keep the high half.
    const float f = static_cast<float>(v);
    uint32_t bits;
    static_assert(sizeof(bits) == sizeof(f));
    std::memcpy(&bits, &f, sizeof bits);
    return bits >> 16;
  }
  return kBf16Of128 | static_cast<uint32_t>(v - 128) << 0;  // 128..255: ulp 1 at exponent 7
}

// Packed position k' -> original input; groups sorted (stable) for act-order.
std::vector<int32_t> sorted_inputs(const IntWeight& w) {
  std::vector<int32_t> order(static_cast<size_t>(w.cols));
  std::iota(order.begin(), order.end(), 0);
  if (!w.g_idx.empty())
    std::stable_sort(order.begin(), order.end(),
                     [&](int32_t a, int32_t b) { return w.g_idx[static_cast<size_t>(a)] < w.g_idx[static_cast<size_t>(b)]; });
  return order;
}

}  // namespace

TileSlot tile_slot(int32_t lane, int32_t nibble) {
  const int32_t r = lane / 4, c = 2 * (lane % 4);
  const int32_t reg = nibble % 4, half = nibble / 4;  // fragment register, and its low/high half
  return TileSlot{r + 8 * (reg % 2), c + 8 * (reg / 2) + half};
}

std::string int4_tiles_unsupported(const std::vector<const IntWeight*>& parts) {
  if (parts.empty()) return "no parts";
  const IntWeight& w = *parts[0];
  int64_t rows = 0;
  for (const IntWeight* p : parts) {
    if (p->bits != w.bits || p->cols != w.cols || p->group_size != w.group_size || p->groups != w.groups ||
        p->g_idx != w.g_idx)
      return "fused parts quantized differently (bits, groups or act-order order)";
    rows += p->rows;
  }
  if (w.bits != 4) return std::to_string(w.bits) + "-bit weights (the int4 kernel takes 4)";
  if (rows % Int4Tiles::kRowTile != 0) return std::to_string(rows) + " outputs, not a multiple of 16";
  if (w.cols % Int4Tiles::kColStep != 0) return std::to_string(w.cols) + " inputs, not a multiple of 64";
  if (w.group_size % 64 != 0) return "group size " + std::to_string(w.group_size) + ", not a multiple of 64";
  for (const IntWeight* p : parts)
    for (int32_t z : p->zero)
      if (z < -128 || z > 127) return "zero point " + std::to_string(z) + " outside [-128, 127]";
  if (!w.g_idx.empty()) {
    std::vector<int64_t> sizes(static_cast<size_t>(w.groups), 0);
    for (int32_t g : w.g_idx) ++sizes[static_cast<size_t>(g)];
    for (int64_t s : sizes)
      if (s != w.group_size) return "act-order groups of unequal size (" + std::to_string(s) + ")";
  }
  return "";
}

std::string int4_tiles_unsupported(const IntWeight& w) { return int4_tiles_unsupported(std::vector{&w}); }

Int4Tiles make_int4_tiles(const std::vector<const IntWeight*>& parts) {
  if (const std::string why = int4_tiles_unsupported(parts); !why.empty()) throw std::invalid_argument(why);
  const IntWeight& first = *parts[0];
  Int4Tiles t;
  for (const IntWeight* p : parts) t.rows += p->rows;
  t.cols = first.cols, t.group_size = first.group_size, t.groups = first.groups;
  const std::vector<int32_t> order = sorted_inputs(first);
  const bool in_order = first.g_idx.empty();
  if (!in_order) t.perm = order;
  const int64_t N = t.rows, K = t.cols, steps = K / Int4Tiles::kColStep;
  std::vector<const uint8_t*> row(static_cast<size_t>(N));  // each stacked row's values
  int64_t n = 0;
  for (const IntWeight* p : parts)
    for (int64_t r = 0; r < p->rows; ++r) row[static_cast<size_t>(n++)] = p->q.data() + r * K;
  t.words.resize(static_cast<size_t>(N * K / 8));
  TileSlot slots[32][8];
  for (int32_t lane = 0; lane < 32; ++lane)
    for (int32_t j = 0; j < 8; ++j) slots[lane][j] = tile_slot(lane, j);
  // A model has billions of values: the n-tiles are split over the host's cores. Each 16 × 64
  // block is gathered once (in packed input order), then its 128 words are read from it.
#pragma omp parallel for schedule(static) if (N / 16 >= 128)
  for (int64_t nt = 0; nt < N / 16; ++nt) {
    uint8_t block[16][64];
    for (int64_t s = 0; s < steps; ++s) {
      for (int32_t r = 0; r < 16; ++r) {
        const uint8_t* src = row[static_cast<size_t>(nt * 16 + r)];
        if (in_order) std::memcpy(block[r], src + s * 64, 64);
        else
          for (int32_t c = 0; c < 64; ++c) block[r][c] = src[order[static_cast<size_t>(s * 64 + c)]];
      }
      uint32_t* out = t.words.data() + static_cast<size_t>((nt * steps + s) * 32) * 4;
      for (int32_t lane = 0; lane < 32; ++lane)
        for (int32_t tile = 0; tile < 4; ++tile) {
          uint32_t word = 0;
          for (int32_t j = 0; j < 8; ++j)
            word |= (block[slots[lane][j].row][tile * 16 + slots[lane][j].col] & 0xFu) << (4 * j);
          out[lane * 4 + tile] = word;
        }
    }
  }
  // Packed group g holds the inputs of original group g (sorted order keeps groups in order);
  // each part's outputs follow the previous part's in every group.
  t.scales.resize(static_cast<size_t>(t.groups * N));
  t.zeros.resize(static_cast<size_t>(t.groups * N));
  for (int64_t g = 0; g < t.groups; ++g) {
    int64_t at = g * N;
    for (const IntWeight* p : parts)
      for (int64_t r = 0; r < p->rows; ++r, ++at) {
        const size_t i = static_cast<size_t>(g * p->rows + r);
        t.scales[static_cast<size_t>(at)] = p->scale[i];
        const uint32_t z = bf16_integer(128 + p->zero[i]);
        t.zeros[static_cast<size_t>(at)] = z | z << 16;
      }
  }
  return t;
}

Int4Tiles make_int4_tiles(const IntWeight& w) { return make_int4_tiles(std::vector{&w}); }

TileValue tile_value(const Int4Tiles& t, int64_t n, int64_t k) {
  int64_t kp = k;
  if (!t.perm.empty()) kp = std::find(t.perm.begin(), t.perm.end(), static_cast<int32_t>(k)) - t.perm.begin();
  const int64_t steps = t.cols / Int4Tiles::kColStep, nt = n / 16, s = kp / 64, tile = (kp % 64) / 16;
  for (int32_t lane = 0; lane < 32; ++lane)
    for (int32_t j = 0; j < 8; ++j) {
      const TileSlot slot = tile_slot(lane, j);
      if (slot.row != n % 16 || slot.col != kp % 16) continue;
      const uint32_t word = t.words[static_cast<size_t>(((nt * steps + s) * 32 + lane) * 4 + tile)];
      const int32_t q = static_cast<int32_t>((word >> (4 * j)) & 0xFu);
      const int64_t g = kp / t.group_size;
      const uint32_t zbits = t.zeros[static_cast<size_t>(g * t.rows + n)] & 0xFFFFu;
      uint32_t fbits = zbits << 16;
      float zf;
      std::memcpy(&zf, &fbits, sizeof zf);
      return TileValue{q - (static_cast<int32_t>(zf) - 128), t.scales[static_cast<size_t>(g * t.rows + n)]};
    }
  throw std::logic_error("tile_value: no lane holds the element");
}

}  // namespace zinfer::gpu::quant
