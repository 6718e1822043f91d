// `zinfer-bench serve`: a load generator for a running server, with the flags of vLLM's
// benchmark_serving where the concept is the same. The work is in tools/bench/lib/ (datasets,
// arrival, clients, metrics, report); this file is the command line and zinfer's tokenizer.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <type_traits>

#include "actors/tokenizer/tokenizer.h"
#include "tools/bench/commands.h"
#include "tools/bench/lib/datasets.h"
#include "tools/bench/lib/load_runner.h"
#include "tools/bench/lib/openai_client.h"
#include "tools/bench/lib/report.h"
#include "tools/bench/lib/server_api.h"
#include "tools/bench/lib/zmq_client.h"

namespace zinfer::bench {
namespace {

// zinfer's tokenizer as the datasets see it: encoding without special tokens (the server adds
// its own), decoding with them skipped.
class ZinferTokenCodec : public TokenCodec {
 public:
  explicit ZinferTokenCodec(std::shared_ptr<const tok::Tokenizer> t) : tok_(std::move(t)) {}
  int32_t vocab_size() const override { return tok_->vocab_size(); }
  bool is_special(int32_t id) const override { return tok_->is_special(id); }
  std::vector<int32_t> encode(std::string_view text) const override { return tok_->encode(text, false); }
  std::string decode(std::span<const int32_t> ids) const override { return tok_->decode(ids, true); }

 private:
  std::shared_ptr<const tok::Tokenizer> tok_;
};

struct ServeArgs {
  std::string backend = "openai";
  int tensor_parallel_size = 1;
  std::string base_url;
  std::string host = "127.0.0.1";
  int port = 8000;
  std::string endpoint;
  std::string model;
  std::string served_model_name;
  std::string tokenizer;
  std::string dataset_name = "random";
  std::string dataset_path;
  int num_prompts = 1000;
  int random_input_len = 1024;
  int random_output_len = 128;
  double random_range_ratio = 0.0;
  int sharegpt_output_len = 0;
  std::string request_rate = "inf";
  double burstiness = 1.0;
  int max_concurrency = 0;
  uint64_t seed = 0;
  bool save_result = false;
  std::string result_dir;
  std::string result_filename;
  std::vector<std::string> metadata;
  std::vector<std::string> goodput;
  std::string percentile_metrics = "ttft,tpot,itl,e2el";
  std::string metric_percentiles = "90,99";
  bool ignore_eos = false;
  bool disable_tqdm = false;
  int client_threads = 2;
  std::string api_key;
  // Set only when the flag is given (filled by add_option_function).
  std::optional<double> temperature, top_p, min_p;
  std::optional<int> top_k;
  std::string extra_body;
  std::vector<std::string> headers;
  int random_prefix_len = 0;
  int num_warmups = 0;
  bool save_detailed = false;
  int ready_check_timeout_sec = 600;
  std::string label;
};

double parse_rate(const std::string& text) {
  if (text == "inf" || text == "INF" || text == "Inf") return std::numeric_limits<double>::infinity();
  try {
    size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size() && v > 0) return v;
  } catch (const std::exception&) {
  }
  throw std::invalid_argument("--request-rate '" + text + "' is neither a positive number nor inf");
}

std::string utc_stamp() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  return buf;
}

std::vector<BenchRequest> make_requests(const ServeArgs& a, const TokenCodec& codec) {
  if (a.dataset_name == "random") {
    RandomDatasetOptions o;
    o.num_prompts = a.num_prompts;
    o.input_len = a.random_input_len;
    o.output_len = a.random_output_len;
    o.range_ratio = a.random_range_ratio;
    o.seed = a.seed;
    o.prefix_len = a.random_prefix_len;
    return random_dataset(codec, o);
  }
  if (a.dataset_name == "sharegpt") {
    if (a.dataset_path.empty()) throw std::invalid_argument("--dataset-name sharegpt needs --dataset-path");
    ShareGptOptions o;
    o.num_prompts = a.num_prompts;
    if (a.sharegpt_output_len > 0) o.output_len = a.sharegpt_output_len;
    o.seed = a.seed;
    auto rs = sharegpt_dataset(a.dataset_path, codec, o);
    if (static_cast<int>(rs.size()) < a.num_prompts) {
      std::fprintf(stderr, "zinfer-bench: only %zu conversations of '%s' pass the filter (asked for %d)\n", rs.size(),
                   a.dataset_path.c_str(), a.num_prompts);
    }
    // The fit that synthetic-chat's built-in parameters stand for, to refit them on this file.
    std::vector<int> ins, outs;
    for (const auto& r : rs) {
      ins.push_back(r.prompt_len);
      outs.push_back(r.output_len);
    }
    const auto fi = fit_lognormal(ins), fo = fit_lognormal(outs);
    std::fprintf(stderr, "zinfer-bench: lognormal fit of this sample: input mu %.3f sigma %.3f, output mu %.3f sigma %.3f\n",
                 fi.mu, fi.sigma, fo.mu, fo.sigma);
    return rs;
  }
  if (a.dataset_name == "synthetic-chat") {
    SyntheticChatOptions o;
    o.num_prompts = a.num_prompts;
    if (a.sharegpt_output_len > 0) o.output_len = a.sharegpt_output_len;
    o.seed = a.seed;
    return synthetic_chat_dataset(codec, o);
  }
  throw std::invalid_argument("unknown --dataset-name '" + a.dataset_name + "' (random, sharegpt, synthetic-chat)");
}

