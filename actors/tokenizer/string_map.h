// Hash maps keyed by std::string that can be searched with a string_view, so that vocabulary
// lookups on the encode path allocate nothing.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace zinfer::tok {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

template <typename V>
using StringMap = std::unordered_map<std::string, V, StringHash, std::equal_to<>>;

using StringIdMap = StringMap<int32_t>;

}  // namespace zinfer::tok
