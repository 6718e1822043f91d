// IncrementalDecoder (tokenizer.h): decodes a sliding window of ids, from the last point where
// the text was complete, and emits only what the newest ids added. Decoding a window rather
// than single ids keeps decoders that look at neighbours (byte fallback runs, the leading-space
// strip of SentencePiece-style files) consistent with decoding everything at once.
#include "actors/tokenizer/tokenizer.h"

namespace zinfer::tok {

namespace {

constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";

}  // namespace

IncrementalDecoder::IncrementalDecoder(std::shared_ptr<const Tokenizer> tokenizer, bool skip_special_tokens,
                                       std::vector<int32_t> prefix_ids)
    : tok_(std::move(tokenizer)), skip_special_(skip_special_tokens), ids_(std::move(prefix_ids)) {
  if (!tok_) throw TokenizerError("IncrementalDecoder needs a tokenizer");
  // The prefix (say, the prompt) is context only: its text is never emitted.
  read_offset_ = ids_.size();
  prefix_offset_ = read_offset_ > 0 ? read_offset_ - 1 : 0;
  emitted_ = tok_->decode(std::span<const int32_t>(ids_).subspan(prefix_offset_), skip_special_);
}

std::string IncrementalDecoder::push(std::span<const int32_t> ids) {
  ids_.insert(ids_.end(), ids.begin(), ids.end());
  const auto all = std::span<const int32_t>(ids_);
  const std::string text = tok_->decode(all.subspan(prefix_offset_), skip_special_);
  // A trailing U+FFFD means the last character is still incomplete: wait for more bytes.
  if (text.ends_with(kReplacementChar)) return {};
  std::string out;
  if (text.starts_with(emitted_)) {
    // Nothing new yet (say, a skipped special token): keep the window so that the next token
    // is still decoded after its left context (SentencePiece strips a window's leading space).
    if (text.size() == emitted_.size()) return {};
    out = text.substr(emitted_.size());
  } else {
    // Later bytes changed text already emitted: byte fallback turns a whole run of byte tokens
    // into U+FFFDs once the run goes invalid, valid characters inside it included. What is out
    // cannot be taken back, so go on with the new ids decoded on their own.
    out = tok_->decode(all.subspan(read_offset_), skip_special_);
  }
  prefix_offset_ = read_offset_;
  read_offset_ = ids_.size();
  emitted_ = tok_->decode(all.subspan(prefix_offset_, read_offset_ - prefix_offset_), skip_special_);
  return out;
}

std::string IncrementalDecoder::flush() {
  const auto all = std::span<const int32_t>(ids_);
  const std::string text = tok_->decode(all.subspan(prefix_offset_), skip_special_);
  std::string out = text.starts_with(emitted_) ? text.substr(emitted_.size()) : tok_->decode(all.subspan(read_offset_), skip_special_);
  prefix_offset_ = read_offset_ = ids_.size();
  emitted_.clear();
  return out;
}

}  // namespace zinfer::tok
