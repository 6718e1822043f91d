#include "gpu/cpu/cpu_weights.h"

#include <optional>
#include <stdexcept>

#include "gpu/tensor_slice.h"

namespace zinfer::gpu::cpu {

namespace {
quant::CheckpointReader& open(const std::unique_ptr<quant::CheckpointReader>& reader) {
  if (reader == nullptr) throw std::logic_error("a weight was declared after the CPU weight store finished loading");
  return *reader;
}
}  // namespace

// The parts as one FP8 layer when the checkpoint's are fp8 (or online FP8 quantizes them), each
// part sliced to this rank's rows and columns; nullopt when all are dense. A fused layer with fp8
// and dense parts is refused naming a dense one.
std::optional<quant::Fp8Weight> CpuWeightStore::fp8_linear(const std::vector<models::TensorPart>& parts) {
  quant::Fp8Weight out;
  std::string dense;
  for (const models::TensorPart& p : parts) {
    std::optional<quant::Fp8Weight> whole = open(reader_).get_fp8(p.name, p.shape);
    if (!whole) {
      dense = p.name;
      continue;
    }
    const std::vector<int64_t> s = models::sliced_shape(p);
    const int64_t cols = p.shape.size() == 2 ? p.shape[1] : 1;
    out.append(whole->slice(p.rows.begin, s[0], p.cols.all() ? 0 : p.cols.begin, s.size() == 2 ? s[1] : cols, p.name),
               p.name);
  }
  if (out.rows == 0) return std::nullopt;
  if (!dense.empty())
    throw SafetensorsError("tensor " + dense + " is stored dense in a layer fused with fp8 parts; a fused layer is "
                           "quantized whole (list every part, or none, in ignored_layers)");
  return out;
}

void CpuWeightStore::finish_loading() {
  open(reader_).finish();
  reader_.reset();
}

models::Linear CpuWeightStore::linear(const std::vector<models::TensorPart>& parts) {
  Matrix m;
  if (std::optional<quant::Fp8Weight> f = fp8_linear(parts)) {
    m.set_fp8(std::move(*f));
    matrices_.push_back(std::move(m));
    return models::Linear{static_cast<int32_t>(matrices_.size() - 1)};
  }
  for (const models::TensorPart& p : parts) {
    const quant::ResolvedTensor whole = open(reader_).get(p.name, p.shape);
    m.append(TensorSlice(whole.view(), p).view());
  }
  matrices_.push_back(std::move(m));
  return models::Linear{static_cast<int32_t>(matrices_.size() - 1)};
}

models::Vector CpuWeightStore::vector(const std::vector<models::TensorPart>& parts) {
  std::vector<float> out;
  for (const models::TensorPart& p : parts) {
    const quant::ResolvedTensor whole = open(reader_).get(p.name, p.shape);
    const TensorSlice slice(whole.view(), p);
    const TensorView& t = slice.view();
    const size_t old = out.size();
    out.resize(old + static_cast<size_t>(t.numel()));
    to_float32(t, out.data() + old);
  }
  vectors_.push_back(std::move(out));
  return models::Vector{static_cast<int32_t>(vectors_.size() - 1)};
}

}  // namespace zinfer::gpu::cpu
