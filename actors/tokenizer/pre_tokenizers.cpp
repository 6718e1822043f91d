// The pre-tokenizers of tokenizer.json (HF `tokenizers` pre_tokenizers/): Split (regex or
// literal, five delimiter behaviours, invert), ByteLevel, Metaspace, Digits, Whitespace,
// WhitespaceSplit, Punctuation, BertPreTokenizer and Sequence.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "actors/text/utf8.h"
#include "actors/tokenizer/byte_level.h"
#include "actors/tokenizer/components.h"
#include "actors/tokenizer/regex.h"
#include "actors/tokenizer/tokenizer.h"

namespace zinfer::tok {

namespace {

enum class Behavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

Behavior parse_behavior(const nlohmann::json& j, const std::string& origin) {
  const std::string b = j.is_string() ? j.get<std::string>() : "";
  if (b == "Removed") return Behavior::Removed;
  if (b == "Isolated") return Behavior::Isolated;
  if (b == "MergedWithPrevious") return Behavior::MergedWithPrevious;
  if (b == "MergedWithNext") return Behavior::MergedWithNext;
  if (b == "Contiguous") return Behavior::Contiguous;
  throw TokenizerError(origin + ": unsupported split behavior " + j.dump());
}

struct Segment {
  size_t begin, end;
  bool is_match;
};

// Turns the [begin, end) matches in `piece` into segments covering it, gaps included.
void segments_from_matches(size_t size, const std::vector<std::pair<size_t, size_t>>& matches,
                           std::vector<Segment>& segs) {
  size_t prev = 0;
  for (auto [b, e] : matches) {
    if (prev < b) segs.push_back({prev, b, false});
    segs.push_back({b, e, true});
    prev = e;
  }
  if (prev < size) segs.push_back({prev, size, false});
}

// Each character for which pred holds is a match of its own, as HF's char patterns give.
template <typename Pred>
void segments_from_chars(std::string_view piece, Pred pred, std::vector<Segment>& segs) {
  size_t prev = 0, pos = 0;
  while (pos < piece.size()) {
    const size_t start = pos;
    const char32_t c = utf8::next(piece, pos);
    if (pred(c)) {
      if (prev < start) segs.push_back({prev, start, false});
      segs.push_back({start, pos, true});
      prev = pos;
    }
  }
  if (prev < piece.size()) segs.push_back({prev, piece.size(), false});
}

// HF NormalizedString::split: what becomes of the delimiters (the matches).
void emit(std::string_view piece, std::vector<Segment>& segs, Behavior behavior, Pieces& out) {
  std::vector<std::pair<size_t, size_t>> parts;
  bool previous_match = false;
  switch (behavior) {
    case Behavior::Removed:
      for (const auto& s : segs)
        if (!s.is_match) parts.emplace_back(s.begin, s.end);
      break;
    case Behavior::Isolated:
      for (const auto& s : segs) parts.emplace_back(s.begin, s.end);
      break;
    case Behavior::MergedWithPrevious:
      for (const auto& s : segs) {
        if (s.is_match && !previous_match && !parts.empty()) {
          parts.back().second = s.end;
        } else {
          parts.emplace_back(s.begin, s.end);
        }
        previous_match = s.is_match;
      }
      break;
    case Behavior::MergedWithNext:
      for (auto it = segs.rbegin(); it != segs.rend(); ++it) {
        if (it->is_match && !previous_match && !parts.empty()) {
          parts.back().first = it->begin;
        } else {
          parts.emplace_back(it->begin, it->end);
        }
        previous_match = it->is_match;
      }
      std::reverse(parts.begin(), parts.end());
      break;
    case Behavior::Contiguous:
      for (const auto& s : segs) {
        if (s.is_match == previous_match && !parts.empty()) {
          parts.back().second = s.end;
        } else {
          parts.emplace_back(s.begin, s.end);
        }
        previous_match = s.is_match;
      }
      break;
  }
  for (auto [b, e] : parts) out.add(piece.substr(b, e - b));
}

class SplitPattern final : public PreTokenizer {
 public:
  SplitPattern(const nlohmann::json& j, const std::string& origin)
      : pattern_(j.at("pattern"), origin),
        behavior_(parse_behavior(j.at("behavior"), origin)),
        invert_(j.value("invert", false)) {}
  void split(const Pieces& in, bool, Pieces& out) const override {
    std::vector<std::pair<size_t, size_t>> matches;
    std::vector<Segment> segs;
    for (size_t i = 0; i < in.size(); ++i) {
      const std::string_view piece = in[i];
      matches.clear();
      segs.clear();
      pattern_.find_all(piece, matches);
      if (behavior_ == Behavior::Isolated) {  // the common case: every segment is a piece
        size_t prev = 0;
        for (auto [b, e] : matches) {
          out.add(piece.substr(prev, b - prev));
          out.add(piece.substr(b, e - b));
          prev = e;
        }
        out.add(piece.substr(prev));
        continue;
      }
      segments_from_matches(piece.size(), matches, segs);
      if (invert_)
        for (auto& s : segs) s.is_match = !s.is_match;
      emit(piece, segs, behavior_, out);
    }
  }

