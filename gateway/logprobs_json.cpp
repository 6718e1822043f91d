#include "gateway/logprobs_json.h"

#include <algorithm>
#include <cstdio>

namespace zinfer::gateway {
namespace {

using nlohmann::json;

constexpr float kFloor = -9999.0f;

float clamp_logprob(float x) { return std::max(x, kFloor); }  // also maps NaN-free -inf

// The length of the whole UTF-8 character starting at s[i], or 0 when none starts there.
size_t utf8_char_len(const std::string& s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  size_t len = 0;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0 && c >= 0xC2) len = 2;
  else if ((c & 0xF0) == 0xE0) len = 3;
  else if ((c & 0xF8) == 0xF0 && c <= 0xF4) len = 4;
  else return 0;
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  }
  return len;
}

bool valid_utf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const size_t len = utf8_char_len(s, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

// The position's token first, then the alternatives without it again.
std::vector<std::pair<int32_t, float>> with_token_first(const LogprobEntry& e) {
  std::vector<std::pair<int32_t, float>> out;
  if (e.logprob) out.emplace_back(e.token, *e.logprob);
  if (e.alternatives) {
    for (const auto& t : *e.alternatives) {
      if (e.logprob && t.token == e.token) continue;
      out.emplace_back(t.token, t.logprob);
    }
  }
  return out;
}

}  // namespace

size_t text_characters(const std::string& text) {
  size_t n = 0;
  for (size_t i = 0; i < text.size();) {
    const size_t len = utf8_char_len(text, i);
    if (len > 0) {
      ++n;
      i += len;
    } else {
      if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++n;  // a lead byte starts a character
      ++i;
    }
  }
  return n;
}

std::string TokenNaming::name(int32_t id) const {
  if (as_token_ids || !texts) return "token_id:" + std::to_string(id);
  auto it = texts->find(id);
  if (it == texts->end()) return "token_id:" + std::to_string(id);
  const std::string& t = it->second;
  if (valid_utf8(t)) return t;
  std::string out = "bytes:";
  for (const char ch : t) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7F && c != '\\') {
      out.push_back(ch);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

json TokenNaming::bytes(int32_t id) const {
  std::string t = name(id);
  if (!as_token_ids && texts) {
    auto it = texts->find(id);
    if (it != texts->end()) t = it->second;  // the token's own bytes, whole characters or not
  }
  json out = json::array();
  for (const char c : t) out.push_back(static_cast<unsigned char>(c));
  return out;
}

size_t TokenNaming::characters(int32_t id) const {
  if (as_token_ids || !texts) return name(id).size();
  auto it = texts->find(id);
  return it == texts->end() ? 0 : text_characters(it->second);
}

json completion_logprobs_json(const std::vector<LogprobEntry>& entries, int32_t top, size_t text_offset,
                              const TokenNaming& naming) {
  json tokens = json::array(), token_logprobs = json::array(), tops = json::array(), offsets = json::array();
  size_t offset = text_offset;
  for (const LogprobEntry& e : entries) {
    tokens.push_back(naming.name(e.token));
    offsets.push_back(offset);
    offset += naming.characters(e.token);
    if (!e.logprob) {
      token_logprobs.push_back(nullptr);
      tops.push_back(nullptr);
      continue;
    }
    token_logprobs.push_back(clamp_logprob(*e.logprob));
    json alternatives = json::object();
    const auto listed = with_token_first(e);
    for (size_t i = 0; i < listed.size() && static_cast<int32_t>(i) <= top; ++i) {
      const std::string key = naming.name(listed[i].first);
      if (!alternatives.contains(key)) alternatives[key] = clamp_logprob(listed[i].second);
    }
    tops.push_back(std::move(alternatives));
  }
  return {{"tokens", tokens}, {"token_logprobs", token_logprobs}, {"top_logprobs", tops}, {"text_offset", offsets}};
}

json chat_logprobs_json(const std::vector<LogprobEntry>& entries, int32_t top, const TokenNaming& naming) {
  json content = json::array();
  for (const LogprobEntry& e : entries) {
    json item = {{"token", naming.name(e.token)}, {"bytes", naming.bytes(e.token)}};
    item["logprob"] = e.logprob ? json(clamp_logprob(*e.logprob)) : json(kFloor);
    json alternatives = json::array();
    const auto listed = with_token_first(e);
    for (size_t i = 0; i < listed.size() && static_cast<int32_t>(i) < top; ++i) {
      alternatives.push_back({{"token", naming.name(listed[i].first)},
                              {"logprob", clamp_logprob(listed[i].second)},
                              {"bytes", naming.bytes(listed[i].first)}});
    }
    item["top_logprobs"] = std::move(alternatives);
    content.push_back(std::move(item));
  }
  return {{"content", content}};
}

json prompt_logprobs_json(const std::vector<int32_t>& prompt_ids, const protocol::PromptLogprobs& lp,
                          const TokenNaming& naming) {
  json out = json::array();
  for (size_t p = 0; p < prompt_ids.size(); ++p) {
    const int64_t i = static_cast<int64_t>(p) - lp.first_position;
    if (i < 0 || i >= static_cast<int64_t>(lp.logprobs.size())) {
      out.push_back(nullptr);
      continue;
    }
    const auto k = static_cast<size_t>(i);
    json position = json::object();
    const int32_t token = prompt_ids[p];
    position[std::to_string(token)] = {{"logprob", clamp_logprob(lp.logprobs[k])},
                                       {"rank", k < lp.ranks.size() ? lp.ranks[k] : 0},
                                       {"decoded_token", naming.name(token)}};
    if (k < lp.top_logprobs.size()) {
      int32_t rank = 0;
      for (const auto& t : lp.top_logprobs[k]) {
        ++rank;
        const std::string key = std::to_string(t.token);
        if (position.contains(key)) continue;
        position[key] = {{"logprob", clamp_logprob(t.logprob)}, {"rank", rank}, {"decoded_token", naming.name(t.token)}};
      }
    }
    out.push_back(std::move(position));
  }
  return out;
}

std::vector<LogprobEntry> prompt_entries(const std::vector<int32_t>& prompt_ids, const protocol::PromptLogprobs* lp) {
  std::vector<LogprobEntry> out;
  out.reserve(prompt_ids.size());
  for (size_t p = 0; p < prompt_ids.size(); ++p) {
    LogprobEntry e;
    e.token = prompt_ids[p];
    if (lp) {
      const int64_t i = static_cast<int64_t>(p) - lp->first_position;
      if (i >= 0 && i < static_cast<int64_t>(lp->logprobs.size())) {
        e.logprob = lp->logprobs[static_cast<size_t>(i)];
        if (static_cast<size_t>(i) < lp->top_logprobs.size()) e.alternatives = &lp->top_logprobs[static_cast<size_t>(i)];
      }
    }
    out.push_back(e);
  }
  return out;
}

}  // namespace zinfer::gateway
