// A float64 forward pass of the Llama family (Llama, Mistral window, Qwen2 bias, Qwen3 q/k norm) on the
// host, written straight from the transformers definitions, for checking the CUDA backend on tiny
// models. Slow on purpose: no caching, no batching.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "gpu/model_config.h"
#include "gpu/safetensors.h"

namespace zinfer::gpu::cuda::test {

class ReferenceModel {
 public:
  explicit ReferenceModel(const std::string& dir) : config_(load_model_config(dir)), ws_(dir) {}
  const ModelConfig& config() const { return config_; }

  // Logits [tokens.size(), vocab] for positions 0..n-1.
  std::vector<double> logits(const std::vector<int32_t>& tokens) const {
    const ModelConfig& c = config_;
    const int T = static_cast<int>(tokens.size()), H = c.hidden_size, D = c.head_dim;
    const int Hq = c.num_attention_heads, Hkv = c.num_key_value_heads, I = c.intermediate_size;
    std::vector<double> x(static_cast<size_t>(T) * H);
    const std::vector<double> embed = get("model.embed_tokens.weight");
    for (int t = 0; t < T; ++t)
      for (int i = 0; i < H; ++i) x[t * H + i] = embed[static_cast<size_t>(tokens[t]) * H + i];
    for (int l = 0; l < c.num_hidden_layers; ++l) {
      const std::string p = "model.layers." + std::to_string(l) + ".";
      std::vector<double> h = rmsnorm(x, get(p + "input_layernorm.weight"), T, H);
      std::vector<double> q = linear(h, get(p + "self_attn.q_proj.weight"), T, H, Hq * D);
      std::vector<double> k = linear(h, get(p + "self_attn.k_proj.weight"), T, H, Hkv * D);
      std::vector<double> v = linear(h, get(p + "self_attn.v_proj.weight"), T, H, Hkv * D);
      if (c.attention_bias) {
        add_bias(q, get(p + "self_attn.q_proj.bias"));
        add_bias(k, get(p + "self_attn.k_proj.bias"));
        add_bias(v, get(p + "self_attn.v_proj.bias"));
      }
      if (c.qk_norm) {
        q = rmsnorm(q, get(p + "self_attn.q_norm.weight"), T * Hq, D);
        k = rmsnorm(k, get(p + "self_attn.k_norm.weight"), T * Hkv, D);
      }
      rope(q, T, Hq);
      rope(k, T, Hkv);
      std::vector<double> attn(static_cast<size_t>(T) * Hq * D, 0.0);
      const double scale = 1.0 / std::sqrt(static_cast<double>(D));
      for (int t = 0; t < T; ++t) {
        for (int hh = 0; hh < Hq; ++hh) {
          const int kvh = hh / (Hq / Hkv);
          // Mistral's sliding window (transformers): keys j with t - window < j <= t.
          const int first = c.sliding_window > 0 ? std::max(0, t - c.sliding_window + 1) : 0;
          std::vector<double> s(t + 1, 0.0);
          double mx = -1e300, z = 0;
          for (int j = first; j <= t; ++j) {
            double dot = 0;
            for (int d = 0; d < D; ++d) dot += q[(t * Hq + hh) * D + d] * k[(j * Hkv + kvh) * D + d];
            s[j] = dot * scale;
            mx = std::max(mx, s[j]);
          }
          for (int j = first; j <= t; ++j) z += (s[j] = std::exp(s[j] - mx));
          for (int j = first; j <= t; ++j)
            for (int d = 0; d < D; ++d) attn[(t * Hq + hh) * D + d] += s[j] / z * v[(j * Hkv + kvh) * D + d];
        }
      }
      const std::vector<double> o = linear(attn, get(p + "self_attn.o_proj.weight"), T, Hq * D, H);
      for (size_t i = 0; i < x.size(); ++i) x[i] += o[i];
      h = rmsnorm(x, get(p + "post_attention_layernorm.weight"), T, H);
      const std::vector<double> g = linear(h, get(p + "mlp.gate_proj.weight"), T, H, I);
      const std::vector<double> u = linear(h, get(p + "mlp.up_proj.weight"), T, H, I);
      std::vector<double> a(g.size());
      for (size_t i = 0; i < a.size(); ++i) a[i] = g[i] / (1 + std::exp(-g[i])) * u[i];
      const std::vector<double> down = linear(a, get(p + "mlp.down_proj.weight"), T, I, H);
      for (size_t i = 0; i < x.size(); ++i) x[i] += down[i];
    }
    const std::vector<double> h = rmsnorm(x, get("model.norm.weight"), T, H);
    const std::string head = ws_.has("lm_head.weight") && !c.tie_word_embeddings ? "lm_head.weight" : "model.embed_tokens.weight";
    return linear(h, get(head), T, H, c.vocab_size);
  }

 private:
  std::vector<double> get(const std::string& name) const {
    const TensorView& t = ws_.get(name);
    std::vector<float> f(static_cast<size_t>(t.numel()));
    to_float32(t, f.data());
    return std::vector<double>(f.begin(), f.end());
  }
  static std::vector<double> linear(const std::vector<double>& x, const std::vector<double>& w, int rows, int in, int out) {
    std::vector<double> y(static_cast<size_t>(rows) * out);
    for (int r = 0; r < rows; ++r)
      for (int o = 0; o < out; ++o) {
        double s = 0;
        for (int i = 0; i < in; ++i) s += x[r * in + i] * w[static_cast<size_t>(o) * in + i];
        y[static_cast<size_t>(r) * out + o] = s;
      }
    return y;
  }
  static void add_bias(std::vector<double>& y, const std::vector<double>& b) {
    for (size_t i = 0; i < y.size(); ++i) y[i] += b[i % b.size()];
  }
  std::vector<double> rmsnorm(const std::vector<double>& x, const std::vector<double>& w, int rows, int n) const {
    std::vector<double> y(x.size());
    for (int r = 0; r < rows; ++r) {
      double ss = 0;
      for (int i = 0; i < n; ++i) ss += x[r * n + i] * x[r * n + i];
      const double inv = 1.0 / std::sqrt(ss / n + config_.rms_norm_eps);
      for (int i = 0; i < n; ++i) y[r * n + i] = x[r * n + i] * inv * w[i];
    }
    return y;
  }
  // Default (unscaled) rope; the tests' models use no rope scaling.
  void rope(std::vector<double>& x, int T, int heads) const {
    const int D = config_.head_dim;
    for (int t = 0; t < T; ++t)
      for (int h = 0; h < heads; ++h) {
        double* v = &x[(static_cast<size_t>(t) * heads + h) * D];
        for (int i = 0; i < D / 2; ++i) {
          const double a = t * std::pow(config_.rope_theta, -2.0 * i / D);
          const double x1 = v[i], x2 = v[i + D / 2];
          v[i] = x1 * std::cos(a) - x2 * std::sin(a);
          v[i + D / 2] = x2 * std::cos(a) + x1 * std::sin(a);
        }
      }
  }

  ModelConfig config_;
  WeightSet ws_;
};

}  // namespace zinfer::gpu::cuda::test
