#include "gpu/quant/checkpoint_reader.h"

#include <cstring>

#include "gpu/quant/dequantize.h"

namespace zinfer::gpu::quant {
namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Where a format keeps a quantized layer's tensors, beside `<prefix>.` (null: the format has none).
struct Layout {
  const char* packed;
  const char* zeros;
  const char* scales;
  const char* g_idx;
  const char* shape;
};
constexpr Layout kGptqLayout{"qweight", "qzeros", "scales", "g_idx", nullptr};  // AWQ's too
constexpr Layout kCtLayout{"weight_packed", "weight_zero_point", "weight_scale", "weight_g_idx", "weight_shape"};

const Layout& layout_of(Method m) { return m == Method::kCompressedTensors ? kCtLayout : kGptqLayout; }

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
  const std::string module = prefix.substr(0, prefix.size() - 1);
  if (!config_.quantized()) {
    // An older AutoGPTQ checkpoint keeps its settings in quantize_config.json, which is not read.
    for (const Layout* l : {&kGptqLayout, &kCtLayout})
      if (!checkpoint_.has(name) && checkpoint_.has(prefix + l->packed))
        throw SafetensorsError("tensor " + prefix + l->packed + " in " + checkpoint_.get(prefix + l->packed).file +
                               " is quantized, but config.json has no quantization_config saying how");
    return std::nullopt;
  }
  const Layout& layout = layout_of(config_.method);
  const bool quantized = checkpoint_.has(prefix + layout.packed);
  const bool ct = config_.method == Method::kCompressedTensors;
  // compressed-tensors: the config says which modules are quantized (config_groups' targets less
  // ignore, linear layers only, as vLLM applies them); the checkpoint must agree.
  const bool linear = shape.size() == 2 && !ends_with(module, "embed_tokens");
  const bool ignored = ct && ct_ignored(config_, module);
  const CtGroup* group = ct && linear && !ignored ? ct_group_of(config_, module, linear) : nullptr;
  if (!quantized) {
    if (config_.method == Method::kGptq && config_.lm_head && module == "lm_head")
      throw SafetensorsError("tensor lm_head.qweight is missing: quantization_config.lm_head is true in " +
                             config_.origin);
    if (group != nullptr && checkpoint_.has(name))
      throw SafetensorsError("tensor " + name + " in " + checkpoint_.get(name).file + " is stored dense, but " +
                             "quantization_config.config_groups." + group->name + " targets " + module +
                             " and ignore does not list it (" + config_.origin + ")");
    if (group != nullptr)
      throw SafetensorsError("tensor " + prefix + layout.packed + " is missing: quantization_config.config_groups." +
                             group->name + " targets " + module + " (" + config_.origin + ")");
    return std::nullopt;
  }
  const TensorView& packed = checkpoint_.get(prefix + layout.packed);
  auto refuse = [&](const std::string& why) {
    throw SafetensorsError("tensor " + packed.name + " in " + packed.file + ": " + why);
  };
  if (checkpoint_.has(name)) refuse("the checkpoint also holds " + name + "; a layer is either quantized or not");
  for (const std::string& kept : config_.modules_to_not_convert)
    if (module.find(kept) != std::string::npos)
      refuse("quantized although quantization_config.modules_to_not_convert lists '" + kept + "' (" +
             config_.origin + ")");
  if (config_.method == Method::kGptq && module == "lm_head" && !config_.lm_head)
    refuse("quantized although quantization_config.lm_head is false (" + config_.origin + ")");
  QuantConfig layer = config_;
  if (ct) {
    if (ignored) refuse("quantized although quantization_config.ignore lists " + module + " (" + config_.origin + ")");
    if (!linear) refuse("quantized, but " + module + " is not a linear layer");
    if (group == nullptr)
      refuse("quantized, but no quantization_config.config_groups target names " + module + " (" + config_.origin + ")");
    layer = layer_config(config_, *group);
  }

  // The tensors beside the packed one: those the layer cannot be read without must be there.
  QuantizedTensors t;
  t.qweight = &packed;
  auto find = [&](const char* role, bool required) -> const TensorView* {
    if (role == nullptr) return nullptr;
    if (checkpoint_.has(prefix + role)) return &checkpoint_.get(prefix + role);
    if (required) refuse("its " + prefix + role + " tensor is missing from the checkpoint");
    return nullptr;
  };
  t.scales = find(layout.scales, true);
  t.shape = find(layout.shape, true);
  t.qzeros = find(layout.zeros, !ct || !layer.sym);
  t.g_idx = find(layout.g_idx, false);
  IntWeight w = unpack(layer, t);
  if (std::vector<int64_t>{w.rows, w.cols} != shape)
    refuse("dequantizes to " + shape_string({w.rows, w.cols}) + ", expected " + name + " of " + shape_string(shape));
  quantized_prefixes_.insert(prefix);
  files_[prefix] = packed.file;
  return w;
}

bool CheckpointReader::stores_quantized(const std::string& name) const {
  if (!config_.quantized() || !ends_with(name, ".weight")) return false;
  return checkpoint_.has(name.substr(0, name.size() - 6) + layout_of(config_.method).packed);
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
    for (const Layout* l : {&kGptqLayout, &kCtLayout}) {
      const std::string tail = std::string(".") + l->packed;
      if (ends_with(name, tail) && !quantized_prefixes_.count(name.substr(0, name.size() - tail.size() + 1)))
        throw SafetensorsError("tensor " + name + " in " + checkpoint_.get(name).file +
                               " is a quantized layer this architecture does not read");
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
