// The normalizers of tokenizer.json (HF `tokenizers` normalizers/): Unicode forms through
// utf8proc, Lowercase, Prepend, Replace, Strip, StripAccents and Sequence. Offsets are not
// tracked: zinfer needs ids, not alignments.
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <utf8proc.h>

#include "actors/text/utf8.h"
#include "actors/tokenizer/components.h"
#include "actors/tokenizer/regex.h"
#include "actors/tokenizer/tokenizer.h"

namespace zinfer::tok {

namespace {

class UnicodeForm final : public Normalizer {
 public:
  UnicodeForm(std::string name, int options) : name_(std::move(name)), options_(options) {}
  void normalize(std::string& text) const override {
    if (already_normal(text)) return;
    utf8proc_uint8_t* out = nullptr;
    const auto n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                                static_cast<utf8proc_ssize_t>(text.size()), &out,
                                static_cast<utf8proc_option_t>(options_));
    if (n < 0) throw TokenizerError(name_ + " normalization failed: " + utf8proc_errmsg(n));
    text.assign(reinterpret_cast<const char*>(out), static_cast<size_t>(n));
    std::free(out);
  }

 private:
  // ASCII is invariant under every form. Under NFC so is any text none of whose characters
  // has a combining class, a canonical decomposition, or a place as the second half of a
  // canonical composition (Hangul vowel and trailing jamo included): such text has nothing to
  // reorder, decompose or compose. Most non-Latin text passes, which saves utf8proc's
  // decompose-and-recompose round trip.
  bool already_normal(const std::string& text) const {
    const bool nfc = (options_ & UTF8PROC_COMPOSE) && !(options_ & UTF8PROC_COMPAT);
    size_t pos = 0;
    while (pos < text.size()) {
      if (static_cast<unsigned char>(text[pos]) < 0x80) {
        ++pos;
        continue;
      }
      if (!nfc) return false;
      const char32_t c = utf8::next(text, pos);
      if (c < 0x300) continue;
      if ((c >= 0x1161 && c <= 0x1175) || (c >= 0x11A8 && c <= 0x11C2)) return false;
      const utf8proc_property_t* p = utf8proc_get_property(static_cast<utf8proc_int32_t>(c));
      if (p->combining_class != 0) return false;
      if (p->decomp_seqindex != UINT16_MAX && p->decomp_type == 0) return false;
      if (p->comb_index != UINT16_MAX && p->comb_index >= 0x8000) return false;
    }
    return true;
  }
  std::string name_;
  int options_;
};

class Lowercase final : public Normalizer {
 public:
  void normalize(std::string& text) const override {
    std::string out;
    out.reserve(text.size());
    size_t pos = 0;
    while (pos < text.size()) {
      const char32_t c = utf8::next(text, pos);
      if (c == 0x130) {  // the one character whose full lowercase mapping is two characters
        out.append("i\xCC\x87");
      } else {
        utf8::append(out, static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c))));
      }
    }
    text = std::move(out);
  }
};

class Prepend final : public Normalizer {
 public:
  explicit Prepend(std::string prefix) : prefix_(std::move(prefix)) {}
  void normalize(std::string& text) const override {
    if (!text.empty()) text.insert(0, prefix_);
  }

 private:
  std::string prefix_;
};

class Replace final : public Normalizer {
 public:
  Replace(const nlohmann::json& pattern, std::string content, const std::string& origin)
      : pattern_(pattern, origin), content_(std::move(content)) {}
  void normalize(std::string& text) const override {
    std::vector<std::pair<size_t, size_t>> matches;
    pattern_.find_all(text, matches);
    if (matches.empty()) return;
    std::string out;
    out.reserve(text.size() + matches.size() * content_.size());
    size_t prev = 0;
    for (auto [b, e] : matches) {
      out.append(text, prev, b - prev).append(content_);
      prev = e;
    }
    out.append(text, prev);
    text = std::move(out);
  }

