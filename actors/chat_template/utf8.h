// UTF-8 helpers giving the template's strings Python `str` semantics: lengths, indices and slices
// count code points, whitespace is Unicode whitespace (str.isspace), case mapping is per code point.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zinfer::chat::utf8 {

// Decodes the code point at s[pos] and advances pos. A malformed byte decodes as the code point of
// its value and advances by one (the JSON input is valid UTF-8, so this only keeps us safe).
char32_t next(std::string_view s, size_t& pos);
void append(std::string& out, char32_t cp);

size_t length(std::string_view s);  // in code points
// Byte offset of each code point, plus s.size() at the end (size length(s) + 1).
std::vector<size_t> offsets(std::string_view s);

bool is_space(char32_t cp);  // Python str.isspace
bool is_alpha(char32_t cp);
bool is_digit(char32_t cp);

// Python str.strip/lstrip/rstrip: strips Unicode whitespace, or the code points in `chars`.
std::string strip(std::string_view s, const std::optional<std::string>& chars, bool left, bool right);

std::string to_upper(std::string_view s);
std::string to_lower(std::string_view s);
char32_t to_upper(char32_t cp);
char32_t to_lower(char32_t cp);
char32_t to_title(char32_t cp);

}  // namespace zinfer::chat::utf8
