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

std::optional<IntWeight> stack_rows(const std::vector<IntWeight>& parts, std::string& why) {
  if (parts.empty()) {
    why = "no parts";
    return std::nullopt;
  }
  if (parts.size() == 1) return parts[0];
  const IntWeight& first = parts[0];
  for (const IntWeight& p : parts)
    if (p.bits != first.bits || p.cols != first.cols || p.group_size != first.group_size || p.groups != first.groups ||
        p.g_idx != first.g_idx) {
      why = "fused parts quantized differently (bits, groups or act-order order)";
      return std::nullopt;
    }
  IntWeight out;
  out.cols = first.cols, out.bits = first.bits, out.group_size = first.group_size, out.groups = first.groups;
  out.g_idx = first.g_idx;
  for (const IntWeight& p : parts) out.rows += p.rows;
  out.q.reserve(static_cast<size_t>(out.rows * out.cols));
  for (const IntWeight& p : parts) out.q.insert(out.q.end(), p.q.begin(), p.q.end());
  for (int64_t g = 0; g < out.groups; ++g)
    for (const IntWeight& p : parts) {
      const auto at = static_cast<size_t>(g * p.rows), len = static_cast<size_t>(p.rows);
      out.zero.insert(out.zero.end(), p.zero.begin() + at, p.zero.begin() + at + len);
      out.scale.insert(out.scale.end(), p.scale.begin() + at, p.scale.begin() + at + len);
    }
  return out;
}

TileSlot tile_slot(int32_t lane, int32_t nibble) {
  const int32_t r = lane / 4, c = 2 * (lane % 4);
  const int32_t reg = nibble % 4, half = nibble / 4;  // fragment register, and its low/high half
  return TileSlot{r + 8 * (reg % 2), c + 8 * (reg / 2) + half};
}

std::string int4_tiles_unsupported(const IntWeight& w) {
  if (w.bits != 4) return std::to_string(w.bits) + "-bit weights (the int4 kernel takes 4)";
  if (w.rows % Int4Tiles::kRowTile != 0) return std::to_string(w.rows) + " outputs, not a multiple of 16";
  if (w.cols % Int4Tiles::kColStep != 0) return std::to_string(w.cols) + " inputs, not a multiple of 64";
  if (w.group_size % 64 != 0) return "group size " + std::to_string(w.group_size) + ", not a multiple of 64";
  for (int32_t z : w.zero)
    if (z < -128 || z > 127) return "zero point " + std::to_string(z) + " outside [-128, 127]";
  if (!w.g_idx.empty()) {
    std::vector<int64_t> sizes(static_cast<size_t>(w.groups), 0);
    for (int32_t g : w.g_idx) ++sizes[static_cast<size_t>(g)];
    for (int64_t s : sizes)
      if (s != w.group_size) return "act-order groups of unequal size (" + std::to_string(s) + ")";
  }
  return "";
}

Int4Tiles make_int4_tiles(const IntWeight& w) {
  if (const std::string why = int4_tiles_unsupported(w); !why.empty()) throw std::invalid_argument(why);
  Int4Tiles t;
  t.rows = w.rows, t.cols = w.cols, t.group_size = w.group_size, t.groups = w.groups;
  const std::vector<int32_t> order = sorted_inputs(w);
  if (!w.g_idx.empty()) t.perm = order;
  const int64_t N = w.rows, K = w.cols, steps = K / Int4Tiles::kColStep;
  t.words.assign(static_cast<size_t>(N * K / 8), 0);
  TileSlot slots[32][8];
  for (int32_t lane = 0; lane < 32; ++lane)
    for (int32_t j = 0; j < 8; ++j) slots[lane][j] = tile_slot(lane, j);
  // A model has billions of values: the n-tiles are split over the host's cores.
#pragma omp parallel for schedule(static) if (N / 16 >= 128)
  for (int64_t nt = 0; nt < N / 16; ++nt)
    for (int64_t s = 0; s < steps; ++s)
      for (int32_t lane = 0; lane < 32; ++lane)
        for (int32_t tile = 0; tile < 4; ++tile) {
          uint32_t word = 0;
          for (int32_t j = 0; j < 8; ++j) {
            const int64_t n = nt * 16 + slots[lane][j].row, kp = s * 64 + tile * 16 + slots[lane][j].col;
            const uint32_t q = w.q[static_cast<size_t>(n * K + order[static_cast<size_t>(kp)])];
            word |= (q & 0xFu) << (4 * j);
          }
          t.words[static_cast<size_t>(((nt * steps + s) * 32 + lane) * 4 + tile)] = word;
        }
  // Packed group g holds the inputs of original group g (sorted order keeps groups in order).
  t.scales.resize(static_cast<size_t>(w.groups * N));
  t.zeros.resize(static_cast<size_t>(w.groups * N));
  for (int64_t g = 0; g < w.groups; ++g)
    for (int64_t n = 0; n < N; ++n) {
      const size_t i = static_cast<size_t>(g * N + n);
      t.scales[i] = w.scale[i];
      const uint32_t z = bf16_integer(128 + w.zero[i]);
      t.zeros[i] = z | z << 16;
    }
  return t;
}

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
