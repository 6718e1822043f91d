// Helpers shared by the FP8 model tests (fp8_model_test.cpp, ct_fp8_model_test.cpp): a CPU backend
// on a fixture folder, its logits for one prompt, their distance from the float64 reference of the
// same W8A8 arithmetic (fp8_reference.h), and the error a load of an edited fixture throws.
#pragma once

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint_folder.h"
#include "fp8_reference.h"
#include "gpu/backend.h"
#include "reference_forward.h"
#include "test_util.h"

namespace zinfer::gpu::test {

inline const std::filesystem::path kModelFixtures = std::filesystem::path(ZINFER_SOURCE_DIR) / "tests/data/models";
inline const std::vector<int32_t> kFp8Prompt = {1, 17, 300, 5, 44, 511, 2, 90, 91, 7, 250, 33, 12, 400, 6, 8, 19};

inline std::unique_ptr<Backend> open_cpu(const std::string& dir, int tp = 1, const std::string& quantization = "auto") {
  BackendOptions o;
  o.model_dir = dir;
  o.num_gpu_blocks = 16;
  o.num_threads = 2;
  o.tensor_parallel_size = tp;
  o.quantization = quantization;
  return make_backend(o);
}

// Logits [prompt, vocab] of kFp8Prompt.
inline std::vector<float> prompt_logits(Backend& b) {
  SequenceInput s;
  s.seq_id = 1;
  s.token_ids = kFp8Prompt;
  s.num_tokens = int32_t(kFp8Prompt.size());
  s.block_table = {3, 0, 5, 1};
  s.sampling.temperature = 0.0f;
  return b.forward_logits(s);
}

// The largest |got − reference| over every position and token.
inline double worst_against_fp8_reference(const std::vector<float>& got, const std::string& dir,
                                          const ModelConfig& config, const nlohmann::json& quantization_config) {
  ReferenceForward ref(config, dir);
  const Fp8Reference fp8(dir, quantization_config);
  ref.linear = [&](const std::string& w, const ReferenceForward::Mat& x) { return fp8(w, x); };
  const auto expected = ref.logits(kFp8Prompt);
  const size_t V = config.vocab_size;
  double worst = 0;
  for (size_t t = 0; t < kFp8Prompt.size(); ++t)
    for (size_t v = 0; v < V; ++v) worst = std::max(worst, std::abs(got[t * V + v] - expected[t][v]));
  return worst;
}

inline double worst_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) worst = std::max(worst, double(std::abs(a[i] - b[i])));
  return worst;
}

// The message of the error loading `fixture` edited by `edit` throws ("" when it loads).
inline std::string load_error(const std::string& fixture, const std::function<void(Folder&)>& edit,
                              const std::string& quantization = "auto") {
  ScratchDir dir("broken");
  Folder f(kModelFixtures / fixture);
  edit(f);
  f.write(dir.path());
  try {
    open_cpu(dir.str(), 1, quantization);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace zinfer::gpu::test
