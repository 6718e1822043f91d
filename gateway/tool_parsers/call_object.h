// One function call written as a JSON object, {"name": "...", "<arguments key>": {...}}: the
// shape every JSON-based tool format shares (Hermes' "arguments", Llama's "parameters", vLLM's
// forced "required" array).
#pragma once

#include <initializer_list>
#include <string_view>

#include "gateway/tool_parsers/tool_parser.h"

namespace zinfer::gateway::tools {

struct CallObject {
  enum class Status {
    kComplete,  // a valid object with a string name and arguments: `call` holds them
    kPartial,   // the text ends inside the object; `call` holds what is known when has_name
    kInvalid,   // not such an object, whatever follows
  };
  Status status = Status::kInvalid;
  size_t end = 0;         // kComplete: one past the object
  bool has_name = false;  // the name is complete
  ParsedCall call;
};

// The object at text[pos] (which must be '{'); the arguments are the value of the first of
// `argument_keys` present.
CallObject read_call_object(std::string_view text, size_t pos, std::initializer_list<std::string_view> argument_keys);

}  // namespace zinfer::gateway::tools
