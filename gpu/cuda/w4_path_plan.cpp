#include "gpu/cuda/w4_path_plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>

#include "gpu/cuda/w4_gemm.h"

namespace zinfer::gpu::cuda {
namespace {

// The fastest way that can run `rows` rows (ties: the earlier way); the kernel of few rows stops
// at kW4GemmMaxRows, whatever its time at a smaller bucket.
W4Path fastest(const W4PathPlan::Timing& t, int64_t rows) {
  const auto from = t.begin() + (rows > kW4GemmMaxRows ? static_cast<int>(W4Path::kWide128) : 0);
  return static_cast<W4Path>(std::min_element(from, t.end()) - t.begin());
}

const char* name(W4Path p) {
  switch (p) {
    case W4Path::kFewRows: return "few-rows";
    case W4Path::kWide128: return "wide128";
    case W4Path::kWide256: return "wide256";
    case W4Path::kDequantized: return "dequantized";
  }
  return "?";
}

}  // namespace

void W4PathPlan::record(const Shape& shape, int64_t rows, const Timing& seconds) { timings_[shape][rows] = seconds; }

W4Path W4PathPlan::path(const Shape& shape, int64_t rows) const {
  const auto it = timings_.find(shape);
  if (it == timings_.end() || it->second.empty())
    return rows <= kW4GemmMaxRows ? W4Path::kFewRows : W4Path::kWide128;
  auto bucket = it->second.lower_bound(rows);
  if (bucket == it->second.end()) bucket = std::prev(it->second.end());
  return fastest(bucket->second, rows);
}

std::string W4PathPlan::describe() const {
  std::string out;
  for (const auto& [shape, buckets] : timings_) {
    char line[160];
    std::snprintf(line, sizeof(line), "int4 %lldx%lld%s, rows (us: few-rows/wide128/wide256/dequantized):",
                  static_cast<long long>(shape.n), static_cast<long long>(shape.k),
                  shape.residual ? " (into the residual)" : "");
    out += line;
    for (const auto& [rows, t] : buckets) {
      std::snprintf(line, sizeof(line), " %lld %s (", static_cast<long long>(rows), name(fastest(t, rows)));
      out += line;
      for (size_t i = 0; i < t.size(); ++i) {
        if (std::isinf(t[i])) std::snprintf(line, sizeof(line), "%s-", i ? "/" : "");
        else std::snprintf(line, sizeof(line), "%s%.0f", i ? "/" : "", t[i] * 1e6);
        out += line;
      }
      std::snprintf(line, sizeof(line), ")");
      out += line;
    }
    out += "\n";
  }
  return out;
}

}  // namespace zinfer::gpu::cuda
