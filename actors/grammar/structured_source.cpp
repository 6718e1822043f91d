#include "actors/grammar/structured_source.h"

#include <string>

#include "actors/grammar/errors.h"

namespace zinfer::grammar {

GrammarSource source_of(const protocol::StructuredOutput& s) {
  GrammarSource g;
  switch (s.kind) {
    case protocol::StructuredKind::kJsonSchema: g.kind = GrammarSource::Kind::kJsonSchema; break;
    case protocol::StructuredKind::kJsonObject: g.kind = GrammarSource::Kind::kJsonObject; break;
    case protocol::StructuredKind::kRegex: g.kind = GrammarSource::Kind::kRegex; break;
    case protocol::StructuredKind::kChoice: g.kind = GrammarSource::Kind::kChoice; break;
    case protocol::StructuredKind::kGrammar: g.kind = GrammarSource::Kind::kGbnf; break;
    default:
      throw GrammarError("kind", "structured output kind " + std::to_string(static_cast<int>(s.kind)) +
                                     " is not one of json_schema (0), json_object (1), regex (2), choice (3), "
                                     "grammar (4)");
  }
  g.text = s.text;
  g.choices = s.choices;
  return g;
}

}  // namespace zinfer::grammar
