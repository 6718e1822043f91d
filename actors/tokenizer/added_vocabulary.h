// The added tokens of tokenizer.json (special or not) and how HF `tokenizers` cuts them out of
// the text before anything else runs: tokens with normalized=false are found in the raw text,
// those with normalized=true in each normalized piece; matches are leftmost-longest and
// non-overlapping, then filtered by single_word and widened by lstrip/rstrip.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "actors/tokenizer/string_map.h"

namespace zinfer::tok {

class Normalizer;

struct AddedToken {
  int32_t id = 0;
  std::string content;
  bool single_word = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = false;
  bool special = false;
};

class AddedVocabulary {
 public:
  struct Segment {
    size_t begin, end;
    int32_t id;  // -1: ordinary text
  };

  // `normalizer` (may be null) normalizes the content of normalized tokens, which are matched
  // against normalized text.
  AddedVocabulary(std::vector<AddedToken> tokens, const Normalizer* normalizer);

  // Cuts `text` into added tokens and the text between them (empty stretches omitted).
  // `normalized_tokens` picks the set: false for the raw text, true for a normalized piece.
  void split(std::string_view text, bool normalized_tokens, std::vector<Segment>& out) const;
  bool has_normalized_tokens() const { return !normalized_trie_.empty(); }

  const AddedToken* by_id(int32_t id) const;
  std::optional<int32_t> by_content(std::string_view content) const;
  bool is_special_content(std::string_view content) const;
  int32_t max_id() const { return max_id_; }

 private:
  // A byte trie; node 0 is the root. Each node lists its children sparsely except the root,
  // whose 256-entry table makes rejecting a non-starting byte one load.
  struct Trie {
    struct Node {
      std::vector<std::pair<unsigned char, int32_t>> children;
      int32_t token = -1;  // index into tokens_
    };
    std::vector<Node> nodes;
    std::vector<int32_t> root_table;
    bool empty() const { return nodes.size() <= 1; }
    void insert(std::string_view key, int32_t token);
    void finish();
    // Longest token starting at text[pos]; returns its length, 0 when none.
    size_t longest_at(std::string_view text, size_t pos, int32_t& token) const;
  };

  std::vector<AddedToken> tokens_;
  std::unordered_map<int32_t, size_t> by_id_;
  StringMap<size_t> by_content_;
  Trie raw_trie_, normalized_trie_;
  int32_t max_id_ = -1;
};

}  // namespace zinfer::tok
