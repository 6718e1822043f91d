#include "gpu/quant/quant_config.h"

#include <algorithm>
#include <cctype>
#include <set>

#include <nlohmann/json.hpp>

#include "gpu/model_config.h"

namespace zinfer::gpu::quant {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& origin, const std::string& what) {
  throw ModelConfigError(origin + ": quantization_config." + what);
}

const json* field(const json& q, const char* key) {
  auto it = q.find(key);
  return it == q.end() || it->is_null() ? nullptr : &*it;
}

int32_t int_field(const json& q, const char* key, int32_t fallback, const std::string& origin) {
  const json* v = field(q, key);
  if (!v) return fallback;
  if (!v->is_number_integer()) fail(origin, std::string(key) + " is not an integer");
  return v->get<int32_t>();
}

bool bool_field(const json& q, const char* key, bool fallback, const std::string& origin) {
  const json* v = field(q, key);
  if (!v) return fallback;
  if (!v->is_boolean()) fail(origin, std::string(key) + " is not a boolean");
  return v->get<bool>();
}

std::string string_field(const json& q, const char* key, const std::string& fallback, const std::string& origin) {
  const json* v = field(q, key);
  if (!v) return fallback;
  if (!v->is_string()) fail(origin, std::string(key) + " is not a string");
  return v->get<std::string>();
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

// Keys that record how a checkpoint was made or which kernel a library should pick; the tensors
// mean the same whatever their values.
const std::set<std::string> kInformational = {
    "damp_percent", "damp_auto_increment", "true_sequential", "static_groups", "model_name_or_path",
    "model_file_base_name", "meta", "quantizer", "tokenizer", "dataset", "batch_size", "use_exllama",
    "exllama_config", "max_input_length", "cache_block_outputs", "module_name_preceding_first_block",
    "modules_in_block_to_quantize", "use_cuda_fp16", "pad_token_id", "mse", "backend", "disable_exllama",
    "do_fuse", "fuse_max_seq_len", "modules_to_fuse", "quant_method", "bits", "group_size"};

void refuse_unknown(const json& q, const std::set<std::string>& honoured, const std::string& origin) {
  for (const auto& [key, value] : q.items())
    if (!honoured.count(key) && !kInformational.count(key))
      fail(origin, key + " is not supported (a setting the loader does not know)");
}

int32_t read_group_size(const json& q, const std::string& origin) {
  const int32_t g = int_field(q, "group_size", -1, origin);
  if (g != -1 && g <= 0) fail(origin, "group_size " + std::to_string(g) + " is not supported (-1 or a positive size)");
  return g;
}

void read_gptq(const json& q, QuantConfig& c) {
  const std::string& o = c.origin;
  refuse_unknown(q, {"desc_act", "sym", "checkpoint_format", "format", "lm_head", "dynamic", "pack_dtype"}, o);
  c.bits = int_field(q, "bits", 0, o);
  if (c.bits != 4 && c.bits != 8) fail(o, "bits " + std::to_string(c.bits) + " is not supported for gptq (4, 8)");
  c.group_size = read_group_size(q, o);
  c.desc_act = bool_field(q, "desc_act", false, o);
  c.sym = bool_field(q, "sym", true, o);
  c.lm_head = bool_field(q, "lm_head", false, o);
  for (const char* key : {"checkpoint_format", "format"}) {
    const std::string f = string_field(q, key, "gptq", o);
    if (f == "gptq") continue;
    if (f == "gptq_v2") c.zeros_offset = false;
    else fail(o, std::string(key) + " '" + f + "' is not supported (gptq, gptq_v2)");
  }
  if (const json* d = field(q, "dynamic"); d && !(d->is_object() && d->empty()))
    fail(o, "dynamic (per-module overrides) is not supported");
  if (const std::string p = string_field(q, "pack_dtype", "int32", o); p != "int32")
    fail(o, "pack_dtype '" + p + "' is not supported (int32)");
}

void read_awq(const json& q, QuantConfig& c) {
  const std::string& o = c.origin;
  refuse_unknown(q, {"zero_point", "version", "modules_to_not_convert"}, o);
  c.bits = int_field(q, "bits", 0, o);
  if (c.bits != 4) fail(o, "bits " + std::to_string(c.bits) + " is not supported for awq (4)");
  c.group_size = read_group_size(q, o);
  c.sym = false;
  if (!bool_field(q, "zero_point", true, o)) fail(o, "zero_point false is not supported for awq (true)");
  const std::string version = string_field(q, "version", "gemm", o);
  if (lower(version) != "gemm") fail(o, "version '" + version + "' is not supported for awq (gemm)");
  if (const json* m = field(q, "modules_to_not_convert")) {
    if (!m->is_array()) fail(o, "modules_to_not_convert is not a list");
    for (const json& s : *m) {
      if (!s.is_string()) fail(o, "modules_to_not_convert holds a non-string");
      c.modules_to_not_convert.push_back(s.get<std::string>());
    }
  }
}

std::vector<std::string> string_list(const json& q, const char* key, const std::string& origin) {
  std::vector<std::string> out;
  if (const json* m = field(q, key)) {
    if (!m->is_array()) fail(origin, std::string(key) + " is not a list");
    for (const json& s : *m) {
      if (!s.is_string()) fail(origin, std::string(key) + " holds a non-string");
      out.push_back(s.get<std::string>());
    }
  }
  return out;
}

// vLLM's Fp8Config and transformers' FineGrainedFP8Config (DeepSeek-V3, Qwen3-FP8 write "fmt").
void read_fp8(const json& q, QuantConfig& c) {
  const std::string& o = c.origin;
  // bits and group_size are informational for the integer formats; here they would mean something.
  if (field(q, "bits") && int_field(q, "bits", 8, o) != 8)
    fail(o, "bits " + std::to_string(int_field(q, "bits", 8, o)) + " is not supported for fp8 (8)");
  if (field(q, "group_size")) fail(o, "group_size is not supported for fp8 (weight_block_size gives the blocks)");
  refuse_unknown(q, {"activation_scheme", "weight_block_size", "ignored_layers", "modules_to_not_convert", "fmt",
                     "dequantize"},
                 o);
  c.bits = 8;
  const std::string scheme = string_field(q, "activation_scheme", "dynamic", o);
  if (scheme == "dynamic") c.activation_scheme = ActivationScheme::kDynamic;
  else if (scheme == "static") c.activation_scheme = ActivationScheme::kStatic;
  else fail(o, "activation_scheme '" + scheme + "' is not supported (dynamic, static)");
  if (const std::string fmt = string_field(q, "fmt", "e4m3", o); fmt != "e4m3")
    fail(o, "fmt '" + fmt + "' is not supported (e4m3; e5m2 weights are not loaded)");
  if (bool_field(q, "dequantize", false, o)) fail(o, "dequantize true is not supported (false: the layers run in fp8)");
  if (const json* b = field(q, "weight_block_size")) {
    if (!b->is_array() || b->size() != 2 || !(*b)[0].is_number_integer() || !(*b)[1].is_number_integer() ||
        (*b)[0].get<int64_t>() <= 0 || (*b)[1].get<int64_t>() <= 0)
      fail(o, "weight_block_size " + b->dump() + " is not supported (two positive integers, [128, 128] as written)");
    c.block_n = (*b)[0].get<int64_t>();
    c.block_k = (*b)[1].get<int64_t>();
    if (c.activation_scheme == ActivationScheme::kStatic)
      fail(o, "activation_scheme 'static' with weight_block_size is not supported (block-wise layers quantize "
              "their activations per token and block: dynamic)");
  }
  c.ignored_layers = string_list(q, "ignored_layers", o);
  c.modules_to_not_convert = string_list(q, "modules_to_not_convert", o);
}

}  // namespace

