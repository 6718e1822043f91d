// What the quantization_config readers (quant_config.cpp, ct_fp8_scheme.cpp) share: the error that
// names a field, a field that may be absent or null, and a string's lower case.
#pragma once

#include <algorithm>
#include <cctype>
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

}  // namespace zinfer::gpu::quant::config_json
