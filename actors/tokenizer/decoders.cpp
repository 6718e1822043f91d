// The decoders of tokenizer.json (HF `tokenizers` decoders/): ByteLevel, Replace, ByteFallback,
// Fuse, Strip, Metaspace, BPEDecoder and Sequence. Each rewrites the token list as HF's
// decode_chain does; the caller concatenates what is left.
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

class ByteLevelDecoder final : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    const auto& map = ByteLevelMap::get();
    std::string bytes;
    for (const auto& token : tokens) {
      const size_t mark = bytes.size();
      bool mapped = true;
      size_t pos = 0;
      while (pos < token.size()) {
        const char32_t c = utf8::next(token, pos);
        const int b = c < map.char_to_byte.size() ? map.char_to_byte[c] : -1;
        if (b < 0) {
          mapped = false;
          break;
        }
        bytes.push_back(static_cast<char>(b));
      }
      // A token with a character outside the map (an added token, say) keeps its own bytes.
      if (!mapped) {
        bytes.resize(mark);
        bytes.append(token);
      }
    }
    tokens.assign(1, utf8::lossy(bytes));
  }
};

class ReplaceDecoder final : public Decoder {
 public:
  ReplaceDecoder(const nlohmann::json& pattern, std::string content, const std::string& origin)
      : pattern_(pattern, origin), content_(std::move(content)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::vector<std::pair<size_t, size_t>> matches;
    for (auto& token : tokens) {
      matches.clear();
      pattern_.find_all(token, matches);
      if (matches.empty()) continue;
      std::string out;
      size_t prev = 0;
      for (auto [b, e] : matches) {
        out.append(token, prev, b - prev).append(content_);
        prev = e;
      }
      out.append(token, prev);
      token = std::move(out);
    }
  }

 private:
  TextPattern pattern_;
  std::string content_;
};

class ByteFallbackDecoder final : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::vector<std::string> out;
    out.reserve(tokens.size());
    std::string pending;  // bytes of consecutive <0xNN> tokens
    auto flush = [&] {
      if (pending.empty()) return;
      if (utf8::find_invalid(pending) == std::string::npos) {
        out.push_back(pending);
      } else {
        // HF gives one U+FFFD per byte when the run is not valid UTF-8.
        for (size_t i = 0; i < pending.size(); ++i) out.emplace_back("\xEF\xBF\xBD");
      }
      pending.clear();
    };
    for (auto& token : tokens) {
      int byte = -1;
      if (token.size() == 6 && token.starts_with("<0x") && token.back() == '>') byte = parse_hex(token[3], token[4]);
      if (byte >= 0) {
        pending.push_back(static_cast<char>(byte));
        continue;
      }
      flush();
      out.push_back(std::move(token));
    }
    flush();
    tokens = std::move(out);
  }

 private:
  static int hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
  static int parse_hex(char hi, char lo) {
    const int h = hex(hi), l = hex(lo);
    return h < 0 || l < 0 ? -1 : h * 16 + l;
  }
};

class FuseDecoder final : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::string all;
    for (const auto& t : tokens) all.append(t);
    tokens.assign(1, std::move(all));
  }
};

// Removes up to `start` leading and `stop` trailing copies of one character from each token.
class StripDecoder final : public Decoder {
 public:
  StripDecoder(std::string content, size_t start, size_t stop) : content_(std::move(content)), start_(start), stop_(stop) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    if (content_.empty()) return;
    for (auto& token : tokens) {
      size_t begin = 0, end = token.size();
      for (size_t i = 0; i < start_ && std::string_view(token).substr(begin).starts_with(content_); ++i)
        begin += content_.size();
      for (size_t i = 0; i < stop_ && end - begin >= content_.size() &&
                         std::string_view(token).substr(begin, end - begin).ends_with(content_);
           ++i)
        end -= content_.size();
      token = token.substr(begin, end - begin);
    }
  }

 private:
  std::string content_;
  size_t start_, stop_;
};

// HF drops every replacement character of the first token (not only a leading one) unless the
// prepend scheme is "never"; elsewhere each becomes a space.
class MetaspaceDecoder final : public Decoder {
 public:
  MetaspaceDecoder(std::string replacement, bool strip_first) : replacement_(std::move(replacement)), strip_first_(strip_first) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i) {
      std::string& token = tokens[i];
      const std::string_view replace_with = i == 0 && strip_first_ ? "" : " ";
      std::string out;
      size_t pos = 0;
      while (pos < token.size()) {
        if (std::string_view(token).substr(pos).starts_with(replacement_)) {
          out.append(replace_with);
          pos += replacement_.size();
        } else {
          out.push_back(token[pos++]);
        }
      }
      token = std::move(out);
    }
  }

 private:
  std::string replacement_;
  bool strip_first_;
};

class BpeSuffixDecoder final : public Decoder {
 public:
  explicit BpeSuffixDecoder(std::string suffix) : suffix_(std::move(suffix)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    if (suffix_.empty()) return;
    for (size_t i = 0; i < tokens.size(); ++i) {
      const std::string replacement = i + 1 == tokens.size() ? "" : " ";
      std::string out;
      const std::string& t = tokens[i];
      size_t prev = 0;
      for (size_t p = t.find(suffix_); p != std::string::npos; p = t.find(suffix_, prev)) {
        out.append(t, prev, p - prev).append(replacement);
        prev = p + suffix_.size();
      }
      out.append(t, prev);
      tokens[i] = std::move(out);
    }
  }

 private:
  std::string suffix_;
};

class DecoderSequence final : public Decoder {
 public:
  explicit DecoderSequence(std::vector<std::unique_ptr<Decoder>> steps) : steps_(std::move(steps)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (const auto& step : steps_) step->decode_chain(tokens);
  }

 private:
  std::vector<std::unique_ptr<Decoder>> steps_;
};

}  // namespace

std::unique_ptr<Decoder> make_decoder(const nlohmann::json& j, const std::string& origin) {
  if (j.is_null()) return nullptr;
  const std::string type = j.value("type", "");
  try {
    if (type == "ByteLevel") return std::make_unique<ByteLevelDecoder>();
    if (type == "Replace") return std::make_unique<ReplaceDecoder>(j.at("pattern"), j.at("content").get<std::string>(), origin);
    if (type == "ByteFallback") return std::make_unique<ByteFallbackDecoder>();
    if (type == "Fuse") return std::make_unique<FuseDecoder>();
    if (type == "Strip")
      return std::make_unique<StripDecoder>(j.at("content").get<std::string>(), j.value("start", size_t{0}),
                                            j.value("stop", size_t{0}));
    if (type == "Metaspace") {
      bool strip_first = j.value("add_prefix_space", true);
      if (j.contains("prepend_scheme")) strip_first = j["prepend_scheme"] != "never";
      return std::make_unique<MetaspaceDecoder>(j.value("replacement", "\xE2\x96\x81"), strip_first);
    }
    if (type == "BPEDecoder") return std::make_unique<BpeSuffixDecoder>(j.value("suffix", "</w>"));
    if (type == "Sequence") {
      std::vector<std::unique_ptr<Decoder>> steps;
      for (const auto& step : j.at("decoders")) {
        if (auto d = make_decoder(step, origin)) steps.push_back(std::move(d));
      }
      return std::make_unique<DecoderSequence>(std::move(steps));
    }
  } catch (const nlohmann::json::exception& e) {
    throw TokenizerError(origin + ": malformed decoder " + type + ": " + e.what());
  }
  throw TokenizerError(origin + ": unsupported decoder type '" + type + "'");
}

}  // namespace zinfer::tok
