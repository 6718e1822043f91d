// Logprobs in the shapes vLLM's OpenAI server returns them (docs/protocol.md has the table):
//   - a token is named by its text (each token decoded alone, special tokens kept; the
//     detokenizer's TextDelta::token_texts); a token that is part of a UTF-8 character is
//     "bytes:\xNN..." (OpenAI's form for such tokens), and with return_tokens_as_token_ids every
//     token is "token_id:N";
//   - a position's alternatives are the sampled (or prompt) token first, then the best others:
//     completions list `logprobs` + 1 of them (so logprobs = 0 gives the sampled token alone),
//     chat the first `top_logprobs`;
//   - logprobs are clamped at -9999.0 (as vLLM, so that -inf never reaches the JSON);
//   - completions' text_offset is where each token's text starts in the choice's text, in
//     characters (code points), as vLLM counts them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocol/messages.h"

namespace zinfer::gateway {

// Each token's text, as the detokenizer sent it (bytes; maybe not whole UTF-8 characters).
using TokenTexts = std::map<int32_t, std::string>;

struct TokenNaming {
  const TokenTexts* texts = nullptr;
  bool as_token_ids = false;  // return_tokens_as_token_ids
  std::string name(int32_t id) const;             // the "token" string
  nlohmann::json bytes(int32_t id) const;         // chat's "bytes": the token's bytes
  size_t characters(int32_t id) const;            // its length for text_offset
};

// One position of a logprobs list: the token there, its logprob (none: the prompt's first token)
// and the alternatives the engine gave, best first.
struct LogprobEntry {
  int32_t token = 0;
  std::optional<float> logprob;
  const std::vector<protocol::TopLogprob>* alternatives = nullptr;
};

// Completions' `logprobs` object over `entries`; `top` is the request's logprobs count, and
// `text_offset` where the first entry's text starts in the choice.
nlohmann::json completion_logprobs_json(const std::vector<LogprobEntry>& entries, int32_t top, size_t text_offset,
                                        const TokenNaming& naming);

// Chat's `logprobs` object: {"content": [...]}; `top` is top_logprobs.
nlohmann::json chat_logprobs_json(const std::vector<LogprobEntry>& entries, int32_t top, const TokenNaming& naming);

// vLLM's `prompt_logprobs`: null for the first prompt token, then for each token a map from token
// id (as a string) to {logprob, rank, decoded_token}: the prompt token first, then its
// alternatives. `prompt_ids` are the prompt's ids, `lp` their logprobs from position 1.
nlohmann::json prompt_logprobs_json(const std::vector<int32_t>& prompt_ids, const protocol::PromptLogprobs& lp,
                                    const TokenNaming& naming);

// The entries of a prompt with its logprobs (position 0 has none).
std::vector<LogprobEntry> prompt_entries(const std::vector<int32_t>& prompt_ids, const protocol::PromptLogprobs* lp);

// The number of characters (code points) of `text`; a byte that is not part of a whole UTF-8
// character counts as one when it may start one, else zero.
size_t text_characters(const std::string& text);

}  // namespace zinfer::gateway
