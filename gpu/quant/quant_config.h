// The quantization_config of a Hugging Face config.json: which quantized format the checkpoint's
// linear layers are stored in. Read as the formats' own projects write it (AutoGPTQ / GPTQModel
// for "gptq", AutoAWQ for "awq"). Every setting the loaders cannot honour is a ModelConfigError
// naming the field and the file; keys that only record how the checkpoint was calibrated (damping,
// dataset, ...) do not change the stored tensors and are accepted, any other key is refused.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/quant/fp8.h"

namespace zinfer::gpu::quant {

enum class Method { kNone, kGptq, kAwq, kFp8 };

struct QuantConfig {
  Method method = Method::kNone;
  int32_t bits = 16;
  int32_t group_size = -1;   // -1: one group over the whole input dimension
  bool desc_act = false;     // GPTQ act-order: g_idx maps each input row to its group
  bool sym = true;           // GPTQ: symmetric (zero point 2^(bits-1))
  bool zeros_offset = true;  // GPTQ v1 ("gptq") stores zero - 1; gptq_v2 stores the zero itself
  bool lm_head = false;      // GPTQ: lm_head is quantized too
  std::vector<std::string> modules_to_not_convert;  // AWQ, fp8: modules (substrings) kept unquantized
  // fp8 (gpu/quant/fp8.h): the activation scheme, the weight_block_size [n, k] of a block-wise
  // checkpoint (0: per-tensor or per-channel weight_scale), ignored_layers (module names kept
  // dense), and whether the checkpoint is dense and quantized at load (online FP8).
  ActivationScheme activation_scheme = ActivationScheme::kDynamic;
  int64_t block_n = 0, block_k = 0;
  std::vector<std::string> ignored_layers;
  bool online = false;
  std::string origin;        // the config file, for error messages

  bool quantized() const { return method != Method::kNone; }
  // Values packed into one int32 of qweight / qzeros.
  int32_t pack() const { return 32 / bits; }
};

const char* method_name(Method m);

// Online FP8 (fp8_online.h): the config a bf16 checkpoint is quantized to at load.
QuantConfig online_fp8_config(const std::string& origin);

// Parses the JSON text of config.json's "quantization_config" object. `origin` names the file.
QuantConfig parse_quant_config(const std::string& quantization_config_json, const std::string& origin);

}  // namespace zinfer::gpu::quant
