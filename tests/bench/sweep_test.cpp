// `zinfer-bench sweep`: the theoretical lines against figures worked out by hand, the CSV
// writer, and a tiny end-to-end sweep on the CPU backend with plots.
//
// The small config of the hand computations: hidden 64, intermediate 128, 2 layers, 4 heads,
// 2 kv heads, head_dim 16, vocab 1000, untied, no biases.
//   block linears per layer: q 64*64 + k 32*64 + v 32*64 + o 64*64 + gate 128*64 + up 128*64
//                            + down 64*128 = 36864; 2 layers: 73728
//   embedding = lm_head = 64000; norms 2*2*64 + 64 = 320; params 202048
//   step bytes (the untied embedding table is not read whole):
//     bf16 2*202048 - 128000                                        = 276096
//     int8 2*(202048-73728) + 2*(36864 + 2*512) - 128000             = 204416
//     int4 2*(202048-73728) + (2*(36864 + 5*512) + 1)/2 - 128000     = 168064
//   kv bytes per token 2 * 2 layers * 2 kv heads * 16 * 2 = 256
//   GPU: 100 GB/s, 1 TFLOPS bf16, 2 TFLOPS 8-bit.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "gpu/backend.h"
#include "gpu/random_model.h"
#include "tools/bench/lib/plot.h"
#include "tools/bench/lib/sweep.h"

namespace zinfer::bench {
namespace {

namespace fs = std::filesystem;

ModelShape small_shape() {
  ModelShape m;
  m.architecture = "LlamaForCausalLM";
  m.model_type = "llama";
  m.hidden = 64;
  m.intermediate = 128;
  m.layers = 2;
  m.heads = 4;
  m.kv_heads = 2;
  m.head_dim = 16;
  m.vocab = 1000;
  return m;
}

GpuSpec small_gpu() {
  GpuSpec g;
  g.key = "test";
  g.name = "test GPU";
  g.mem_bw_gbs = 100;
  g.bf16_tflops = 1;
  g.int8_tflops = 2;
  g.mem_gib = 1;
  return g;
}

TEST(SweepTheory, StepWeightBytesLeaveOutTheUntiedEmbedding) {
  const ModelShape m = small_shape();
  EXPECT_EQ(step_weight_bytes(m, WeightFormat::kBf16), 276096);
  EXPECT_EQ(step_weight_bytes(m, WeightFormat::kInt8), 204416);
  EXPECT_EQ(step_weight_bytes(m, WeightFormat::kInt4), 168064);
  // Tied: the one table is the lm_head, read whole; there is no second table to leave out.
  ModelShape tied = m;
  tied.tie_word_embeddings = true;
  EXPECT_EQ(step_weight_bytes(tied, WeightFormat::kBf16), 276096);
  EXPECT_EQ(step_weight_bytes(tied, WeightFormat::kBf16), weight_bytes(tied, WeightFormat::kBf16));
}

TEST(SweepTheory, DecodeLines) {
  // (step bytes + 4 users * 100 tokens * 256) / 1e11 B/s; 4*100*256 = 102400.
  const LineMs ms = theoretical_decode_ms(small_shape(), small_gpu(), 4, 100);
  EXPECT_NEAR(ms[0], 0.00378496, 1e-12);  // (276096 + 102400) / 1e11 s
  EXPECT_NEAR(ms[1], 0.00306816, 1e-12);  // (204416 + 102400) / 1e11 s
  EXPECT_NEAR(ms[2], 0.00270464, 1e-12);  // (168064 + 102400) / 1e11 s
}

TEST(SweepTheory, PrefillFlops) {
  const PrefillFlops f = prefill_flops(small_shape(), 10);
  EXPECT_DOUBLE_EQ(f.linear, 1474560.0);   // 2 * 73728 * 10
  EXPECT_DOUBLE_EQ(f.attention, 28160.0);  // 2 * 2 layers * 4 heads * 16 * 10 * 11
  EXPECT_DOUBLE_EQ(f.logits, 128000.0);    // 2 * 1000 * 64
}

TEST(SweepTheory, PrefillLinesAreMemoryBoundWhenShort) {
  // L = 10: compute 1630720 FLOP / 1e12 = 0.00163072 ms (bf16), 0.00089344 ms (int8: linear at
  // 2e12); memory 276096 / 204416 / 168064 bytes over 1e11 B/s.
  const LineMs ms = theoretical_prefill_ms(small_shape(), small_gpu(), 10);
  EXPECT_NEAR(ms[0], 0.00276096, 1e-12);
  EXPECT_NEAR(ms[1], 0.00204416, 1e-12);
  EXPECT_NEAR(ms[2], 0.00168064, 1e-12);
}

TEST(SweepTheory, PrefillLinesAreComputeBoundWhenLong) {
  // L = 1000: linear 147456000, attention 2*2*4*16*1000*1001 = 256256000, logits 128000.
  //   bf16/int4: 403840000 / 1e12 s = 0.40384 ms
  //   int8: 147456000 / 2e12 + 256384000 / 1e12 s = 0.330112 ms
  const LineMs ms = theoretical_prefill_ms(small_shape(), small_gpu(), 1000);
  EXPECT_NEAR(ms[0], 0.40384, 1e-9);
  EXPECT_NEAR(ms[1], 0.330112, 1e-9);
  EXPECT_NEAR(ms[2], 0.40384, 1e-9);
}

TEST(SweepCsv, PrefillAndDecodeRows) {
  PrefillPoint p;
  p.len = 256;
  p.measured_ms = 12.5;
  p.theory_ms = {1.5, 0.75, 0.5};
  EXPECT_EQ(prefill_csv({p}),
            "L,measured_ms,tok_per_s,w16kv16_ms,w8kv16_ms,w4kv16_ms\n"
            "256,12.5,20480,1.5,0.75,0.5\n");
  DecodePoint d;
  d.context = 2048;
  d.users = 8;
  d.measured_ms = 4;
  d.theory_ms = {3.25, 2, 0.125};
  DecodePoint d2 = d;
  d2.users = 16;
  d2.measured_ms = 5;
  EXPECT_EQ(decode_csv({d, d2}),
            "context,users,measured_ms,tok_per_s,w16kv16_ms,w8kv16_ms,w4kv16_ms\n"
            "2048,8,4,2000,3.25,2,0.125\n"
            "2048,16,5,3200,3.25,2,0.125\n");
}

TEST(SweepPlanTest, BlocksAndLengths) {
  SweepPlan plan;
  plan.prefill_lens = {1, 100};
  plan.users = {4, 2};
  plan.contexts = {31, 16};
  // prefill: ceil(100/16) = 7; decode: 4 users * ceil(32/16) = 8.
  EXPECT_EQ(blocks_needed(plan, 16), 8);
  EXPECT_EQ(longest_sequence(plan), 100);
  plan.decode = false;
  EXPECT_EQ(blocks_needed(plan, 16), 7);
  plan.decode = true;
  plan.prefill = false;
  EXPECT_EQ(longest_sequence(plan), 32);
}

TEST(SweepPlanTest, RejectsBadValuesNamingTheFlag) {
  SweepPlan plan;
  plan.prefill_lens = {16, 0};
  plan.users = {1};
  plan.contexts = {8};
  try {
    validate_plan(plan);
    FAIL() << "a zero prompt length was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--prefill-lens"), std::string::npos) << e.what();
  }
  plan.prefill_lens = {16};
  plan.contexts = {};
  EXPECT_THROW(validate_plan(plan), std::invalid_argument);
}

