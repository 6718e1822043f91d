#include "gpu/quant/quant_config.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "gpu/model_config.h"
#include "gpu/quant/config_json.h"
#include "gpu/quant/ct_fp8_scheme.h"
#include "gpu/quant/kv_cache_scheme.h"

namespace zinfer::gpu::quant {
namespace {

using nlohmann::json;
using config_json::fail;
using config_json::field;
using config_json::lower;

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

// Keys that record how a checkpoint was made or which kernel a library should pick; the tensors
// mean the same whatever their values.
const std::set<std::string> kInformational = {
    "damp_percent", "damp_auto_increment", "true_sequential", "static_groups", "model_name_or_path",
    "model_file_base_name", "meta", "quantizer", "tokenizer", "dataset", "batch_size", "use_exllama",
    "exllama_config", "max_input_length", "cache_block_outputs", "module_name_preceding_first_block",
    "modules_in_block_to_quantize", "use_cuda_fp16", "pad_token_id", "mse", "backend", "disable_exllama",
    "do_fuse", "fuse_max_seq_len", "modules_to_fuse", "quant_method", "bits", "group_size"};

void refuse_unknown(const json& q, const std::set<std::string>& honoured, const std::string& origin,
                    const std::string& path = "", const std::set<std::string>& informational = kInformational) {
  for (const auto& [key, value] : q.items())
    if (!honoured.count(key) && !informational.count(key))
      fail(origin, path + key + " is not supported (a setting the loader does not know)");
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

// compressed-tensors (the library's QuantizationConfig / QuantizationScheme / QuantizationArgs).
// Top-level keys that do not change the stored tensors: quant_method (read above),
// global_compression_ratio (a number the writer reports), version (the library version that
// wrote it), run_compressed (transformers' choice to keep layers compressed in memory).
const std::set<std::string> kCtInformational = {"quant_method", "global_compression_ratio", "version",
                                                "run_compressed"};
// QuantizationArgs keys that record how scales were calibrated, not how they are stored.
const std::set<std::string> kCtArgsInformational = {"observer", "observer_kwargs"};
// The presets a config group may name instead of spelling out its scheme ({"W4A16": ["Linear"]}),
// the weight-only integer ones: bits, group size (-1: channel), symmetric.
struct CtPreset {
  const char* name;
  int32_t bits, group_size;
  bool sym;
};
constexpr CtPreset kCtPresets[] = {{"W4A16", 4, 128, true}, {"W4A16_ASYM", 4, 128, false}, {"W8A16", 8, 128, true}};
constexpr const char* kPackQuantized = "pack-quantized";
// FP8 W8A8 (ct_fp8_scheme.h): two names of one storage.
bool float_format(const std::string& f) { return f == "float-quantized" || f == "naive-quantized"; }
constexpr const char* kFormats = "pack-quantized: weight-only int4/int8; float-quantized or naive-quantized: FP8 W8A8";

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::toupper(c)); });
  return s;
}

std::vector<std::string> string_list(const json* v, const std::string& path, const std::string& origin) {
  std::vector<std::string> out;
  if (!v) return out;
  if (!v->is_array()) fail(origin, path + " is not a list");
  for (const json& s : *v) {
    if (!s.is_string()) fail(origin, path + " holds a non-string");
    out.push_back(s.get<std::string>());
    if (out.back().rfind("re:", 0) == 0) {  // a regex that does not compile is refused now, not at load
      try {
        std::regex r(out.back().substr(3));
      } catch (const std::regex_error&) {
        fail(origin, path + " entry '" + out.back() + "' is not a regular expression this loader reads");
      }
    }
  }
  return out;
}

