#include "actors/detokenizer/stop_matcher.h"

#include <algorithm>

namespace zinfer::actors {

StopMatcher::StopMatcher(std::vector<std::string> stops, bool keep_stop) : keep_stop_(keep_stop) {
  for (auto& s : stops) {
    if (!s.empty()) stops_.push_back(std::move(s));
  }
}

StopMatcher::Output StopMatcher::feed(const std::string& piece) {
  Output out;
  if (stopped_) {
    out.stopped = true;
    return out;
  }
  held_ += piece;
  // The earliest stop string occurrence wins.
  size_t first = std::string::npos;
  const std::string* matched = nullptr;
  for (const auto& s : stops_) {
    const size_t at = held_.find(s);
    if (at < first) {  // the earliest occurrence; at equal positions the first in the list (as vLLM)
      first = at;
      matched = &s;
    }
  }
  if (first != std::string::npos) {
    out.text = held_.substr(0, keep_stop_ ? first + matched->size() : first);
    out.matched = *matched;
    out.stopped = true;
    stopped_ = true;
    held_.clear();
    return out;
  }
  // Hold back the longest suffix that is a proper prefix of some stop string. Stop strings and
  // the text are valid UTF-8, so a match can only begin on a character boundary: what is
  // released is always whole characters.
  size_t keep = 0;
  for (const auto& s : stops_) {
    size_t max_len = std::min(s.size() - 1, held_.size());
    for (size_t len = max_len; len > keep; --len) {
      if (held_.compare(held_.size() - len, len, s, 0, len) == 0) {
        keep = len;
        break;
      }
    }
  }
  out.text = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return out;
}

std::string StopMatcher::finish() {
  std::string rest;
  if (!stopped_) rest.swap(held_);
  return rest;
}

}  // namespace zinfer::actors
