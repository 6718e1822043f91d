// Where the tokenizer tests find their data: the real tokenizer.json files fetched by
// tools/fetch-tokenizers.sh, the text corpus and the Hugging Face reference outputs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "actors/tokenizer/tokenizer.h"

namespace zinfer::tok::testing {

inline const std::vector<std::string> kTokenizerNames = {"llama2", "llama3", "qwen3"};

std::string tokenizer_path(const std::string& name);
// Loads tests/data/tokenizers/<name>/tokenizer.json once per process; when the file is absent
// it records a test failure that says to run tools/fetch-tokenizers.sh and returns null.
std::shared_ptr<const Tokenizer> load(const std::string& name);
// tests/data/tokenizer/texts.jsonl (or $ZINFER_TOKENIZER_TEXTS): one JSON string per line.
const std::vector<std::string>& corpus();
std::string read_file(const std::string& path);
std::string nfc(const std::string& text);

}  // namespace zinfer::tok::testing
