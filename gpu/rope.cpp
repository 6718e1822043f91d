#include "gpu/rope.h"

#include <cmath>
#include <numbers>

namespace zinfer::gpu {

std::vector<float> rope_inv_freq(const ModelConfig& config) {
  const int half = config.head_dim / 2;
  std::vector<float> inv_freq(half);
  const RopeScaling& s = config.rope_scaling;
  for (int i = 0; i < half; ++i) {
    // transformers computes these in float32; rounding to float at the end keeps us within an ulp.
    double f = 1.0 / std::pow(config.rope_theta, (2.0 * i) / config.head_dim);
    if (s.type == "linear") {
      f /= s.factor;
    } else if (s.type == "llama3") {
      const double old_len = static_cast<double>(s.original_max_position_embeddings);
      const double low_freq_wavelen = old_len / s.low_freq_factor;
      const double high_freq_wavelen = old_len / s.high_freq_factor;
      const double wavelen = 2.0 * std::numbers::pi / f;
      if (wavelen > low_freq_wavelen) {
        f /= s.factor;
      } else if (wavelen >= high_freq_wavelen) {
        const double smooth = (old_len / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
        f = (1.0 - smooth) * f / s.factor + smooth * f;
      }
    }
    inv_freq[i] = static_cast<float>(f);
  }
  return inv_freq;
}

}  // namespace zinfer::gpu
