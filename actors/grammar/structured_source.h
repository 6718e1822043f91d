// The protocol's StructuredOutput (what a request asks its output to follow, protocol 1.6) as the
// engine's GrammarSource. One mapping for the gateway's check and the executor's matchers, so the
// two can never disagree on what a request meant.
#pragma once

#include "actors/grammar/grammar_source.h"
#include "protocol/messages.h"

namespace zinfer::grammar {

// Throws GrammarError ("kind") for a kind the protocol does not define (a client's raw integer).
GrammarSource source_of(const protocol::StructuredOutput& structured);

}  // namespace zinfer::grammar
