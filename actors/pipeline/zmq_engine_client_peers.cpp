// ZmqEngineClient's side of supervision (docs/architecture.md, I38): what the gateway does when
// the launcher says that another actor is down or back.
#include <vector>

#include "actors/pipeline/zmq_engine_client.h"
#include "runtime/logging.h"
#include "runtime/messaging.h"

namespace zinfer::actors {

size_t ZmqEngineClient::on_peer_notice(const runtime::PeerNotice& notice) {
  auto log = runtime::logger("gateway");
  if (!notice.down()) {
    std::lock_guard lock(mutex_);
    peers_down_.erase(notice.actor);
    log->info("actor {} answers", notice.actor);
    return 0;
  }
  std::vector<std::pair<uint64_t, gateway::DeltaSink>> requests;
  std::vector<std::pair<uint64_t, gateway::TokenizeSink>> calls;
  {
    std::lock_guard lock(mutex_);
    peers_down_.insert(notice.actor);
    for (auto& [id, p] : pending_) requests.emplace_back(id, std::move(p.sink));
    pending_.clear();
    if (notice.actor == "tokenizer") {
      for (auto& [id, sink] : tokenize_calls_) calls.emplace_back(id, std::move(sink));
      tokenize_calls_.clear();
    }
    // The engine forgets them: what it still holds of them is freed (a request still in the
    // tokenizer is aborted when it reaches the scheduler).
    for (auto& [id, _] : requests) runtime::send_message(to_scheduler_, protocol::Abort{id, "abort", -1});
  }
  const std::string message = "the " + notice.actor + " actor stopped and is being restarted; the request was lost";
  auto reply = [&](uint64_t id) {
    protocol::ErrorReply e;
    e.request_id = id;
    e.code = 503;
    e.kind = "actor_restarted";
    e.message = message;
    return e;
  };
  // Outside the lock, as dispatch() does: a sink hands the event to its connection.
  for (auto& [id, sink] : requests) sink(reply(id));
  for (auto& [id, sink] : calls) sink(reply(id));
  if (requests.empty() && calls.empty()) {
    log->info("actor {} is not answering (yet)", notice.actor);
  } else {
    log->error("actor {} is down: {} request(s) in flight ended with an error", notice.actor,
               requests.size() + calls.size());
  }
  return requests.size() + calls.size();
}

}  // namespace zinfer::actors
