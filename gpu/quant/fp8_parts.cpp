#include "gpu/quant/fp8_parts.h"

#include <utility>

namespace zinfer::gpu::quant {

std::optional<Fp8Weight> read_fp8_linear(CheckpointReader& reader, const std::vector<models::TensorPart>& parts) {
  Fp8Weight out;
  std::string dense;
  for (const models::TensorPart& p : parts) {
    std::optional<Fp8Weight> stored = reader.get_fp8(p.name, p.shape);
    if (!stored) {
      dense = p.name;
      continue;
    }
    const std::vector<int64_t> s = models::sliced_shape(p);
    // A part taken whole (one GPU) moves rather than being copied.
    out.append(models::whole(p) ? std::move(*stored) : stored->slice(p.rows.begin, s[0], p.cols.begin, s[1], p.name),
               p.name);
  }
  if (out.rows == 0) return std::nullopt;
  if (!dense.empty())
    throw SafetensorsError("tensor " + dense + " is stored dense in a layer fused with fp8 parts; a fused layer is "
                           "quantized whole (list every part, or none, in ignored_layers)");
  return out;
}

}  // namespace zinfer::gpu::quant
