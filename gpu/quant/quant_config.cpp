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

}  // namespace

const char* method_name(Method m) {
  switch (m) {
    case Method::kNone: return "none";
    case Method::kGptq: return "gptq";
    case Method::kAwq: return "awq";
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
  else if (method.empty()) fail(origin, "quant_method is missing");
  else
    fail(origin, "quant_method '" + method + "' is not supported (gptq, awq; compressed-tensors and fp8 are not "
                 "loaded yet)");
  return c;
}

}  // namespace zinfer::gpu::quant
