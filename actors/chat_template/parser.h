// Turns the lexer's tokens into the syntax tree (ast.h), following Jinja2's grammar and operator
// precedence. Anything outside the supported subset (an {% include %}, a `recursive` loop, ...)
// is a TemplateError naming the construct and its line:column.
#pragma once

#include <string>

#include "actors/chat_template/ast.h"

namespace zinfer::chat {

ast::Body parse_template(const std::string& source);  // throws TemplateError

}  // namespace zinfer::chat
