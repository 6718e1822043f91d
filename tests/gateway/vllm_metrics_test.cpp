// /metrics carries vLLM's request-level metric names (docs/metrics.md) with real values: gauges
// and counters from the pipeline's Stats, histograms from what the requests did.
#include <gtest/gtest.h>

#include "server_fixture.h"

namespace zinfer::gateway::testing {
namespace {

TEST_F(GatewayServerTest, VllmMetricNamesWithRealValues) {
  protocol::Stats stats;
  stats.running = 3;
  stats.waiting = 7;
  stats.swapped = 1;
  stats.kv_usage = 0.25;
  stats.num_preemptions = 11;
  stats.prompt_tokens = 40;
  stats.generation_tokens = 9;
  stats.iteration_tokens.assign(std::size(protocol::kIterationTokenBuckets) + 1, 0);
  stats.iteration_tokens[0] = 2;   // two steps of 1 token
  stats.iteration_tokens[2] = 3;   // three of 9 to 16
  stats.iteration_tokens.back() = 1;  // one of more than 16384
  stats.iteration_tokens_sum = 20000;
  engine_->set_stats(stats);
  ASSERT_EQ(post_json(port_, "/v1/completions", R"({"prompt":"abcd","max_tokens":3})").status, 200);
  ASSERT_EQ(post_json(port_, "/v1/completions", R"({"prompt":"ab","max_tokens":2,"n":2,"stream":true})").status, 200);

  const std::string m = get(port_, "/metrics").body;
  auto has = [&](const std::string& line) { return m.find(line + "\n") != std::string::npos; };
  const std::string l = "model_name=\"test-model\"";
  EXPECT_TRUE(has("vllm:num_requests_running{" + l + "} 3")) << m;
  EXPECT_TRUE(has("vllm:num_requests_waiting{" + l + "} 7"));
  EXPECT_TRUE(has("vllm:num_requests_swapped{" + l + "} 1"));
  EXPECT_TRUE(has("vllm:kv_cache_usage_perc{" + l + "} 0.25"));
  EXPECT_TRUE(has("vllm:num_preemptions_total{" + l + "} 11"));
  EXPECT_TRUE(has("vllm:prompt_tokens_total{" + l + "} 40"));
  EXPECT_TRUE(has("vllm:generation_tokens_total{" + l + "} 9"));
  EXPECT_TRUE(has("vllm:request_success_total{" + l + ",finished_reason=\"length\"} 3"));
  EXPECT_TRUE(has("# TYPE vllm:iteration_tokens_total histogram"));
  EXPECT_TRUE(has("vllm:iteration_tokens_total_bucket{" + l + ",le=\"1\"} 2"));
  EXPECT_TRUE(has("vllm:iteration_tokens_total_bucket{" + l + ",le=\"8\"} 2"));
  EXPECT_TRUE(has("vllm:iteration_tokens_total_bucket{" + l + ",le=\"16\"} 5"));
  EXPECT_TRUE(has("vllm:iteration_tokens_total_bucket{" + l + ",le=\"16384\"} 5"));
  EXPECT_TRUE(has("vllm:iteration_tokens_total_bucket{" + l + ",le=\"+Inf\"} 6"));
  EXPECT_TRUE(has("vllm:iteration_tokens_total_count{" + l + "} 6"));
  EXPECT_TRUE(has("vllm:iteration_tokens_total_sum{" + l + "} 20000"));
  // Two requests: each observed once per request-level histogram.
  for (const char* h : {"vllm:time_to_first_token_seconds", "vllm:e2e_request_latency_seconds",
                        "vllm:request_queue_time_seconds", "vllm:request_prefill_time_seconds",
                        "vllm:request_decode_time_seconds", "vllm:request_inference_time_seconds",
                        "vllm:request_prompt_tokens", "vllm:request_generation_tokens",
                        "vllm:request_time_per_output_token_seconds"}) {
    EXPECT_TRUE(has(std::string(h) + "_count{" + l + "} 2")) << h;
  }
  // The fake engine schedules on arrival: every queue time is in the first bucket.
  EXPECT_TRUE(has("vllm:request_queue_time_seconds_bucket{" + l + ",le=\"0.3\"} 2"));
  // Prompt and generated tokens per request: 4 + 2, and 3 + 2 * 2.
  EXPECT_TRUE(has("vllm:request_prompt_tokens_sum{" + l + "} 6"));
  EXPECT_TRUE(has("vllm:request_generation_tokens_sum{" + l + "} 7"));
  // Inter-token gaps: 2 for the first request, 1 per sample of the second.
  EXPECT_TRUE(has("vllm:inter_token_latency_seconds_count{" + l + "} 4"));
  EXPECT_TRUE(has("vllm:time_per_output_token_seconds_count{" + l + "} 4"));
}

}  // namespace
}  // namespace zinfer::gateway::testing
