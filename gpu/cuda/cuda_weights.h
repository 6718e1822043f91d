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
#include "gpu/cuda/fp8_linear.h"
#include "gpu/cuda/w4_gemm.h"
#include "gpu/models/weight_store.h"
#include "gpu/quant/checkpoint_reader.h"
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
  // A quantized checkpoint's 4-bit linear layers (GPTQ, AWQ: gpu/quant/) stay int4 on the device
  // in the W4A16 kernel's tile layout (int4_tiles.h, w4_gemm.h), each in its own allocation, when
  // this store holds whole tensors (one rank). Those the layout cannot hold (8-bit, odd shapes,
  // fused parts with different act-order permutations) and every quantized layer of a
  // tensor-parallel rank are dequantized on the host and stored in bf16 like the rest; the log
  // line says how many took which way, and why.
  // FP8 layers (an fp8 checkpoint, or online FP8) stay e4m3 on the device (fp8()).
  void upload(const WeightSet& checkpoint, const quant::QuantConfig& quantization = {});
  // Seeded random values on the device (benchmarks at a real model's shapes without a
  // checkpoint on disk): matrices ~ N(0, 0.02), norms near 1, biases near 0.
  void fill_random(uint64_t seed);

  // The bf16 matrix of a layer that is not int4 (std::logic_error for one that is).
  const __nv_bfloat16* matrix(models::Linear w) const;
  bool int4(models::Linear w) const { return slots_.at(static_cast<size_t>(w.id)).int4; }
  // An int4 layer's device layout (std::logic_error for one that is not).
  W4Weight w4(models::Linear w) const;
  std::vector<W4Weight> int4_layers() const;
  int64_t rows(models::Linear w) const { return slots_.at(static_cast<size_t>(w.id)).rows; }
  int64_t cols(models::Linear w) const { return slots_.at(static_cast<size_t>(w.id)).cols; }
  // nullptr for an invalid handle (an absent bias or norm).
  const float* data(models::Vector v) const {
    return v.valid() ? static_cast<const float*>(address(v.id)) : nullptr;
  }
  size_t bytes() const;
  // The FP8 W8A8 layers (fp8_linear.h): a layer it has() has no bf16 matrix().
  Fp8Layers& fp8() { return fp8_; }
  const Fp8Layers& fp8() const { return fp8_; }

 private:
  struct Slot {
    std::vector<models::TensorPart> parts;
    bool as_float = false;  // float32 vector, else a bf16 matrix
    int64_t rows = 0;
    int64_t cols = 1;
    size_t offset = 0;
    size_t bytes = 0;
    bool own = false;   // a quantized layer: its own allocation (own_[own_index]), not storage_
    size_t own_index = 0;
    bool int4 = false;  // own: the W4 layout (w4 below), else a bf16 matrix
    W4Weight w4;
  };
  // Quantized layers, read before storage_ is allocated so that they take no bf16 room there.
  void upload_quantized(Slot& s, quant::CheckpointReader& reader, std::string& log);
  int32_t add(const std::vector<models::TensorPart>& parts, bool as_float);
  void allocate();
  const void* address(int32_t id) const;

  models::TensorParallel tp_;
  std::vector<Slot> slots_;
  size_t total_ = 0;
  DeviceBuffer storage_;
  std::vector<DeviceBuffer> own_;
  Fp8Layers fp8_;
};

}  // namespace zinfer::gpu::cuda
