#include "actors/tokenizer/pipeline_tokenizer.h"

#include <algorithm>

#include "actors/text/utf8.h"

namespace zinfer::tok {

PipelineTokenizer::PipelineTokenizer(PipelineParts parts)
    : normalizer_(std::move(parts.normalizer)),
      pre_tokenizer_(std::move(parts.pre_tokenizer)),
      model_(std::move(parts.model)),
      post_processor_(std::move(parts.post_processor)),
      decoder_(std::move(parts.decoder)),
      added_(std::move(parts.added_tokens), normalizer_.get()) {}

void PipelineTokenizer::encode_piece(std::string_view piece, bool at_text_start, std::vector<int32_t>& ids) const {
  if (!pre_tokenizer_) {
    model_->tokenize(piece, ids);
    return;
  }
  Pieces in, words;
  in.add(piece);
  pre_tokenizer_->split(in, at_text_start, words);
  for (size_t i = 0; i < words.size(); ++i) model_->tokenize(words[i], ids);
}

std::vector<int32_t> PipelineTokenizer::encode(std::string_view text, bool add_special_tokens) const {
  if (const size_t bad = utf8::find_invalid(text); bad != std::string_view::npos)
    throw TokenizerError("cannot encode text that is not valid UTF-8 (invalid byte at offset " +
                         std::to_string(bad) + ")");
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 4);
  // 1. Added tokens that match the raw text; 2. each stretch between them normalized on its
  // own, then searched for normalized added tokens; 3. the rest pre-tokenized and modelled.
  std::vector<AddedVocabulary::Segment> raw, normalized_segments;
  added_.split(text, false, raw);
  std::string normalized;
  for (const auto& seg : raw) {
    if (seg.id >= 0) {
      ids.push_back(seg.id);
      continue;
    }
    normalized.assign(text.substr(seg.begin, seg.end - seg.begin));
    if (normalizer_) normalizer_->normalize(normalized);
    if (!added_.has_normalized_tokens()) {
      encode_piece(normalized, seg.begin == 0, ids);
      continue;
    }
    normalized_segments.clear();
    added_.split(normalized, true, normalized_segments);
    for (const auto& sub : normalized_segments) {
      if (sub.id >= 0) {
        ids.push_back(sub.id);
      } else {
        encode_piece(std::string_view(normalized).substr(sub.begin, sub.end - sub.begin),
                     seg.begin == 0 && sub.begin == 0, ids);
      }
    }
  }
  if (post_processor_) post_processor_->process(ids, add_special_tokens);
  return ids;
}

std::string PipelineTokenizer::decode(std::span<const int32_t> ids, bool skip_special_tokens) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int32_t id : ids) {
    if (const AddedToken* added = added_.by_id(id)) {
      if (!(skip_special_tokens && added->special)) tokens.push_back(added->content);
      continue;
    }
    const std::string* token = model_->id_to_token(id);
    if (token == nullptr) continue;  // unknown ids are dropped, as HF does
    if (skip_special_tokens && added_.is_special_content(*token)) continue;
    tokens.push_back(*token);
  }
  std::string text;
  if (decoder_) {
    decoder_->decode_chain(tokens);
    for (const auto& t : tokens) text.append(t);
  } else {
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (i > 0) text.push_back(' ');
      text.append(tokens[i]);
    }
  }
  return text;
}

std::optional<int32_t> PipelineTokenizer::token_to_id(std::string_view token) const {
  if (auto id = added_.by_content(token)) return id;
  return model_->token_to_id(token);
}

std::string PipelineTokenizer::id_to_token(int32_t id) const {
  if (const AddedToken* added = added_.by_id(id)) return added->content;
  const std::string* token = model_->id_to_token(id);
  return token ? *token : std::string();
}

bool PipelineTokenizer::is_special(int32_t id) const {
  const AddedToken* added = added_.by_id(id);
  return added != nullptr && added->special;
}

int32_t PipelineTokenizer::vocab_size() const { return std::max(model_->max_id(), added_.max_id()) + 1; }

}  // namespace zinfer::tok
