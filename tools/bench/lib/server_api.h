// What `zinfer-bench serve` asks a server besides the benchmark's requests: whether it is ready
// (vLLM's --ready-check-timeout-sec) and, when no local tokenizer is given, its tokenizer through
// vLLM's /tokenize and /detokenize (so that --model may be a served name). Plain blocking HTTP/1.1
// (Boost.Beast), one connection per call.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "tools/bench/lib/datasets.h"
#include "tools/bench/lib/openai_client.h"

namespace zinfer::bench {

struct HttpReply {
  unsigned status = 0;
  std::string body;
};

using Headers = std::vector<std::pair<std::string, std::string>>;

// GET (empty body) or POST (JSON body) to url.path + target. Throws std::runtime_error when the
// server cannot be reached or the exchange fails.
HttpReply http_call(const HttpUrl& url, const std::string& target, const std::string& json_body, const Headers& headers);

// Polls GET /health (then /v1/models) until one answers 200; false when `timeout` passes first.
bool wait_until_ready(const HttpUrl& url, std::chrono::seconds timeout, const Headers& headers);

// The server's tokenizer: encode through POST /tokenize (no special tokens added), decode through
// POST /detokenize; the vocabulary size is the first id /detokenize refuses (found by bisection);
// no token is taken as special (vLLM's random dataset draws from the whole vocabulary too).
// Throws std::runtime_error when the server has no /tokenize.
class RemoteTokenCodec : public TokenCodec {
 public:
  RemoteTokenCodec(HttpUrl url, std::string model, Headers headers);
  int32_t vocab_size() const override { return vocab_size_; }
  bool is_special(int32_t) const override { return false; }
  std::vector<int32_t> encode(std::string_view text) const override;
  std::string decode(std::span<const int32_t> ids) const override;

 private:
  bool decodes(int32_t id) const;
  HttpUrl url_;
  std::string model_;
  Headers headers_;
  int32_t vocab_size_ = 0;
};

}  // namespace zinfer::bench
