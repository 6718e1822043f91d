// One OpenAI request in flight on an HTTP connection, as a state machine without I/O: it takes
// the engine's events and says what to send (stream bytes, a whole response, or an error). The
// HTTP session owns the socket and writes what this returns.
//
// A completions request with a batch of prompts runs as one engine request per prompt (each with
// the request's n samples); their events arrive under their own engine ids and become choices
// i * n + j of one response. An error from any of them ends the whole response.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gateway/engine_client.h"
#include "gateway/in_flight.h"
#include "gateway/metrics.h"
#include "gateway/openai_request.h"
#include "gateway/openai_response.h"
#include "gateway/reasoning/reasoning_split.h"
#include "gateway/tool_stream.h"

namespace zinfer::gateway {

class Generation {
 public:
  struct Reaction {
    enum class Kind {
      kNone,    // nothing to send yet
      kStream,  // data: server-sent events to append to the stream (opening it if needed)
      kBody,    // data: the whole JSON response, status 200
      kError,   // data: OpenAI error JSON, with status; nothing of the response was sent before
    };
    Kind kind = Kind::kNone;
    int status = 200;
    std::string data;
    bool finished = false;  // the request is over; nothing more will be sent for it
  };

  // `engine_ids` has one id per prompt of the request (request.prompts; one for chat): the id of
  // the response is built from the first.
  Generation(OpenAiRequest request, std::vector<uint64_t> engine_ids, Metrics& metrics, InFlightLimiter::Token token);

  // An event of the engine request `engine_id` (one of engine_ids()).
  Reaction on_event(uint64_t engine_id, const EngineEvent& event);

  // The client went away before the end: counted as aborted samples.
  void abandon();

  uint64_t id() const { return ids_.front(); }
  const std::vector<uint64_t>& engine_ids() const { return ids_; }
  bool owns(uint64_t engine_id) const;
  bool stream() const { return req_.stream; }
  // The engine request of prompt `index` (request_id set).
  protocol::GenerateRequest engine_request(size_t index) const;

 private:
  Reaction on_delta(size_t prompt, protocol::TextDelta& delta);
  Reaction on_error(int status, const nlohmann::json& error);
  nlohmann::json response_body() const;
  // A stream delta's text with a reasoning parser: the reasoning part and the content part (the
  // latter is what a tool parser reads); without one, all content.
  reasoning::ReasoningParts split_delta(size_t choice, const protocol::TextDelta& delta);
  Usage usage() const;
  nlohmann::json chunk_usage(size_t prompt, const ChoiceAccumulator& choice) const;

  OpenAiRequest req_;
  std::vector<uint64_t> ids_;
  int n_ = 1;
  ResponseMeta meta_;
  std::vector<PromptState> prompts_;
  std::vector<ChoiceAccumulator> choices_;
  std::vector<reasoning::ReasoningStream> reasoning_;  // per choice, streams with a reasoning parser
  std::vector<ToolCallStream> tool_streams_;  // one per choice when the output is read for tool calls
  TokenTexts texts_;
  TokenNaming naming_;
  size_t finished_count_ = 0;
  bool stream_started_ = false;
  bool over_ = false;
  std::vector<RequestTimer> timers_;  // one per engine request
  InFlightLimiter::Token token_;
};

}  // namespace zinfer::gateway