// A group's "weights" QuantizationArgs, as the library validates them: the strategy inferred from
// group_size when absent, group needs a positive group_size, actorder "group" needs strategy group.
void read_ct_weights(const json& w, CtGroup& g, const std::string& path, const std::string& o) {
  if (!w.is_object()) fail(o, path + " is not an object");
  refuse_unknown(w, {"num_bits", "type", "symmetric", "group_size", "strategy", "block_structure", "dynamic",
                     "actorder", "scale_dtype", "zp_dtype"},
                 o, path + ".", kCtArgsInformational);
  // Typed here so that an error names the whole path (the readers below name the key alone).
  for (const char* key : {"num_bits", "group_size"})
    if (const json* v = field(w, key); v && !v->is_number_integer()) fail(o, path + "." + key + " is not an integer");
  if (const json* v = field(w, "symmetric"); v && !v->is_boolean()) fail(o, path + ".symmetric is not a boolean");
  for (const char* key : {"type", "strategy", "scale_dtype", "zp_dtype"})
    if (const json* v = field(w, key); v && !v->is_string()) fail(o, path + "." + key + " is not a string");
  g.bits = int_field(w, "num_bits", 8, o);
  if (g.bits != 4 && g.bits != 8)
    fail(o, path + ".num_bits " + std::to_string(g.bits) + " is not supported for pack-quantized (4, 8)");
  if (const std::string type = lower(string_field(w, "type", "int", o)); type != "int")
    fail(o, path + ".type '" + type + "' is not supported for pack-quantized (int; FP8 weights are float-quantized)");
  g.sym = bool_field(w, "symmetric", true, o);
  const json* gs = field(w, "group_size");
  std::string strategy = lower(string_field(w, "strategy", "", o));
  if (strategy.empty()) strategy = !gs ? "tensor" : gs->get<int64_t>() == -1 ? "channel" : "group";
  if (strategy == "group") {
    if (!gs || gs->get<int64_t>() <= 0)
      fail(o, path + ".group_size " + (gs ? std::to_string(gs->get<int64_t>()) : std::string("null")) +
                  " is not supported with strategy 'group' (a positive size)");
    g.group_size = gs->get<int32_t>();
  } else if (strategy == "channel" || strategy == "tensor") {
    if (gs && gs->get<int64_t>() != -1)
      fail(o, path + ".group_size " + std::to_string(gs->get<int64_t>()) + " contradicts strategy '" + strategy + "'");
    g.group_size = -1;
    g.per_tensor = strategy == "tensor";
  } else {
    fail(o, path + ".strategy '" + strategy + "' is not supported for pack-quantized (group, channel, tensor)");
  }
  if (field(w, "block_structure")) fail(o, path + ".block_structure is not supported (block strategy)");
  if (const json* d = field(w, "dynamic"); d && !(d->is_boolean() && !d->get<bool>()))
    fail(o, path + ".dynamic " + d->dump() + " is not supported (weights are stored: false)");
  if (const json* a = field(w, "actorder")) {
    // true and "dynamic" are the library's aliases of "group"; "weight" ("static") only changed the
    // calibration order: the stored layer is an ordinary grouped one.
    const std::string order = a->is_boolean() ? (a->get<bool>() ? "group" : "") : a->is_string() ? lower(a->get<std::string>()) : "?";
    if (order == "group" || order == "dynamic") g.act_order = true;
    else if (order != "" && order != "weight" && order != "static")
      fail(o, path + ".actorder " + a->dump() + " is not supported (null, group, weight)");
    if (g.act_order && strategy != "group") fail(o, path + ".actorder 'group' needs strategy 'group'");
  }
  if (const std::string s = string_field(w, "scale_dtype", "torch.float16", o);
      s != "torch.float16" && s != "torch.bfloat16" && s != "torch.float32")
    fail(o, path + ".scale_dtype '" + s + "' is not supported (torch.float16, torch.bfloat16, torch.float32)");
  if (const std::string z = string_field(w, "zp_dtype", "torch.int8", o); z != "torch.int8")
    fail(o, path + ".zp_dtype '" + z + "' is not supported (torch.int8)");
}