 private:
  TextPattern pattern_;
  std::string content_;
};

class Strip final : public Normalizer {
 public:
  Strip(bool left, bool right) : left_(left), right_(right) {}
  void normalize(std::string& text) const override {
    size_t begin = 0, end = text.size();
    if (left_) {
      while (begin < end) {
        size_t p = begin;
        if (!utf8::is_whitespace(utf8::next(text, p))) break;
        begin = p;
      }
    }
    if (right_) {
      while (end > begin) {
        size_t start = end - 1;
        while (start > begin && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
        size_t p = start;
        if (!utf8::is_whitespace(utf8::next(text, p))) break;
        end = start;
      }
    }
    text = text.substr(begin, end - begin);
  }

 private:
  bool left_, right_;
};

class StripAccents final : public Normalizer {
 public:
  void normalize(std::string& text) const override {
    std::string out;
    out.reserve(text.size());
    size_t pos = 0;
    while (pos < text.size()) {
      const size_t start = pos;
      const char32_t c = utf8::next(text, pos);
      if (utf8proc_category(static_cast<utf8proc_int32_t>(c)) != UTF8PROC_CATEGORY_MN) {
        out.append(text, start, pos - start);
      }
    }
    text = std::move(out);
  }
};

class NormalizerSequence final : public Normalizer {
 public:
  explicit NormalizerSequence(std::vector<std::unique_ptr<Normalizer>> steps) : steps_(std::move(steps)) {}
  void normalize(std::string& text) const override {
    for (const auto& step : steps_) step->normalize(text);
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> steps_;
};

std::string string_field(const nlohmann::json& j, const char* key, const std::string& what,
                         const std::string& origin) {
  if (!j.contains(key) || !j[key].is_string())
    throw TokenizerError(origin + ": " + what + " needs a string field '" + key + "'");
  return j[key].get<std::string>();
}

}  // namespace

std::unique_ptr<Normalizer> make_normalizer(const nlohmann::json& j, const std::string& origin) {
  if (j.is_null()) return nullptr;
  const std::string type = j.value("type", "");
  if (type == "NFC") return std::make_unique<UnicodeForm>(type, UTF8PROC_STABLE | UTF8PROC_COMPOSE);
  if (type == "NFD") return std::make_unique<UnicodeForm>(type, UTF8PROC_STABLE | UTF8PROC_DECOMPOSE);
  if (type == "NFKC")
    return std::make_unique<UnicodeForm>(type, UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT);
  if (type == "NFKD")
    return std::make_unique<UnicodeForm>(type, UTF8PROC_STABLE | UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT);
  if (type == "Lowercase") return std::make_unique<Lowercase>();
  if (type == "StripAccents") return std::make_unique<StripAccents>();
  if (type == "Prepend") return std::make_unique<Prepend>(string_field(j, "prepend", "normalizer Prepend", origin));
  if (type == "Replace") {
    if (!j.contains("pattern")) throw TokenizerError(origin + ": normalizer Replace needs a 'pattern'");
    return std::make_unique<Replace>(j["pattern"], string_field(j, "content", "normalizer Replace", origin), origin);
  }
  if (type == "Strip") return std::make_unique<Strip>(j.value("strip_left", true), j.value("strip_right", true));
  if (type == "Sequence") {
    if (!j.contains("normalizers") || !j["normalizers"].is_array())
      throw TokenizerError(origin + ": normalizer Sequence needs an array 'normalizers'");
    std::vector<std::unique_ptr<Normalizer>> steps;
    for (const auto& step : j["normalizers"]) {
      if (auto n = make_normalizer(step, origin)) steps.push_back(std::move(n));
    }
    return std::make_unique<NormalizerSequence>(std::move(steps));
  }
  throw TokenizerError(origin + ": unsupported normalizer type '" + type + "'");
}

}  // namespace zinfer::tok
