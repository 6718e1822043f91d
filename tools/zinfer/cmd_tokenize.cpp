// `zinfer tokenize` and `zinfer detokenize`: the tokenizer library on the command line.
//   zinfer tokenize --tokenizer PATH (--text TEXT | --jsonl FILE) [--no-special] [--json]
//   zinfer detokenize --tokenizer PATH --ids 1,2,3 [--skip-special]
// PATH is a tokenizer.json or a folder holding one. --jsonl reads one JSON string per line and
// writes one JSON array of ids per line. detokenize prints the text exactly, no newline added.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "actors/tokenizer/tokenizer.h"
#include "tools/zinfer/commands.h"

namespace zinfer::cli {

namespace {

struct TokenizeOptions {
  std::string tokenizer;
  std::string text;
  std::string jsonl;
  bool no_special = false;
  bool json = false;
};

void print_ids(const std::vector<int32_t>& ids, bool json) {
  if (json) {
    std::cout << nlohmann::json(ids).dump() << '\n';
    return;
  }
  std::string line;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) line.push_back(' ');
    line += std::to_string(ids[i]);
  }
  std::cout << line << '\n';
}

void run_tokenize(const TokenizeOptions& o, bool text_given) {
  if (text_given == !o.jsonl.empty()) throw std::runtime_error("give exactly one of --text and --jsonl");
  const auto tok = tok::Tokenizer::from_file(o.tokenizer);
  if (text_given) {
    print_ids(tok->encode(o.text, !o.no_special), o.json);
    return;
  }
  std::ifstream in(o.jsonl, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + o.jsonl);
  size_t line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.empty()) continue;
    nlohmann::json value;
    try {
      value = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      throw std::runtime_error(o.jsonl + ":" + std::to_string(line_no) + ": not JSON: " + e.what());
    }
    if (!value.is_string()) throw std::runtime_error(o.jsonl + ":" + std::to_string(line_no) + ": not a JSON string");
    std::cout << nlohmann::json(tok->encode(value.get_ref<const std::string&>(), !o.no_special)).dump() << '\n';
  }
}

std::vector<int32_t> parse_ids(const std::string& list) {
  std::vector<int32_t> ids;
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    if (comma == std::string::npos) comma = list.size();
    std::string item = list.substr(pos, comma - pos);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (!item.empty()) {
      size_t used = 0;
      long long value = 0;
      try {
        value = std::stoll(item, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != item.size() || value < 0 || value > INT32_MAX)
        throw std::runtime_error("--ids: '" + item + "' is not a token id");
      ids.push_back(static_cast<int32_t>(value));
    } else if (comma < list.size()) {
      throw std::runtime_error("--ids: empty entry in '" + list + "'");
    }
    pos = comma + 1;
  }
  return ids;
}

}  // namespace

void add_tokenize_commands(CLI::App& app) {
  auto opts = std::make_shared<TokenizeOptions>();
  auto* tokenize = app.add_subcommand("tokenize", "encode text with a tokenizer.json, printing the token ids");
  tokenize->add_option("--tokenizer", opts->tokenizer, "a tokenizer.json or a folder holding one")->required();
  auto* text_opt = tokenize->add_option("--text", opts->text, "the text to encode");
  tokenize->add_option("--jsonl", opts->jsonl, "a file of JSON strings, one per line; prints one JSON array per line");
  tokenize->add_flag("--no-special", opts->no_special, "do not add the post-processor's special tokens (e.g. bos)");
  tokenize->add_flag("--json", opts->json, "print the ids as a JSON array");
  tokenize->callback([opts, text_opt] { run_tokenize(*opts, text_opt->count() > 0); });

  auto dopts = std::make_shared<std::pair<std::string, std::string>>();
  auto skip = std::make_shared<bool>(false);
  auto* detokenize = app.add_subcommand("detokenize", "decode token ids with a tokenizer.json, printing the text");
  detokenize->add_option("--tokenizer", dopts->first, "a tokenizer.json or a folder holding one")->required();
  detokenize->add_option("--ids", dopts->second, "comma-separated token ids, e.g. 1,2,3")->required();
  detokenize->add_flag("--skip-special", *skip, "leave out special tokens");
  detokenize->callback([dopts, skip] {
    const auto tok = tok::Tokenizer::from_file(dopts->first);
    const std::string text = tok->decode(parse_ids(dopts->second), *skip);
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  });
}

}  // namespace zinfer::cli
