// The quantization_config of a Hugging Face config.json: which quantized format the checkpoint's
// linear layers are stored in. Read as the formats' own projects write it (AutoGPTQ / GPTQModel
// for "gptq", AutoAWQ for "awq", the compressed-tensors library and vLLM's loader of it for
// "compressed-tensors"). Every setting the loaders cannot honour is a ModelConfigError
// naming the field and the file; keys that only record how the checkpoint was calibrated (damping,
// dataset, ...) do not change the stored tensors and are accepted, any other key is refused.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/quant/fp8.h"

namespace zinfer::gpu::quant {

enum class Method { kNone, kGptq, kAwq, kCompressedTensors, kFp8 };

// compressed-tensors: one entry of config_groups, the scheme of the modules it targets: weight-only
// integer "pack-quantized", or FP8 W8A8 "float-quantized" (ct_fp8.h); everything else is refused
// when parsed.
struct CtGroup {
  std::string name;                  // its key in config_groups
  std::vector<std::string> targets;  // "Linear" (every linear layer), "re:<regex>", or a module name
  int32_t bits = 4;
  int32_t group_size = -1;           // strategy "group": its size; "channel" and "tensor": -1
  bool per_tensor = false;           // strategy "tensor": one scale (and zero) for the whole layer
  bool sym = true;
  bool act_order = false;            // actorder "group": weight_g_idx maps each input to its group
  // FP8 W8A8 (weights type "float", 8 bits): e4m3 `weight` with `weight_scale` per tensor, per
  // channel or per block of block_n x block_k (strategy "block"), activations quantized per token
  // (dynamic; per token and block_k inputs for a block layer) or by the static `input_scale`.
  bool fp8 = false;
  ActivationScheme activation = ActivationScheme::kDynamic;
  int64_t block_n = 0, block_k = 0;
};

struct QuantConfig {
  Method method = Method::kNone;
  int32_t bits = 16;
  int32_t group_size = -1;   // -1: one group over the whole input dimension
  bool desc_act = false;     // act-order (GPTQ desc_act, compressed-tensors actorder "group"): g_idx maps inputs to groups
  bool sym = true;           // symmetric: every zero point is 2^(bits-1) in the unsigned form
  bool zeros_offset = true;  // GPTQ v1 ("gptq") stores zero - 1; gptq_v2 stores the zero itself
  bool lm_head = false;      // GPTQ: lm_head is quantized too
  std::vector<std::string> modules_to_not_convert;  // AWQ, fp8: modules (substrings) kept unquantized
  bool per_tensor = false;   // compressed-tensors strategy "tensor" (a layer's config, see layer_config)
  std::vector<CtGroup> groups;       // compressed-tensors config_groups
  std::vector<std::string> ignore;   // compressed-tensors: modules (names or "re:" regexes) kept dense
  // fp8 (gpu/quant/fp8.h): the activation scheme, the weight_block_size [n, k] of a block-wise
  // checkpoint (0: per-tensor or per-channel weight_scale), ignored_layers (module names kept
  // dense), and whether the checkpoint is dense and quantized at load (online FP8).
  ActivationScheme activation_scheme = ActivationScheme::kDynamic;
  int64_t block_n = 0, block_k = 0;
  std::vector<std::string> ignored_layers;
  bool online = false;
  // compressed-tensors and fp8: the checkpoint has a kv_cache_scheme (kv_cache_scheme.h), an FP8
  // KV cache with per-layer k/v scales; [cache] kv_cache_dtype decides whether they are used.
  bool kv_cache_scheme = false;
  std::string origin;        // the config file, for error messages

  bool quantized() const { return method != Method::kNone; }
  // Values packed into one int32 of qweight / qzeros.
  int32_t pack() const { return 32 / bits; }
};

const char* method_name(Method m);

// compressed-tensors: whether `module` (e.g. "model.layers.0.mlp.down_proj") is listed in ignore,
// and the group whose targets name it: an exact module name before a "re:" regex before the class
// "Linear" (as vLLM picks; `linear` says whether the module is a linear layer). Null when none
// does; two groups at the same rank throw ModelConfigError naming both.
bool ct_ignored(const QuantConfig& c, const std::string& module);
const CtGroup* ct_group_of(const QuantConfig& c, const std::string& module, bool linear);
// The config one layer of `group` is unpacked with: c with the group's bits, group_size, sym,
// act-order (desc_act) and per_tensor.
QuantConfig layer_config(const QuantConfig& c, const CtGroup& group);
// Online FP8 (fp8_online.h): the config a bf16 checkpoint is quantized to at load.
QuantConfig online_fp8_config(const std::string& origin);

// Parses the JSON text of config.json's "quantization_config" object. `origin` names the file.
QuantConfig parse_quant_config(const std::string& quantization_config_json, const std::string& origin);

}  // namespace zinfer::gpu::quant
