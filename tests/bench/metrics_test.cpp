// Serving metrics on hand-recorded timestamps; every expected figure is worked out in the comments.
#include <gtest/gtest.h>

#include "tools/bench/lib/metrics.h"
#include "tools/bench/lib/report.h"

namespace zinfer::bench {
namespace {

RequestRecord ok(size_t index, int prompt_len, double send, std::vector<double> chunks, double end,
                 std::optional<int> usage, std::optional<int> tokenizer) {
  RequestRecord r;
  r.index = index;
  r.success = true;
  r.prompt_len = prompt_len;
  r.send_time_s = send;
  r.chunk_times_s = std::move(chunks);
  r.end_time_s = end;
  r.usage_completion_tokens = usage;
  r.tokenizer_output_tokens = tokenizer;
  return r;
}

// A: 3 chunks carrying 1 + 2 + 2 = 5 tokens (usage 5, tokenizer 5).
// B: 2 chunks, usage 2, tokenizer says 3 (a mismatch).
// C: failed with HTTP 500.
// D: a one-token answer without usage (the tokenizer's count, 1, is used).
std::vector<RequestRecord> recorded() {
  std::vector<RequestRecord> rs;
  rs.push_back(ok(0, 10, 0.0, {0.10, 0.15, 0.25}, 0.25, 5, 5));
  rs.push_back(ok(1, 20, 1.0, {1.2, 1.3}, 1.35, 2, 3));
  RequestRecord failed;
  failed.index = 2;
  failed.prompt_len = 7;
  failed.error = "HTTP 500: boom";
  rs.push_back(failed);
  rs.push_back(ok(3, 30, 2.0, {2.05}, 2.06, std::nullopt, 1));
  return rs;
}

TEST(Metrics, PerRequestFigures) {
  const auto rs = recorded();
  EXPECT_NEAR(rs[0].ttft_s(), 0.10, 1e-12);
  EXPECT_NEAR(rs[0].latency_s(), 0.25, 1e-12);
  // One ITL entry per chunk after the first, whatever the number of tokens it carried.
  ASSERT_EQ(rs[0].itl_s().size(), 2u);
  EXPECT_NEAR(rs[0].itl_s()[0], 0.05, 1e-12);
  EXPECT_NEAR(rs[0].itl_s()[1], 0.10, 1e-12);
  EXPECT_EQ(rs[0].output_tokens(), 5);
  EXPECT_EQ(rs[3].output_tokens(), 1);  // no usage: the tokenizer's count
  RequestRecord bare;
  bare.chunk_times_s = {1, 2, 3};
  EXPECT_EQ(bare.output_tokens(), 3);   // neither: one token per chunk
}

// A token that adds no text (half of a UTF-8 character, a skipped special token) still arrives as
// an event: ITL (vLLM's, between texts) sees one long gap, the event gaps see two short ones.
TEST(Metrics, EventGapsCountEveryEventWithOrWithoutText) {
  RequestRecord r;
  r.success = true;
  r.send_time_s = 0.0;
  r.chunk_times_s = {0.10, 0.20, 0.25};
  r.event_times_s = {0.10, 0.15, 0.20, 0.25};
  r.end_time_s = 0.25;
  r.usage_completion_tokens = 4;
  ASSERT_EQ(r.itl_s().size(), 2u);
  EXPECT_NEAR(r.itl_s()[0], 0.10, 1e-12);
  ASSERT_EQ(r.event_gaps_s().size(), 3u);
  for (double g : r.event_gaps_s()) EXPECT_NEAR(g, 0.05, 1e-12);
  const Summary s = summarize({r}, 1.0, {});
  EXPECT_EQ(s.event_gap.count, 3u);
  EXPECT_NEAR(s.event_gap.median, 50.0, 1e-9);
  EXPECT_NEAR(s.itl.p99, 99.5, 1e-9);  // gaps 100 and 50 ms: p99 at rank 0.99 -> 50 + 0.99 * 50
  RunInfo info;
  info.percentile_metrics = parse_percentile_metrics("itl,event_gap");
  info.metric_percentiles = parse_metric_percentiles("99");
  const std::string t = format_summary(s, info);
  EXPECT_NE(t.find("Median Event Gap (ms):"), std::string::npos) << t;
  EXPECT_NE(t.find("P99 Event Gap (ms):"), std::string::npos) << t;
}

TEST(Metrics, SummaryOfRecordedRun) {
  GoodputSlo slo = parse_goodput({"ttft:150", "tpot:100"});
  const Summary s = summarize(recorded(), 4.0, slo);
  EXPECT_EQ(s.completed, 3);
  EXPECT_EQ(s.failed, 1);
  ASSERT_EQ(s.errors.size(), 1u);
  EXPECT_EQ(s.errors.at("HTTP 500: boom"), 1);
  EXPECT_EQ(s.total_input, 60);   // 10 + 20 + 30; the failed request's 7 is not counted
  EXPECT_EQ(s.total_output, 8);   // 5 + 2 + 1
  EXPECT_DOUBLE_EQ(s.request_throughput, 0.75);  // 3 / 4 s
  EXPECT_DOUBLE_EQ(s.input_throughput, 15.0);
  EXPECT_DOUBLE_EQ(s.output_throughput, 2.0);
  EXPECT_DOUBLE_EQ(s.total_token_throughput, 17.0);
  EXPECT_EQ(s.token_count_mismatches, 1);  // B
  EXPECT_EQ(s.usage_missing, 1);           // D

  // TTFT ms: 100, 200, 50. Sorted 50, 100, 200: median 100; p90 at rank 0.9*2 = 1.8 -> 100 + 0.8*100
  // = 180; p99 at rank 1.98 -> 198; mean 116.667; population std sqrt((16.667^2 + 83.333^2 +
  // 66.667^2) / 3) = 62.361.
  EXPECT_EQ(s.ttft.count, 3u);
  EXPECT_NEAR(s.ttft.mean, 116.6667, 1e-3);
  EXPECT_NEAR(s.ttft.median, 100.0, 1e-9);
  EXPECT_NEAR(s.ttft.p90, 180.0, 1e-9);
  EXPECT_NEAR(s.ttft.p99, 198.0, 1e-9);
  EXPECT_NEAR(s.ttft.std, 62.3610, 1e-3);

  // TPOT ms: A (250 - 100) / (5 - 1) = 37.5, B (350 - 200) / 1 = 150; D has one token: none.
  EXPECT_EQ(s.tpot.count, 2u);
  EXPECT_NEAR(s.tpot.mean, 93.75, 1e-9);
  EXPECT_NEAR(s.tpot.p99, 37.5 + 0.99 * 112.5, 1e-9);

  // ITL ms: A 50, 100; B 100.
  EXPECT_EQ(s.itl.count, 3u);
  EXPECT_NEAR(s.itl.mean, 250.0 / 3, 1e-9);
  EXPECT_NEAR(s.itl.median, 100.0, 1e-9);

  // E2EL ms: 250, 350, 60.
  EXPECT_NEAR(s.e2el.mean, 220.0, 1e-9);
  EXPECT_NEAR(s.e2el.median, 250.0, 1e-9);

  // Goodput (ttft <= 150 ms, tpot <= 100 ms): A yes, B no (TTFT 200), D yes (TPOT counts as 0).
  EXPECT_TRUE(s.has_goodput);
  EXPECT_DOUBLE_EQ(s.request_goodput, 0.5);
}

TEST(Metrics, AllFailedGivesZeros) {
  RequestRecord f;
  f.error = "connection refused";
  const Summary s = summarize({f, f}, 2.0, {});
  EXPECT_EQ(s.completed, 0);
  EXPECT_EQ(s.failed, 2);
  EXPECT_EQ(s.errors.at("connection refused"), 2);
  EXPECT_EQ(s.ttft.count, 0u);
  EXPECT_EQ(s.ttft.mean, 0.0);
  EXPECT_FALSE(s.has_goodput);
}

TEST(Metrics, Percentile) {
  EXPECT_EQ(percentile({}, 50), 0.0);
  EXPECT_EQ(percentile({7}, 99), 7.0);
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 50), 2.5);
  EXPECT_DOUBLE_EQ(percentile({1, 2, 3, 4, 5}, 90), 4.6);
}

