// Owning handles for device and pinned host memory. Move-only; freed on destruction.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <string>
#include <utility>

#include "gpu/cuda/cuda_check.h"

namespace zinfer::gpu::cuda {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // Device memory allocated elsewhere (e.g. NCCL's symmetric windows), freed by `release`.
  static DeviceBuffer adopt(void* ptr, size_t bytes, std::function<void(void*)> release) {
    DeviceBuffer b;
    b.ptr_ = ptr;
    b.bytes_ = bytes;
    b.release_ = std::move(release);
    return b;
  }
  explicit DeviceBuffer(size_t bytes, const char* what = "device buffer") : bytes_(bytes) {
    if (bytes > 0) {
      cudaError_t status = cudaMalloc(&ptr_, bytes);
      if (status != cudaSuccess) {
        throw CudaError(std::string("cudaMalloc of ") + std::to_string(bytes) + " bytes for " + what +
                        ": " + cudaGetErrorString(status));
      }
    }
  }
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)),
        release_(std::exchange(other.release_, nullptr)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      reset();
      ptr_ = std::exchange(other.ptr_, nullptr);
      bytes_ = std::exchange(other.bytes_, 0);
      release_ = std::exchange(other.release_, nullptr);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void reset() {
    if (ptr_ != nullptr) {
      if (release_) release_(ptr_);
      else cudaFree(ptr_);
    }
    ptr_ = nullptr;
    bytes_ = 0;
    release_ = nullptr;
  }
  template <typename T = void>
  T* as() const { return static_cast<T*>(ptr_); }
  void* get() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
  std::function<void(void*)> release_;  // empty: cudaFree
};

class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(size_t bytes, const char* what = "pinned buffer") : bytes_(bytes) {
    if (bytes > 0) {
      cudaError_t status = cudaMallocHost(&ptr_, bytes);
      if (status != cudaSuccess) {
        throw CudaError(std::string("cudaMallocHost of ") + std::to_string(bytes) + " bytes for " +
                        what + ": " + cudaGetErrorString(status));
      }
    }
  }
  ~PinnedBuffer() { reset(); }
  PinnedBuffer(PinnedBuffer&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept {
    if (this != &other) {
      reset();
      ptr_ = std::exchange(other.ptr_, nullptr);
      bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  void reset() {
    if (ptr_ != nullptr) cudaFreeHost(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
  }
  template <typename T = void>
  T* as() const { return static_cast<T*>(ptr_); }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace zinfer::gpu::cuda
