#include "gpu/quant/fp8_online.h"

#include "gpu/model_config.h"

namespace zinfer::gpu::quant {

QuantConfig apply_quantization_setting(const QuantConfig& checkpoint, const std::string& setting,
                                       const std::string& origin) {
  if (setting == "auto") return checkpoint;
  if (setting == "none") {
    if (checkpoint.quantized())
      throw ModelConfigError("quantization 'none', but " + origin + " is quantized with quant_method '" +
                             method_name(checkpoint.method) + "' (use quantization auto)");
    return checkpoint;
  }
  if (setting == "fp8") {
    if (checkpoint.method == Method::kFp8) return checkpoint;
    // A compressed-tensors checkpoint whose every group is FP8 W8A8 is an FP8 checkpoint too.
    bool ct_fp8 = checkpoint.method == Method::kCompressedTensors;
    for (const CtGroup& g : checkpoint.groups) ct_fp8 = ct_fp8 && g.fp8;
    if (ct_fp8) return checkpoint;
    if (checkpoint.quantized())
      throw ModelConfigError("quantization 'fp8' (online FP8 of a dense checkpoint), but " + origin +
                             " is quantized with quant_method '" + method_name(checkpoint.method) +
                             "' (use quantization auto)");
    return online_fp8_config(origin);
  }
  throw ModelConfigError("quantization '" + setting + "' is not supported (auto, fp8, none)");
}

}  // namespace zinfer::gpu::quant

namespace zinfer::gpu {

ModelConfig with_quantization(ModelConfig config, const BackendOptions& options) {
  config.quantization =
      quant::apply_quantization_setting(config.quantization, options.quantization, options.model_dir + "/config.json");
  return config;
}

}  // namespace zinfer::gpu
