#include "gpu/quant/checkpoint_reader.h"

#include <cstring>

#include "gpu/quant/dequantize.h"
#include "gpu/quant/fp8_checkpoint.h"

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

// Embeddings and the LM head: never an fp8 layer.
bool is_vocabulary_layer(const std::string& module) {
  return module == "lm_head" || ends_with(module, "embed_tokens");
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

std::optional<Fp8Weight> CheckpointReader::get_fp8(const std::string& name, const std::vector<int64_t>& shape) {
  read_.insert(name);
  if (!ends_with(name, ".weight") || !checkpoint_.has(name)) return std::nullopt;
  const std::string prefix = name.substr(0, name.size() - 6);  // keeps the dot
  const std::string module = prefix.substr(0, prefix.size() - 1);
  const TensorView& w = checkpoint_.get(name);
  const bool stored_fp8 = w.dtype == DType::kF8E4M3 || w.dtype == DType::kF8E5M2;
  auto refuse = [&](const std::string& why) { throw SafetensorsError("tensor " + name + " in " + w.file + ": " + why); };
  if (config_.method != Method::kFp8 || (config_.online && !stored_fp8)) {
    if (stored_fp8)
      refuse(std::string("stored in ") + dtype_name(w.dtype) + ", but " +
             (config_.online ? "online fp8 quantizes dense checkpoints"
                             : config_.origin.empty() || !config_.quantized()
                                   ? std::string("config.json has no quantization_config saying how")
                                   : "quantization_config.quant_method is " + std::string(method_name(config_.method))) +
             " (an fp8 checkpoint has quant_method fp8)");
    if (!config_.online || is_vocabulary_layer(module)) return std::nullopt;
    if (w.shape != shape) checkpoint_.get(name, shape);  // throws naming the shapes
    std::vector<float> dense(static_cast<size_t>(w.numel()));
    if (w.dtype != DType::kF32 && w.dtype != DType::kBF16 && w.dtype != DType::kF16)
      refuse(std::string("dtype ") + dtype_name(w.dtype) + " cannot be quantized to fp8 (F32, BF16, F16)");
    to_float32(w, dense.data());
    fp8_prefixes_.insert(prefix);
    return quantize_per_channel(dense.data(), shape[0], shape[1]);
  }
  std::string listed;
  for (const std::string& m : config_.ignored_layers)
    if (module == m) listed = "ignored_layers lists '" + m + "'";
  for (const std::string& m : config_.modules_to_not_convert)
    if (module.find(m) != std::string::npos) listed = "modules_to_not_convert lists '" + m + "'";
  if (!stored_fp8) {
    if (listed.empty() && !is_vocabulary_layer(module))
      refuse(std::string("stored in ") + dtype_name(w.dtype) + " in an fp8 checkpoint, but neither ignored_layers nor " +
             "modules_to_not_convert of " + config_.origin + " keeps it dense");
    return std::nullopt;
  }
  if (!listed.empty()) refuse("stored in fp8 although quantization_config." + listed + " (" + config_.origin + ")");
  if (is_vocabulary_layer(module))
    refuse("stored in fp8; embeddings and the LM head are kept dense (list them in ignored_layers)");
  Fp8Weight f = read_fp8_layer(checkpoint_, config_, prefix, shape);
  fp8_prefixes_.insert(prefix);
  return f;
}

ResolvedTensor CheckpointReader::get(const std::string& name, const std::vector<int64_t>& shape) {
  const DType stored = checkpoint_.has(name) ? checkpoint_.get(name).dtype : DType::kF32;
  if (stored == DType::kF8E4M3 || stored == DType::kF8E5M2) {  // get_fp8 returns it or refuses it by name
    const std::optional<Fp8Weight> f = get_fp8(name, shape);
    TensorView view;
    view.name = name;
    view.dtype = DType::kF32;
    view.shape = shape;
    view.nbytes = static_cast<size_t>(f->rows * f->cols) * sizeof(float);
    view.file = checkpoint_.get(name).file;
    return ResolvedTensor(std::move(view), f->to_dense());
  }
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
  // An fp8 layer no definition read, then a scale of no fp8 layer read (the layer is named first).
  for (const bool weights : {true, false}) {
    for (const std::string& name : checkpoint_.names()) {
      const auto dot = name.rfind('.');
      const std::string prefix = name.substr(0, dot + 1), role = name.substr(dot + 1);
      bool scale = false;
      for (const char* r : kFp8ScaleRoles) scale |= role == r;
      const DType dtype = checkpoint_.get(name).dtype;
      const bool fp8_weight = role == "weight" && (dtype == DType::kF8E4M3 || dtype == DType::kF8E5M2);
      if ((weights ? fp8_weight : scale) && !fp8_prefixes_.count(prefix))
        throw SafetensorsError("tensor " + name + " in " + checkpoint_.get(name).file +
                               (fp8_weight ? " is an fp8 layer this architecture does not read"
                                           : " belongs to no fp8 layer this architecture reads"));
    }
  }
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
