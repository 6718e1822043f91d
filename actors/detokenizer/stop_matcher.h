// Stop strings over streamed text: text is fed in pieces; what can be released is everything
// that cannot be the beginning of a stop string, and once a stop string appears the text before it
// is released and the sample ends. The released text never contains a stop string, unless the
// matcher keeps it (vLLM's include_stop_str_in_output): then the text ends with it.
#pragma once

#include <string>
#include <vector>

namespace zinfer::actors {

class StopMatcher {
 public:
  explicit StopMatcher(std::vector<std::string> stops, bool keep_stop = false);

  struct Output {
    std::string text;     // safe to send now
    bool stopped = false; // a stop string was found; nothing after it is ever released
    std::string matched;  // the stop string found (when stopped)
  };
  Output feed(const std::string& piece);
  // End of the sample: releases whatever is held back (it did not turn into a stop string).
  std::string finish();

 private:
  std::vector<std::string> stops_;
  std::string held_;
  bool keep_stop_ = false;
  bool stopped_ = false;
};

}  // namespace zinfer::actors
