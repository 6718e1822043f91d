// zinfer-grammar-bench: how long the grammar engine takes on a real vocabulary. For the generic
// JSON grammar and a 30-property schema it reports the compile time and the per-step mask time
// (Matcher::fill_mask) along token walks of generated documents, in three conditions: cold
// (per-position token tables built on first use), warm tables with the state mask cache, and
// warm tables without it.
//
//   zinfer-grammar-bench --tokenizer tests/data/tokenizers/llama3 --steps 2000 [--schema FILE]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <random>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "actors/grammar/grammar_source.h"
#include "actors/grammar/json_schema.h"
#include "actors/grammar/matcher.h"
#include "actors/tokenizer/tokenizer.h"

namespace {

using namespace zinfer::grammar;
using Clock = std::chrono::steady_clock;

double micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

// 30 properties of the kinds real schemas hold: strings (plain, bounded, formats, enums),
// bounded integers, numbers, booleans, arrays and a nested object.
std::string schema30() {
  nlohmann::ordered_json props = nlohmann::ordered_json::object();
  nlohmann::ordered_json required = nlohmann::ordered_json::array();
  for (int i = 0; i < 30; ++i) {
    const std::string name = "field_" + std::to_string(i);
    nlohmann::ordered_json p;
    switch (i % 10) {
      case 0: p = {{"type", "string"}}; break;
      case 1: p = {{"type", "integer"}, {"minimum", 0}, {"maximum", 1000}}; break;
      case 2: p = {{"type", "number"}}; break;
      case 3: p = {{"type", "boolean"}}; break;
      case 4: p = {{"enum", {"alpha", "beta", "gamma", "delta"}}}; break;
      case 5: p = {{"type", "array"}, {"items", {{"type", "string"}}}, {"maxItems", 4}}; break;
      case 6: p = {{"type", "string"}, {"format", "date"}}; break;
      case 7: p = {{"type", "string"}, {"maxLength", 32}}; break;
      case 8: p = {{"type", "object"}, {"properties", {{"x", {{"type", "integer"}}}, {"y", {{"type", "string"}}}}},
                   {"required", {"x", "y"}}}; break;
      default: p = {{"anyOf", {{{"type", "string"}}, {{"type", "null"}}}}}; break;
    }
    props[name] = p;
    if (i % 3 != 2) required.push_back(name);
  }
  return nlohmann::ordered_json{{"type", "object"}, {"properties", props}, {"required", required}}.dump();
}

// Token walks: documents of the grammar, each token a random allowed one leaning to longer
// tokens (as a model's would be), a stop token now and then once the document may end.
std::vector<std::vector<int32_t>> walks(const std::shared_ptr<const CompiledGrammar>& g, size_t steps, uint32_t seed) {
  std::mt19937 rng(seed);
  const Vocabulary& vocab = g->vocabulary();
  std::vector<std::vector<int32_t>> docs;
  std::vector<uint32_t> mask(vocab.mask_words());
  size_t total = 0;
  while (total < steps) {
    Matcher m(g);
    std::vector<int32_t> doc;
    while (total < steps && doc.size() < 600) {
      m.fill_mask(mask);
      ++total;
      std::vector<int32_t> allowed;
      for (int32_t id = 0; id < vocab.mask_size(); ++id)
        if ((mask[static_cast<size_t>(id) >> 5] >> (id & 31)) & 1 && !vocab.is_stop(id)) allowed.push_back(id);
      if (allowed.empty() || (m.is_accepting() && rng() % 3 == 0)) {
        doc.push_back(vocab.stop_ids().front());
        break;
      }
      int32_t pick = allowed[rng() % allowed.size()];
      for (int k = 0; k < 4; ++k) {
        const int32_t other = allowed[rng() % allowed.size()];
        if (vocab.bytes(other).size() > vocab.bytes(pick).size()) pick = other;
      }
      m.accept_token(pick);
      doc.push_back(pick);
    }
    docs.push_back(std::move(doc));
  }
  return docs;
}

std::vector<double> replay(const std::shared_ptr<const CompiledGrammar>& g, const std::vector<std::vector<int32_t>>& docs) {
  std::vector<double> times;
  std::vector<uint32_t> mask(g->vocabulary().mask_words());
  for (const auto& doc : docs) {
    Matcher m(g);
    for (int32_t id : doc) {
      const auto t0 = Clock::now();
      m.fill_mask(mask);
      times.push_back(micros(Clock::now() - t0));
      if (!m.accept_token(id)) {
        std::fprintf(stderr, "walk token %d not accepted on replay\n", id);
        std::exit(1);
      }
    }
  }
  return times;
}

void report(const char* what, std::vector<double> t) {
  std::sort(t.begin(), t.end());
  double sum = 0;
  for (double v : t) sum += v;
  auto pct = [&](double p) { return t[std::min(t.size() - 1, static_cast<size_t>(p * static_cast<double>(t.size())))]; };
  std::printf("  %-34s steps %6zu  mean %8.1f  p50 %8.1f  p90 %8.1f  p99 %8.1f  max %9.1f  (us)\n", what, t.size(),
              sum / static_cast<double>(t.size()), pct(0.5), pct(0.9), pct(0.99), t.back());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"grammar engine: compile and per-step mask time on a real vocabulary"};
  std::string tokenizer_path = "tests/data/tokenizers/llama3";
  size_t steps = 2000;
  std::string schema_file;
  app.add_option("--tokenizer", tokenizer_path, "tokenizer.json or its folder");
  app.add_option("--schema", schema_file, "a JSON Schema file to time as well");
  app.add_option("--steps", steps, "mask computations per condition");
  CLI11_PARSE(app, argc, argv);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);

  auto tok = zinfer::tok::Tokenizer::from_file(tokenizer_path);
  std::vector<int32_t> stops;
  for (const char* s : {"<|eot_id|>", "<|end_of_text|>", "<|im_end|>", "<|endoftext|>", "</s>"})
    if (auto id = tok->token_to_id(s)) stops.push_back(*id);
  auto vocab = Vocabulary::from_tokenizer(*tok, stops);
  std::printf("vocabulary %s: %d ids, %zu usable by grammars, mask %zu words\n", tokenizer_path.c_str(),
              vocab->mask_size(), vocab->sorted().size(), vocab->mask_words());

  std::vector<std::pair<std::string, GrammarSource>> grammars = {
      {"json_object", GrammarSource{GrammarSource::Kind::kJsonObject, "", {}}},
      {"schema, 30 properties", GrammarSource{GrammarSource::Kind::kJsonSchema, schema30(), {}}},
  };
  if (!schema_file.empty()) {
    std::ifstream in(schema_file);
    if (!in) {
      std::fprintf(stderr, "cannot read %s\n", schema_file.c_str());
      return 1;
    }
    std::stringstream text;
    text << in.rdbuf();
    grammars.push_back({schema_file, GrammarSource{GrammarSource::Kind::kJsonSchema, text.str(), {}}});
  }
  for (const auto& [name, source] : grammars) {
    std::printf("%s\n", name.c_str());
    std::vector<double> compile_us;
    for (int i = 0; i < 20; ++i) {
      const auto t0 = Clock::now();
      auto g = std::make_shared<const CompiledGrammar>(compile(source), vocab);
      compile_us.push_back(micros(Clock::now() - t0));
    }
    std::sort(compile_us.begin(), compile_us.end());
    auto probe = std::make_shared<const CompiledGrammar>(compile(source), vocab);
    std::printf("  compile (median of 20)            %.0f us; %zu rules, %zu grammar positions\n", compile_us[10],
                probe->grammar().rules.size(), probe->grammar().elements.size());

    const auto warmup = walks(probe, steps, 1);
    const auto timed = walks(probe, steps, 2);
    auto cold = std::make_shared<const CompiledGrammar>(compile(source), vocab);
    report("cold (tables built on first use)", replay(cold, timed));
    auto cached = std::make_shared<const CompiledGrammar>(compile(source), vocab);
    replay(cached, warmup);
    report("warm tables + state mask cache", replay(cached, timed));
    auto uncached = std::make_shared<const CompiledGrammar>(compile(source), vocab, 0);
    replay(uncached, warmup);
    report("warm tables, no state mask cache", replay(uncached, timed));
  }
  return 0;
}
