// An independent float64 forward pass of a Llama-family checkpoint over one contiguous sequence
// (no cache, no paging, no fused matrices): the yardstick for the CPU backend's model definition.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "gpu/model_config.h"
#include "gpu/rope.h"
#include "gpu/safetensors.h"

namespace zinfer::gpu::test {

class ReferenceForward {
 public:
  using Mat = std::vector<std::vector<double>>;
  ReferenceForward(const ModelConfig& c, const std::string& dir) : c_(c), w_(dir) {}

  // The decoder's linear layers (not the LM head): x [T, in] -> [T, out] for the checkpoint tensor
  // `weight`. Unset: x · Wᵀ in float64. A quantized scheme sets its own arithmetic (fp8_reference.h).
  std::function<Mat(const std::string& weight, const Mat& x)> linear;

  // What the KV cache gives back for element x of layer `layer`'s K (is_v false) or V (true), after
  // the rotary embedding. Unset: x itself (a float cache). An FP8 cache: e4m3(x / scale) · scale.
  std::function<double(int layer, bool is_v, double x)> kv_cache;

  // Logits [tokens.size(), vocab] for every position.
  std::vector<std::vector<double>> logits(const std::vector<int32_t>& tokens) {
    const int T = int(tokens.size()), D = c_.head_dim;
    const int nH = c_.num_attention_heads, nKV = c_.num_key_value_heads;
    Mat embed = mat("model.embed_tokens.weight");
    std::vector<std::vector<double>> x(T);
    for (int t = 0; t < T; ++t) x[t] = embed[tokens[t]];
    const std::vector<float> inv_freq = rope_inv_freq(c_);
    for (int l = 0; l < c_.num_hidden_layers; ++l) {
      const std::string p = "model.layers." + std::to_string(l) + ".";
      auto h = norm_rows(x, vec(p + "input_layernorm.weight"));
      auto q = lin(h, p + "self_attn.q_proj.weight");
      auto k = lin(h, p + "self_attn.k_proj.weight");
      auto v = lin(h, p + "self_attn.v_proj.weight");
      if (c_.attention_bias) {
        add_bias(q, vec(p + "self_attn.q_proj.bias"));
        add_bias(k, vec(p + "self_attn.k_proj.bias"));
        add_bias(v, vec(p + "self_attn.v_proj.bias"));
      }
      for (int t = 0; t < T; ++t) {
        if (c_.qk_norm) {
          norm_heads(q[t], nH, D, vec(p + "self_attn.q_norm.weight"));
          norm_heads(k[t], nKV, D, vec(p + "self_attn.k_norm.weight"));
        }
        rotate(q[t], nH, D, t, inv_freq);
        rotate(k[t], nKV, D, t, inv_freq);
        if (kv_cache) {
          for (double& e : k[t]) e = kv_cache(l, false, e);
          for (double& e : v[t]) e = kv_cache(l, true, e);
        }
      }
      std::vector<std::vector<double>> att(T, std::vector<double>(size_t(nH) * D, 0.0));
      for (int t = 0; t < T; ++t)
        for (int hd = 0; hd < nH; ++hd) {
          const int g = hd / (nH / nKV);
          const int lo = c_.sliding_window > 0 ? std::max(0, t - c_.sliding_window + 1) : 0;
          std::vector<double> s;
          double mx = -INFINITY, z = 0;
          for (int j = lo; j <= t; ++j) {
            double d = 0;
            for (int e = 0; e < D; ++e) d += q[t][hd * D + e] * k[j][g * D + e];
            s.push_back(d / std::sqrt(double(D)));
            mx = std::max(mx, s.back());
          }
          for (double& e : s) z += (e = std::exp(e - mx));
          for (int j = lo; j <= t; ++j)
            for (int e = 0; e < D; ++e) att[t][hd * D + e] += s[j - lo] / z * v[j][g * D + e];
        }
      auto o = lin(att, p + "self_attn.o_proj.weight");
      if (c_.o_proj_bias) add_bias(o, vec(p + "self_attn.o_proj.bias"));
      add_rows(x, o);
      h = norm_rows(x, vec(p + "post_attention_layernorm.weight"));
      auto gate = lin(h, p + "mlp.gate_proj.weight");
      auto up = lin(h, p + "mlp.up_proj.weight");
      for (int t = 0; t < T; ++t)
        for (size_t i = 0; i < gate[t].size(); ++i) gate[t][i] = gate[t][i] / (1 + std::exp(-gate[t][i])) * up[t][i];
      add_rows(x, lin(gate, p + "mlp.down_proj.weight"));
    }
    auto h = norm_rows(x, vec("model.norm.weight"));
    return matmul(h, c_.tie_word_embeddings ? embed : mat("lm_head.weight"));
  }

