// The pipeline without the gateway, as threads of this process, with a direct client: what
// `zinfer generate` and the offline benchmarks (latency, throughput) use. Requests go through the
// very same actors as in `zinfer serve` (tokenizer -> scheduler <-> executor -> detokenizer).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "actors/pipeline/zmq_engine_client.h"
#include "actors/pipeline/engine_config.h"
#include "runtime/supervisor.h"

namespace zinfer::actors {

struct SampleResult {
  std::vector<int32_t> token_ids;
  std::string text;
  std::vector<float> logprobs;
  std::string finish_reason;
  int32_t prompt_tokens = 0;
  int32_t cached_tokens = 0;
};

struct RequestResult {
  std::vector<SampleResult> samples;  // one per n
  std::string error;                  // set when the pipeline refused the request
  int32_t error_code = 0;
};

class LocalPipeline {
 public:
  // Starts executor, detokenizer, scheduler and tokenizer; endpoints are made unique to this
  // instance (inproc). Blocks until all are ready; throws if one fails to start.
  explicit LocalPipeline(EngineConfig config);
  ~LocalPipeline();

  // Submits every request (request ids are assigned here) and waits until all have finished.
  // on_event, if given, sees each event as it arrives (for latency measurements).
  std::vector<RequestResult> run(std::vector<protocol::GenerateRequest> requests,
                                 const std::function<void(size_t, const gateway::EngineEvent&)>& on_event = {});
  const EngineConfig& config() const { return config_; }

 private:
  EngineConfig config_;
  runtime::Supervisor supervisor_;
  std::unique_ptr<ZmqEngineClient> client_;
  uint64_t next_id_ = 1;
};

}  // namespace zinfer::actors
