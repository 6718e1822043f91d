// The [model] quantization setting (`zinfer serve --quantization`), applied to the checkpoint's
// own quantization_config before a backend loads it:
//   auto  what config.json says (dense when it has no quantization_config)
//   fp8   online FP8: a dense (float32 / bf16 / fp16) checkpoint's linear layers, all but the
//         embeddings and the LM head, are quantized at load to e4m3 with one scale per output
//         channel (amax / 448) and run W8A8 with dynamic per-token activation scales
//         (gpu/quant/fp8.h); an "fp8" checkpoint, or a compressed-tensors one whose every config
//         group is FP8 W8A8, stays as it is; a checkpoint quantized otherwise is an error naming
//         its method
//   none  the checkpoint must be dense: a quantized one is an error naming its method (zinfer
//         does not dequantize a checkpoint on request)
#pragma once

#include <string>

#include "gpu/backend.h"
#include "gpu/quant/quant_config.h"

namespace zinfer::gpu {

// `config` (load_model_config(options.model_dir)) with options.quantization applied: what each
// backend loads.
ModelConfig with_quantization(ModelConfig config, const BackendOptions& options);

}  // namespace zinfer::gpu

namespace zinfer::gpu::quant {

// The settings' legal values, in the order the setting lists them.
inline const char* const kQuantizationSettings[] = {"auto", "fp8", "none"};

// `checkpoint` is config.json's (origin names the file). Throws ModelConfigError.
QuantConfig apply_quantization_setting(const QuantConfig& checkpoint, const std::string& setting,
                                       const std::string& origin);

}  // namespace zinfer::gpu::quant
