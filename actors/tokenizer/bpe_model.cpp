#include "actors/tokenizer/bpe_model.h"

#include <cstdio>
#include <mutex>
#include <algorithm>
#include <functional>

#include "actors/text/utf8.h"
#include "actors/tokenizer/tokenizer.h"

namespace zinfer::tok {

namespace {

constexpr uint64_t kEmptyKey = ~uint64_t{0};

uint64_t pair_key(int32_t left, int32_t right) {
  return (uint64_t{static_cast<uint32_t>(left)} << 32) | static_cast<uint32_t>(right);
}

uint64_t mix(uint64_t key) {
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdULL;
  key ^= key >> 33;
  return key;
}

// Below this many symbols a linear scan for the best pair beats a heap.
constexpr size_t kShortWordSymbols = 32;

}  // namespace

BpeModel::BpeModel(StringIdMap vocab, const std::vector<std::pair<std::string, std::string>>& merges,
                   Options options, const std::string& origin)
    : vocab_(std::move(vocab)), options_(std::move(options)) {
  int32_t max_id = -1;
  for (const auto& [token, id] : vocab_) {
    if (id < 0) throw TokenizerError(origin + ": negative id " + std::to_string(id) + " for token '" + token + "'");
    if (id > kMaxTokenId) {
      throw TokenizerError(origin + ": id " + std::to_string(id) + " of token '" + token + "' is past the largest supported (" +
                           std::to_string(kMaxTokenId) + ")");
    }
    max_id = std::max(max_id, id);
  }
  id_to_token_.resize(static_cast<size_t>(max_id + 1));
  id_known_.assign(static_cast<size_t>(max_id + 1), 0);
  for (const auto& [token, id] : vocab_) {
    id_to_token_[static_cast<size_t>(id)] = token;
    id_known_[static_cast<size_t>(id)] = 1;
  }
  if (options_.unk_token) {
    if (auto it = vocab_.find(*options_.unk_token); it != vocab_.end()) unk_id_ = it->second;
  }
  byte_ids_.assign(256, -1);
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    if (auto it = vocab_.find(std::string_view(name)); it != vocab_.end()) byte_ids_[b] = it->second;
  }

  size_t capacity = 16;
  while (capacity < merges.size() * 2) capacity <<= 1;
  merge_keys_.assign(capacity, kEmptyKey);
  merge_values_.resize(capacity);
  merge_mask_ = capacity - 1;
  const size_t prefix_len = options_.continuing_subword_prefix.size();
  auto id_of = [&](const std::string& token, size_t rank) {
    auto it = vocab_.find(token);
    if (it == vocab_.end())
      throw TokenizerError(origin + ": merge " + std::to_string(rank) + " uses '" + token +
                           "', which is not in the vocabulary");
    return it->second;
  };
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [a, b] = merges[rank];
    const int32_t left = id_of(a, rank), right = id_of(b, rank);
    const std::string merged = a + (b.size() >= prefix_len && b.compare(0, prefix_len, options_.continuing_subword_prefix) == 0
                                        ? b.substr(prefix_len)
                                        : b);
    const int32_t new_id = id_of(merged, rank);
    const uint64_t key = pair_key(left, right);
    // A repeated pair takes its last rank, as HF's HashMap collection does.
    for (uint64_t slot = mix(key) & merge_mask_;; slot = (slot + 1) & merge_mask_) {
      if (merge_keys_[slot] == kEmptyKey || merge_keys_[slot] == key) {
        merge_keys_[slot] = key;
        merge_values_[slot] = {static_cast<uint32_t>(rank), new_id};
        break;
      }
    }
  }
}

const BpeModel::MergeInfo* BpeModel::find_merge(int32_t left, int32_t right) const {
  const uint64_t key = pair_key(left, right);
  for (uint64_t slot = mix(key) & merge_mask_;; slot = (slot + 1) & merge_mask_) {
    if (merge_keys_[slot] == key) return &merge_values_[slot];
    if (merge_keys_[slot] == kEmptyKey) return nullptr;
  }
}

std::optional<int32_t> BpeModel::token_to_id(std::string_view token) const {
  if (auto it = vocab_.find(token); it != vocab_.end()) return it->second;
  return std::nullopt;
}

const std::string* BpeModel::id_to_token(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= id_to_token_.size() || !id_known_[static_cast<size_t>(id)]) return nullptr;
  return &id_to_token_[static_cast<size_t>(id)];
}

void BpeModel::initial_symbols(std::string_view word, std::vector<int32_t>& symbols) const {
  const bool affixes = !options_.continuing_subword_prefix.empty() || !options_.end_of_word_suffix.empty();
  std::string key;
  int32_t pending_unk = -1;  // an unk not yet emitted (fuse_unk grows it)
  size_t pos = 0;
  while (pos < word.size()) {
    const size_t begin = pos;
    pos += utf8::char_len(static_cast<unsigned char>(word[pos]));
    std::string_view ch = word.substr(begin, pos - begin);
    if (affixes) {
      key.clear();
      if (begin > 0) key.append(options_.continuing_subword_prefix);
      key.append(ch);
      if (pos >= word.size()) key.append(options_.end_of_word_suffix);
      ch = key;
    }
    if (auto it = vocab_.find(ch); it != vocab_.end()) {
      if (pending_unk >= 0) symbols.push_back(pending_unk);
      pending_unk = -1;
      symbols.push_back(it->second);
      continue;
    }
    if (options_.byte_fallback) {
      bool all = true;
      for (unsigned char b : ch) all = all && byte_ids_[b] >= 0;
      if (all) {
        // HF leaves a pending unk in place here, so it lands after these bytes; kept as is.
        for (unsigned char b : ch) symbols.push_back(byte_ids_[b]);
        continue;
      }
    }
    if (options_.unk_token) {
      if (!unk_id_) throw TokenizerError("the unk token '" + *options_.unk_token + "' is not in the vocabulary");
      if (pending_unk >= 0 && !options_.fuse_unk) symbols.push_back(pending_unk);
      pending_unk = *unk_id_;
    }
    // Without an unk token an unknown character is dropped, as HF does.
  }
  if (pending_unk >= 0) symbols.push_back(pending_unk);
}