TEST(Metrics, GoodputParsing) {
  const auto slo = parse_goodput({"ttft:500", "e2el:2000.5"});
  EXPECT_EQ(slo.ttft_ms.value(), 500);
  EXPECT_FALSE(slo.tpot_ms.has_value());
  EXPECT_EQ(slo.e2el_ms.value(), 2000.5);
  EXPECT_THROW(parse_goodput({"ttft"}), std::invalid_argument);
  EXPECT_THROW(parse_goodput({"ttft:abc"}), std::invalid_argument);
  EXPECT_THROW(parse_goodput({"latency:5"}), std::invalid_argument);
  EXPECT_THROW(parse_goodput({"tpot:-1"}), std::invalid_argument);
}

TEST(Report, TableHasVllmLayout) {
  RunInfo info;
  info.backend = "openai";
  info.request_rate = 2.0;
  info.max_concurrency = 8;
  const std::string t = format_summary(summarize(recorded(), 4.0, {}), info);
  EXPECT_EQ(t.rfind("============ Serving Benchmark Result ============\n", 0), 0u);
  EXPECT_NE(t.find("Successful requests:                     3         \n"), std::string::npos);
  EXPECT_NE(t.find("Maximum request concurrency:             8"), std::string::npos);
  EXPECT_NE(t.find("Request rate configured (RPS):           2.00"), std::string::npos);
  EXPECT_NE(t.find("Benchmark duration (s):                  4.00"), std::string::npos);
  EXPECT_NE(t.find("Total input tokens:                      60"), std::string::npos);
  EXPECT_NE(t.find("Total generated tokens:                  8"), std::string::npos);
  EXPECT_NE(t.find("Request throughput (req/s):              0.75"), std::string::npos);
  EXPECT_NE(t.find("Output token throughput (tok/s):         2.00"), std::string::npos);
  EXPECT_NE(t.find("Total Token throughput (tok/s):          17.00"), std::string::npos);
  EXPECT_NE(t.find("---------------Time to First Token----------------\n"), std::string::npos);
  EXPECT_NE(t.find("Mean TTFT (ms):                          116.67"), std::string::npos);
  EXPECT_NE(t.find("Median TTFT (ms):                        100.00"), std::string::npos);
  EXPECT_NE(t.find("P99 TTFT (ms):                           198.00"), std::string::npos);
  EXPECT_NE(t.find("-----Time per Output Token (excl. 1st token)------\n"), std::string::npos);
  EXPECT_NE(t.find("---------------Inter-token Latency----------------\n"), std::string::npos);
  EXPECT_NE(t.find("----------------End-to-end Latency----------------\n"), std::string::npos);
  EXPECT_NE(t.find("1 x HTTP 500: boom"), std::string::npos);
  EXPECT_EQ(t.substr(t.size() - 51), std::string(50, '=') + "\n");
}