TEST(SweepPlot, DecodeScriptPlotsEveryContextWithItsLines) {
  const std::string s = decode_gnuplot_script("pngcairo", "it's a \"test\"", {512, 2048});
  EXPECT_NE(s.find("set output 'decode.png'"), std::string::npos);
  EXPECT_NE(s.find("set logscale xy"), std::string::npos);
  EXPECT_NE(s.find("($1==512 ? $3 : 1/0)"), std::string::npos);
  EXPECT_NE(s.find("($1==2048 ? $7 : 1/0)"), std::string::npos);  // w4kv16 of the second context
  EXPECT_NE(s.find("title \"it's a \\\"test\\\"\\ndecode"), std::string::npos) << s;
  EXPECT_NE(s.find("dt 4"), std::string::npos);
}

// A fresh folder under the system temp folder, removed at the end of the test.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() / (name + "_" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

// A small Qwen3 with random weights, written under `scratch`.
std::string random_model(const fs::path& scratch) {
  gpu::ModelConfig c;
  c.architecture = gpu::Architecture::kQwen3;
  c.architecture_name = "Qwen3ForCausalLM";
  c.vocab_size = 512;
  c.hidden_size = 64;
  c.intermediate_size = 128;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;
  c.head_dim = 16;
  c.qk_norm = true;
  c.tie_word_embeddings = true;
  c.eos_token_ids = {1};
  const std::string dir = (scratch / "model").string();
  gpu::write_random_model(dir, c, gpu::RandomModelOptions{});
  return dir;
}

// The default model when it was made (`zinfer make-model`), else a small random one.
std::string cpu_model(const fs::path& scratch) {
  const fs::path def = fs::path(ZINFER_SOURCE_DIR) / "models" / "default";
  if (fs::exists(def / "config.json") && fs::exists(def / "model.safetensors")) return def.string();
  return random_model(scratch);
}

