#include "actors/pipeline/scheduler_actor.h"

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>

#include "actors/scheduler/scheduler_core.h"
#include "protocol/block_table_delta.h"
#include "protocol/envelope.h"
#include "runtime/context.h"
#include "runtime/link.h"
#include "runtime/logging.h"
#include "runtime/loop.h"
#include "runtime/messaging.h"
#include "runtime/peer_notice.h"

namespace zinfer::actors {

namespace {

using Clock = std::chrono::steady_clock;

// Asks the executor what it loaded; waits as long as the model takes to load (the executor may
// be another process still starting), but ends at once on Term.
protocol::ExecutorInfo fetch_executor_info(runtime::Link& executor, runtime::Pipe& pipe) {
  runtime::send_message(executor, protocol::ExecutorInfoRequest{1});
  std::optional<protocol::ExecutorInfo> info;
  runtime::Loop wait(&pipe);  // stops on $TERM
  executor.watch(wait, [&](runtime::Link& link) {
    if (auto frame = link.recv()) {
      info = protocol::decode<protocol::ExecutorInfo>(*frame);
      wait.stop();
    }
  });
  while (wait.run_once(std::chrono::milliseconds(1000))) {
  }
  executor.unwatch(wait);
  if (!info) throw std::runtime_error("terminated while waiting for the executor");
  return *info;
}

// Aborts that arrive before their request (the client left while it was being tokenized) are
// remembered for a while and applied when the request shows up.
class EarlyAborts {
 public:
  void add(uint64_t id) {
    ids_[id] = Clock::now();
    if (ids_.size() > 100000) prune();
  }
  bool take(uint64_t id) { return ids_.erase(id) > 0; }
  void prune() {
    auto cutoff = Clock::now() - std::chrono::seconds(60);
    for (auto it = ids_.begin(); it != ids_.end();) it = it->second < cutoff ? ids_.erase(it) : std::next(it);
  }

