// The sampling defaults of a model's generation_config.json, as vLLM applies them
// (--generation-config): temperature, top_p, top_k, min_p and repetition_penalty, each used when
// a request leaves the field out. Other keys of the file (eos ids, do_sample, ...) are not
// sampling defaults here: the eos ids are the executor's (gpu/model_config.h), and vLLM ignores
// do_sample too.
#pragma once

#include <string>

#include "gateway/options.h"

namespace zinfer::actors {

// `source`: "auto" = MODEL_DIR/generation_config.json when there is one (else no defaults),
// "vllm" = no defaults, anything else = a folder that must hold a generation_config.json.
// Throws runtime::ConfigError naming the file when it cannot be read, a value has the wrong type,
// or a default asks for sampling the gateway refuses (gateway/request_fields.h): a server that
// would refuse every request that leaves the field out must not start.
gateway::SamplingDefaults load_sampling_defaults(const std::string& source, const std::string& model_dir);

// The same from the file's text; `origin` names it in errors.
gateway::SamplingDefaults parse_sampling_defaults(const std::string& json_text, const std::string& origin);

}  // namespace zinfer::actors
