#include "actors/detokenizer/detokenizer_actor.h"

#include <algorithm>
#include <filesystem>
#include <span>
#include <map>
#include <optional>
#include <unordered_map>

#include "actors/detokenizer/stop_matcher.h"
#include "actors/detokenizer/token_texts.h"
#include "actors/tokenizer/tokenizer.h"
#include "protocol/envelope.h"
#include "runtime/context.h"
#include "runtime/link.h"
#include "runtime/logging.h"
#include "runtime/loop.h"
#include "runtime/messaging.h"

namespace zinfer::actors {

namespace {

struct SampleState {
  std::optional<tok::IncrementalDecoder> decoder;
  StopMatcher stops;
  bool done = false;
};

struct RequestState {
  protocol::RequestStart start;
  std::map<int32_t, SampleState> samples;
  int32_t samples_done = 0;
  // The prompt's ids, text and logprobs go out once, on the request's first TextDelta.
  bool prompt_sent = false;
  std::optional<protocol::PromptLogprobs> prompt_logprobs;
};

}  // namespace

runtime::ActorBody detokenizer_actor(std::string model_dir, runtime::EndpointsConfig endpoints) {
  return [model_dir = std::move(model_dir), endpoints = std::move(endpoints)](runtime::Pipe& pipe) {
    auto log = runtime::logger("detokenizer");
    std::shared_ptr<const tok::Tokenizer> tokenizer;
    if (std::filesystem::exists(std::filesystem::path(model_dir) / "tokenizer.json")) {
      tokenizer = tok::Tokenizer::from_file(model_dir);
    } else {
      log->warn("no tokenizer.json in {}: text will be empty, token ids still flow", model_dir);
    }
    // The scheduler is the only sender here: the endpoint may be a shm:// ring (runtime/link.h).
    runtime::LinkOptions link_options;
    link_options.should_stop = [&pipe] { return pipe.term_requested(); };
    auto in = runtime::open_link(runtime::Link::Role::kPull, endpoints.detokenizer, link_options);
    zmq::socket_t to_gateway(runtime::zmq_context(), zmq::socket_type::push);
    runtime::configure_pipeline_socket(to_gateway);
    to_gateway.connect(endpoints.gateway);
    zmq::socket_t to_scheduler(runtime::zmq_context(), zmq::socket_type::push);
    runtime::configure_pipeline_socket(to_scheduler);
    to_scheduler.connect(endpoints.scheduler);

    std::unordered_map<uint64_t, RequestState> requests;
    // Its peers may stop before it does (the gateway first, I36): a send must not outlast $TERM.
    auto should_stop = [&pipe] { return pipe.term_requested(); };

    auto sample_state = [&](RequestState& r, int32_t index) -> SampleState& {
      auto it = r.samples.find(index);
      if (it != r.samples.end()) return it->second;
      SampleState s{std::nullopt, StopMatcher(r.start.stop, r.start.include_stop_str_in_output), false};
      if (tokenizer) s.decoder.emplace(tokenizer, r.start.skip_special_tokens);
      return r.samples.emplace(index, std::move(s)).first->second;
    };

    auto on_delta = [&](const protocol::TokenDelta& d) {
      auto rit = requests.find(d.request_id);
      if (rit == requests.end()) return;  // aborted and forgotten, or never started
      RequestState& r = rit->second;
      SampleState& s = sample_state(r, d.index);
      if (s.done) return;  // already ended by a stop string; late tokens are dropped
      // The scheduler ends a sample with "stop" on an eos token or one of stop_token_ids, the
      // sample's last token: its text is not part of the output (vLLM), unless the request keeps
      // stop strings. The token itself stays in token_ids and counts as usage.
      const bool stop_token = d.finish_reason == "stop" && !d.token_ids.empty();
      std::span<const int32_t> shown(d.token_ids);
      if (stop_token && !r.start.include_stop_str_in_output) shown = shown.first(shown.size() - 1);
      std::string piece = s.decoder ? s.decoder->push(shown) : std::string();
      protocol::TextDelta out;
      out.request_id = d.request_id;
      out.index = d.index;
      out.token_ids = d.token_ids;
      out.logprobs = d.logprobs;
      out.top_logprobs = d.top_logprobs;
      out.prompt_tokens = d.prompt_tokens;
      out.completion_tokens = d.completion_tokens;
      out.cached_tokens = d.cached_tokens;
      if (!r.prompt_sent) {
        r.prompt_sent = true;
        out.prompt_token_ids = std::move(r.start.prompt_ids);
        if (tokenizer && !out.prompt_token_ids.empty()) {
          out.prompt_text = tokenizer->decode(out.prompt_token_ids, r.start.skip_special_tokens);
        }
        out.prompt_logprobs = std::move(r.prompt_logprobs);
        out.scheduled_ns = r.start.scheduled_ns;
      }
      if (tokenizer && (r.start.logprobs || out.prompt_logprobs)) add_token_texts(*tokenizer, out);
      StopMatcher::Output m = s.stops.feed(piece);
      out.text = std::move(m.text);
      if (m.stopped) {
        out.finish_reason = "stop";
        out.stop_string = m.matched;
        runtime::send_message(to_scheduler, protocol::Abort{d.request_id, "stop", d.index}, should_stop);
      } else if (!d.finish_reason.empty()) {
        StopMatcher::Output rest;
        if (s.decoder) rest = s.stops.feed(s.decoder->flush());
        out.text += rest.text;
        if (rest.stopped) {
          out.finish_reason = "stop";
          out.stop_string = rest.matched;
        } else {
          out.text += s.stops.finish();
          out.finish_reason = d.finish_reason;
          const auto& ids = r.start.stop_token_ids;
          if (stop_token && std::find(ids.begin(), ids.end(), d.token_ids.back()) != ids.end()) {
            out.stop_token = d.token_ids.back();
          }
        }
      }
      if (!out.finish_reason.empty()) {
        s.done = true;
        r.samples_done++;
      }
      runtime::send_message(to_gateway, out, should_stop);
      if (r.samples_done >= r.start.n) requests.erase(rit);
    };

    runtime::Loop loop(&pipe);
    in->watch(loop, [&](runtime::Link& link) {
      for (int i = 0; i < 1024; ++i) {
        auto frame = link.recv();
        if (!frame) return;
        try {
          protocol::Frame f = protocol::open_owned(std::move(*frame));
          switch (f.type()) {
            case protocol::MessageType::kRequestStart: {
              auto start = f.as<protocol::RequestStart>();
              RequestState& r = requests[start.request_id];
              r.start = std::move(start);
              if (r.start.n < 1) r.start.n = 1;
              break;
            }
            case protocol::MessageType::kTokenDelta:  // one sample's tokens (an external scheduler)
              on_delta(f.as<protocol::TokenDelta>());
              break;
            case protocol::MessageType::kTokenDeltaBatch: {  // a step's tokens (our scheduler)
              auto batch = f.as<protocol::TokenDeltaBatch>();
              for (auto& p : batch.prompt_logprobs) {
                auto rit = requests.find(p.id);
                if (rit != requests.end()) rit->second.prompt_logprobs = std::move(p);
              }
              for (const auto& d : batch.deltas) {
                // One sample that fails to detokenize must not cost the others of the step
                // their tokens.
                try {
                  on_delta(d);
                } catch (const std::exception& e) {
                  log->error("detokenization of request {} failed: {}", d.request_id, e.what());
                }
              }
              break;
            }
            case protocol::MessageType::kAbort:  // the scheduler ended the request (I38): forget it
              requests.erase(f.as<protocol::Abort>().request_id);
              break;
            default:
              log->warn("ignoring unexpected {}", protocol::to_string(f.type()));
          }
        } catch (const protocol::ProtocolError& e) {
          log->warn("bad frame: {}", e.what());
        } catch (const std::exception& e) {
          log->error("detokenization failed: {}", e.what());
        }
      }
    });
    pipe.signal_ready();
    loop.run();
  };
}

}  // namespace zinfer::actors
