// Reading tokenizer.json: Tokenizer::from_file / from_json build a PipelineTokenizer from the
// file's model, added_tokens, normalizer, pre_tokenizer, post_processor and decoder. Anything
// not supported is a TokenizerError naming it and the file.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "actors/tokenizer/pipeline_tokenizer.h"

namespace zinfer::tok {

namespace {

std::optional<std::string> optional_string(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  return j[key].get<std::string>();
}

// model.vocab and model.merges are the bulk of a tokenizer.json (Llama-3: 128k tokens, 280k
// merges). They are taken straight out of the parser into these tables and dropped from the
// JSON tree, which would otherwise hold them in std::map nodes first.
struct BulkTables {
  StringIdMap vocab;
  std::vector<std::pair<std::string, std::string>> merges;
  std::string origin;

  void add_merge(const nlohmann::json& merge) {
    const size_t index = merges.size();
    if (merge.is_string()) {
      // The legacy form "a b": exactly one space separates the two parts.
      const std::string& s = merge.get_ref<const std::string&>();
      const size_t space = s.find(' ');
      if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos)
        throw TokenizerError(origin + ": merge " + std::to_string(index) + " \"" + s + "\" is not two tokens");
      merges.emplace_back(s.substr(0, space), s.substr(space + 1));
    } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() && merge[1].is_string()) {
      merges.emplace_back(merge[0].get<std::string>(), merge[1].get<std::string>());
    } else {
      throw TokenizerError(origin + ": merge " + std::to_string(index) + " " + merge.dump() + " is malformed");
    }
  }
};

nlohmann::json parse_extracting_tables(std::string_view json, BulkTables& tables) {
  using Event = nlohmann::json::parse_event_t;
  std::vector<std::string> key_at(8);  // the last key seen at each depth
  auto in = [&](const char* outer, const char* inner) { return key_at[1] == outer && key_at[2] == inner; };
  return nlohmann::json::parse(json, [&](int depth, Event event, nlohmann::json& parsed) {
    if (depth < 0) return true;
    if (static_cast<size_t>(depth) >= key_at.size()) key_at.resize(static_cast<size_t>(depth) + 1);
    switch (event) {
      case Event::key:
        key_at[static_cast<size_t>(depth)] = parsed.get<std::string>();
        return true;
      case Event::object_start:
      case Event::array_start:
        // Entering a value: the keys below it belong to it alone.
        if (static_cast<size_t>(depth) + 1 < key_at.size()) key_at[static_cast<size_t>(depth) + 1].clear();
        return true;
      case Event::value:
        if (depth == 3 && in("model", "vocab")) {
          if (!parsed.is_number_integer())
            throw TokenizerError(tables.origin + ": the id of token '" + key_at[3] + "' is not an integer");
          tables.vocab.insert_or_assign(key_at[3], parsed.get<int32_t>());
          return false;
        }
        if (depth == 3 && in("model", "merges")) {
          tables.add_merge(parsed);
          return false;
        }
        return true;
      case Event::array_end:
        if (depth == 3 && in("model", "merges")) {  // a merge in the ["a", "b"] form
          tables.add_merge(parsed);
          return false;
        }
        return true;
      default:
        return true;
    }
  });
}

std::unique_ptr<BpeModel> read_bpe(const nlohmann::json& m, BulkTables& tables, const std::string& origin) {
  if (!m.contains("vocab") || !m["vocab"].is_object())
    throw TokenizerError(origin + ": the BPE model has no 'vocab' object");
  if (m.contains("dropout") && m["dropout"].is_number() && m["dropout"].get<double>() > 0.0)
    throw TokenizerError(origin + ": BPE dropout " + m["dropout"].dump() + " is not supported (it is for training)");
  BpeModel::Options options;
  options.unk_token = optional_string(m, "unk_token");
  options.continuing_subword_prefix = optional_string(m, "continuing_subword_prefix").value_or("");
  options.end_of_word_suffix = optional_string(m, "end_of_word_suffix").value_or("");
  options.fuse_unk = m.value("fuse_unk", false);
  options.byte_fallback = m.value("byte_fallback", false);
  options.ignore_merges = m.value("ignore_merges", false);
  return std::make_unique<BpeModel>(std::move(tables.vocab), tables.merges, std::move(options), origin);
}

std::vector<AddedToken> read_added_tokens(const nlohmann::json& root, const std::string& origin) {
  std::vector<AddedToken> tokens;
  if (!root.contains("added_tokens") || root["added_tokens"].is_null()) return tokens;
  for (const auto& t : root["added_tokens"]) {
    AddedToken a;
    a.id = t.at("id").get<int32_t>();
    if (a.id < 0 || a.id > kMaxTokenId) {
      throw TokenizerError(origin + ": added token id " + std::to_string(a.id) + " is outside [0, " +
                           std::to_string(kMaxTokenId) + "]");
    }
    a.content = t.at("content").get<std::string>();
    a.single_word = t.value("single_word", false);
    a.lstrip = t.value("lstrip", false);
    a.rstrip = t.value("rstrip", false);
    a.special = t.value("special", false);
    a.normalized = t.value("normalized", !a.special);
    tokens.push_back(std::move(a));
  }
  return tokens;
}

}  // namespace

std::shared_ptr<const Tokenizer> Tokenizer::from_json(std::string_view json, const std::string& origin) {
  nlohmann::json root;
  BulkTables tables;
  tables.origin = origin;
  try {
    root = parse_extracting_tables(json, tables);
  } catch (const nlohmann::json::exception& e) {
    // A parse error, or a number the parser cannot hold (out_of_range: "1e999").
    throw TokenizerError(origin + ": not valid JSON: " + e.what());
  }
  if (!root.is_object()) throw TokenizerError(origin + ": a tokenizer.json must be a JSON object");
  if (!root.contains("model") || !root["model"].is_object())
    throw TokenizerError(origin + ": no 'model' object");
  try {
    const auto& m = root["model"];
    // Old files leave out the type of a BPE model; its merges say what it is.
    const std::string type = m.value("type", m.contains("merges") ? "BPE" : "");
    if (type != "BPE")
      throw TokenizerError(origin + ": unsupported model type '" + type + "' (only BPE is supported)");
    PipelineParts parts;
    parts.model = read_bpe(m, tables, origin);
    auto field = [&](const char* key) -> const nlohmann::json& {
      static const nlohmann::json null_json;
      return root.contains(key) ? root[key] : null_json;
    };
    parts.normalizer = make_normalizer(field("normalizer"), origin);
    parts.pre_tokenizer = make_pre_tokenizer(field("pre_tokenizer"), origin);
    parts.post_processor = make_post_processor(field("post_processor"), origin);
    parts.decoder = make_decoder(field("decoder"), origin);
    parts.added_tokens = read_added_tokens(root, origin);
    return std::make_shared<PipelineTokenizer>(std::move(parts));
  } catch (const nlohmann::json::exception& e) {
    throw TokenizerError(origin + ": malformed tokenizer: " + e.what());
  }
}

std::shared_ptr<const Tokenizer> Tokenizer::from_file(const std::string& path) {
  std::filesystem::path file(path);
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) file /= "tokenizer.json";
  std::ifstream in(file, std::ios::binary);
  if (!in) throw TokenizerError("cannot read tokenizer file " + file.string());
  std::ostringstream content;
  content << in.rdbuf();
  return from_json(content.str(), file.string());
}

}  // namespace zinfer::tok