void BpeModel::merge_short(std::vector<int32_t>& symbols) const {
  constexpr uint32_t kNone = ~uint32_t{0};
  uint32_t ranks[kShortWordSymbols];
  int32_t results[kShortWordSymbols];
  size_t n = symbols.size();
  auto score = [&](size_t i) {
    const MergeInfo* m = find_merge(symbols[i], symbols[i + 1]);
    ranks[i] = m ? m->rank : kNone;
    results[i] = m ? m->new_id : -1;
  };
  for (size_t i = 0; i + 1 < n; ++i) score(i);
  while (n > 1) {
    size_t best = 0;
    for (size_t i = 1; i + 1 < n; ++i)
      if (ranks[i] < ranks[best]) best = i;
    if (ranks[best] == kNone) break;
    symbols[best] = results[best];
    symbols.erase(symbols.begin() + static_cast<long>(best) + 1);
    for (size_t i = best + 1; i + 1 < n; ++i) {
      ranks[i] = ranks[i + 1];
      results[i] = results[i + 1];
    }
    --n;
    if (best > 0) score(best - 1);
    if (best + 1 < n) score(best);
  }
}

void BpeModel::merge_long(std::vector<int32_t>& symbols) const {
  struct Candidate {
    uint32_t rank;
    int32_t pos;
    int32_t new_id;
    bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  struct Links {
    int32_t prev, next;
  };
  // Scratch reused across calls on this thread: long words come in bursts (base64, runs of one
  // character) and each would otherwise allocate three arrays.
  thread_local std::vector<Links> links;
  thread_local std::vector<Candidate> heap;
  const int32_t n = static_cast<int32_t>(symbols.size());
  links.resize(static_cast<size_t>(n));
  heap.clear();
  for (int32_t i = 0; i < n; ++i) links[static_cast<size_t>(i)] = {i - 1, i + 1 < n ? i + 1 : -1};
  constexpr int32_t kMerged = -2;  // prev of a symbol merged into its left neighbour
  const auto later = std::greater<Candidate>();
  auto consider = [&](int32_t pos) {
    const int32_t right = links[static_cast<size_t>(pos)].next;
    if (right < 0) return;
    if (const MergeInfo* m = find_merge(symbols[static_cast<size_t>(pos)], symbols[static_cast<size_t>(right)])) {
      heap.push_back({m->rank, pos, m->new_id});
      std::push_heap(heap.begin(), heap.end(), later);
    }
  };
  for (int32_t i = 0; i + 1 < n; ++i) {
    if (const MergeInfo* m = find_merge(symbols[static_cast<size_t>(i)], symbols[static_cast<size_t>(i) + 1]))
      heap.push_back({m->rank, i, m->new_id});
  }
  std::make_heap(heap.begin(), heap.end(), later);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const Candidate top = heap.back();
    heap.pop_back();
    const auto pos = static_cast<size_t>(top.pos);
    if (links[pos].prev == kMerged || links[pos].next < 0) continue;
    const auto right = static_cast<size_t>(links[pos].next);
    const MergeInfo* m = find_merge(symbols[pos], symbols[right]);
    if (m == nullptr || m->new_id != top.new_id || m->rank != top.rank) continue;  // stale
    symbols[pos] = top.new_id;
    links[pos].next = links[right].next;
    links[right].prev = kMerged;
    if (links[pos].next >= 0) links[static_cast<size_t>(links[pos].next)].prev = top.pos;
    if (links[pos].prev >= 0) consider(links[pos].prev);
    consider(top.pos);
  }
  size_t out = 0;
  for (size_t i = 0; i < symbols.size(); ++i)
    if (links[i].prev != kMerged) symbols[out++] = symbols[i];
  symbols.resize(out);
}

void BpeModel::tokenize(std::string_view word, std::vector<int32_t>& out) const {
  if (word.empty()) return;
  if (options_.ignore_merges) {
    if (auto it = vocab_.find(word); it != vocab_.end()) {
      out.push_back(it->second);
      return;
    }
  }
  const bool cacheable = word.size() <= kMaxCachedWordBytes;
  if (cacheable) {
    std::shared_lock lock(cache_mutex_);
    if (auto it = cache_.find(word); it != cache_.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<int32_t> symbols;
  symbols.reserve(word.size());
  initial_symbols(word, symbols);
  if (symbols.size() <= kShortWordSymbols) {
    merge_short(symbols);
  } else {
    merge_long(symbols);
  }
  out.insert(out.end(), symbols.begin(), symbols.end());
  if (cacheable) {
    std::unique_lock lock(cache_mutex_);
    if (cache_.size() < kCacheCapacity) cache_.emplace(std::string(word), std::move(symbols));
  }
}

}  // namespace zinfer::tok
