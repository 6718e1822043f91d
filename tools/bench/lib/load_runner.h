// Drives a backend with a request list: sends request i at its arrival offset (arrival.h), holds
// at most max_concurrency in flight (a semaphore acquired before sending, as vLLM does, so TTFT
// counts from the real send), shows a progress bar on stderr, and returns every request's record
// in list order with the benchmark's wall duration.
#pragma once

#include <optional>
#include <vector>

#include "tools/bench/lib/backend.h"
#include "tools/bench/lib/datasets.h"

namespace zinfer::bench {

struct LoadOptions {
  std::string model;
  double request_rate = 0;  // +inf = all at once
  double burstiness = 1.0;
  std::optional<int> max_concurrency;
  uint64_t seed = 0;
  bool ignore_eos = false;
  bool progress = true;
};

struct LoadResult {
  std::vector<RequestRecord> records;
  double duration_s = 0;
};

// Re-encodes each successful request's text with the tokenizer (RequestRecord::
// tokenizer_output_tokens): the output count when the server sent no usage, and the check of it.
void count_output_tokens(std::vector<RequestRecord>& records, const TokenCodec& codec);

LoadResult run_load(Backend& backend, const std::vector<BenchRequest>& requests, const LoadOptions& opt);

}  // namespace zinfer::bench
