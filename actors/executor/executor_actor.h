// The executor actor owns the device. It loads the model when it starts (start returns once the
// weights and the KV cache are in place), then serves a ROUTER socket at endpoints.executor:
//   StepPlan            -> StepResult  (copies, one forward pass over the flattened batch, sampling)
//   ExecutorInfoRequest -> ExecutorInfo (cache geometry and model facts the scheduler needs)
// A step that fails is answered with StepResult.error; the actor keeps serving.
#pragma once

#include <memory>
#include <unordered_map>

#include "actors/grammar/vocabulary.h"
#include "gpu/backend.h"
#include "protocol/messages.h"
#include "runtime/actor.h"
#include "runtime/runtime_config.h"

namespace zinfer::actors {

// Loads the backend `backend` describes and serves endpoints.executor.
runtime::ActorBody executor_actor(gpu::BackendOptions backend, runtime::EndpointsConfig endpoints);

// Each sequence's sampling rules, from the SeqWork that brought them until the plan that lists
// the sequence as finished: every later sampling step of the sequence carries the same object.
using SequenceRules = std::unordered_map<uint64_t, std::shared_ptr<const gpu::SamplingRules>>;

// The backend's form of a sequence's rules (logit_bias sorted by token, the last value of a
// repeated token kept; allowed_token_ids sorted without repeats).
std::shared_ptr<const gpu::SamplingRules> to_backend_rules(const protocol::SamplingRules& rules);

// Translation between the protocol and the backend. to_batch_input writes the plan's step over
// the batch of an earlier step, swapping the token ids, block tables and finished list between
// the two instead of copying them: both keep their memory for the next step. `rules` takes the
// rules the plan brings and drops those of its finished sequences.
void to_batch_input(protocol::StepPlan& plan, gpu::BatchInput& batch, SequenceRules& rules);
protocol::StepResult to_step_result(uint64_t step_id, const std::vector<gpu::SampledToken>& sampled);

// The context length the options and model give: options.max_model_len when set, else the
// model's max_position_embeddings.
int32_t effective_max_model_len(const gpu::BackendOptions& options, const gpu::ModelConfig& model);

// The grammar vocabulary of structured output (docs/structured-output.md): the tokenizer.json of
// model_dir read as token bytes, the model's eos ids as stop tokens, masks as wide as the
// model's logits (vocab_size). Null when the folder has no tokenizer.json.
std::shared_ptr<const grammar::Vocabulary> grammar_vocabulary(const std::string& model_dir, const gpu::ModelConfig& model);

}  // namespace zinfer::actors
