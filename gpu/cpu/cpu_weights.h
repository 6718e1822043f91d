// The CPU backend's weight store (gpu/models/weight_store.h): linear layers as Matrix (float32,
// or bf16 rows widened exactly on use: matrix.h), vectors as float32. Tensors are read from the
// checkpoint when the model definition declares them.
#pragma once

#include <memory>
#include <vector>

#include "gpu/cpu/matrix.h"
#include "gpu/models/weight_store.h"
#include "gpu/quant/checkpoint_reader.h"
#include "gpu/safetensors.h"

namespace zinfer::gpu::cpu {

class CpuWeightStore final : public models::WeightStore {
 public:
  // Reads `checkpoint` until finish_loading(); the tensors are copied, not kept mapped.
  // A tensor-parallel rank keeps its slices (gpu/models/tensor_parallel.h).
  // A quantized checkpoint's linear layers are dequantized to float32 (gpu/quant/checkpoint_reader.h),
  // except FP8 layers, which compute W8A8 (gpu/cpu/fp8_matrix.h).
  explicit CpuWeightStore(const WeightSet& checkpoint, const quant::QuantConfig& quantization = {},
                          models::TensorParallel tp = {})
      : reader_(std::make_unique<quant::CheckpointReader>(checkpoint, quantization)), tp_(tp) {}
  void finish_loading();

  models::Linear linear(const std::vector<models::TensorPart>& parts) override;
  models::Vector vector(const std::vector<models::TensorPart>& parts) override;
  models::TensorParallel parallel() const override { return tp_; }

  const Matrix& matrix(models::Linear w) const { return matrices_.at(static_cast<size_t>(w.id)); }
  // nullptr for an invalid handle (an absent bias or norm).
  const float* data(models::Vector v) const {
    return v.valid() ? vectors_.at(static_cast<size_t>(v.id)).data() : nullptr;
  }

 private:
  std::unique_ptr<quant::CheckpointReader> reader_;  // null once loaded
  models::TensorParallel tp_;
  std::vector<Matrix> matrices_;
  std::vector<std::vector<float>> vectors_;
};

}  // namespace zinfer::gpu::cpu
