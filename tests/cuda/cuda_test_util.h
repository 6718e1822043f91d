// Helpers shared by the CUDA tests: device detection, typed device arrays, random data, bf16.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/cuda/cuda_check.h"

namespace zinfer::gpu::cuda::test {

inline bool has_cuda_device() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

#define ZINFER_REQUIRE_CUDA()                                               \
  do {                                                                      \
    if (!::zinfer::gpu::cuda::test::has_cuda_device()) {                    \
      GTEST_SKIP() << "skipped: no CUDA device";                            \
    }                                                                       \
  } while (0)

inline float round_bf16(float f) { return __bfloat162float(__float2bfloat16(f)); }

// A device array filled from / read back into a host vector.
template <typename T>
class DeviceArray {
 public:
  explicit DeviceArray(size_t n) : n_(n) {
    check_cuda(cudaMalloc(&p_, std::max<size_t>(n, 1) * sizeof(T)), "test cudaMalloc");
  }
  explicit DeviceArray(const std::vector<T>& host) : DeviceArray(host.size()) { upload(host); }
  ~DeviceArray() { cudaFree(p_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  void upload(const std::vector<T>& host) {
    check_cuda(cudaMemcpy(p_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), "test upload");
  }
  std::vector<T> download() const {
    std::vector<T> host(n_);
    check_cuda(cudaDeviceSynchronize(), "test sync");
    check_cuda(cudaMemcpy(host.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost), "test download");
    return host;
  }
  // Fills with a byte pattern so that unwritten outputs show up (0xFF.. is NaN for floats/bf16).
  void poison() { check_cuda(cudaMemset(p_, 0xFF, n_ * sizeof(T)), "test poison"); }
  T* get() const { return p_; }
  size_t size() const { return n_; }

 private:
  T* p_ = nullptr;
  size_t n_ = 0;
};

inline std::vector<float> random_floats(size_t n, std::mt19937& rng, float scale = 1.f) {
  std::normal_distribution<float> dist(0.f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

inline std::vector<__nv_bfloat16> to_bf16(const std::vector<float>& v) {
  std::vector<__nv_bfloat16> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = __float2bfloat16(v[i]);
  return out;
}

inline std::vector<float> to_float(const std::vector<__nv_bfloat16>& v) {
  std::vector<float> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = __bfloat162float(v[i]);
  return out;
}

// ||a - b|| / ||b||, NaN-propagating (a NaN anywhere fails any "< tol" check).
inline double relative_error(const std::vector<float>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    const double d = static_cast<double>(a[i]) - b[i];
    num += d * d;
    den += b[i] * b[i];
  }
  return std::sqrt(num / std::max(den, 1e-300));
}

}  // namespace zinfer::gpu::cuda::test
