// zinfer generate: one request through the same actors as the server (no HTTP), printing the
// result; with --json one object {"token_ids": [...], "text": "...", "logprobs": [...]}.
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "actors/pipeline/local_pipeline.h"
#include "runtime/logging.h"
#include "tools/flags/setting_flags.h"
#include "tools/zinfer/commands.h"

namespace zinfer::cli {

namespace {

std::vector<int32_t> parse_ids(const std::string& csv) {
  std::vector<int32_t> ids;
  std::stringstream ss(csv);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || v < 0 || v > INT32_MAX) throw std::runtime_error("--prompt-ids: '" + item + "' is not a token id");
    ids.push_back(static_cast<int32_t>(v));
  }
  if (ids.empty()) throw std::runtime_error("--prompt-ids is empty");
  return ids;
}

}  // namespace

void add_generate_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("generate", "run one request through the actors (no HTTP) and print the result");
  struct Args {
    std::string prompt, prompt_ids, config;
    int max_tokens = 16, top_k = -1, n = 1;
    float temperature = 1.0f, top_p = 1.0f;
    int64_t seed = -1;
    bool ignore_eos = false, json = false, chat = false;
  };
  static Args a;
  // The engine's settings: the config file's (or the defaults `zinfer serve` has), overridden by
  // these flags.
  static SettingFlags flags;
  flags.add(*cmd, "model.path", "--model")->required();
  auto* p = cmd->add_option("--prompt", a.prompt, "prompt text");
  auto* pi = cmd->add_option("--prompt-ids", a.prompt_ids, "prompt token ids, comma-separated (needs no tokenizer)");
  p->excludes(pi);
  cmd->add_option("--max-tokens", a.max_tokens, "tokens to generate")->check(CLI::PositiveNumber);
  cmd->add_option("--temperature", a.temperature, "0 = greedy")->check(CLI::Range(0.0f, 100.0f));
  cmd->add_option("--top-p", a.top_p)->check(CLI::Range(1e-6f, 1.0f));
  cmd->add_option("--top-k", a.top_k);
  cmd->add_option("--seed", a.seed);
  cmd->add_option("--n", a.n, "parallel samples")->check(CLI::Range(1, 64));
  cmd->add_flag("--ignore-eos", a.ignore_eos);
  cmd->add_flag("--chat", a.chat, "treat --prompt as one user message and apply the chat template");
  flags.add(*cmd, "model.device");
  cmd->add_option("--config", a.config, "a config file for the other settings");
  flags.add(*cmd, "model.max_model_len");
  flags.add(*cmd, "cache.num_gpu_blocks");
  cmd->add_flag("--json", a.json, "print one JSON object");
  cmd->callback([] {
    if (a.prompt.empty() && a.prompt_ids.empty()) throw std::runtime_error("give --prompt or --prompt-ids");
    const actors::EngineConfig config = flags.load(a.config);
    runtime::set_log_level(config.runtime.log_level == "info" ? "warn" : config.runtime.log_level);

    protocol::GenerateRequest req;
    if (!a.prompt_ids.empty()) {
      req.prompt_ids = parse_ids(a.prompt_ids);
    } else if (a.chat) {
      req.is_chat = true;
      req.messages = {{"user", a.prompt}};
    } else {
      req.prompt = a.prompt;
    }
    req.sampling.max_tokens = a.max_tokens;
    req.sampling.temperature = a.temperature;
    req.sampling.top_p = a.top_p;
    req.sampling.top_k = a.top_k;
    req.sampling.seed = a.seed;
    req.sampling.n = a.n;
    req.sampling.ignore_eos = a.ignore_eos;
    req.sampling.logprobs = true;

    actors::LocalPipeline pipeline(config);
    auto results = pipeline.run({req});
    const auto& r = results.at(0);
    if (!r.error.empty()) throw std::runtime_error(r.error);
    if (a.json) {
      auto one = [](const actors::SampleResult& s) {
        return nlohmann::json{{"token_ids", s.token_ids}, {"text", s.text}, {"logprobs", s.logprobs},
                              {"finish_reason", s.finish_reason}};
      };
      nlohmann::json out = one(r.samples.at(0));
      if (r.samples.size() > 1) {
        out["samples"] = nlohmann::json::array();
        for (auto& s : r.samples) out["samples"].push_back(one(s));
      }
      std::printf("%s\n", out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    } else {
      for (auto& s : r.samples) std::printf("%s\n", s.text.c_str());
    }
  });
}

}  // namespace zinfer::cli
