#include "gpu/cpu/cpu_weights.h"

#include <optional>
#include <stdexcept>

#include "gpu/quant/fp8_parts.h"
#include "gpu/tensor_slice.h"

namespace zinfer::gpu::cpu {

namespace {
quant::CheckpointReader& open(const std::unique_ptr<quant::CheckpointReader>& reader) {
  if (reader == nullptr) throw std::logic_error("a weight was declared after the CPU weight store finished loading");
  return *reader;
}
}  // namespace

void CpuWeightStore::finish_loading() {
  open(reader_).finish();
  reader_.reset();
}

models::Linear CpuWeightStore::linear(const std::vector<models::TensorPart>& parts) {
  Matrix m;
  if (std::optional<quant::Fp8Weight> f = quant::read_fp8_linear(open(reader_), parts)) {
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