TEST(Report, ChosenMetricsAndPercentiles) {
  RunInfo info;
  info.request_rate = std::numeric_limits<double>::infinity();
  info.percentile_metrics = parse_percentile_metrics("ttft,e2el");
  info.metric_percentiles = parse_metric_percentiles("50,99.9");
  const Summary s = summarize(recorded(), 4.0, {});
  const std::string t = format_summary(s, info);
  EXPECT_EQ(t.find("Request rate configured"), std::string::npos);  // not shown for inf
  EXPECT_NE(t.find("P50 TTFT (ms):                           100.00"), std::string::npos) << t;
  // E2EL ms 60, 250, 350: p99.9 at rank 1.998 -> 250 + 0.998 * 100 = 349.80
  EXPECT_NE(t.find("P99.9 E2EL (ms):                         349.80"), std::string::npos) << t;
  EXPECT_EQ(t.find("TPOT"), std::string::npos);
  EXPECT_EQ(t.find("P90 TTFT"), std::string::npos);
  const auto j = result_json(s, info, recorded());
  EXPECT_NEAR(j["p99.9_e2el_ms"].get<double>(), 349.8, 1e-9);
  EXPECT_NEAR(j["p50_ttft_ms"].get<double>(), 100.0, 1e-9);
  EXPECT_THROW(parse_percentile_metrics("ttft,latency"), std::invalid_argument);
  EXPECT_THROW(parse_metric_percentiles("50,100"), std::invalid_argument);
  EXPECT_THROW(parse_metric_percentiles("x"), std::invalid_argument);
}

