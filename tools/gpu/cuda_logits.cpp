// zinfer-cuda-logits --model DIR --tokens FILE --out DIR [--tensor-parallel-size N]
// Teacher-forced logits of the CUDA backend for tools/fixtures/cuda_parity.py: FILE is a JSON list
// of token-id lists; for prompt i, OUT/prompt_<i>.f32 receives float32 logits [len, vocab]
// (row-major, little-endian), computed in one forward pass (Backend::forward_logits).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpu/cuda/cuda_backend.h"

int main(int argc, char** argv) {
  std::string model, tokens_file, out_dir;
  int tp = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--model") == 0) model = argv[i + 1];
    else if (std::strcmp(argv[i], "--tokens") == 0) tokens_file = argv[i + 1];
    else if (std::strcmp(argv[i], "--out") == 0) out_dir = argv[i + 1];
    else if (std::strcmp(argv[i], "--tensor-parallel-size") == 0) tp = std::atoi(argv[i + 1]);
  }
  if (model.empty() || tokens_file.empty() || out_dir.empty()) {
    std::fprintf(stderr, "usage: zinfer-cuda-logits --model DIR --tokens FILE --out DIR\n");
    return 2;
  }
  try {
    std::ifstream in(tokens_file);
    if (!in) throw std::runtime_error("cannot read " + tokens_file);
    const nlohmann::json prompts = nlohmann::json::parse(in);
    size_t longest = 1;
    for (const auto& p : prompts) longest = std::max(longest, p.size());
    zinfer::gpu::BackendOptions o;
    o.model_dir = model;
    o.device = "cuda";
    o.max_num_seqs = 16;
    o.max_num_batched_tokens = static_cast<int32_t>(std::max<size_t>(longest, 256));
    o.max_model_len = static_cast<int32_t>((longest + 15) / 16 * 16 + 16);
    o.num_gpu_blocks = static_cast<int32_t>(longest / 16 + 2);
    o.tensor_parallel_size = tp;
    auto backend = zinfer::gpu::make_backend(o);
    for (size_t i = 0; i < prompts.size(); ++i) {
      zinfer::gpu::SequenceInput s;
      s.seq_id = i + 1;
      s.token_ids = prompts[i].get<std::vector<int32_t>>();
      s.num_tokens = static_cast<int32_t>(s.token_ids.size());
      for (int32_t b = 0; b < o.num_gpu_blocks; ++b) s.block_table.push_back(b);
      const std::vector<float> logits = backend->forward_logits(s);
      const std::string path = out_dir + "/prompt_" + std::to_string(i) + ".f32";
      std::ofstream out(path, std::ios::binary);
      out.write(reinterpret_cast<const char*>(logits.data()), static_cast<std::streamsize>(logits.size() * 4));
      if (!out) throw std::runtime_error("cannot write " + path);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zinfer-cuda-logits: %s\n", e.what());
    return 1;
  }
  return 0;
}
