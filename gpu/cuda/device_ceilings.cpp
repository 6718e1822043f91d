// measure_device_ceilings() on CUDA: one 2 GiB device-to-device copy and one 8192^3 bf16 GEMM,
// each timed as the median of 20 runs after 3 warm-ups (events on the default stream).
#include "gpu/device_ceilings.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/cuda/cuda_check.h"
#include "gpu/cuda/device_memory.h"
#include "gpu/cuda/gemm.h"
#include "gpu/cuda/random_fill.h"
#include "gpu/cuda/stream_timer.h"

namespace zinfer::gpu {
namespace {

double median_ms(const std::function<void()>& fn, int warmup, int reps) {
  using cuda::check_cuda;
  for (int i = 0; i < warmup; ++i) fn();
  check_cuda(cudaDeviceSynchronize(), "ceiling warm-up");
  cuda::StreamTimer timer;
  std::vector<float> times;
  for (int i = 0; i < reps; ++i) {
    timer.start(nullptr);
    fn();
    times.push_back(timer.stop_ms(nullptr));
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

DeviceCeilings measure_device_ceilings() {
  using cuda::check_cuda;
  using cuda::DeviceBuffer;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    throw std::runtime_error("measuring the GPU: no CUDA device is visible");
  }
  DeviceCeilings c;
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  c.name = prop.name;
  c.mem_gib = static_cast<double>(prop.totalGlobalMem) / double(1ull << 30);

  {  // 2 GiB: far beyond L2 (50-60 MB on Hopper), so the copy streams from HBM both ways.
    const size_t bytes = size_t{2} << 30;
    DeviceBuffer src(bytes, "ceiling copy source"), dst(bytes, "ceiling copy destination");
    check_cuda(cuda::launch_fill_random_f32(src.as<float>(), int64_t(bytes / 4), 1, 0.f, 1.f, nullptr), "fill");
    const double ms = median_ms([&] {
      check_cuda(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, nullptr), "copy");
    }, 3, 20);
    c.copy_gbps = 2.0 * double(bytes) / (ms * 1e-3) / 1e9;
  }
  {  // 8192^3: large enough that cuBLAS runs at its steady tensor-core rate.
    const int64_t n = 8192;
    DeviceBuffer x(size_t(n * n * 2)), w(size_t(n * n * 2)), y(size_t(n * n * 2));
    check_cuda(cuda::launch_fill_random_bf16(x.as<__nv_bfloat16>(), n * n, 2, 0.f, 1.f, nullptr), "fill");
    check_cuda(cuda::launch_fill_random_bf16(w.as<__nv_bfloat16>(), n * n, 3, 0.f, 1.f, nullptr), "fill");
    cuda::Gemm gemm;
    cuda::GemmTuningCache no_file("", "");
    gemm.tune({cuda::GemmShape{n, n, false, false, w.as<__nv_bfloat16>(), n, {n}}}, no_file, nullptr);
    const double ms = median_ms([&] {
      gemm.linear(x.as<__nv_bfloat16>(), w.as<__nv_bfloat16>(), y.as<__nv_bfloat16>(), n, n, n, nullptr);
    }, 3, 20);
    c.bf16_tflops = 2.0 * double(n) * double(n) * double(n) / (ms * 1e-3) / 1e12;
  }
  return c;
}

}  // namespace zinfer::gpu
