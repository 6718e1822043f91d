// Rotary embedding frequencies, shared by the CPU and CUDA backends so both scale identically.
// Convention (Hugging Face's rotate_half): for i < head_dim/2, with angle a = pos * inv_freq[i],
//   out[i]              = x[i] * cos(a) - x[i + head_dim/2] * sin(a)
//   out[i + head_dim/2] = x[i + head_dim/2] * cos(a) + x[i] * sin(a)
#pragma once

#include <vector>

#include "gpu/model_config.h"

namespace zinfer::gpu {

// head_dim/2 inverse frequencies theta^(-2i/head_dim), scaled per config.rope_scaling:
// "linear" divides all by factor; "llama3" divides the low-frequency band (wavelength longer than
// original_max_position_embeddings / low_freq_factor) by factor, keeps the high-frequency band
// (wavelength shorter than original / high_freq_factor) and interpolates smoothly in between.
std::vector<float> rope_inv_freq(const ModelConfig& config);

}  // namespace zinfer::gpu
