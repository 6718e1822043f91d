// A weight-only integer-quantized linear layer in one form, whatever format stored it (GPTQ, AWQ,
// compressed-tensors pack-quantized): the unpackers (dequantize.h) bring each format's packing,
// zero-point convention and signedness to this, and every consumer starts from it — the
// dequantization at load (to_dense), the CUDA backend's repacking for its int4 kernel.
//   W[n, k] = scale[g, n] · (q[n, k] − zero[g, n]),  g = group_of(k)
// q is unsigned, 0 ≤ q < 2^bits (a signed format shifts q and zero by 2^(bits−1), which leaves
// q − zero as it was); zero is an integer and may lie outside q's range.
#pragma once

#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace zinfer::gpu::quant {

// An allocator whose resize leaves new elements uninitialised: q of a model holds billions of
// values that the unpackers write anyway, and zero-filling them first doubled the pages a load
// touches (each touched for the first time on one thread).
template <typename T>
struct UninitializedAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <typename U>
  UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}
  template <typename U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;  // default-initialised: no value written
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

struct IntWeight {
  int64_t rows = 0;            // N, out features
  int64_t cols = 0;            // K, in features
  int32_t bits = 4;            // 4 or 8
  int64_t group_size = 0;      // inputs per group when contiguous (K for one group)
  int64_t groups = 1;
  std::vector<uint8_t, UninitializedAllocator<uint8_t>> q;  // [N, K]
  std::vector<int32_t> zero;   // [groups, N]
  std::vector<float> scale;    // [groups, N], the stored fp16 / bf16 / fp32 values widened exactly
  std::vector<int32_t> g_idx;  // [K]: the group of each input (act-order); empty: k / group_size

  int64_t group_of(int64_t k) const { return g_idx.empty() ? k / group_size : g_idx[static_cast<size_t>(k)]; }
  // The dense W [N, K] in float32; exact, since scale is an fp16/bf16 value and q − zero a small integer.
  std::vector<float> to_dense() const {
    std::vector<float> w(static_cast<size_t>(rows * cols));
    for (int64_t k = 0; k < cols; ++k) {
      const int64_t g = group_of(k);
      for (int64_t n = 0; n < rows; ++n)
        w[static_cast<size_t>(n * cols + k)] =
            scale[static_cast<size_t>(g * rows + n)] *
            static_cast<float>(int32_t{q[static_cast<size_t>(n * cols + k)]} - zero[static_cast<size_t>(g * rows + n)]);
    }
    return w;
  }
};

}  // namespace zinfer::gpu::quant
