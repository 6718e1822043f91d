// The stages of a tokenizer.json pipeline as internal interfaces, one family per .cpp file:
// normalizers.cpp, pre_tokenizers.cpp, post_processors.cpp, decoders.cpp. Each family has a
// factory that reads its JSON object and throws TokenizerError naming the type and the file
// (`origin`) for anything it does not support.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace zinfer::tok {

// Text cut into pieces that all live in one buffer, so that splitting allocates nothing per
// piece. Pre-tokenizers read one Pieces and append to another.
class Pieces {
 public:
  void clear() {
    buf_.clear();
    spans_.clear();
  }
  void add(std::string_view piece) {  // empty pieces are dropped, as HF drops empty splits
    if (piece.empty()) return;
    spans_.push_back({static_cast<uint32_t>(buf_.size()), static_cast<uint32_t>(piece.size())});
    buf_.append(piece);
  }
  // Building a piece in several appends: note b = open().size(), append to open(), close(b).
  std::string& open() { return buf_; }
  void close(size_t begin) {
    if (buf_.size() > begin)
      spans_.push_back({static_cast<uint32_t>(begin), static_cast<uint32_t>(buf_.size() - begin)});
  }
  size_t size() const { return spans_.size(); }
  std::string_view operator[](size_t i) const { return {buf_.data() + spans_[i].first, spans_[i].second}; }

 private:
  std::string buf_;
  std::vector<std::pair<uint32_t, uint32_t>> spans_;
};

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  virtual void normalize(std::string& text) const = 0;
};

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  // Splits every piece of `in` and appends the results to `out`. `at_text_start` says whether
  // the first piece begins at offset 0 of the user's text (Metaspace's prepend_scheme "first").
  virtual void split(const Pieces& in, bool at_text_start, Pieces& out) const = 0;
};

class PostProcessor {
 public:
  virtual ~PostProcessor() = default;
  // Single-sequence processing; adds nothing when add_special_tokens is false.
  virtual void process(std::vector<int32_t>& ids, bool add_special_tokens) const = 0;
};

class Decoder {
 public:
  virtual ~Decoder() = default;
  // HF's decode_chain: tokens in, tokens out; the final text is their concatenation.
  virtual void decode_chain(std::vector<std::string>& tokens) const = 0;
};

std::unique_ptr<Normalizer> make_normalizer(const nlohmann::json& j, const std::string& origin);
std::unique_ptr<PreTokenizer> make_pre_tokenizer(const nlohmann::json& j, const std::string& origin);
std::unique_ptr<PostProcessor> make_post_processor(const nlohmann::json& j, const std::string& origin);
std::unique_ptr<Decoder> make_decoder(const nlohmann::json& j, const std::string& origin);

}  // namespace zinfer::tok
