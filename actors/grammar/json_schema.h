// JSON Schema (draft 2020-12 and the older drafts' spellings) and generic JSON compiled to grammar.
//
// Supported: type (one or a list), enum, const, properties, required, additionalProperties,
// items, prefixItems, minItems, maxItems, minLength, maxLength, pattern, format (date, time,
// date-time, uuid, email, ipv4), minimum, maximum, exclusiveMinimum, exclusiveMaximum (see
// json_numbers.h), anyOf, oneOf, allOf with one schema, $ref to "#" or a JSON pointer into the
// document ($defs, definitions), boolean schemas, and the annotations (title, description,
// default, examples, $schema, $id, $comment, deprecated, readOnly, writeOnly), which constrain
// nothing. Any other keyword is UnsupportedError naming it and where it is.
//
// What is generated (every output validates; not every valid document can be generated):
// - Objects list the declared properties in the schema's order, required ones always, optional
//   ones or not. additionalProperties absent or false allows no other property (as OpenAI's strict
//   mode does); true or a schema allows more after the declared ones, with keys that are not
//   declared names and hold no escapes.
// - oneOf is generated as anyOf: its branches must not overlap for the outputs to validate.
// - enum and const values are written compactly (nlohmann's dump); only `type` may sit beside
//   them (it filters the values). anyOf / oneOf / $ref take no sibling assertions.
// - Strings are written with the shortest escapes (\" \\ \n \r \t \b \f, \u00XX for the other
//   control characters; \uXXXX for any non-surrogate when the model picks it). pattern and format
//   cannot be combined with each other or with minLength / maxLength. A pattern is a search, as
//   the specification says: unanchored ends may have any characters.
// - Formats: date is YYYY-MM-DD with the days of each month (February to 28); time is
//   HH:MM:SS[.ffffff](Z|+HH:MM|-HH:MM) without leap seconds; date-time is date 'T' time; uuid is
//   8-4-4-4-12 hex digits; email is local@domain.tld from [A-Za-z0-9._%+-] and [A-Za-z0-9-]
//   labels; ipv4 is four decimal octets without leading zeros.
//
// Whitespace: at each place JSON allows it between tokens (after '{', '[', ',' and ':', before
// '}' and ']'), one of: nothing, one space, or a newline followed by at most 24 spaces or tabs.
// That admits compact, ", "/": "-separated and indented output, and bounds the whitespace a model
// can emit per structural character, so it cannot loop on spaces.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "actors/grammar/grammar.h"

namespace zinfer::grammar {

// Throws GrammarError for invalid JSON or an invalid schema, UnsupportedError as above.
Grammar json_schema_grammar_from_text(std::string_view schema_text);
Grammar json_schema_grammar(const nlohmann::ordered_json& schema);

// Any JSON object (response_format json_object), any JSON value.
Grammar json_object_grammar();
Grammar json_value_grammar();

}  // namespace zinfer::grammar
