#include "gpu/quant/checkpoint_reader.h"

#include <cstring>

#include "gpu/quant/dequantize.h"

namespace zinfer::gpu::quant {
namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string shape_string(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

}  // namespace

ResolvedTensor::ResolvedTensor(TensorView view, std::vector<float> storage)
    : view_(std::move(view)), storage_(std::move(storage)) {
  view_.data = reinterpret_cast<const std::byte*>(storage_.data());
}

std::optional<IntWeight> CheckpointReader::get_int(const std::string& name, const std::vector<int64_t>& shape) {
  read_.insert(name);
  if (!ends_with(name, ".weight")) return std::nullopt;
  const std::string prefix = name.substr(0, name.size() - 6);  // keeps the dot
  if (!config_.quantized()) {
    // An older AutoGPTQ checkpoint keeps its settings in quantize_config.json, which is not read.
    if (!checkpoint_.has(name) && checkpoint_.has(prefix + "qweight"))
      throw SafetensorsError("tensor " + prefix + "qweight in " + checkpoint_.get(prefix + "qweight").file +
                             " is quantized, but config.json has no quantization_config saying how");
    return std::nullopt;
  }
  const std::string module = prefix.substr(0, prefix.size() - 1);
  const bool quantized = checkpoint_.has(prefix + "qweight");
  if (!quantized) {
    if (config_.method == Method::kGptq && config_.lm_head && module == "lm_head")
      throw SafetensorsError("tensor lm_head.qweight is missing: quantization_config.lm_head is true in " +
                             config_.origin);
    return std::nullopt;
  }
  const TensorView& qweight = checkpoint_.get(prefix + "qweight");
  auto refuse = [&](const std::string& why) {
    throw SafetensorsError("tensor " + qweight.name + " in " + qweight.file + ": " + why);
  };
  if (checkpoint_.has(name)) refuse("the checkpoint also holds " + name + "; a layer is either quantized or not");
  for (const std::string& kept : config_.modules_to_not_convert)
    if (module.find(kept) != std::string::npos)
      refuse("quantized although quantization_config.modules_to_not_convert lists '" + kept + "' (" +
             config_.origin + ")");
  if (config_.method == Method::kGptq && module == "lm_head" && !config_.lm_head)
    refuse("quantized although quantization_config.lm_head is false (" + config_.origin + ")");

  QuantizedTensors t;
  t.qweight = &qweight;
  for (auto [role, slot] : {std::pair{"qzeros", &t.qzeros}, std::pair{"scales", &t.scales}}) {
    if (!checkpoint_.has(prefix + role)) refuse("its " + prefix + role + " tensor is missing from the checkpoint");
    *slot = &checkpoint_.get(prefix + role);
  }
  if (checkpoint_.has(prefix + "g_idx")) t.g_idx = &checkpoint_.get(prefix + "g_idx");
  IntWeight w = unpack(config_, t);
  if (std::vector<int64_t>{w.rows, w.cols} != shape)
    refuse("dequantizes to " + shape_string({w.rows, w.cols}) + ", expected " + name + " of " + shape_string(shape));
  quantized_prefixes_.insert(prefix);
  files_[prefix] = qweight.file;
  return w;
}

bool CheckpointReader::stores_quantized(const std::string& name) const {
  if (!config_.quantized() || !ends_with(name, ".weight")) return false;
  return checkpoint_.has(name.substr(0, name.size() - 6) + "qweight");
}

ResolvedTensor CheckpointReader::get(const std::string& name, const std::vector<int64_t>& shape) {
  std::optional<IntWeight> w = get_int(name, shape);
  if (!w) return ResolvedTensor(checkpoint_.get(name, shape));
  TensorView view;
  view.name = name;
  view.dtype = DType::kF32;
  view.shape = shape;
  view.nbytes = static_cast<size_t>(w->rows * w->cols) * sizeof(float);
  view.file = files_.at(name.substr(0, name.size() - 6));
  return ResolvedTensor(std::move(view), w->to_dense());
}

void CheckpointReader::finish() const {
  if (config_.method == Method::kGptq && config_.lm_head && !quantized_prefixes_.count("lm_head."))
    throw SafetensorsError("quantization_config.lm_head is true in " + config_.origin +
                           ", but the model read no quantized lm_head (tie_word_embeddings, or no lm_head.qweight)");
  for (const std::string& name : checkpoint_.names())  // a quantized layer no definition asked for
    if (ends_with(name, ".qweight") && !quantized_prefixes_.count(name.substr(0, name.size() - 7)))
      throw SafetensorsError("tensor " + name + " in " + checkpoint_.get(name).file +
                             " is a quantized layer this architecture does not read");
  for (const std::string& prefix : quantized_prefixes_) {
    const std::string bias = prefix + "bias";
    if (read_.count(bias) || !checkpoint_.has(bias)) continue;
    const TensorView& b = checkpoint_.get(bias);
    std::vector<float> values(static_cast<size_t>(b.numel()));
    if (b.dtype != DType::kF16 && b.dtype != DType::kBF16 && b.dtype != DType::kF32)
      throw SafetensorsError("tensor " + bias + " in " + b.file + ": dtype " + dtype_name(b.dtype) + " for a bias");
    to_float32(b, values.data());
    for (float v : values)
      if (v != 0.0f)
        throw SafetensorsError("tensor " + bias + " in " + b.file +
                               " is not zero, but this architecture has no bias on that layer");
  }
}

}  // namespace zinfer::gpu::quant
