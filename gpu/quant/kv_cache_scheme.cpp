#include "gpu/quant/kv_cache_scheme.h"

#include "gpu/quant/config_json.h"

namespace zinfer::gpu::quant {
namespace {

using nlohmann::json;
using config_json::fail;
using config_json::field;
using config_json::lower;

constexpr const char* kPath = "kv_cache_scheme";

}  // namespace

void read_kv_cache_scheme(const json& s, bool fp8_config, const std::string& o) {
  const std::string p = std::string(kPath) + ".";
  if (s.is_string()) {
    // AutoFP8 writes "static" beside per-tensor k_scale / v_scale (or the older kv_scale).
    if (fp8_config && s.get<std::string>() == "static") return;
    fail(o, std::string(kPath) + " '" + s.get<std::string>() + "' is not supported (" +
                (fp8_config ? "\"static\" or a compressed-tensors QuantizationArgs object" : "a QuantizationArgs object") +
                ")");
  }
  if (!s.is_object()) fail(o, std::string(kPath) + " " + s.dump() + " is not supported (a QuantizationArgs object)");
  config_json::check_args_keys(s, kPath, o);

  const json* bits = field(s, "num_bits");
  if (const int64_t b = bits ? bits->get<int64_t>() : 8; b != 8)
    fail(o, p + "num_bits " + std::to_string(b) + " is not supported (8: an FP8 e4m3 KV cache)");
  const json* type = field(s, "type");
  if (const std::string t = type ? lower(type->get<std::string>()) : "int"; t != "float")
    fail(o, p + "type '" + t + "'" + (type ? "" : " (the default)") +
                " is not supported (float: an FP8 e4m3 KV cache; int8 KV caches are not loaded)");
  if (const json* sym = field(s, "symmetric"); sym && !sym->get<bool>())
    fail(o, p + "symmetric false is not supported (the FP8 KV cache's scales have no zero point)");
  const json* gs = field(s, "group_size");
  if (gs) fail(o, p + "group_size " + gs->dump() + " is not supported (one scale per layer for K and for V: null)");
  const json* strategy = field(s, "strategy");
  if (const std::string st = strategy ? lower(strategy->get<std::string>()) : "tensor"; st != "tensor")
    fail(o, p + "strategy '" + st + "' is not supported (tensor: one k and one v scale per layer" +
                (st == "attn_head" ? "; per-head scales are not loaded)" : ")"));
  if (const json* b = field(s, "block_structure")) fail(o, p + "block_structure " + b->dump() + " is not supported (null)");
  if (const json* d = field(s, "dynamic"); d && !(d->is_boolean() && !d->get<bool>()))
    fail(o, p + "dynamic " + d->dump() + " is not supported (false: the checkpoint's static k/v scales)");
  if (const json* a = field(s, "actorder"); a && !(a->is_boolean() && !a->get<bool>()))
    fail(o, p + "actorder " + a->dump() + " is not supported (null)");
  config_json::check_symmetric_dtypes(s, kPath, o);
}

}  // namespace zinfer::gpu::quant