QuantConfig online_fp8_config(const std::string& origin) {
  QuantConfig c;
  c.method = Method::kFp8;
  c.bits = 8;
  c.online = true;
  c.origin = origin;
  return c;
}

const char* method_name(Method m) {
  switch (m) {
    case Method::kNone: return "none";
    case Method::kGptq: return "gptq";
    case Method::kAwq: return "awq";
    case Method::kFp8: return "fp8";
  }
  return "?";
}

QuantConfig parse_quant_config(const std::string& text, const std::string& origin) {
  json q;
  try {
    q = json::parse(text);
  } catch (const json::exception& e) {
    throw ModelConfigError(origin + ": quantization_config is not valid JSON: " + e.what());
  }
  if (!q.is_object()) throw ModelConfigError(origin + ": quantization_config is not an object");
  QuantConfig c;
  c.origin = origin;
  const std::string method = string_field(q, "quant_method", "", origin);
  if (method == "gptq") c.method = Method::kGptq, read_gptq(q, c);
  else if (method == "awq") c.method = Method::kAwq, read_awq(q, c);
  else if (method == "fp8") c.method = Method::kFp8, read_fp8(q, c);
  else if (method.empty()) fail(origin, "quant_method is missing");
  else
    fail(origin, "quant_method '" + method + "' is not supported (gptq, awq, fp8; compressed-tensors is not "
                 "loaded yet)");
  return c;
}

}  // namespace zinfer::gpu::quant
