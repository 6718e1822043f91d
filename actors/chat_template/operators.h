// Python's arithmetic and membership on template values: + - * / // % ** with int/float
// promotion, str and list concatenation and repetition, and `in` on str, list and dict.
#pragma once

#include "actors/chat_template/ast.h"
#include "actors/chat_template/value.h"

namespace zinfer::chat {

// One of Add, Sub, Mul, Div, FloorDiv, Mod, Pow. Throws EvalError for unsupported operand types.
Value arithmetic(ast::Binary::Op op, const Value& left, const Value& right);
bool contains(const Value& container, const Value& item);  // Python `item in container`

}  // namespace zinfer::chat
