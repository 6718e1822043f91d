// `zinfer-bench tokenizer`: encode throughput of the tokenizer library on one thread.
//   zinfer-bench tokenizer --tokenizer PATH [--text-file F | --megabytes 10] [--corpus FILE]
//                          [--write-text F] [--repeats 3]
// Without --text-file it builds a mixed text of about --megabytes MB from the parity corpus
// (tests/data/tokenizer/texts.jsonl: prose, code, many scripts, emoji, whitespace, numbers),
// picking texts with a fixed-seed generator so that every run and machine gets the same text;
// --write-text saves it for tools/fixtures/bench_hf_tokenizer.py to measure HF on the very same
// input. The text is encoded line by line (each line a document, no special tokens) and the best
// of --repeats runs is reported in MB/s of UTF-8 input.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "actors/tokenizer/tokenizer.h"
#include "tools/bench/commands.h"

namespace zinfer::bench {

namespace {

struct TokenizerBenchOptions {
  std::string tokenizer;
  std::string text_file;
  std::string corpus = "tests/data/tokenizer/texts.jsonl";
  std::string write_text;
  double megabytes = 10.0;
  int repeats = 3;
};

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// splitmix64: a tiny generator whose sequence is the same on every platform.
uint64_t next_random(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

std::string make_mixed_text(const std::string& corpus_path, size_t target_bytes) {
  std::vector<std::string> texts;
  std::istringstream lines(read_all(corpus_path));
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    auto value = nlohmann::json::parse(line);
    if (!value.get_ref<const std::string&>().empty()) texts.push_back(value.get<std::string>());
  }
  if (texts.empty()) throw std::runtime_error(corpus_path + " holds no texts");
  std::string out;
  out.reserve(target_bytes + 4096);
  uint64_t state = 20261122;
  while (out.size() < target_bytes) {
    // A document of 1 to 8 corpus texts joined by spaces, then a newline.
    const int parts = 1 + static_cast<int>(next_random(state) % 8);
    for (int p = 0; p < parts; ++p) {
      if (p > 0) out.push_back(' ');
      out += texts[next_random(state) % texts.size()];
    }
    out.push_back('\n');
  }
  return out;
}

void run(const TokenizerBenchOptions& o) {
  const auto load_start = std::chrono::steady_clock::now();
  const auto tok = tok::Tokenizer::from_file(o.tokenizer);
  const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();
  const std::string text =
      o.text_file.empty() ? make_mixed_text(o.corpus, static_cast<size_t>(o.megabytes * 1e6)) : read_all(o.text_file);
  if (!o.write_text.empty()) {
    std::ofstream out(o.write_text, std::ios::binary);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!out) throw std::runtime_error("cannot write " + o.write_text);
  }
  std::vector<std::string_view> lines;
  for (size_t pos = 0; pos <= text.size();) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    lines.push_back(std::string_view(text).substr(pos, end - pos));
    pos = end + 1;
  }
  // Wall time is what a user sees; process CPU time is what to compare on a shared machine,
  // where other work takes turns on the core.
  double best = 1e30, best_cpu = 1e30;
  size_t tokens = 0;
  for (int r = 0; r < std::max(1, o.repeats); ++r) {
    tokens = 0;
    const double cpu_start = process_cpu_seconds();
    const auto start = std::chrono::steady_clock::now();
    for (std::string_view line : lines) tokens += tok->encode(line, false).size();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    best_cpu = std::min(best_cpu, process_cpu_seconds() - cpu_start);
  }
  const double mb = static_cast<double>(text.size()) / 1e6;
  std::printf("zinfer tokenizer %s: load %.2f s; %.2f MB, %zu lines, %zu tokens, best of %d: wall %.3f s = %.2f MB/s, "
              "cpu %.3f s = %.2f MB/s (1 thread)\n",
              o.tokenizer.c_str(), load_s, mb, lines.size(), tokens, std::max(1, o.repeats), best, mb / best, best_cpu,
              mb / best_cpu);
}

}  // namespace

void add_tokenizer_command(CLI::App& app) {
  auto o = std::make_shared<TokenizerBenchOptions>();
  auto* cmd = app.add_subcommand("tokenizer", "encode throughput (MB/s, one thread) of a tokenizer.json");
  cmd->add_option("--tokenizer", o->tokenizer, "a tokenizer.json or a folder holding one")->required();
  auto* file = cmd->add_option("--text-file", o->text_file, "encode this file (line by line) instead of the mixed text");
  cmd->add_option("--megabytes", o->megabytes, "size of the generated mixed text (default 10)")->excludes(file);
  cmd->add_option("--corpus", o->corpus, "texts to build the mixed text from (default tests/data/tokenizer/texts.jsonl)");
  cmd->add_option("--write-text", o->write_text, "also write the benchmarked text to this file");
  cmd->add_option("--repeats", o->repeats, "runs; the best is reported (default 3)");
  cmd->callback([o] { run(*o); });
}

}  // namespace zinfer::bench
