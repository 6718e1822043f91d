// A PCRE2 regex (UTF + UCP, JIT-compiled) standing in for the Oniguruma regexes of HF
// `tokenizers`. The pattern is rewritten so that \s and \S mean what they mean in Oniguruma
// (tab..CR, NEL and the Z categories; PCRE2 would also take U+180E).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace zinfer::tok {

class Regex {
 public:
  Regex(const std::string& pattern, const std::string& origin);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // Calls on_match(begin, end) for each successive non-overlapping match in valid UTF-8
  // `subject`, leftmost first; an empty match advances by one character.
  template <typename F>
  void for_each_match(std::string_view subject, F&& on_match) const {
    size_t pos = 0;
    std::pair<size_t, size_t> m;
    while (pos <= subject.size() && find(subject, pos, m)) {
      on_match(m.first, m.second);
      if (m.second > m.first) {
        pos = m.second;
      } else {
        if (m.second >= subject.size()) break;
        pos = m.second + 1;
        while (pos < subject.size() && (static_cast<unsigned char>(subject[pos]) & 0xC0) == 0x80) ++pos;
      }
    }
  }

  // The first match at or after `start`; false when there is none.
  bool find(std::string_view subject, size_t start, std::pair<size_t, size_t>& match) const;

 private:
  void* code_ = nullptr;  // pcre2_code_8
  std::string origin_;
  std::string pattern_;
};

// The "pattern" of HF's Split and Replace: {"String": literal} or {"Regex": pattern}.
class TextPattern {
 public:
  TextPattern(const nlohmann::json& j, const std::string& origin);
  // Appends the [begin, end) of every non-overlapping match, leftmost first.
  void find_all(std::string_view subject, std::vector<std::pair<size_t, size_t>>& out) const;

 private:
  std::string literal_;
  std::unique_ptr<Regex> regex_;
};

}  // namespace zinfer::tok
