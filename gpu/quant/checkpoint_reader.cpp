#include "gpu/quant/checkpoint_reader.h"

#include <cstring>

#include "gpu/quant/ct_fp8.h"
#include "gpu/quant/dequantize.h"
#include "gpu/quant/fp8_checkpoint.h"

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
      throw SafetensorsError("tensor " + prefix + (group->fp8 ? "weight" : layout.packed) +
                             " is missing: quantization_config.config_groups." + group->name + " targets " + module +
                             " (" + config_.origin + ")");
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
    if (group->fp8)
      refuse("pack-quantized, but quantization_config.config_groups." + group->name + ", which targets " + module +
             ", is FP8 (float-quantized: an e4m3 weight) (" + config_.origin + ")");
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

std::optional<Fp8Weight> CheckpointReader::get_fp8(const std::string& name, const std::vector<int64_t>& shape) {
  read_.insert(name);
  if (!ends_with(name, ".weight") || !checkpoint_.has(name)) return std::nullopt;
  const std::string prefix = name.substr(0, name.size() - 6);  // keeps the dot
  const std::string module = prefix.substr(0, prefix.size() - 1);
  const TensorView& w = checkpoint_.get(name);
  const bool stored_fp8 = w.dtype == DType::kF8E4M3 || w.dtype == DType::kF8E5M2;
  auto refuse = [&](const std::string& why) { throw SafetensorsError("tensor " + name + " in " + w.file + ": " + why); };
  if (config_.method == Method::kCompressedTensors) return get_ct_fp8(name, shape);
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
    if (w.dtype != DType::kF32 && w.dtype != DType::kBF16 && w.dtype != DType::kF16)
      refuse(std::string("dtype ") + dtype_name(w.dtype) + " cannot be quantized to fp8 (F32, BF16, F16)");
    fp8_prefixes_.insert(prefix);
    return quantize_per_channel(w);
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

// compressed-tensors: the config groups say which linear layers are FP8 (targets less ignore, as
// get_int reads them); the checkpoint must agree.
std::optional<Fp8Weight> CheckpointReader::get_ct_fp8(const std::string& name, const std::vector<int64_t>& shape) {
  const std::string prefix = name.substr(0, name.size() - 6);  // keeps the dot
  const std::string module = prefix.substr(0, prefix.size() - 1);
  const TensorView& w = checkpoint_.get(name);
  const bool stored_fp8 = w.dtype == DType::kF8E4M3 || w.dtype == DType::kF8E5M2;
  auto refuse = [&](const std::string& why) { throw SafetensorsError("tensor " + name + " in " + w.file + ": " + why); };
  const bool linear = shape.size() == 2 && !ends_with(module, "embed_tokens");
  const bool ignored = ct_ignored(config_, module);
  const CtGroup* group = linear && !ignored ? ct_group_of(config_, module, linear) : nullptr;
  const std::string where = " (" + config_.origin + ")";
  if (!stored_fp8) {
    if (group != nullptr && group->fp8)
      refuse(std::string("stored in ") + dtype_name(w.dtype) + ", but quantization_config.config_groups." + group->name +
             " (FP8) targets " + module + " and ignore does not list it" + where);
    return std::nullopt;  // dense, or an integer group's layer (get_int refuses a dense one)
  }
  if (ignored) refuse("stored in fp8 although quantization_config.ignore lists " + module + where);
  if (!linear) refuse("stored in fp8, but " + module + " is not a linear layer");
  if (group == nullptr) refuse("stored in fp8, but no quantization_config.config_groups target names " + module + where);
  if (!group->fp8)
    refuse("stored in fp8, but quantization_config.config_groups." + group->name + ", which targets " + module +
           ", is pack-quantized (integer)" + where);
  if (is_vocabulary_layer(module))
    refuse("stored in fp8; embeddings and the LM head are kept dense (list lm_head in quantization_config.ignore)");
  Fp8Weight f = read_ct_fp8_layer(checkpoint_, *group, prefix, shape, config_.origin);
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
    for (const Layout* l : {&kGptqLayout, &kCtLayout}) {
      const std::string tail = std::string(".") + l->packed;
      if (ends_with(name, tail) && !quantized_prefixes_.count(name.substr(0, name.size() - tail.size() + 1)))
        throw SafetensorsError("tensor " + name + " in " + checkpoint_.get(name).file +
                               " is a quantized layer this architecture does not read");
    }
  // An fp8 layer no definition read, then a scale of no layer read (the layer is named first; a
  // compressed-tensors integer layer's weight_scale is its own).
  for (const bool weights : {true, false}) {
    for (const std::string& name : checkpoint_.names()) {
      const auto dot = name.rfind('.');
      const std::string prefix = name.substr(0, dot + 1), role = name.substr(dot + 1);
      bool scale = false;
      for (const char* r : kFp8ScaleRoles) scale |= role == r;
      for (const char* r : kCtFp8ZeroRoles) scale |= role == r;
      const DType dtype = checkpoint_.get(name).dtype;
      const bool fp8_weight = role == "weight" && (dtype == DType::kF8E4M3 || dtype == DType::kF8E5M2);
      if ((weights ? fp8_weight : scale) && !fp8_prefixes_.count(prefix) && !quantized_prefixes_.count(prefix))
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