std::string read_file(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

int count_lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

TEST(SweepEndToEnd, CpuSweepWritesRowsAndPlots) {
  TempDir tmp("zinfer_sweep_test");
  const std::string model = cpu_model(tmp.path);
  SweepPlan plan;
  plan.prefill_lens = {8, 40};
  plan.users = {2, 1};
  plan.contexts = {20};
  plan.repeat = 2;
  plan.chunk_tokens = 64;
  gpu::BackendOptions o;
  o.model_dir = model;
  o.device = "cpu";
  o.num_gpu_blocks = static_cast<int32_t>(blocks_needed(plan, o.block_size));
  o.max_model_len = static_cast<int32_t>(longest_sequence(plan));
  o.num_threads = 2;
  auto backend = gpu::make_backend(o);
  const ModelShape shape = load_model_shape(model);
  const GpuSpec g = small_gpu();

  const SweepResult r = run_sweep(*backend, plan, shape, g);
  ASSERT_EQ(r.prefill.size(), 2u);
  EXPECT_EQ(r.prefill[0].len, 8);
  EXPECT_EQ(r.prefill[1].len, 40);
  for (const auto& p : r.prefill) {
    EXPECT_GT(p.measured_ms, 0.0);
    const LineMs want = theoretical_prefill_ms(shape, g, p.len);
    for (size_t f = 0; f < 3; ++f) EXPECT_DOUBLE_EQ(p.theory_ms[f], want[f]);
  }
  ASSERT_EQ(r.decode.size(), 2u);
  EXPECT_EQ(r.decode[0].users, 1);  // users are run in increasing order
  EXPECT_EQ(r.decode[1].users, 2);
  for (const auto& d : r.decode) {
    EXPECT_EQ(d.context, 20);
    EXPECT_GT(d.measured_ms, 0.0);
    const LineMs want = theoretical_decode_ms(shape, g, d.users, 20);
    for (size_t f = 0; f < 3; ++f) EXPECT_DOUBLE_EQ(d.theory_ms[f], want[f]);
  }
  EXPECT_TRUE(r.skipped.empty());

  write_text_file((tmp.path / "prefill.csv").string(), prefill_csv(r.prefill));
  write_text_file((tmp.path / "decode.csv").string(), decode_csv(r.decode));
  const std::string decode_text = read_file(tmp.path / "decode.csv");
  EXPECT_EQ(count_lines(decode_text), 3);
  EXPECT_NE(decode_text.find("\n20,1,"), std::string::npos);
  EXPECT_NE(decode_text.find("\n20,2,"), std::string::npos);
  EXPECT_EQ(count_lines(read_file(tmp.path / "prefill.csv")), 3);

  PlotRequest req;
  req.out_dir = tmp.path.string();
  req.title = "sweep test";
  req.prefill = true;
  req.contexts = {20};
  const PlotOutcome out = make_plots(req);
  EXPECT_TRUE(fs::exists(tmp.path / "prefill.gp"));
  EXPECT_TRUE(fs::exists(tmp.path / "decode.gp"));
  if (find_gnuplot().empty() || png_terminal(find_gnuplot()).empty()) {
    EXPECT_TRUE(out.images.empty());
    EXPECT_FALSE(out.note.empty());
  } else {
    ASSERT_EQ(out.images.size(), 2u) << out.note;
    for (const char* png : {"prefill.png", "decode.png"}) {
      ASSERT_TRUE(fs::exists(tmp.path / png)) << png;
      EXPECT_GT(fs::file_size(tmp.path / png), 1000u) << png;
      EXPECT_EQ(read_file(tmp.path / png).substr(1, 3), "PNG") << png;
    }
  }
}

TEST(SweepEndToEnd, DecodePointsBeyondTheCacheAreSkippedOrRefused) {
  TempDir tmp("zinfer_sweep_fit_test");
  const std::string model = random_model(tmp.path);
  SweepPlan plan;
  plan.prefill = false;
  plan.users = {1, 4};
  plan.contexts = {16};  // 2 blocks per user: 1 user fits in 3 blocks, 4 users do not
  plan.repeat = 1;
  gpu::BackendOptions o;
  o.model_dir = model;
  o.device = "cpu";
  o.num_gpu_blocks = 3;
  o.num_threads = 2;
  auto backend = gpu::make_backend(o);
  const ModelShape shape = load_model_shape(model);

  const SweepResult r = run_sweep(*backend, plan, shape, small_gpu());
  ASSERT_EQ(r.decode.size(), 1u);
  EXPECT_EQ(r.decode[0].users, 1);
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_NE(r.skipped[0].find("4 users needs 8 KV blocks; the cache has 3"), std::string::npos) << r.skipped[0];

  plan.skip_unfit = false;
  EXPECT_THROW(run_sweep(*backend, plan, shape, small_gpu()), std::runtime_error);
  plan.skip_unfit = true;
  plan.users = {4};
  EXPECT_THROW(run_sweep(*backend, plan, shape, small_gpu()), std::runtime_error);  // nothing fits
}

}  // namespace
}  // namespace zinfer::bench