void read_compressed_tensors(const json& q, QuantConfig& c) {
  const std::string& o = c.origin;
  refuse_unknown(q, {"config_groups", "format", "ignore", "kv_cache_scheme", "sparsity_config", "transform_config",
                     "quantization_status"},
                 o, "", kCtInformational);
  const std::string format = string_field(q, "format", "", o);
  if (format.empty()) fail(o, std::string("format is missing (") + kFormats + ")");
  if (format != kPackQuantized && !float_format(format) && format != "mixed-precision")
    fail(o, "format '" + format + "' is not supported yet (" + kFormats + ")");
  if (const json* kv = field(q, "kv_cache_scheme")) {
    read_kv_cache_scheme(*kv, false, o);
    c.kv_cache_scheme = true;
  }
  if (const json* s = field(q, "sparsity_config"); s && !(s->is_object() && s->empty()))
    fail(o, "sparsity_config is not supported (sparse checkpoints are not loaded)");
  if (const json* t = field(q, "transform_config"); t && !(t->is_object() && t->empty()))
    fail(o, "transform_config is not supported (rotated weights are not loaded)");
  c.ignore = string_list(field(q, "ignore"), "ignore", o);

  const json* groups = field(q, "config_groups");
  if (!groups || !groups->is_object() || groups->empty()) fail(o, "config_groups is missing or empty");
  for (const auto& [name, scheme] : groups->items()) {
    const std::string path = "config_groups." + name;
    CtGroup g;
    g.name = name;
    if (scheme.is_array()) {  // a preset name with its targets
      const CtPreset* preset = nullptr;
      for (const CtPreset& p : kCtPresets)
        if (upper(name) == p.name) preset = &p;
      const std::optional<json> fp8 = ct_fp8_preset(upper(name));
      if (!preset && !fp8)
        fail(o, path + " names preset scheme '" + name +
                    "', which is not supported (W4A16, W4A16_ASYM, W8A16, FP8, FP8_DYNAMIC, FP8_BLOCK)");
      g.targets = string_list(&scheme, path, o);
      if (format == "mixed-precision") fail(o, path + " has no format of its own under format '" + format + "'");
      if (preset) {
        g.bits = preset->bits, g.group_size = preset->group_size, g.sym = preset->sym;
        if (format != kPackQuantized)
          fail(o, path + " names preset scheme '" + name + "', which is stored pack-quantized, under format '" + format + "'");
      } else {
        if (!float_format(format))
          fail(o, path + " names preset scheme '" + name + "', which is stored float-quantized, under format '" + format +
                      "'");
        read_ct_fp8_scheme((*fp8)["weights"], &(*fp8)["input_activations"], g, path, o);
      }
    } else {
      if (!scheme.is_object()) fail(o, path + " is not an object");
      refuse_unknown(scheme, {"targets", "weights", "input_activations", "output_activations", "format"}, o, path + ".",
                     {});
      g.targets = string_list(field(scheme, "targets"), path + ".targets", o);
      if (field(scheme, "output_activations")) fail(o, path + ".output_activations is not supported");
      const std::string own = string_field(scheme, "format", format == "mixed-precision" ? "" : format, o);
      if (own.empty()) fail(o, path + ".format is missing (under format 'mixed-precision' each group names its own)");
      if (own != kPackQuantized && !float_format(own))
        fail(o, path + ".format '" + own + "' is not supported yet (" + kFormats + ")");
      const json* w = field(scheme, "weights");
      if (!w) fail(o, path + ".weights is missing (a group that quantizes no weight)");
      if (float_format(own)) {
        read_ct_fp8_scheme(*w, field(scheme, "input_activations"), g, path, o);
      } else {
        if (field(scheme, "input_activations"))
          fail(o, path + ".input_activations is not supported for pack-quantized (weight-only W4A16/W8A16; quantized "
                         "activations are FP8 W8A8, stored float-quantized)");
        read_ct_weights(*w, g, path + ".weights", o);
      }
    }
    if (g.targets.empty()) fail(o, path + ".targets is missing or empty");
    c.groups.push_back(std::move(g));
  }
  // "frozen" is what earlier library versions wrote for float-quantized checkpoints whose weights
  // are stored e4m3 (neuralmagic's Meta-Llama-3.1-8B-Instruct-FP8): the weight's dtype says it is
  // stored quantized, and a targeted layer stored dense is refused by name when read. A packed
  // layer has no such mark, so integer groups need "compressed".
  bool all_fp8 = true;
  for (const CtGroup& g : c.groups) all_fp8 = all_fp8 && g.fp8;
  if (const std::string status = string_field(q, "quantization_status", "compressed", o);
      status != "compressed" && !(status == "frozen" && all_fp8))
    fail(o, "quantization_status '" + status + "' is not supported (compressed: the tensors stored quantized; frozen "
            "for float-quantized groups only)");
  // The whole-config fields describe the first group; each layer is unpacked with its own group's.
  c.bits = c.groups.front().bits;
  c.group_size = c.groups.front().group_size;
  c.sym = c.groups.front().sym;
}

