// zinfer-cuda-bench: measures the two ceilings (copy bandwidth, cuBLASLt bf16 GEMM rate) and then
// the CUDA backend's kernels and whole-model latency/throughput against them, in one process so
// that every ratio uses ceilings from the same run.
//   zinfer-cuda-bench [all|ceilings|attention|gemv|w4|fp8|prefill_kernels|decode|model|exchange] [--layers N] [--prompts N]
//                     [--tensor-parallel-size N] [--shape 8b|70b] [--all-reduce exchange|nccl]
// --all-reduce: how a tensor-parallel decode step all-reduces its residual (gpu/backend.h,
// BackendOptions::tensor_parallel_exchange), to compare the residual exchange with NCCL's kernels.
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "tools/gpu/bench_common.h"

int main(int argc, char** argv) {
  using namespace zinfer::gpu::cuda::bench;
  std::string what = argc > 1 ? argv[1] : "all";
  int layers = 0, prompts = 1000, tp = 1;
  std::string shape = "8b";
  bool exchange = true;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--layers") == 0) layers = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--prompts") == 0) prompts = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--tensor-parallel-size") == 0) tp = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--shape") == 0) shape = argv[i + 1];
    else if (std::strcmp(argv[i], "--all-reduce") == 0 && std::strcmp(argv[i + 1], "exchange") == 0) exchange = true;
    else if (std::strcmp(argv[i], "--all-reduce") == 0 && std::strcmp(argv[i + 1], "nccl") == 0) exchange = false;
    else {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  try {
    cudaDeviceProp prop{};
    zinfer::gpu::cuda::check_cuda(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    std::printf("device %s, %d SMs, %.1f GiB\n", prop.name, prop.multiProcessorCount, prop.totalGlobalMem / 1073741824.0);
    const Ceilings c = measure_ceilings();
    if (what == "all" || what == "attention") bench_attention(c);
    if (what == "all" || what == "gemv") bench_gemv(c);
    if (what == "all" || what == "w4") bench_w4(c);
    if (what == "all" || what == "fp8") bench_fp8(c);
    if (what == "all" || what == "prefill_kernels") bench_prefill_kernels(c);
    if (what == "exchange") bench_exchange(c, tp);
    if (what == "decode") bench_decode(c, layers);
    if (what == "all" || what == "model") bench_model(c, shape, layers, prompts, tp, exchange);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zinfer-cuda-bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
