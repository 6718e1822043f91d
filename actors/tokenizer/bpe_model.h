// The BPE model of tokenizer.json, as HF `tokenizers` runs it: characters (with the continuing
// subword prefix / end-of-word suffix) looked up in the vocabulary, byte fallback to <0xNN>
// tokens, unk (optionally fused), then merges applied lowest rank first, leftmost on ties.
// ignore_merges emits a word that is itself in the vocabulary as one token. Words up to
// kMaxCachedWordBytes are cached.
#pragma once

#include <cstdint>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "actors/tokenizer/string_map.h"

namespace zinfer::tok {

class BpeModel {
 public:
  struct Options {
    std::optional<std::string> unk_token;
    std::string continuing_subword_prefix;
    std::string end_of_word_suffix;
    bool fuse_unk = false;
    bool byte_fallback = false;
    bool ignore_merges = false;
  };

  // merges: pairs in rank order. Throws TokenizerError (naming `origin`) for a merge whose parts
  // or result are not in the vocabulary.
  BpeModel(StringIdMap vocab, const std::vector<std::pair<std::string, std::string>>& merges, Options options,
           const std::string& origin);

  // Appends the ids of one pre-tokenized word.
  void tokenize(std::string_view word, std::vector<int32_t>& out) const;

  std::optional<int32_t> token_to_id(std::string_view token) const;
  const std::string* id_to_token(int32_t id) const;  // nullptr when unknown
  int32_t max_id() const { return static_cast<int32_t>(id_to_token_.size()) - 1; }

  static constexpr size_t kMaxCachedWordBytes = 256;
  static constexpr size_t kCacheCapacity = 1 << 17;

 private:
  struct MergeInfo {
    uint32_t rank;
    int32_t new_id;
  };
  const MergeInfo* find_merge(int32_t left, int32_t right) const;
  void initial_symbols(std::string_view word, std::vector<int32_t>& symbols) const;
  void merge_short(std::vector<int32_t>& symbols) const;
  void merge_long(std::vector<int32_t>& symbols) const;

  StringIdMap vocab_;
  std::vector<std::string> id_to_token_;
  std::vector<uint8_t> id_known_;
  Options options_;
  std::optional<int32_t> unk_id_;
  std::vector<int32_t> byte_ids_;  // <0xNN> ids for byte fallback, -1 where absent

  // Open-addressing table (left,right) -> MergeInfo: the hot lookup of every merge step.
  std::vector<uint64_t> merge_keys_;
  std::vector<MergeInfo> merge_values_;
  uint64_t merge_mask_ = 0;

  mutable std::shared_mutex cache_mutex_;
  mutable StringMap<std::vector<int32_t>> cache_;
};

}  // namespace zinfer::tok
