// A Hugging Face tokenizer.json, read and executed faithfully: normalizer -> pre-tokenizer ->
// model (BPE, byte-level or SentencePiece-style with byte fallback) -> post-processor, with added
// and special tokens split out first; and the decoder chain for the way back. Thread-safe for
// concurrent encode/decode after construction (const methods only).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace zinfer::tok {

class TokenizerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The largest token id a tokenizer.json may use. Tables are indexed by id (the model's tokens,
// vocab_size() = the largest id + 1, and downstream the grammar's and the sampler's per-token
// arrays), so a stray huge id must be refused rather than allocated; real vocabularies stay
// under 300,000.
inline constexpr int32_t kMaxTokenId = (1 << 22) - 1;

class Tokenizer {
 public:
  // PATH is a tokenizer.json or a folder holding one. Throws TokenizerError naming the file and
  // the unsupported or malformed part (e.g. an unknown model type).
  static std::shared_ptr<const Tokenizer> from_file(const std::string& path);
  static std::shared_ptr<const Tokenizer> from_json(std::string_view json, const std::string& origin);

  virtual ~Tokenizer() = default;
  // add_special_tokens: apply the post-processor (e.g. bos) as HF `tokenizers` does.
  virtual std::vector<int32_t> encode(std::string_view text, bool add_special_tokens = true) const = 0;
  virtual std::string decode(std::span<const int32_t> ids, bool skip_special_tokens = false) const = 0;
  virtual std::optional<int32_t> token_to_id(std::string_view token) const = 0;
  virtual std::string id_to_token(int32_t id) const = 0;  // "" when out of range
  virtual bool is_special(int32_t id) const = 0;
  virtual int32_t vocab_size() const = 0;  // largest id + 1, added tokens included
};

// Streaming detokenization for one sequence: push ids one or more at a time and get back only
// the new text, always on whole UTF-8 characters (bytes of an incomplete character are held back
// until the character completes). The concatenation of all returned pieces plus flush() equals
// decode(all ids). (One exception: when byte-fallback tokens form an invalid sequence, decode
// turns the whole run of byte tokens into U+FFFDs, valid characters already emitted included;
// those cannot be taken back, so the stream keeps them.)
class IncrementalDecoder {
 public:
  IncrementalDecoder(std::shared_ptr<const Tokenizer> tokenizer, bool skip_special_tokens,
                     std::vector<int32_t> prefix_ids = {});
  std::string push(std::span<const int32_t> ids);
  std::string flush();  // whatever remains (an incomplete trailing character becomes U+FFFD)

 private:
  std::shared_ptr<const Tokenizer> tok_;
  bool skip_special_;
  std::vector<int32_t> ids_;
  size_t prefix_offset_ = 0;  // ids_[prefix_offset_, read_offset_) is context already emitted
  size_t read_offset_ = 0;
  std::string emitted_;       // text of ids_[prefix_offset_, read_offset_)
};

}  // namespace zinfer::tok