void run_serve(const ServeArgs& a) {
  if (a.model.empty()) throw std::invalid_argument("--model is required (the model name, or its folder for the tokenizer)");
  // vLLM's name for its completions client; the requests are the same.
  const bool openai = a.backend == "openai" || a.backend == "vllm";
  const bool http = openai || a.backend == "openai-chat";
  if (!http && a.backend != "zinfer-zmq") {
    throw std::invalid_argument("unknown --backend '" + a.backend + "' (openai, vllm, openai-chat, zinfer-zmq)");
  }
  const std::string base_url = !a.base_url.empty() ? a.base_url
                               : http              ? "http://" + a.host + ":" + std::to_string(a.port)
                                                   : "tcp://" + a.host + ":" + std::to_string(a.port);
  const Headers headers = parse_headers(a.headers);
  if (http && a.ready_check_timeout_sec > 0) {
    std::fprintf(stderr, "zinfer-bench: waiting up to %d s for %s\n", a.ready_check_timeout_sec, base_url.c_str());
    if (!wait_until_ready(parse_http_url(base_url), std::chrono::seconds(a.ready_check_timeout_sec), headers)) {
      throw std::runtime_error("the server at " + base_url + " was not ready within --ready-check-timeout-sec " +
                               std::to_string(a.ready_check_timeout_sec));
    }
  }
  // The tokenizer: --tokenizer, else --model when it is a folder or file here, else the server's
  // (/tokenize, /detokenize): --model is then a served name.
  std::string tokenizer_path = a.tokenizer.empty() ? a.model : a.tokenizer;
  std::unique_ptr<TokenCodec> codec;
  if (!a.tokenizer.empty() || std::filesystem::exists(a.model) || !http) {
    codec = std::make_unique<ZinferTokenCodec>(tok::Tokenizer::from_file(tokenizer_path));
  } else {
    tokenizer_path = base_url + "/tokenize";
    codec = std::make_unique<RemoteTokenCodec>(parse_http_url(base_url),
                                               a.served_model_name.empty() ? a.model : a.served_model_name, headers);
    std::fprintf(stderr, "zinfer-bench: '%s' is no local tokenizer: using the server's /tokenize (%d tokens)\n",
                 a.model.c_str(), codec->vocab_size());
  }
  const double rate = parse_rate(a.request_rate);
  const auto slo = parse_goodput(a.goodput);

  RunInfo info;
  info.label = a.label;
  info.save_detailed = a.save_detailed;
  info.backend = a.backend;
  info.model = a.model;
  info.tokenizer = tokenizer_path;
  info.dataset = a.dataset_name;
  info.num_prompts = a.num_prompts;
  info.request_rate = rate;
  info.burstiness = a.burstiness;
  if (a.max_concurrency > 0) info.max_concurrency = a.max_concurrency;
  info.seed = a.seed;
  info.tensor_parallel_size = a.tensor_parallel_size;
  info.date = utc_stamp();
  info.metadata = parse_metadata(a.metadata);
  info.percentile_metrics = parse_percentile_metrics(a.percentile_metrics);
  info.metric_percentiles = parse_metric_percentiles(a.metric_percentiles);

  std::unique_ptr<Backend> backend;
  if (!http &&
      (a.temperature || a.top_p || a.top_k || a.min_p || !a.extra_body.empty() || !a.headers.empty())) {
    throw std::invalid_argument("--temperature, --top-p, --top-k, --min-p, --extra-body and --header need an OpenAI backend");
  }
  if (http) {
    const bool chat = a.backend == "openai-chat";
    RequestBodyOptions body;
    body.temperature = a.temperature;
    body.top_p = a.top_p;
    body.top_k = a.top_k;
    body.min_p = a.min_p;
    if (!a.extra_body.empty()) body.extra_body = parse_extra_body(a.extra_body);
    info.base_url = base_url;
    info.endpoint = !a.endpoint.empty() ? a.endpoint : chat ? "/v1/chat/completions" : "/v1/completions";
    std::string key = a.api_key;
    if (key.empty()) {
      if (const char* env = std::getenv("OPENAI_API_KEY")) key = env;
    }
    backend = std::make_unique<OpenAIBackend>(info.base_url, info.endpoint, chat ? ApiKind::kChat : ApiKind::kCompletions,
                                              a.client_threads, key, std::move(body), headers);
  } else {
    info.base_url = base_url;
    backend = std::make_unique<ZmqBackend>(info.base_url);
  }

  const auto requests = make_requests(a, *codec);
  if (std::isinf(rate)) {
    std::printf("Traffic request rate: inf\n");
  } else {
    std::printf("Traffic request rate: %g\n", rate);
  }
  std::printf("Burstiness factor: %g (%s)\n", a.burstiness, a.burstiness == 1.0 ? "Poisson process" : "Gamma distribution");
  std::printf("Maximum request concurrency: %s\n", a.max_concurrency > 0 ? std::to_string(a.max_concurrency).c_str() : "None");
  std::fflush(stdout);

  LoadOptions lo;
  // zinfer's native endpoint takes an empty model as "the served model" and answers 404 to any
  // other name, so --model (often a folder, for the tokenizer) is sent only through the OpenAI API.
  lo.model = !a.served_model_name.empty() ? a.served_model_name : a.backend == "zinfer-zmq" ? "" : a.model;
  lo.request_rate = rate;
  lo.burstiness = a.burstiness;
  lo.max_concurrency = info.max_concurrency;
  lo.seed = a.seed;
  lo.ignore_eos = a.ignore_eos;
  lo.progress = !a.disable_tqdm;
  if (a.num_warmups > 0 && !requests.empty()) {
    // vLLM's warm-up: the first request, num_warmups times, before the clock starts; not counted.
    std::fprintf(stderr, "zinfer-bench: %d warm-up requests\n", a.num_warmups);
    LoadOptions wo = lo;
    wo.request_rate = std::numeric_limits<double>::infinity();
    wo.progress = false;
    const LoadResult warm = run_load(*backend, std::vector<BenchRequest>(static_cast<size_t>(a.num_warmups), requests.front()), wo);
    for (const auto& r : warm.records) {
      if (!r.success) throw std::runtime_error("a warm-up request failed: " + r.error);
    }
  }
  LoadResult result = run_load(*backend, requests, lo);
  backend.reset();
  count_output_tokens(result.records, *codec);
  const Summary summary = summarize(result.records, result.duration_s, slo);
  std::fputs(format_summary(summary, info).c_str(), stdout);
  std::fflush(stdout);

  if (a.save_result) {
    std::filesystem::path dir = a.result_dir.empty() ? "." : a.result_dir;
    std::filesystem::create_directories(dir);
    const auto path = dir / (a.result_filename.empty() ? default_result_filename(info) : a.result_filename);
    std::ofstream out(path);
    if (!out) throw std::runtime_error("cannot write result file '" + path.string() + "'");
    out << result_json(summary, info, result.records).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    std::fprintf(stderr, "zinfer-bench: result saved to %s\n", path.string().c_str());
  }
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto args = std::make_shared<ServeArgs>();
  auto* cmd = app.add_subcommand("serve", "load generator for a running server (vLLM benchmark_serving's flags)");
  cmd->add_option("--backend", args->backend, "openai (alias vllm) | openai-chat | zinfer-zmq")->capture_default_str();
  cmd->add_option("--base-url", args->base_url, "server URL (http://HOST:PORT, or tcp://HOST:PORT for zinfer-zmq); overrides --host/--port");
  cmd->add_option("--host", args->host)->capture_default_str();
  cmd->add_option("--port", args->port)->capture_default_str();
  cmd->add_option("--endpoint", args->endpoint, "API path (default /v1/completions, or /v1/chat/completions for openai-chat)");
  cmd->add_option("--model", args->model,
                  "model name sent to the server; also the tokenizer's folder unless --tokenizer is given (a "
                  "name that is no local path uses the server's /tokenize)")
      ->required();
  cmd->add_option("--served-model-name", args->served_model_name, "name sent to the server instead of --model");
  cmd->add_option("--tokenizer", args->tokenizer, "tokenizer.json or a folder holding one (default: --model)");
  cmd->add_option("--dataset-name", args->dataset_name, "random | sharegpt | synthetic-chat")->capture_default_str();
  cmd->add_option("--dataset-path", args->dataset_path, "ShareGPT_V3 JSON file for --dataset-name sharegpt");
  cmd->add_option("--num-prompts", args->num_prompts)->capture_default_str();
  cmd->add_option("--random-input-len", args->random_input_len)->capture_default_str();
  cmd->add_option("--random-output-len", args->random_output_len)->capture_default_str();
  cmd->add_option("--random-range-ratio", args->random_range_ratio, "lengths uniform in [L*(1-r), L*(1+r)], r in [0, 1)")
      ->capture_default_str();
  cmd->add_option("--sharegpt-output-len", args->sharegpt_output_len, "fixed output length for sharegpt / synthetic-chat");
  cmd->add_option("--request-rate", args->request_rate, "requests per second (Poisson/gamma arrivals) or inf")->capture_default_str();
  cmd->add_option("--burstiness", args->burstiness, "gamma shape of the intervals; 1 = Poisson")->capture_default_str();
  cmd->add_option("--max-concurrency", args->max_concurrency, "most requests in flight at once (0 = no limit)");
  cmd->add_option("--seed", args->seed)->capture_default_str();
  cmd->add_option("--tensor-parallel-size", args->tensor_parallel_size,
                  "the server's tensor-parallel size, recorded in the summary and the result JSON")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--save-result", args->save_result, "write the result JSON");
  cmd->add_option("--result-dir", args->result_dir, "folder of the result JSON (default: current)");
  cmd->add_option("--result-filename", args->result_filename);
  cmd->add_option("--metadata", args->metadata, "KEY=VALUE items stored in the result JSON");
  cmd->add_option("--goodput", args->goodput, "SLOs for goodput: ttft:MS tpot:MS e2el:MS");
  cmd->add_option("--percentile-metrics", args->percentile_metrics, "metrics whose percentiles the table shows")
      ->capture_default_str();
  cmd->add_option("--metric-percentiles", args->metric_percentiles, "percentiles the table shows, e.g. 50,90,99")
      ->capture_default_str();
  cmd->add_flag("--ignore-eos", args->ignore_eos, "ask the server to generate max_tokens regardless of EOS");
  cmd->add_flag("--disable-tqdm", args->disable_tqdm, "no progress bar");
  cmd->add_option("--num-client-threads", args->client_threads, "I/O threads of the HTTP client")->capture_default_str();
  cmd->add_option("--api-key", args->api_key, "bearer token (default: $OPENAI_API_KEY)");
  auto optional_flag = [cmd](const char* name, auto& target, const char* help) {
    using T = typename std::remove_reference_t<decltype(target)>::value_type;
    cmd->add_option_function<T>(name, [&target](const T& v) { target = v; }, help);
  };
  optional_flag("--temperature", args->temperature, "sampling temperature of every request (default 0, greedy)");
  optional_flag("--top-p", args->top_p, "top_p of every request (default: the server's)");
  optional_flag("--top-k", args->top_k, "top_k of every request (default: the server's)");
  optional_flag("--min-p", args->min_p, "min_p of every request (default: the server's)");
  cmd->add_option("--extra-body", args->extra_body,
                  "JSON object merged into every request body, replacing the benchmark's own keys "
                  "(e.g. '{\"response_format\": {\"type\": \"json_object\"}}')");
  cmd->add_option("--header", args->headers, "KEY=VALUE HTTP headers sent with every request");
  cmd->add_option("--random-prefix-len", args->random_prefix_len,
                  "random tokens shared by every prompt of --dataset-name random, before its own")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--num-warmups", args->num_warmups, "warm-up requests (the first prompt) before the benchmark, not counted")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--save-detailed", args->save_detailed,
                "also write the per-request arrays (ttfts, itls, latencies, start_times, texts, ...) into the result JSON");
  cmd->add_option("--ready-check-timeout-sec", args->ready_check_timeout_sec,
                  "wait this long for the server (GET /health or /v1/models) before starting; 0 = no check")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--label", args->label, "the run's name in the result JSON and its file name (default: the backend)");
  cmd->callback([args] { run_serve(*args); });
}

}  // namespace zinfer::bench