 private:
  Mat lin(const Mat& x, const std::string& weight) { return linear ? linear(weight, x) : matmul(x, mat(weight)); }

  std::vector<double> vec(const std::string& name) {
    const TensorView& t = w_.get(name);
    std::vector<float> f(size_t(t.numel()));
    to_float32(t, f.data());
    return std::vector<double>(f.begin(), f.end());
  }
  Mat mat(const std::string& name) {  // [out, in]
    const TensorView& t = w_.get(name);
    std::vector<double> flat = vec(name);
    const size_t rows = size_t(t.shape[0]), cols = size_t(t.shape[1]);
    Mat m(rows);
    for (size_t r = 0; r < rows; ++r) m[r].assign(flat.begin() + r * cols, flat.begin() + (r + 1) * cols);
    return m;
  }
  static Mat matmul(const Mat& x, const Mat& w) {  // x [T, in] · w[out, in]^T
    Mat y(x.size(), std::vector<double>(w.size()));
    for (size_t t = 0; t < x.size(); ++t)
      for (size_t o = 0; o < w.size(); ++o) {
        double s = 0;
        for (size_t i = 0; i < x[t].size(); ++i) s += x[t][i] * w[o][i];
        y[t][o] = s;
      }
    return y;
  }
  static void add_bias(Mat& y, const std::vector<double>& b) {
    for (auto& row : y)
      for (size_t i = 0; i < row.size(); ++i) row[i] += b[i];
  }
  static void add_rows(Mat& x, const Mat& y) {
    for (size_t t = 0; t < x.size(); ++t)
      for (size_t i = 0; i < x[t].size(); ++i) x[t][i] += y[t][i];
  }
  void norm_span(double* v, int n, const std::vector<double>& w) {
    double ss = 0;
    for (int i = 0; i < n; ++i) ss += v[i] * v[i];
    const double inv = 1.0 / std::sqrt(ss / n + c_.rms_norm_eps);
    for (int i = 0; i < n; ++i) v[i] = v[i] * inv * w[i];
  }
  Mat norm_rows(const Mat& x, const std::vector<double>& w) {
    Mat y = x;
    for (auto& row : y) norm_span(row.data(), int(row.size()), w);
    return y;
  }
  void norm_heads(std::vector<double>& row, int heads, int D, const std::vector<double>& w) {
    for (int h = 0; h < heads; ++h) norm_span(row.data() + h * D, D, w);
  }
  static void rotate(std::vector<double>& row, int heads, int D, int pos, const std::vector<float>& inv_freq) {
    for (int h = 0; h < heads; ++h) {
      double* v = row.data() + h * D;
      for (int i = 0; i < D / 2; ++i) {
        const double a = pos * double(inv_freq[i]);
        const double x1 = v[i], x2 = v[i + D / 2];
        v[i] = x1 * std::cos(a) - x2 * std::sin(a);
        v[i + D / 2] = x2 * std::cos(a) + x1 * std::sin(a);
      }
    }
  }

  ModelConfig c_;
  WeightSet w_;
};

}  // namespace zinfer::gpu::test