// The library matches a "re:" target with Python's re.match: anchored at the start only.
bool regex_matches(const std::string& pattern, const std::string& name) {
  return std::regex_search(name, std::regex(pattern), std::regex_constants::match_continuous);
}

// vLLM's Fp8Config and transformers' FineGrainedFP8Config (DeepSeek-V3, Qwen3-FP8 write "fmt").
void read_fp8(const json& q, QuantConfig& c) {
  const std::string& o = c.origin;
  // bits and group_size are informational for the integer formats; here they would mean something.
  if (field(q, "bits") && int_field(q, "bits", 8, o) != 8)
    fail(o, "bits " + std::to_string(int_field(q, "bits", 8, o)) + " is not supported for fp8 (8)");
  if (field(q, "group_size")) fail(o, "group_size is not supported for fp8 (weight_block_size gives the blocks)");
  refuse_unknown(q, {"activation_scheme", "weight_block_size", "ignored_layers", "modules_to_not_convert", "fmt",
                     "dequantize", "kv_cache_scheme"},
                 o);
  c.bits = 8;
  // vLLM's Fp8Config does not read kv_cache_scheme (it loads whatever k/v scales the checkpoint
  // has); it is checked here so that a scheme the FP8 KV cache cannot honour is named, not ignored.
  if (const json* kv = field(q, "kv_cache_scheme")) {
    read_kv_cache_scheme(*kv, true, o);
    c.kv_cache_scheme = true;
  }
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
  c.ignored_layers = string_list(field(q, "ignored_layers"), "ignored_layers", o);
  c.modules_to_not_convert = string_list(field(q, "modules_to_not_convert"), "modules_to_not_convert", o);
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
    case Method::kCompressedTensors: return "compressed-tensors";
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
  else if (method == "compressed-tensors") c.method = Method::kCompressedTensors, read_compressed_tensors(q, c);
  else if (method == "fp8") c.method = Method::kFp8, read_fp8(q, c);
  else if (method.empty()) fail(origin, "quant_method is missing");
  else
    fail(origin, "quant_method '" + method + "' is not supported (gptq, awq, compressed-tensors, fp8; others are not "
                 "loaded yet)");
  return c;
}

bool ct_ignored(const QuantConfig& c, const std::string& module) {
  for (const std::string& entry : c.ignore)
    if (entry.rfind("re:", 0) == 0 ? regex_matches(entry.substr(3), module) : entry == module) return true;
  return false;
}

const CtGroup* ct_group_of(const QuantConfig& c, const std::string& module, bool linear) {
  // Rank 0: the exact name; 1: a regex; 2: the class "Linear".
  for (int rank = 0; rank < 3; ++rank) {
    const CtGroup* found = nullptr;
    for (const CtGroup& g : c.groups)
      for (const std::string& t : g.targets) {
        const bool hit = rank == 0 ? t == module
                       : rank == 1 ? t.rfind("re:", 0) == 0 && regex_matches(t.substr(3), module)
                                   : t == "Linear" && linear;
        if (!hit || found == &g) continue;
        if (found)
          throw ModelConfigError(c.origin + ": quantization_config.config_groups." + found->name + " and " + g.name +
                                 " both target " + module);
        found = &g;
      }
    if (found) return found;
  }
  return nullptr;
}

QuantConfig layer_config(const QuantConfig& c, const CtGroup& g) {
  QuantConfig layer = c;
  layer.bits = g.bits;
  layer.group_size = g.group_size;
  layer.sym = g.sym;
  layer.desc_act = g.act_order;
  layer.per_tensor = g.per_tensor;
  return layer;
}

}  // namespace zinfer::gpu::quant
