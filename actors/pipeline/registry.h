// Every actor of the pipeline, by the name the config and `zinfer actor NAME` use.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "actors/pipeline/engine_config.h"
#include "runtime/supervisor.h"

namespace zinfer::actors {

// tokenizer, scheduler, executor, detokenizer, gateway, each built from `config` (copied) and
// given the options of its own library.
void register_pipeline_actors(runtime::Supervisor& supervisor, const EngineConfig& config);

bool is_pipeline_actor(const std::string& name);

// Under `zinfer launch`, the actors that restart with each actor (docs/architecture.md, I38):
// the executor's block tables and last sampled tokens and the detokenizer's decoders are kept
// per the scheduler's sequences, and a shm:// ring's state cannot be trusted once one of its two
// processes died in the middle of a message, so a new scheduler gets a new executor and
// detokenizer. The others restart alone: the scheduler re-opens its links to a new executor or
// detokenizer (a new epoch), and nothing else keeps state of another actor's.
std::map<std::string, std::vector<std::string>> pipeline_restart_groups();

}  // namespace zinfer::actors