TEST(Report, PeakConcurrencyAndTokenRate) {
  std::vector<RequestRecord> rs(3);
  rs[0].send_time_s = 0.0, rs[0].end_time_s = 2.0;
  rs[1].send_time_s = 0.5, rs[1].end_time_s = 1.0;
  rs[2].send_time_s = 1.0, rs[2].end_time_s = 3.0;  // starts as request 1 ends: not counted together
  EXPECT_EQ(max_concurrent_requests(rs), 2);
  for (auto& r : rs) r.success = true;
  rs[0].event_times_s = {0.1, 0.2, 1.5};
  rs[1].event_times_s = {0.7, 0.9};
  rs[2].event_times_s = {1.1, 2.5};
  rs[2].success = false;  // a failed request's tokens do not count
  EXPECT_EQ(max_output_tokens_per_s(rs), 4.0);
}

TEST(Report, ResultJsonCarriesPerRequestTimingsAndMetadata) {
  RunInfo info;
  info.backend = "openai-chat";
  info.model = "/models/llama-3-8b/";
  info.request_rate = std::numeric_limits<double>::infinity();
  info.date = "20261122-010203";
  info.metadata = parse_metadata({"gpu=h100", "note=a=b"});
  info.save_detailed = true;
  info.label = "run-a";
  const auto rs = recorded();
  const auto j = result_json(summarize(rs, 4.0, {}), info, rs);
  EXPECT_EQ(j["label"], "run-a");
  EXPECT_EQ(j["endpoint_type"], "openai-chat");
  EXPECT_EQ(j["latencies"].size(), 4u);
  EXPECT_EQ(j["start_times"].size(), 4u);
  EXPECT_EQ(j["max_concurrent_requests"], max_concurrent_requests(rs));
  // Without --save-detailed (vLLM's default) the per-request arrays are left out.
  info.save_detailed = false;
  const auto brief = result_json(summarize(rs, 4.0, {}), info, rs);
  EXPECT_FALSE(brief.contains("ttfts"));
  EXPECT_FALSE(brief.contains("requests"));
  EXPECT_TRUE(brief.contains("mean_ttft_ms"));
  EXPECT_TRUE(brief.contains("max_concurrent_requests"));
  EXPECT_EQ(j["gpu"], "h100");
  EXPECT_EQ(j["note"], "a=b");
  EXPECT_EQ(j["request_rate"], "inf");
  EXPECT_EQ(j["completed"], 3);
  ASSERT_EQ(j["requests"].size(), 4u);
  EXPECT_EQ(j["requests"][0]["chunk_times_s"].size(), 3u);
  EXPECT_EQ(j["requests"][2]["error"], "HTTP 500: boom");
  EXPECT_EQ(j["output_lens"][2], 0);
  EXPECT_EQ(j["itls"][0].size(), 2u);
  EXPECT_EQ(default_result_filename(info), "run-a-infqps-llama-3-8b-20261122-010203.json");  // vLLM: the label first
  info.label.clear();
  EXPECT_EQ(default_result_filename(info), "openai-chat-infqps-llama-3-8b-20261122-010203.json");
  EXPECT_THROW(parse_metadata({"novalue"}), std::invalid_argument);
}

}  // namespace
}  // namespace zinfer::bench
