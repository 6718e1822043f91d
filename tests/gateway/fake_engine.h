// A stand-in for the serving pipeline behind gateway::EngineClient. It "generates" on its own
// thread, one token per sample per tick, so that streams really are delivered from another
// thread over time. What it produces is a pure function of the request:
//   sample i, token k (0-based): id 1000 + 100 * i + k, text "s<i>t<k> ", logprob -0.25 * (k + 1)
//   prompt_tokens: prompt bytes, or the number of prompt ids, or the bytes of all messages
//   finish_reason "length" after max_tokens tokens, or "stop" on a token of stop_token_ids (with
//   stop_token set, and its text left out unless include_stop_str_in_output).
// Prompts with these words change its behaviour:
//   "TOO_LONG" -> ErrorReply 400 before any token;  "BREAK" -> ErrorReply 500 after 2 tokens;
//   "HANG"     -> tokens keep coming, one per tick, until the request is aborted (no max).
// When the sampling asks (return_prompt, prompt_logprobs), the request's first delta carries the
// prompt: ids (its bytes, or its ids), text, and logprobs: position p has logprob -0.5 * p, rank
// p, and alternatives 500 + a (logprob -0.1 * (a + 1)). With logprobs or prompt logprobs, each
// delta names the text of its tokens (fake_token_text). The first delta says the request was
// scheduled at its arrival (scheduled_ns = arrival_ns).
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "gateway/engine_client.h"

namespace zinfer::gateway::testing {

class FakeEngine : public EngineClient {
 public:
  explicit FakeEngine(std::chrono::milliseconds tick = std::chrono::milliseconds(1));
  ~FakeEngine() override;

  void submit(protocol::GenerateRequest request, DeltaSink sink) override;
  void abort(uint64_t request_id) override;
  // Byte-level: each byte of the prompt (or of "role:content\n" per message, after a '^' when
  // special tokens are added) is a token; detokenize turns ids back into bytes, and an id over
  // 255 is an ErrorReply 400.
  void tokenize(protocol::TokenizeRequest request, TokenizeSink sink) override;
  protocol::Stats stats() override;

  void set_stats(const protocol::Stats& stats);

  // What the gateway sent.
  std::vector<protocol::GenerateRequest> submitted();
  std::set<uint64_t> aborted();
  std::vector<protocol::TokenizeRequest> tokenize_calls();
  size_t active();
  // Waits until `request_id` was aborted; false after `timeout`.
  bool wait_aborted(uint64_t request_id, std::chrono::milliseconds timeout);
  // Waits until `count` requests were submitted; false after `timeout`.
  bool wait_submitted(size_t count, std::chrono::milliseconds timeout);

  static int32_t token_id(int sample, int k) { return 1000 + 100 * sample + k; }
  static std::string token_text(int sample, int k) {
    return "s" + std::to_string(sample) + "t" + std::to_string(k) + " ";
  }
  // The text of any id: a byte below 256 (so a byte >= 0x80 is a partial UTF-8 character),
  // token_text for generated ids, "x<id>" else.
  static std::string fake_token_text(int32_t id);

 private:
  struct Stream {
    protocol::GenerateRequest request;
    DeltaSink sink;
    std::vector<int> produced;  // per sample
    bool hang = false;
    bool breaks = false;
    int32_t prompt_tokens = 0;
    bool prompt_sent = false;
  };

  void run();
  // Produces one step for a stream; returns false when it ended.
  bool step(uint64_t id, Stream& s, std::vector<std::pair<DeltaSink*, EngineEvent>>& out);

  std::chrono::milliseconds tick_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<uint64_t, Stream> streams_;
  std::vector<protocol::GenerateRequest> submitted_;
  std::vector<protocol::TokenizeRequest> tokenize_calls_;
  std::set<uint64_t> aborted_;
  protocol::Stats stats_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace zinfer::gateway::testing
