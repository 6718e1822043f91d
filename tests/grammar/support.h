// Shared by the grammar tests: the real vocabularies, whole-string matching, random walks of an
// automaton, and the external JSON-Schema validator (Debian's python3-jsonschema, run by
// /usr/bin/python3), which is the judge of the JSON Schema tests, not our grammar.
#pragma once

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "actors/grammar/compiled_grammar.h"
#include "actors/grammar/grammar.h"
#include "actors/grammar/matcher.h"
#include "actors/grammar/vocabulary.h"

namespace zinfer::grammar::testing {

inline const std::vector<std::string> kVocabularies = {"llama3", "qwen3", "llama2"};

// tests/data/tokenizers/<name>; its stop tokens (EOS and end of turn). Records a failure and
// returns null when the file is missing.
std::shared_ptr<const Vocabulary> vocabulary(const std::string& name);
// A small vocabulary of single bytes and a few words (no tokenizer), for byte-level tests.
std::shared_ptr<const Vocabulary> byte_vocabulary();

std::shared_ptr<const CompiledGrammar> compiled(Grammar g, std::shared_ptr<const Vocabulary> vocab = nullptr);
bool full_match(const std::shared_ptr<const CompiledGrammar>& g, const std::string& text);

// A random sentence of the grammar (byte by byte, leaning towards closing characters so that it
// ends); false when it did not end within max_bytes.
bool random_walk(const std::shared_ptr<const CompiledGrammar>& g, std::mt19937& rng, std::string& out,
                 size_t max_bytes = 4000);

// Random edits of a string (delete, insert, replace a byte; truncate).
std::vector<std::string> mutants(const std::string& s, std::mt19937& rng, size_t count);

enum class Verdict { kValid, kInvalid, kNotJson };
// Validates each instance against its schema with python3-jsonschema (Draft 2020-12, formats
// checked); one python run for the whole batch.
std::vector<Verdict> validate(const std::vector<std::pair<std::string, std::string>>& schema_and_instance);

}  // namespace zinfer::grammar::testing
