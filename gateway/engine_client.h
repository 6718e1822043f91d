// The gateway's only view of the serving pipeline. The gateway validates a client's request, turns
// it into a protocol::GenerateRequest with a gateway-unique request_id and hands it here; the
// pipeline streams back what it produced through the request's sink. The lead's implementation
// speaks ZeroMQ to the tokenizer / scheduler / detokenizer actors; tests use a fake.
#pragma once

#include <cstdint>
#include <functional>
#include <variant>

#include "protocol/messages.h"

namespace zinfer::gateway {

// One thing the pipeline says about a request: a piece of generated text (per sample index; the
// last one of a sample carries finish_reason), or an error that ends the whole request.
using EngineEvent = std::variant<protocol::TextDelta, protocol::ErrorReply>;

// Receives a request's events. It may be called from any thread (never concurrently for the same
// request) and must not block: the gateway only hands the event to the connection's executor.
using DeltaSink = std::function<void(EngineEvent)>;

// The answer to a TokenizeRequest (/tokenize, /detokenize): the reply, or an error.
using TokenizeOutcome = std::variant<protocol::TokenizeReply, protocol::ErrorReply>;
// Receives it, once, from any thread; must not block.
using TokenizeSink = std::function<void(TokenizeOutcome)>;

class EngineClient {
 public:
  virtual ~EngineClient() = default;

  // Starts a request. The sink receives, for every sample index in [0, sampling.n), TextDeltas
  // ending with one whose finish_reason is set; or one ErrorReply that ends the request. Either
  // may arrive before submit returns. The engine drops the sink once the request ended or was
  // aborted.
  virtual void submit(protocol::GenerateRequest request, DeltaSink sink) = 0;

  // Ends a request early (the client went away or cancelled). The engine frees its resources;
  // events that still arrive for it are ignored by the gateway.
  virtual void abort(uint64_t request_id) = 0;

  // Encodes a prompt or chat messages, or decodes token ids, with the served model's tokenizer and
  // chat template; generates nothing. The sink gets the answer, possibly before this returns.
  virtual void tokenize(protocol::TokenizeRequest request, TokenizeSink sink) = 0;

  // The pipeline's latest statistics for /metrics. Must return promptly (a cached snapshot): it
  // runs on an I/O thread.
  virtual protocol::Stats stats() = 0;

  // Whether the pipeline can serve (for /health).
  virtual bool healthy() { return true; }
};

}  // namespace zinfer::gateway
