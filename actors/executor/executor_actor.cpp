#include "actors/executor/executor_actor.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <thread>
#include <utility>

#include "actors/executor/grammar_step.h"
#include "actors/executor/prompt_scoring.h"
#include "actors/tokenizer/tokenizer.h"
#include "protocol/block_table_delta.h"
#include "protocol/envelope.h"
#include "runtime/link.h"
#include "runtime/logging.h"
#include "runtime/loop.h"
#include "runtime/messaging.h"

namespace zinfer::actors {

int32_t effective_max_model_len(const gpu::BackendOptions& options, const gpu::ModelConfig& model) {
  if (options.max_model_len > 0) return options.max_model_len;
  return static_cast<int32_t>(model.max_position_embeddings);
}

std::shared_ptr<const gpu::SamplingRules> to_backend_rules(const protocol::SamplingRules& in) {
  auto out = std::make_shared<gpu::SamplingRules>();
  out->repetition_penalty = in.repetition_penalty;
  out->frequency_penalty = in.frequency_penalty;
  out->presence_penalty = in.presence_penalty;
  out->min_p = in.min_p;
  std::map<int32_t, float> bias;
  for (const auto& b : in.logit_bias) bias[b.token] = b.bias;
  out->logit_bias.assign(bias.begin(), bias.end());
  out->allowed_token_ids = in.allowed_token_ids;
  std::sort(out->allowed_token_ids.begin(), out->allowed_token_ids.end());
  out->allowed_token_ids.erase(std::unique(out->allowed_token_ids.begin(), out->allowed_token_ids.end()),
                               out->allowed_token_ids.end());
  out->bad_words = in.bad_words;
  out->min_tokens = in.min_tokens;
  out->min_tokens_stop_ids = in.min_tokens_stop_ids;
  out->prompt_ids = in.prompt_ids;
  out->output_ids = in.output_ids;
  return out;
}

// The step's batch, written over the previous step's: the per-sequence vectors are swapped
// between the plan and the batch (the plan is not needed after), so both keep their memory for
// the next step and a step allocates nothing per sequence. Every field is set.
void to_batch_input(protocol::StepPlan& plan, gpu::BatchInput& b, SequenceRules& rules) {
  b.seqs.resize(plan.seqs.size());
  for (size_t i = 0; i < plan.seqs.size(); ++i) {
    protocol::SeqWork& w = plan.seqs[i];
    gpu::SequenceInput& s = b.seqs[i];
    s.seq_id = w.seq_id;
    s.num_tokens = w.use_last_sampled ? 1 : static_cast<int32_t>(w.token_ids.size());
    s.token_ids.swap(w.token_ids);
    s.use_last_sampled = w.use_last_sampled;
    s.start_pos = w.start_pos;
    s.block_table.swap(w.block_table);
    s.sample = w.sample;
    s.sampling = gpu::SamplingConfig{};
    s.sampling.temperature = w.temperature;
    s.sampling.top_p = w.top_p;
    s.sampling.top_k = w.top_k;
    s.sampling.seed = w.seed;
    s.sampling.sample_index = w.sample_index;
    s.sampling.top_logprobs = w.top_logprobs;
    if (w.rules) rules[w.seq_id] = to_backend_rules(*w.rules);
    if (s.sample && !rules.empty()) {
      auto it = rules.find(w.seq_id);
      if (it != rules.end()) s.sampling.rules = it->second;
    }
  }
  b.swap_out.clear();
  b.swap_in.clear();
  b.copy.clear();
  for (auto& c : plan.swap_out) b.swap_out.emplace_back(c.src, c.dst);
  for (auto& c : plan.swap_in) b.swap_in.emplace_back(c.src, c.dst);
  for (auto& c : plan.copy) b.copy.emplace_back(c.src, c.dst);
  b.finished.swap(plan.finished);
  for (uint64_t id : b.finished) rules.erase(id);
}

std::shared_ptr<const grammar::Vocabulary> grammar_vocabulary(const std::string& model_dir, const gpu::ModelConfig& model) {
  if (!std::filesystem::exists(std::filesystem::path(model_dir) / "tokenizer.json")) return nullptr;
  auto tokenizer = tok::Tokenizer::from_file(model_dir);
  return grammar::Vocabulary::from_tokenizer(*tokenizer, model.eos_token_ids, static_cast<int32_t>(model.vocab_size));
}

protocol::StepResult to_step_result(uint64_t step_id, const std::vector<gpu::SampledToken>& sampled) {
  protocol::StepResult r;
  r.step_id = step_id;
  r.outputs.reserve(sampled.size());
  for (const auto& t : sampled) {
    protocol::SeqOutput o;
    o.seq_id = t.seq_id;
    o.token = t.token;
    o.logprob = t.logprob;
    for (auto& [id, lp] : t.top) o.top_logprobs.push_back({id, lp});
    r.outputs.push_back(std::move(o));
  }
  return r;
}

runtime::ActorBody executor_actor(gpu::BackendOptions options, runtime::EndpointsConfig endpoints) {
  return [options = std::move(options), endpoints = std::move(endpoints)](runtime::Pipe& pipe) {
    auto log = runtime::logger("executor");
    // One scheduler talks to the executor: its endpoint may be a shm:// ring pair (runtime/link.h).
    // Each plan is answered before the next is read, so a reply goes to the sender of the
    // message last received (a ROUTER's identity over ZeroMQ).
    runtime::LinkOptions link_options;
    link_options.zmq_hwm = 1000;
    link_options.should_stop = [&pipe] { return pipe.term_requested(); };
    auto link = runtime::open_link(runtime::Link::Role::kServer, endpoints.executor, link_options);

    auto t0 = std::chrono::steady_clock::now();
    std::unique_ptr<gpu::Backend> backend = gpu::make_backend(options);
    gpu::CacheGeometry geo = backend->cache_geometry();
    log->info("{} backend ready in {:.1f} s: {} device KV blocks of {} tokens ({} tokens, {}), {} host blocks",
              backend->name(), std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
              geo.num_gpu_blocks, geo.block_size, int64_t(geo.num_gpu_blocks) * geo.block_size,
              options.kv_cache_dtype == gpu::KvCacheDtype::kFp8 ? "fp8 e4m3 K/V" : "K/V in the compute type",
              geo.num_cpu_blocks);

    // Each sequence's whole block table, rebuilt from the deltas plans carry
    // (protocol/block_table_delta.h); the backend gets whole tables, lent for the step (moved,
    // not copied: a copy would cost time per step in proportion to every running context,
    // docs/benchmarks/scheduler.md).
    protocol::BlockTableMirror tables;
    SequenceRules rules;  // sampling rules of the sequences that have them
    // Structured output: the grammar vocabulary is the model's tokenizer, masks as wide as its
    // logits. Without a tokenizer (or one the grammar cannot read) structured requests fail.
    std::shared_ptr<const grammar::Vocabulary> vocabulary;
    try {
      auto v0 = std::chrono::steady_clock::now();
      vocabulary = grammar_vocabulary(options.model_dir, backend->config());
      if (vocabulary) {
        log->info("grammar vocabulary of {} tokens ready in {:.2f} s", vocabulary->num_tokens(),
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - v0).count());
      } else {
        log->info("no tokenizer.json in {}: structured output requests will fail", options.model_dir);
      }
    } catch (const std::exception& e) {
      log->warn("no grammar vocabulary ({}): structured output requests will fail", e.what());
    }
    GrammarStep grammar(vocabulary, std::clamp<int>(static_cast<int>(std::thread::hardware_concurrency()) / 4, 1, 4));
    // Each step's plan is decoded into the last one and its batch written over the last batch
    // (to_batch_input), so that their vectors' memory serves every step.
    protocol::StepPlan plan;
    gpu::BatchInput batch;
    std::string fatal;
    runtime::Loop loop(&pipe);
    link->watch(loop, [&](runtime::Link& peer) {
      const auto call_start = std::chrono::steady_clock::now();
      for (int i = 0; i < 16; ++i) {
        // Back to the loop after 100 ms of steps (the plans left wait there): it answers its
        // heartbeat between calls (docs/architecture.md, I38), and slow steps (the CPU backend
        // under load) must not add up to a missed heartbeat.
        if (i > 0 && std::chrono::steady_clock::now() - call_start > std::chrono::milliseconds(100)) return;
        auto body = peer.recv();
        if (!body) return;
        try {
          protocol::Frame f = protocol::open_owned(std::move(*body));
          if (f.type() == protocol::MessageType::kStepPlan) {
            f.as_into(plan);
            const uint64_t step_id = plan.step_id;
            protocol::StepResult result;
            auto start = std::chrono::steady_clock::now();
            try {
              std::vector<protocol::SeqError> seq_errors;
              grammar.take_rules(plan, seq_errors);
              tables.lend(plan);
              to_batch_input(plan, batch, rules);
              batch.token_masks = grammar.prepare(batch);
              auto give_back = [&] {
                for (auto& s : batch.seqs) tables.take_back(s.seq_id, std::move(s.block_table));
              };
              try {
                const std::vector<gpu::SampledToken> sampled = backend->step(batch);
                grammar.advance(sampled, seq_errors);
                result = to_step_result(step_id, sampled);
                if (!plan.prompt_scoring.empty()) result.prompt_logprobs = score_prompts(*backend, plan.prompt_scoring, batch);
              } catch (...) {
                give_back();
                throw;
              }
              give_back();
              result.seq_errors = std::move(seq_errors);
              for (const auto& e : result.seq_errors) log->warn("sequence {} failed: {}", e.seq_id, e.message);
              if (batch.token_masks != nullptr) {
                log->debug("step {}: {} grammar masks in {} us", step_id, grammar.last_masked_rows(),
                           grammar.last_fill_us());
              }
            } catch (const gpu::BackendFailure& e) {
              // The backend can run no further step (a tensor-parallel rank failed): this
              // step's requests get the error, then the executor ends and the server with it.
              log->error("step {} failed and the backend is stopped: {}", step_id, e.what());
              result.step_id = step_id;
              result.error = e.what();
              fatal = e.what();
            } catch (const std::exception& e) {
              log->error("step {} failed: {}", step_id, e.what());
              result.step_id = step_id;
              result.error = e.what();
            }
            result.forward_us = std::chrono::duration_cast<std::chrono::microseconds>(
                                    std::chrono::steady_clock::now() - start).count();
            runtime::send_message(peer, result);
            if (!fatal.empty()) throw gpu::BackendFailure(fatal);
          } else if (f.type() == protocol::MessageType::kExecutorInfoRequest) {
            protocol::ExecutorInfo info;
            info.backend = backend->name();
            info.block_size = geo.block_size;
            info.num_gpu_blocks = geo.num_gpu_blocks;
            info.num_cpu_blocks = geo.num_cpu_blocks;
            info.max_model_len = effective_max_model_len(options, backend->config());
            info.vocab_size = backend->config().vocab_size;
            info.eos_token_ids = backend->config().eos_token_ids;
            runtime::send_message(peer, info);
          } else {
            throw protocol::ProtocolError(protocol::DecodeErrorKind::kUnexpectedType,
                                          std::string("the executor does not serve ") + protocol::to_string(f.type()));
          }
        } catch (const protocol::ProtocolError& e) {
          log->warn("bad frame: {}", e.what());
          runtime::send_message(peer, protocol::error_reply_for(e));
        }
      }
    });
    pipe.signal_ready();
    loop.run();
  };
}

}  // namespace zinfer::actors