 private:
  TextPattern pattern_;
  Behavior behavior_;
  bool invert_;
};

// Splits on characters for which a predicate holds (Digits, WhitespaceSplit, Punctuation).
template <typename Pred>
class SplitChars final : public PreTokenizer {
 public:
  SplitChars(Pred pred, Behavior behavior) : pred_(pred), behavior_(behavior) {}
  void split(const Pieces& in, bool, Pieces& out) const override {
    std::vector<Segment> segs;
    for (size_t i = 0; i < in.size(); ++i) {
      segs.clear();
      segments_from_chars(in[i], pred_, segs);
      emit(in[i], segs, behavior_, out);
    }
  }

 private:
  Pred pred_;
  Behavior behavior_;
};

template <typename Pred>
std::unique_ptr<PreTokenizer> split_chars(Pred pred, Behavior behavior) {
  return std::make_unique<SplitChars<Pred>>(pred, behavior);
}

bool is_bert_punctuation(char32_t c) {
  return (c < 0x80 && std::string_view("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~").find(static_cast<char>(c)) !=
                          std::string_view::npos) ||
         utf8::is_punctuation(c);
}

// Keeps only the matches of a regex (HF's Whitespace: `\w+|[^\w\s]+`, the rest removed).
class KeepMatches final : public PreTokenizer {
 public:
  KeepMatches(const std::string& pattern, const std::string& origin) : regex_(pattern, origin) {}
  void split(const Pieces& in, bool, Pieces& out) const override {
    for (size_t i = 0; i < in.size(); ++i) {
      const std::string_view piece = in[i];
      regex_.for_each_match(piece, [&](size_t b, size_t e) { out.add(piece.substr(b, e - b)); });
    }
  }

 private:
  Regex regex_;
};

class ByteLevel final : public PreTokenizer {
 public:
  ByteLevel(bool add_prefix_space, bool use_regex, const std::string& origin) : add_prefix_space_(add_prefix_space) {
    if (use_regex) {
      gpt2_ = std::make_unique<Regex>(
          R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)", origin);
    }
  }
  void split(const Pieces& in, bool, Pieces& out) const override {
    std::string prefixed;
    for (size_t i = 0; i < in.size(); ++i) {
      std::string_view piece = in[i];
      if (add_prefix_space_ && piece.front() != ' ') {
        prefixed.assign(" ").append(piece);
        piece = prefixed;
      }
      if (!gpt2_) {
        map_bytes(piece, out);
        continue;
      }
      size_t prev = 0;
      gpt2_->for_each_match(piece, [&](size_t b, size_t e) {
        if (prev < b) map_bytes(piece.substr(prev, b - prev), out);
        map_bytes(piece.substr(b, e - b), out);
        prev = e;
      });
      if (prev < piece.size()) map_bytes(piece.substr(prev), out);
    }
  }

 private:
  static void map_bytes(std::string_view piece, Pieces& out) {
    const auto& map = ByteLevelMap::get();
    std::string& buf = out.open();
    const size_t begin = buf.size();
    buf.resize(begin + 2 * piece.size());  // each byte becomes at most two
    char* dst = buf.data() + begin;
    for (unsigned char c : piece) {
      dst[0] = map.utf8_bytes[c][0];
      dst[1] = map.utf8_bytes[c][1];
      dst += map.utf8_len[c];
    }
    buf.resize(static_cast<size_t>(dst - buf.data()));
    out.close(begin);
  }
  bool add_prefix_space_;
  std::unique_ptr<Regex> gpt2_;
};

enum class PrependScheme { Always, First, Never };

class Metaspace final : public PreTokenizer {
 public:
  Metaspace(std::string replacement, PrependScheme scheme, bool split)
      : replacement_(std::move(replacement)), scheme_(scheme), split_(split) {}
  void split(const Pieces& in, bool at_text_start, Pieces& out) const override {
    std::string text;
    for (size_t i = 0; i < in.size(); ++i) {
      const std::string_view piece = in[i];
      text.clear();
      for (char c : piece) {
        if (c == ' ') {
          text.append(replacement_);
        } else {
          text.push_back(c);
        }
      }
      const bool prepend = scheme_ == PrependScheme::Always || (scheme_ == PrependScheme::First && i == 0 && at_text_start);
      if (prepend && !text.starts_with(replacement_)) text.insert(0, replacement_);
      if (!split_) {
        out.add(text);
        continue;
      }
      // MergedWithNext on the replacement character: each piece starts at one.
      size_t start = 0;
      for (size_t pos = text.find(replacement_, 1); pos != std::string::npos;
           pos = text.find(replacement_, pos + replacement_.size())) {
        out.add(std::string_view(text).substr(start, pos - start));
        start = pos;
      }
      out.add(std::string_view(text).substr(start));
    }
  }

