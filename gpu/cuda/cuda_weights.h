// The CUDA backend's weight store (gpu/models/weight_store.h): linear layers in bf16 (float32 and
// float16 checkpoints are converted on load), vectors (norms, biases) in float32, all in one
// device allocation. Declaring a weight only records where it will go; upload() or
// fill_random() then allocates once and fills every slot.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/cuda/device_memory.h"
#include "gpu/models/weight_store.h"
#include "gpu/quant/quant_config.h"
#include "gpu/safetensors.h"

namespace zinfer::gpu::cuda {

class CudaWeightStore final : public models::WeightStore {
 public:
  models::Linear linear(const std::vector<models::TensorPart>& parts) override;
  models::Vector vector(const std::vector<models::TensorPart>& parts) override;
  // A tensor-parallel rank keeps its slices (gpu/models/tensor_parallel.h); set before declaring.
  void set_parallel(models::TensorParallel tp) { tp_ = tp; }
  models::TensorParallel parallel() const override { return tp_; }

  // Copies every declared tensor from the checkpoint; a missing tensor or a wrong shape throws
  // (the message names the tensor).
  // A quantized checkpoint's linear layers are dequantized on the host and stored in bf16 like the
  // rest (gpu/quant/checkpoint_reader.h); no int4/fp8 kernels yet.
  void upload(const WeightSet& checkpoint, const quant::QuantConfig& quantization = {});
  // Seeded random values on the device (benchmarks at a real model's shapes without a
  // checkpoint on disk): matrices ~ N(0, 0.02), norms near 1, biases near 0.
  void fill_random(uint64_t seed);

  const __nv_bfloat16* matrix(models::Linear w) const { return static_cast<const __nv_bfloat16*>(address(w.id)); }
  int64_t rows(models::Linear w) const { return slots_.at(static_cast<size_t>(w.id)).rows; }
  int64_t cols(models::Linear w) const { return slots_.at(static_cast<size_t>(w.id)).cols; }
  // nullptr for an invalid handle (an absent bias or norm).
  const float* data(models::Vector v) const {
    return v.valid() ? static_cast<const float*>(address(v.id)) : nullptr;
  }
  size_t bytes() const { return storage_.bytes(); }

 private:
  struct Slot {
    std::vector<models::TensorPart> parts;
    bool as_float = false;  // float32 vector, else a bf16 matrix
    int64_t rows = 0;
    int64_t cols = 1;
    size_t offset = 0;
    size_t bytes = 0;
  };
  int32_t add(const std::vector<models::TensorPart>& parts, bool as_float);
  void allocate();
  const void* address(int32_t id) const;

  models::TensorParallel tp_;
  std::vector<Slot> slots_;
  size_t total_ = 0;
  DeviceBuffer storage_;
};

}  // namespace zinfer::gpu::cuda
