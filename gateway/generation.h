// One OpenAI request in flight on an HTTP connection, as a state machine without I/O: it takes
// the engine's events and says what to send (stream bytes, a whole response, or an error). The
// HTTP session owns the socket and writes what this returns.
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

  Generation(OpenAiRequest request, uint64_t request_id, Metrics& metrics, InFlightLimiter::Token token);

  Reaction on_event(const EngineEvent& event);

  // The client went away before the end: counted as aborted samples.
  void abandon();

  uint64_t id() const { return id_; }
  bool stream() const { return req_.stream; }
  const protocol::GenerateRequest& request() const { return req_.request; }

 private:
  Reaction on_delta(const protocol::TextDelta& delta);
  Reaction on_error(int status, const nlohmann::json& error);
  nlohmann::json response_body() const;
  // A stream delta's text with a reasoning parser: the reasoning part and the content part (the
  // latter is what a tool parser reads); without one, all content.
  reasoning::ReasoningParts split_delta(const protocol::TextDelta& delta);
  Usage usage() const;

  OpenAiRequest req_;
  uint64_t id_;
  ResponseMeta meta_;
  std::vector<ChoiceAccumulator> choices_;
  std::vector<reasoning::ReasoningStream> reasoning_;  // per choice, streams with a reasoning parser
  std::vector<ToolCallStream> tool_streams_;  // one per choice when the output is read for tool calls
  size_t finished_count_ = 0;
  bool stream_started_ = false;
  bool over_ = false;
  RequestTimer timer_;
  InFlightLimiter::Token token_;
};

}  // namespace zinfer::gateway
