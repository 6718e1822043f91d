// The text of single tokens, for logprobs (TextDelta::token_texts) and echoed prompts: what the
// gateway shows as each token's "token" string and "bytes" (docs/protocol.md).
#pragma once

#include <cstdint>
#include <string>

#include "actors/tokenizer/tokenizer.h"
#include "protocol/messages.h"

namespace zinfer::actors {

// The token decoded alone, special tokens kept (vLLM decodes each logprob token so). A token that
// holds only part of a UTF-8 character decodes to U+FFFD; it is given as its raw bytes instead
// (not valid UTF-8), read from the vocabulary: a byte-fallback "<0xNN>" token, or a byte-level
// (GPT-2) token whose every character maps to a byte.
std::string token_text(const tok::Tokenizer& tokenizer, int32_t id);

// Fills delta.token_texts with the text of every token the delta names: its tokens and their
// alternatives, and its prompt's tokens and alternatives when it carries prompt logprobs.
void add_token_texts(const tok::Tokenizer& tokenizer, protocol::TextDelta& delta);

}  // namespace zinfer::actors