 private:
  std::string replacement_;
  PrependScheme scheme_;
  bool split_;
};

class PreTokenizerSequence final : public PreTokenizer {
 public:
  explicit PreTokenizerSequence(std::vector<std::unique_ptr<PreTokenizer>> steps) : steps_(std::move(steps)) {}
  void split(const Pieces& in, bool at_text_start, Pieces& out) const override {
    if (steps_.empty()) {
      for (size_t i = 0; i < in.size(); ++i) out.add(in[i]);
      return;
    }
    Pieces a, b;
    const Pieces* src = &in;
    for (size_t s = 0; s < steps_.size(); ++s) {
      Pieces* dst = s + 1 == steps_.size() ? &out : (src == &a ? &b : &a);
      if (dst != &out) dst->clear();
      steps_[s]->split(*src, at_text_start, *dst);
      src = dst;
    }
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> steps_;
};

PrependScheme parse_prepend_scheme(const nlohmann::json& j, const std::string& origin) {
  if (j.contains("prepend_scheme")) {
    const std::string s = j["prepend_scheme"].is_string() ? j["prepend_scheme"].get<std::string>() : "";
    if (s == "always") return PrependScheme::Always;
    if (s == "first") return PrependScheme::First;
    if (s == "never") return PrependScheme::Never;
    throw TokenizerError(origin + ": unsupported Metaspace prepend_scheme " + j["prepend_scheme"].dump());
  }
  return j.value("add_prefix_space", true) ? PrependScheme::Always : PrependScheme::Never;
}

}  // namespace

std::unique_ptr<PreTokenizer> make_pre_tokenizer(const nlohmann::json& j, const std::string& origin) {
  if (j.is_null()) return nullptr;
  const std::string type = j.value("type", "");
  try {
    if (type == "Split") return std::make_unique<SplitPattern>(j, origin);
    if (type == "ByteLevel")
      return std::make_unique<ByteLevel>(j.value("add_prefix_space", true), j.value("use_regex", true), origin);
    if (type == "Metaspace")
      return std::make_unique<Metaspace>(j.value("replacement", "\xE2\x96\x81"), parse_prepend_scheme(j, origin),
                                         j.value("split", true));
    if (type == "Digits")
      return split_chars(utf8::is_numeric,
                         j.value("individual_digits", false) ? Behavior::Isolated : Behavior::Contiguous);
    if (type == "Whitespace") return std::make_unique<KeepMatches>(R"(\w+|[^\w\s]+)", origin);
    if (type == "WhitespaceSplit") return split_chars(utf8::is_whitespace, Behavior::Removed);
    if (type == "Punctuation")
      return split_chars(is_bert_punctuation,
                         j.contains("behavior") ? parse_behavior(j["behavior"], origin) : Behavior::Isolated);
    if (type == "BertPreTokenizer") {
      std::vector<std::unique_ptr<PreTokenizer>> steps;
      steps.push_back(split_chars(utf8::is_whitespace, Behavior::Removed));
      steps.push_back(split_chars(is_bert_punctuation, Behavior::Isolated));
      return std::make_unique<PreTokenizerSequence>(std::move(steps));
    }
    if (type == "Sequence") {
      if (!j.contains("pretokenizers") || !j["pretokenizers"].is_array())
        throw TokenizerError(origin + ": pre-tokenizer Sequence needs an array 'pretokenizers'");
      std::vector<std::unique_ptr<PreTokenizer>> steps;
      for (const auto& step : j["pretokenizers"]) {
        if (auto p = make_pre_tokenizer(step, origin)) steps.push_back(std::move(p));
      }
      return std::make_unique<PreTokenizerSequence>(std::move(steps));
    }
  } catch (const nlohmann::json::exception& e) {
    throw TokenizerError(origin + ": malformed pre-tokenizer " + type + ": " + e.what());
  }
  throw TokenizerError(origin + ": unsupported pre-tokenizer type '" + type + "'");
}

}  // namespace zinfer::tok