 private:
  std::unordered_map<uint64_t, Clock::time_point> ids_;
};

}  // namespace

runtime::ActorBody scheduler_actor(const EngineConfig& config) {
  return [config](runtime::Pipe& pipe) {
    auto log = runtime::logger("scheduler");
    zmq::socket_t in(runtime::zmq_context(), zmq::socket_type::pull);
    runtime::configure_pipeline_socket(in);
    in.bind(config.endpoints.scheduler);
    // The executor's and the detokenizer's endpoints have this actor as their only sender, so
    // they may be shm:// rings (runtime/link.h); a shm:// connect waits for its binder or Term.
    runtime::LinkOptions link_options;
    link_options.should_stop = [&pipe] { return pipe.term_requested(); };
    runtime::LinkOptions executor_options = link_options;
    executor_options.zmq_hwm = 1000;
    auto executor = runtime::open_link(runtime::Link::Role::kClient, config.endpoints.executor, executor_options);
    auto to_detok = runtime::open_link(runtime::Link::Role::kPush, config.endpoints.detokenizer, link_options);
    zmq::socket_t to_gateway(runtime::zmq_context(), zmq::socket_type::push);
    runtime::configure_pipeline_socket(to_gateway);
    to_gateway.connect(config.endpoints.gateway);

    protocol::ExecutorInfo info = fetch_executor_info(*executor, pipe);
    if (!info.error.empty()) throw std::runtime_error("the executor failed: " + info.error);

    const scheduler::SchedulerConfig sc = scheduler_options(config, info);
    sc.validate();
    // A new core for each executor (an epoch, I38): a restarted executor holds no sequence, so
    // the old core's plans in flight, KV bookkeeping and block tables are forgotten with it.
    auto core = std::make_unique<scheduler::SchedulerCore>(sc);
    log->info("scheduling over {} device blocks and {} host blocks of {} tokens ({} policy, {} preemption)",
              sc.num_device_blocks, sc.num_host_blocks, sc.block_size, sc.policy,
              scheduler::to_string(sc.preemption));

    EarlyAborts early_aborts;
    struct {
      bool executor_down = false;
      bool detokenizer_down = false;
    } peers;
    auto send_output = [&](scheduler::SchedulerOutput&& out) {
      // A rejected request is answered with its ErrorReply alone, so that the client gets the
      // error's status (e.g. 413) rather than a stream ending in finish_reason "error".
      std::unordered_map<uint64_t, bool> rejected;
      for (const auto& e : out.errors) rejected[e.request_id] = true;
      if (peers.detokenizer_down) {
        // Nothing is planned while it is down, so only rejections and aborts lose their deltas
        // here; their ErrorReplies still go out below.
        core->recycle(std::move(out.deltas));
        for (const auto& e : out.errors) runtime::send_message(to_gateway, e, link_options.should_stop);
        return;
      }
      for (const auto& s : out.starts) {
        if (!rejected.count(s.request_id)) runtime::send_message(*to_detok, s);
      }
      // The step's TokenDeltas as one message, after the RequestStarts on the same socket (so
      // they still arrive first): one encode and one send per step, not one per sample.
      protocol::TokenDeltaBatch batch;
      if (rejected.empty()) {
        batch.deltas = std::move(out.deltas);
      } else {
        for (auto& d : out.deltas) {
          if (!rejected.count(d.request_id)) batch.deltas.push_back(std::move(d));
        }
      }
      for (auto& p : out.prompt_logprobs) {
        if (!rejected.count(p.id)) batch.prompt_logprobs.push_back(std::move(p));
      }
      if (!batch.deltas.empty() || !batch.prompt_logprobs.empty()) runtime::send_message(*to_detok, batch);
      core->recycle(std::move(batch.deltas));  // their memory serves the next steps' deltas
      // The gateway stops first (I36): a send to it must not outlast $TERM.
      for (const auto& e : out.errors) runtime::send_message(to_gateway, e, link_options.should_stop);
    };
    // Plans leave with block-table deltas (sc.block_table_deltas): the executor keeps each
    // sequence's table (protocol/block_table_delta.h).
    auto pump = [&] {
      if (peers.executor_down || peers.detokenizer_down) return;  // requests wait in the queue
      while (auto plan = core->schedule()) {
        runtime::send_message(*executor, *plan);
        core->recycle(std::move(*plan));  // its memory serves the next plan
      }
    };

    runtime::Loop loop(&pipe);
    // Each handler drains its socket, then sends what the messages produced as one output: the
    // results of several steps that queued up while the scheduler was busy leave as one
    // TokenDeltaBatch (fewer messages per step exactly when the scheduler is behind; one result
    // alone still leaves at once).
    loop.on(in, [&](zmq::socket_t& s) {
      scheduler::SchedulerOutput out;
      for (int i = 0; i < 1024; ++i) {
        auto frame = runtime::recv_frame(s, true);
        if (!frame) break;
        try {
          protocol::Frame f = protocol::open_owned(std::move(*frame));
          if (f.type() == protocol::MessageType::kTokenizedRequest) {
            auto req = f.as<protocol::TokenizedRequest>();
            out.append(core->add_request(req));
            if (early_aborts.take(req.request_id)) out.append(core->abort(req.request_id, "abort"));
          } else if (f.type() == protocol::MessageType::kAbort) {
            auto a = f.as<protocol::Abort>();
            auto aborted = core->abort(a.request_id, a.reason.empty() ? "abort" : a.reason, a.index);
            if (aborted.empty() && a.reason != "stop") early_aborts.add(a.request_id);
            out.append(std::move(aborted));
          } else {
            log->warn("ignoring unexpected {}", protocol::to_string(f.type()));
          }
        } catch (const protocol::ProtocolError& e) {
          log->warn("bad frame: {}", e.what());
        }
      }
      send_output(std::move(out));
      pump();
    });
    std::function<void(runtime::Link&)> on_executor = [&](runtime::Link& link) {
      if (peers.executor_down) {  // the old epoch's results: its requests have ended already
        while (link.recv()) {
        }
        return;
      }
      scheduler::SchedulerOutput out;
      for (;;) {
        auto frame = link.recv();
        if (!frame) break;
        try {
          protocol::Frame f = protocol::open_owned(std::move(*frame));
          if (f.type() == protocol::MessageType::kErrorReply) {
            // The executor could not read a plan: that is a bug on this side, and the plan will
            // never be answered. Fail it as a step error so its requests end and the pipeline
            // keeps going.
            auto err = f.as<protocol::ErrorReply>();
            log->error("the executor refused a plan: {}", err.message);
            // Its block-table mirror missed that plan's deltas: whole tables from now on.
            core->resend_block_tables();
            if (core->num_in_flight() > 0) {
              protocol::StepResult failed;
              failed.step_id = core->oldest_in_flight_step();
              failed.error = err.message;
              out.append(core->postprocess(failed));
            }
            continue;
          }
          auto result = f.as<protocol::StepResult>();
          if (!result.error.empty()) {
            log->error("step {} failed: {}", result.step_id, result.error);
            core->resend_block_tables();  // the failed step may have left the executor's tables half updated
          }
          out.append(core->postprocess(result));
        } catch (const protocol::ProtocolError& e) {
          log->error("bad frame from the executor: {}", e.what());
        } catch (const std::invalid_argument& e) {
          log->error("result out of order: {}", e.what());
        }
      }
      send_output(std::move(out));
      pump();
    };
    executor->watch(loop, on_executor);
    loop.every(std::chrono::milliseconds(100), [&] {
      runtime::send_message(to_gateway, core->stats(), /*dontwait=*/true);
      early_aborts.prune();
    });
    // Supervision (docs/architecture.md, I38). Whichever actor went down, every request held
    // here ends now: each passed through that actor, which held a part of it (its tokens, text,
    // KV bytes or client). The gateway hears ErrorReply 503 (it fails them itself as well, and
    // takes whichever comes first), the detokenizer an Abort that makes it forget the request.
    auto end_everything = [&](const std::string& actor) {
      const std::vector<uint64_t> ids = core->request_ids();
      for (uint64_t id : ids) {
        core->abort(id, "abort");  // frees its blocks; the deltas are replaced by what follows
        if (!peers.detokenizer_down) {
          runtime::send_message(*to_detok, protocol::Abort{id, "actor_restarted", -1});
        }
        // A gateway that is down has no client to tell, and its successor does not know the id.
        if (actor != "gateway") {
          protocol::ErrorReply e;
          e.request_id = id;
          e.code = 503;
          e.kind = "actor_restarted";
          e.message = "the " + actor + " actor stopped and is being restarted; the request was lost";
          runtime::send_message(to_gateway, e, link_options.should_stop);
        }
      }
      if (!ids.empty()) log->warn("actor {} is down: {} request(s) ended", actor, ids.size());
    };
    auto reconnect_executor = [&] {
      executor->unwatch(loop);
      executor.reset();  // the old link and whatever it still queued (plans, results) go with it
      executor = runtime::open_link(runtime::Link::Role::kClient, config.endpoints.executor, executor_options);
      const protocol::ExecutorInfo again = fetch_executor_info(*executor, pipe);
      if (!again.error.empty()) throw std::runtime_error("the restarted executor failed: " + again.error);
      if (again.num_gpu_blocks != info.num_gpu_blocks || again.num_cpu_blocks != info.num_cpu_blocks ||
          again.block_size != info.block_size || again.max_model_len != info.max_model_len) {
        throw std::runtime_error("the restarted executor has another cache geometry or context length");
      }
      executor->watch(loop, on_executor);
      log->info("executor is back: a new epoch over {} device blocks", sc.num_device_blocks);
    };
    loop.on_notice([&](const std::string& text) {
      auto notice = runtime::PeerNotice::parse(text);
      if (!notice) return log->warn("unknown notice from the supervisor: {}", text);
      const std::string& actor = notice->actor;
      if (notice->down()) {
        if (actor == "executor") peers.executor_down = true;
        if (actor == "detokenizer") peers.detokenizer_down = true;
        end_everything(actor);
        if (actor == "executor") core = std::make_unique<scheduler::SchedulerCore>(sc);
        return;
      }
      if (actor == "executor" && peers.executor_down) {
        // Requests that came meanwhile waited in the new core; they run on the new executor.
        reconnect_executor();
        peers.executor_down = false;
      } else if (actor == "detokenizer" && peers.detokenizer_down) {
        to_detok.reset();
        to_detok = runtime::open_link(runtime::Link::Role::kPush, config.endpoints.detokenizer, link_options);
        peers.detokenizer_down = false;
        log->info("detokenizer is back");
      }
      pump();
    });
    pipe.signal_ready();
    loop.run();
  };
}

}  // namespace zinfer::actors
