// The Tokenizer of tokenizer.h as a pipeline of the stages in components.h around a BPE model.
// tokenizer_json.cpp builds one from a file; this class only runs it.
#pragma once

#include <memory>
#include <string>

#include "actors/tokenizer/added_vocabulary.h"
#include "actors/tokenizer/bpe_model.h"
#include "actors/tokenizer/components.h"
#include "actors/tokenizer/tokenizer.h"

namespace zinfer::tok {

struct PipelineParts {
  std::unique_ptr<Normalizer> normalizer;        // each may be null: the stage is skipped
  std::unique_ptr<PreTokenizer> pre_tokenizer;
  std::unique_ptr<BpeModel> model;               // never null
  std::unique_ptr<PostProcessor> post_processor;
  std::unique_ptr<Decoder> decoder;              // null: tokens joined with spaces, as HF does
  std::vector<AddedToken> added_tokens;
};

class PipelineTokenizer final : public Tokenizer {
 public:
  explicit PipelineTokenizer(PipelineParts parts);

  std::vector<int32_t> encode(std::string_view text, bool add_special_tokens = true) const override;
  std::string decode(std::span<const int32_t> ids, bool skip_special_tokens = false) const override;
  std::optional<int32_t> token_to_id(std::string_view token) const override;
  std::string id_to_token(int32_t id) const override;
  bool is_special(int32_t id) const override;
  int32_t vocab_size() const override;

 private:
  void encode_piece(std::string_view piece, bool at_text_start, std::vector<int32_t>& ids) const;

  std::unique_ptr<Normalizer> normalizer_;
  std::unique_ptr<PreTokenizer> pre_tokenizer_;
  std::unique_ptr<BpeModel> model_;
  std::unique_ptr<PostProcessor> post_processor_;
  std::unique_ptr<Decoder> decoder_;
  AddedVocabulary added_;
};

}  // namespace zinfer::tok
