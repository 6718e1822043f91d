// What the quantization_config readers (quant_config.cpp, ct_fp8_scheme.cpp, kv_cache_scheme.cpp)
// share: the error that names a field, a field that may be absent or null, a string's lower case,
// and the checks every compressed-tensors QuantizationArgs object gets before its values are read.
#pragma once

#include <algorithm>
#include <cctype>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "gpu/model_config.h"

namespace zinfer::gpu::quant::config_json {

// "<origin>: quantization_config.<what>" as a ModelConfigError.
[[noreturn]] inline void fail(const std::string& origin, const std::string& what) {
  throw ModelConfigError(origin + ": quantization_config." + what);
}

// q[key], or null where it is absent or JSON null.
inline const nlohmann::json* field(const nlohmann::json& q, const char* key) {
  auto it = q.find(key);
  return it == q.end() || it->is_null() ? nullptr : &*it;
}

inline std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

// A QuantizationArgs object at `path` as the library's model admits it: no key it does not define
// (observer and observer_kwargs say how scales were calibrated, not how they are stored: any
// value), each key of its type. The values are the caller's to judge.
inline void check_args_keys(const nlohmann::json& a, const std::string& path, const std::string& origin) {
  static const std::set<std::string> keys = {"num_bits",     "type",     "symmetric",   "group_size",
                                             "strategy",     "block_structure",         "dynamic",
                                             "actorder",     "scale_dtype", "zp_dtype", "observer",
                                             "observer_kwargs"};
  for (const auto& [key, value] : a.items())
    if (!keys.count(key)) fail(origin, path + "." + key + " is not supported (a setting the loader does not know)");
  for (const char* key : {"num_bits", "group_size"})
    if (const nlohmann::json* v = field(a, key); v && !v->is_number_integer())
      fail(origin, path + "." + key + " is not an integer");
  if (const nlohmann::json* v = field(a, "symmetric"); v && !v->is_boolean())
    fail(origin, path + ".symmetric is not a boolean");
  for (const char* key : {"type", "strategy", "scale_dtype", "zp_dtype"})
    if (const nlohmann::json* v = field(a, key); v && !v->is_string()) fail(origin, path + "." + key + " is not a string");
}

// A symmetric scheme's scale_dtype and zp_dtype: the scales in a float dtype the readers take, the
// zero points (all 0 where a writer keeps them at all) in one of the dtypes writers use.
inline void check_symmetric_dtypes(const nlohmann::json& a, const std::string& path, const std::string& origin) {
  static const std::set<std::string> scales = {"torch.float16", "torch.bfloat16", "torch.float32"};
  static const std::set<std::string> zeros = {"torch.float8_e4m3fn", "torch.int8", "torch.float16", "torch.bfloat16",
                                              "torch.float32"};
  if (const nlohmann::json* s = field(a, "scale_dtype"); s && !scales.count(s->get<std::string>()))
    fail(origin, path + ".scale_dtype '" + s->get<std::string>() +
                     "' is not supported (torch.float16, torch.bfloat16, torch.float32)");
  if (const nlohmann::json* z = field(a, "zp_dtype"); z && !zeros.count(z->get<std::string>()))
    fail(origin, path + ".zp_dtype '" + z->get<std::string>() +
                     "' is not supported (a symmetric scheme's zero points are 0 in torch.float8_e4m3fn, torch.int8 or "
                     "a float dtype)");
}

}  // namespace zinfer::gpu::quant::config_json
