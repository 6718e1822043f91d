// Shared pieces of zinfer-cuda-bench: device timing and the result lines it prints
// ("RESULT <name> <value> <unit> ceiling <c> ratio <r>") that tools/gpu/check.sh tabulates.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "gpu/cuda/cuda_check.h"
#include "gpu/cuda/stream_timer.h"
#include "gpu/model_config.h"

namespace zinfer::gpu::cuda::bench {

// Median time in milliseconds of fn() over `reps` runs after `warmup` runs, measured with events.
// before_each (if any) runs on the host before every run: the ranks of a tensor-parallel bench
// meet there, so that each run's time is the group's.
inline double time_ms(const std::function<void()>& fn, int warmup, int reps, cudaStream_t stream = nullptr,
                      const std::function<void()>& before_each = {}) {
  for (int i = 0; i < warmup; ++i) {
    if (before_each) before_each();
    fn();
  }
  check_cuda(cudaStreamSynchronize(stream), "bench warmup");
  std::vector<double> times;
  StreamTimer timer;
  for (int i = 0; i < reps; ++i) {
    if (before_each) before_each();
    timer.start(stream);
    fn();
    times.push_back(timer.stop_ms(stream));
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Milliseconds per launch of enqueue(i) for i in [0, copies), replayed as one graph (copies of
// the weights that no launch finds in L2, as in a model whose every layer has its own).
inline double graph_ms_per_launch(const std::function<void(int)>& enqueue, int copies, cudaStream_t stream,
                                  const std::function<void()>& before_each = {}) {
  cudaGraph_t graph = nullptr;
  check_cuda(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  for (int i = 0; i < copies; ++i) enqueue(i);
  check_cuda(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
  cudaGraphExec_t exec = nullptr;
  check_cuda(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  cudaGraphDestroy(graph);
  const double ms =
      time_ms([&] { check_cuda(cudaGraphLaunch(exec, stream), "cudaGraphLaunch"); }, 3, 20, stream, before_each);
  cudaGraphExecDestroy(exec);
  return ms / copies;
}

inline double graph_us(const std::function<void(int)>& enqueue, int copies, cudaStream_t stream,
                       const std::function<void()>& before_each = {}) {
  return graph_ms_per_launch(enqueue, copies, stream, before_each) * 1e3;
}

// The row counts of a layer table: ZINFER_BENCH_ROWS (e.g. "1,2,4,8") where set, else `defaults`.
inline std::vector<int> bench_rows(std::vector<int> defaults) {
  const char* only_rows = std::getenv("ZINFER_BENCH_ROWS");
  if (only_rows == nullptr) return defaults;
  std::vector<int> rows;
  for (const char* c = only_rows; *c != '\0';) {
    char* end = nullptr;
    const long v = std::strtol(c, &end, 10);
    if (end == c) break;
    if (v >= 1 && v <= 65536) rows.push_back(static_cast<int>(v));
    c = *end == ',' ? end + 1 : end;
  }
  return rows.empty() ? std::vector<int>{1} : rows;
}

inline void report(const std::string& name, double value, const std::string& unit, double ceiling, double ratio) {
  std::printf("RESULT %s %.4g %s ceiling %.4g ratio %.3f\n", name.c_str(), value, unit.c_str(), ceiling, ratio);
  std::fflush(stdout);
}

struct Ceilings {
  double copy_gbps = 0;    // device-to-device copy, bytes read + written
  double gemm_tflops = 0;  // cuBLASLt bf16 8192^3
};

Ceilings measure_ceilings();
void bench_attention(const Ceilings& c);
void bench_gemv(const Ceilings& c);
// The W4A16 layer against bf16 cuBLASLt at Llama-3-8B's shapes, M = 1 … 8192 (bench_w4.cpp).
void bench_w4(const Ceilings& c);
// FP8 W8A8 layers (per-channel and block-wise) against bf16 cuBLASLt, same shapes (bench_fp8.cpp).
void bench_fp8(const Ceilings& c);
// The activation kernels of a 4,096-token prefill layer against the copy rate (bench_prefill.cpp).
void bench_prefill_kernels(const Ceilings& c);
// A row-parallel GEMV and its all-reduce at TP = tp: NCCL against the residual exchange (bench_exchange.cpp).
void bench_exchange(const Ceilings& c, int tp);
// Llama-3's configuration at shape "8b" or "70b", `layers` of them (0: the model's) (bench_model.cpp).
ModelConfig llama3_config(const std::string& shape, int layers);
// What a decode step of a Llama-shape model reads on one GPU of `tp` (bench_model.cpp): every
// matrix once (one embedding row), and per token of context its KV heads' bytes.
struct DecodeBytes {
  double params = 0;        // the whole model's, embedding and LM head included
  double weights = 0;       // bytes, one GPU's share
  double kv_per_token = 0;  // bytes, one GPU's share
};
DecodeBytes decode_bytes(const ModelConfig& c, int tp);
// The decode step of 1-64 sequences at contexts 512 / 2,048 / 8,192 against its floor (bench_decode.cpp).
void bench_decode(const Ceilings& c, int layers);
// shape "8b" or "70b" (Llama-3's), layers 0 = the model's; tp GPUs (devices 0..tp-1) in tensor
// parallel, the floors per GPU.
void bench_model(const Ceilings& c, const std::string& shape, int layers, int throughput_prompts, int tp,
                 bool tensor_parallel_exchange);

}  // namespace zinfer::gpu::cuda::bench
