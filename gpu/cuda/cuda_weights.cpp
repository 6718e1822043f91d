#include "gpu/cuda/cuda_weights.h"

#include <cstring>
#include <functional>
#include <stdexcept>

#include "gpu/cuda/cuda_check.h"
#include "gpu/cuda/random_fill.h"
#include "gpu/safetensors.h"

namespace zinfer::gpu::cuda {
namespace {

using Shape = std::vector<int64_t>;

// One destination in the device allocation: the tensors copied into it in order (fusion), the
// element type on the device (bf16 matrices, float32 vectors).
struct Slot {
  std::vector<std::string> names;
  std::vector<Shape> shapes;
  bool as_float = false;
  size_t offset = 0;
  size_t bytes = 0;
  const void** target = nullptr;
};

size_t numel(const Shape& s) {
  size_t n = 1;
  for (int64_t d : s) n *= static_cast<size_t>(d);
  return n;
}

// Converts one tensor into the device element type through a host staging vector.
void upload(const TensorView& t, bool as_float, std::byte* dst, std::vector<float>& scratch,
            std::vector<uint16_t>& scratch16) {
  const size_t n = static_cast<size_t>(t.numel());
  if (!as_float && t.dtype == DType::kBF16) {
    check_cuda(cudaMemcpy(dst, t.data, n * 2, cudaMemcpyHostToDevice), "upload of a bf16 weight");
    return;
  }
  if (t.dtype != DType::kF32 && t.dtype != DType::kBF16 && t.dtype != DType::kF16) {
    throw std::runtime_error("tensor " + t.name + " in " + t.file + " has dtype " + dtype_name(t.dtype) +
                             "; the CUDA backend loads float32, bfloat16 and float16 weights");
  }
  scratch.resize(n);
  to_float32(t, scratch.data());
  if (as_float) {
    check_cuda(cudaMemcpy(dst, scratch.data(), n * 4, cudaMemcpyHostToDevice), "upload of a float weight");
    return;
  }
  scratch16.resize(n);
  for (size_t i = 0; i < n; ++i) scratch16[i] = float_to_bf16(scratch[i]);
  check_cuda(cudaMemcpy(dst, scratch16.data(), n * 2, cudaMemcpyHostToDevice), "upload of a weight");
}

// The device allocation's layout: every tensor the config names, in order, 256-byte aligned.
struct Layout {
  std::vector<Slot> slots;
  size_t total = 0;
  bool tied = false;
};

Layout plan_layout(const ModelConfig& c, ModelWeights& w, bool has_lm_head) {
  const int64_t H = c.hidden_size, D = c.head_dim, I = c.intermediate_size, V = c.vocab_size;
  const int64_t q_rows = static_cast<int64_t>(c.num_attention_heads) * D;
  const int64_t kv_rows = static_cast<int64_t>(c.num_key_value_heads) * D;
  Layout out;
  w.layers.resize(c.num_hidden_layers);
  auto add = [&](std::vector<std::string> names, std::vector<Shape> shapes, bool as_float, const void** target) {
    out.slots.push_back(Slot{std::move(names), std::move(shapes), as_float, 0, 0, target});
  };
  add({"model.embed_tokens.weight"}, {{V, H}}, false, reinterpret_cast<const void**>(&w.embed));
  add({"model.norm.weight"}, {{H}}, true, reinterpret_cast<const void**>(&w.final_norm));
  out.tied = c.tie_word_embeddings || !has_lm_head;
  if (!out.tied) add({"lm_head.weight"}, {{V, H}}, false, reinterpret_cast<const void**>(&w.lm_head));
  for (int i = 0; i < c.num_hidden_layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    LayerWeights& L = w.layers[i];
    add({p + "input_layernorm.weight"}, {{H}}, true, reinterpret_cast<const void**>(&L.input_norm));
    add({p + "self_attn.q_proj.weight", p + "self_attn.k_proj.weight", p + "self_attn.v_proj.weight"},
        {{q_rows, H}, {kv_rows, H}, {kv_rows, H}}, false, reinterpret_cast<const void**>(&L.qkv));
    if (c.attention_bias) {
      add({p + "self_attn.q_proj.bias", p + "self_attn.k_proj.bias", p + "self_attn.v_proj.bias"},
          {{q_rows}, {kv_rows}, {kv_rows}}, true, reinterpret_cast<const void**>(&L.qkv_bias));
    }
    if (c.qk_norm) {
      add({p + "self_attn.q_norm.weight"}, {{D}}, true, reinterpret_cast<const void**>(&L.q_norm));
      add({p + "self_attn.k_norm.weight"}, {{D}}, true, reinterpret_cast<const void**>(&L.k_norm));
    }
    add({p + "self_attn.o_proj.weight"}, {{H, q_rows}}, false, reinterpret_cast<const void**>(&L.o));
    add({p + "post_attention_layernorm.weight"}, {{H}}, true, reinterpret_cast<const void**>(&L.post_norm));
    add({p + "mlp.gate_proj.weight", p + "mlp.up_proj.weight"}, {{I, H}, {I, H}}, false,
        reinterpret_cast<const void**>(&L.gate_up));
    add({p + "mlp.down_proj.weight"}, {{H, I}}, false, reinterpret_cast<const void**>(&L.down));
  }
  for (Slot& s : out.slots) {
    size_t elems = 0;
    for (const Shape& shape : s.shapes) elems += numel(shape);
    s.offset = out.total;
    s.bytes = elems * (s.as_float ? 4 : 2);
    out.total += (s.bytes + 255) / 256 * 256;  // 256-byte alignment for cuBLASLt and vector loads
  }
  return out;
}

}  // namespace

ModelWeights load_weights(const std::string& model_dir, const ModelConfig& c) {
  WeightSet ws(model_dir);
  ModelWeights w;
  Layout layout = plan_layout(c, w, ws.has("lm_head.weight"));
  w.storage = DeviceBuffer(layout.total, "model weights");
  auto* base = w.storage.as<std::byte>();
  std::vector<float> scratch;
  std::vector<uint16_t> scratch16;
  for (Slot& s : layout.slots) {
    size_t at = s.offset;
    for (size_t j = 0; j < s.names.size(); ++j) {
      const TensorView& t = ws.get(s.names[j], s.shapes[j]);
      upload(t, s.as_float, base + at, scratch, scratch16);
      at += numel(s.shapes[j]) * (s.as_float ? 4 : 2);
    }
    *s.target = base + s.offset;
  }
  if (layout.tied) w.lm_head = w.embed;
  return w;
}

ModelWeights random_weights(const ModelConfig& c, uint64_t seed) {
  ModelWeights w;
  Layout layout = plan_layout(c, w, !c.tie_word_embeddings);
  w.storage = DeviceBuffer(layout.total, "model weights");
  auto* base = w.storage.as<std::byte>();
  uint64_t k = seed;
  for (Slot& s : layout.slots) {
    if (s.as_float) {  // norm weights near 1, biases near 0
      const bool is_bias = s.names[0].find("bias") != std::string::npos;
      check_cuda(launch_fill_random_f32(reinterpret_cast<float*>(base + s.offset), s.bytes / 4, ++k,
                                        is_bias ? 0.f : 1.f, 0.05f, nullptr),
                 "random weights");
    } else {
      check_cuda(launch_fill_random_bf16(reinterpret_cast<__nv_bfloat16*>(base + s.offset), s.bytes / 2, ++k, 0.f,
                                         0.02f, nullptr),
                 "random weights");
    }
    *s.target = base + s.offset;
  }
  check_cuda(cudaDeviceSynchronize(), "random weights");
  if (layout.tied) w.lm_head = w.embed;
  return w;
}

}  // namespace zinfer::gpu::cuda
