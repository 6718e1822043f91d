#include "actors/tokenizer/added_vocabulary.h"

#include <algorithm>

#include <utf8proc.h>

#include "actors/text/utf8.h"
#include "actors/tokenizer/components.h"

namespace zinfer::tok {

void AddedVocabulary::Trie::insert(std::string_view key, int32_t token) {
  if (nodes.empty()) nodes.emplace_back();
  if (key.empty()) return;  // an empty token can never be matched
  int32_t node = 0;
  for (unsigned char c : key) {
    auto& children = nodes[static_cast<size_t>(node)].children;
    auto it = std::find_if(children.begin(), children.end(), [c](const auto& p) { return p.first == c; });
    if (it != children.end()) {
      node = it->second;
    } else {
      const auto child = static_cast<int32_t>(nodes.size());
      children.emplace_back(c, child);
      nodes.emplace_back();
      node = child;
    }
  }
  // Two added tokens with the same content: the later one wins, as in HF's map of contents.
  nodes[static_cast<size_t>(node)].token = token;
}

void AddedVocabulary::Trie::finish() {
  if (nodes.empty()) nodes.emplace_back();
  root_table.assign(256, -1);
  for (auto [c, child] : nodes[0].children) root_table[c] = child;
}

size_t AddedVocabulary::Trie::longest_at(std::string_view text, size_t pos, int32_t& token) const {
  int32_t node = root_table[static_cast<unsigned char>(text[pos])];
  size_t best = 0;
  for (size_t i = pos + 1; node >= 0; ++i) {
    const auto& n = nodes[static_cast<size_t>(node)];
    if (n.token >= 0) {
      best = i - pos;
      token = n.token;
    }
    if (i >= text.size()) break;
    const unsigned char c = static_cast<unsigned char>(text[i]);
    int32_t next = -1;
    for (auto [k, child] : n.children) {
      if (k == c) {
        next = child;
        break;
      }
    }
    node = next;
  }
  return best;
}

AddedVocabulary::AddedVocabulary(std::vector<AddedToken> tokens, const Normalizer* normalizer)
    : tokens_(std::move(tokens)) {
  for (size_t i = 0; i < tokens_.size(); ++i) {
    const AddedToken& t = tokens_[i];
    by_id_[t.id] = i;
    by_content_[t.content] = i;
    max_id_ = std::max(max_id_, t.id);
    // A normalized token is looked for in normalized text, so by its normalized content.
    if (t.normalized) {
      std::string key = t.content;
      if (normalizer) normalizer->normalize(key);
      normalized_trie_.insert(key, static_cast<int32_t>(i));
    } else {
      raw_trie_.insert(t.content, static_cast<int32_t>(i));
    }
  }
  raw_trie_.finish();
  normalized_trie_.finish();
}

namespace {

// The \w of Rust's regex crate, which HF uses for single_word: Alphabetic, marks, decimal
// digits, connector punctuation and the joiners.
bool is_word_char(char32_t c) {
  if (c < 0x80) return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  if (c == 0x200C || c == 0x200D) return true;
  // Letter-like symbols that Unicode counts as Other_Alphabetic: circled and squared Latin letters.
  if ((c >= 0x24B6 && c <= 0x24E9) || (c >= 0x1F130 && c <= 0x1F149) || (c >= 0x1F150 && c <= 0x1F169) ||
      (c >= 0x1F170 && c <= 0x1F189))
    return true;
  const auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  return (cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_ND) || cat == UTF8PROC_CATEGORY_NL ||
         cat == UTF8PROC_CATEGORY_PC;
}

}  // namespace

void AddedVocabulary::split(std::string_view text, bool normalized_tokens, std::vector<Segment>& out) const {
  const Trie& trie = normalized_tokens ? normalized_trie_ : raw_trie_;
  size_t emitted = 0;  // end of what has been emitted so far
  auto emit_text = [&](size_t begin, size_t end) {
    if (end > begin) out.push_back({begin, end, -1});
  };
  if (!trie.empty()) {
    size_t pos = 0;
    while (pos < text.size()) {
      int32_t index = -1;
      const size_t len = trie.longest_at(text, pos, index);
      if (len == 0) {
        ++pos;
        continue;
      }
      const AddedToken& t = tokens_[static_cast<size_t>(index)];
      size_t begin = pos, end = pos + len;
      pos = end;  // matches never overlap, whether or not this one is kept
      if (t.single_word) {
        const bool word_before = begin > 0 && is_word_char(utf8::last(text.substr(0, begin)));
        size_t p = end;
        const bool word_after = end < text.size() && is_word_char(utf8::next(text, p));
        if (word_before || word_after) continue;
      }
      if (t.lstrip) {
        while (begin > emitted) {
          size_t start = begin - 1;
          while (start > emitted && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
          size_t p = start;
          if (!utf8::is_whitespace(utf8::next(text, p))) break;
          begin = start;
        }
      }
      if (t.rstrip) {
        while (end < text.size()) {
          size_t p = end;
          if (!utf8::is_whitespace(utf8::next(text, p))) break;
          end = p;
        }
        pos = end;
      }
      emit_text(emitted, begin);
      out.push_back({begin, end, t.id});
      emitted = end;
    }
  }
  emit_text(emitted, text.size());
}

const AddedToken* AddedVocabulary::by_id(int32_t id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : &tokens_[it->second];
}

std::optional<int32_t> AddedVocabulary::by_content(std::string_view content) const {
  auto it = by_content_.find(content);
  if (it == by_content_.end()) return std::nullopt;
  return tokens_[it->second].id;
}

bool AddedVocabulary::is_special_content(std::string_view content) const {
  auto it = by_content_.find(content);
  return it != by_content_.end() && tokens_[it->second].special;
}

}  // namespace zinfer::tok
