#include "actors/grammar/vocabulary.h"

#include <algorithm>

#include "actors/grammar/errors.h"
#include "actors/grammar/utf8_class.h"
#include "actors/tokenizer/byte_level.h"

namespace zinfer::grammar {

Vocabulary::Vocabulary(std::vector<std::string> token_bytes, std::vector<char> excluded,
                       std::vector<int32_t> stop_ids, int32_t mask_size)
    : bytes_(std::move(token_bytes)), excluded_(std::move(excluded)), stop_ids_(std::move(stop_ids)) {
  excluded_.resize(bytes_.size(), 0);
  mask_size_ = mask_size > 0 ? mask_size : static_cast<int32_t>(bytes_.size());
  if (static_cast<size_t>(mask_size_) < bytes_.size()) bytes_.resize(static_cast<size_t>(mask_size_));
  for (int32_t id : stop_ids_)
    if (id < 0 || id >= mask_size_)
      throw GrammarError("stop_ids", "stop token id " + std::to_string(id) + " is outside the vocabulary");
  for (int32_t id = 0; id < static_cast<int32_t>(bytes_.size()); ++id)
    if (usable(id)) {
      sorted_.push_back(id);
      max_token_bytes_ = std::max(max_token_bytes_, bytes_[static_cast<size_t>(id)].size());
    }
  std::sort(sorted_.begin(), sorted_.end(), [&](int32_t a, int32_t b) {
    const int c = bytes_[static_cast<size_t>(a)].compare(bytes_[static_cast<size_t>(b)]);
    return c < 0 || (c == 0 && a < b);
  });
  build_trie();
}

bool Vocabulary::usable(int32_t id) const {
  return id >= 0 && static_cast<size_t>(id) < bytes_.size() && !excluded_[static_cast<size_t>(id)] &&
         !bytes_[static_cast<size_t>(id)].empty() && !is_stop(id);
}

bool Vocabulary::is_stop(int32_t id) const {
  return std::find(stop_ids_.begin(), stop_ids_.end(), id) != stop_ids_.end();
}

// Sorted tokens make the trie a sequence of appends: each token shares its longest common prefix
// with the previous one, so only the nodes past that prefix are new, and every subtree's tokens are
// one contiguous run of sorted().
void Vocabulary::build_trie() {
  trie_.assign(1, TrieNode{});
  std::vector<uint32_t> path{0};      // path[d]: the node at depth d of the previous token
  std::vector<uint32_t> last_child{0};  // per node, for appending children in byte order
  std::string previous;
  for (uint32_t i = 0; i < sorted_.size(); ++i) {
    const std::string& s = bytes_[static_cast<size_t>(sorted_[i])];
    size_t common = 0;
    while (common < s.size() && common < previous.size() && s[common] == previous[common]) ++common;
    path.resize(common + 1);
    for (size_t d = common; d < s.size(); ++d) {
      const auto id = static_cast<uint32_t>(trie_.size());
      TrieNode node;
      node.byte = static_cast<uint8_t>(s[d]);
      node.begin = node.here_end = i;
      trie_.push_back(node);
      last_child.push_back(0);
      const uint32_t parent = path.back();
      if (last_child[parent] == 0) trie_[parent].first_child = id;
      else trie_[last_child[parent]].next_sibling = id;
      last_child[parent] = id;
      path.push_back(id);
    }
    trie_[path.back()].here_end = i + 1;
    for (uint32_t node : path) trie_[node].end = i + 1;
    previous = s;
  }
}

namespace {

bool is_byte_level_piece(const std::string& piece, std::string& out) {
  const auto& map = tok::ByteLevelMap::get();
  out.clear();
  size_t pos = 0;
  uint32_t cp;
  while (pos < piece.size()) {
    if (!utf8_decode(piece, pos, cp) || cp >= map.char_to_byte.size() || map.char_to_byte[cp] < 0) return false;
    out += static_cast<char>(map.char_to_byte[cp]);
  }
  return true;
}

bool sentencepiece_byte(const std::string& piece, std::string& out) {
  if (piece.size() != 6 || piece.compare(0, 3, "<0x") != 0 || piece[5] != '>') return false;
  const int v = std::stoi(piece.substr(3, 2), nullptr, 16);
  out.assign(1, static_cast<char>(v));
  return true;
}

}  // namespace

std::shared_ptr<const Vocabulary> Vocabulary::from_tokenizer(const tok::Tokenizer& tokenizer,
                                                             std::vector<int32_t> stop_ids, int32_t mask_size) {
  const int32_t n = tokenizer.vocab_size();
  std::vector<std::string> pieces(static_cast<size_t>(n));
  std::vector<char> excluded(static_cast<size_t>(n), 0);
  // Byte-level when every ordinary token reads through GPT-2's byte map; a SentencePiece
  // vocabulary holds U+2581 and the <0xNN> byte tokens.
  bool byte_level = true;
  std::string scratch;
  for (int32_t id = 0; id < n; ++id) {
    pieces[static_cast<size_t>(id)] = tokenizer.id_to_token(id);
    excluded[static_cast<size_t>(id)] = tokenizer.is_special(id) ? 1 : 0;
    if (!excluded[static_cast<size_t>(id)] && byte_level && !is_byte_level_piece(pieces[static_cast<size_t>(id)], scratch))
      byte_level = false;
  }
  const bool sentencepiece = !byte_level && tokenizer.token_to_id("<0x00>").has_value();
  if (!byte_level && !sentencepiece)
    throw GrammarError("tokenizer", "the vocabulary is neither byte-level BPE nor SentencePiece with byte fallback");
  std::vector<std::string> bytes(static_cast<size_t>(n));
  for (int32_t id = 0; id < n; ++id) {
    const std::string& piece = pieces[static_cast<size_t>(id)];
    std::string& out = bytes[static_cast<size_t>(id)];
    if (excluded[static_cast<size_t>(id)]) {
      out = piece;
    } else if (byte_level) {
      is_byte_level_piece(piece, out);
    } else if (!sentencepiece_byte(piece, out)) {
      out.clear();
      for (size_t i = 0; i < piece.size(); ++i) {
        if (piece.compare(i, 3, "\xE2\x96\x81") == 0) {
          out += ' ';
          i += 2;
        } else {
          out += piece[i];
        }
      }
    }
  }
  return std::make_shared<const Vocabulary>(std::move(bytes), std::move(excluded), std::move(stop_ids),
                                            std::max(mask_size, n));
}

}  // namespace zinfer::grammar
