#include "actors/tokenizer/regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <nlohmann/json.hpp>

#include "actors/tokenizer/tokenizer.h"

namespace zinfer::tok {

namespace {

// Oniguruma's \s: U+0009..U+000D, U+0085 and General_Category Z (Zs, Zl, Zp).
constexpr std::string_view kSpaceClassBody = "\\t-\\r\\x{85}\\p{Z}";

std::string onig_compatible(const std::string& pattern) {
  std::string out;
  out.reserve(pattern.size() + 32);
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char e = pattern[i + 1];
      if (e == 's') {
        if (in_class) {
          out.append(kSpaceClassBody);
        } else {
          out.append("[").append(kSpaceClassBody).append("]");
        }
        ++i;
        continue;
      }
      if (e == 'S' && !in_class) {
        out.append("[^").append(kSpaceClassBody).append("]");
        ++i;
        continue;
      }
      out.push_back(c);
      out.push_back(e);
      ++i;
      continue;
    }
    if (!in_class && c == '[') {
      in_class = true;
      out.push_back(c);
      // A ']' right after '[' or '[^' is a literal member of the class.
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') out.push_back(pattern[++i]);
      if (i + 1 < pattern.size() && pattern[i + 1] == ']') out.push_back(pattern[++i]);
      continue;
    }
    if (in_class && c == ']') in_class = false;
    out.push_back(c);
  }
  return out;
}

// Per-thread match data and JIT stack: matching is const and may run on many threads at once.
struct MatchScratch {
  pcre2_match_data* data = pcre2_match_data_create(32, nullptr);
  pcre2_jit_stack* stack = pcre2_jit_stack_create(64 * 1024, 8 * 1024 * 1024, nullptr);
  pcre2_match_context* context = [this] {
    pcre2_match_context* ctx = pcre2_match_context_create(nullptr);
    pcre2_jit_stack_assign(ctx, nullptr, stack);
    return ctx;
  }();
  ~MatchScratch() {
    pcre2_match_context_free(context);
    pcre2_jit_stack_free(stack);
    pcre2_match_data_free(data);
  }
};

MatchScratch& scratch() {
  thread_local MatchScratch s;
  return s;
}

}  // namespace

Regex::Regex(const std::string& pattern, const std::string& origin) : origin_(origin), pattern_(pattern) {
  const std::string translated = onig_compatible(pattern);
  int error = 0;
  PCRE2_SIZE error_offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()), translated.size(),
                                   PCRE2_UTF | PCRE2_UCP, &error, &error_offset, nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof message);
    throw TokenizerError(origin + ": cannot compile regex '" + pattern + "' at offset " +
                         std::to_string(error_offset) + ": " + reinterpret_cast<const char*>(message));
  }
  // Without JIT (an unsupported CPU) the interpreter still gives the same matches.
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  code_ = code;
}

Regex::~Regex() { pcre2_code_free(static_cast<pcre2_code*>(code_)); }

bool Regex::find(std::string_view subject, size_t start, std::pair<size_t, size_t>& match) const {
  MatchScratch& s = scratch();
  // The subject was validated once by the caller (Tokenizer::encode), so skip PCRE2's check.
  const int rc = pcre2_match(static_cast<pcre2_code*>(code_), reinterpret_cast<PCRE2_SPTR>(subject.data()),
                             subject.size(), start, PCRE2_NO_UTF_CHECK, s.data, s.context);
  if (rc == PCRE2_ERROR_NOMATCH) return false;
  if (rc < 0) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(rc, message, sizeof message);
    throw TokenizerError(origin_ + ": regex '" + pattern_ + "' failed: " + reinterpret_cast<const char*>(message));
  }
  const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(s.data);
  match = {ovector[0], ovector[1]};
  return true;
}

TextPattern::TextPattern(const nlohmann::json& j, const std::string& origin) {
  if (j.is_object() && j.contains("String") && j["String"].is_string()) {
    literal_ = j["String"].get<std::string>();
  } else if (j.is_object() && j.contains("Regex") && j["Regex"].is_string()) {
    regex_ = std::make_unique<Regex>(j["Regex"].get<std::string>(), origin);
  } else {
    throw TokenizerError(origin + ": unsupported pattern " + j.dump() + " (expected {\"String\": ...} or {\"Regex\": ...})");
  }
}

void TextPattern::find_all(std::string_view subject, std::vector<std::pair<size_t, size_t>>& out) const {
  if (regex_) {
    regex_->for_each_match(subject, [&](size_t b, size_t e) { out.emplace_back(b, e); });
    return;
  }
  if (literal_.empty()) return;
  for (size_t pos = subject.find(literal_); pos != std::string_view::npos;
       pos = subject.find(literal_, pos + literal_.size())) {
    out.emplace_back(pos, pos + literal_.size());
  }
}

}  // namespace zinfer::tok
