// How a model definition asks a backend for its weights. The definition names checkpoint tensors
// (and how they are stacked); the backend keeps them in whatever layout its kernels want (bf16
// on the device, float32 rows on the CPU; later int4 or fp8) and hands back a handle. Handles are
// indices into the backend's own tables: the definition never sees a pointer, so a quantized
// linear layer is a change of the store and the ops, not of the definitions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace zinfer::gpu::models {

// A linear layer y = x · Wᵀ, W: [out_features, in_features].
struct Linear {
  int32_t id = -1;
  bool valid() const { return id >= 0; }
};

// A float32 vector: a norm's weight or a bias.
struct Vector {
  int32_t id = -1;
  bool valid() const { return id >= 0; }
};

// One checkpoint tensor and the shape it must have.
struct TensorPart {
  std::string name;
  std::vector<int64_t> shape;
};

class WeightStore {
 public:
  virtual ~WeightStore() = default;
  // W is the parts stacked by rows (each [rows_i, in_features]): q/k/v or gate/up fused into one
  // matrix so that a layer runs one GEMM where the checkpoint has several. A missing tensor or a
  // wrong shape throws, naming the tensor.
  virtual Linear linear(const std::vector<TensorPart>& parts) = 0;
  // The parts concatenated, as float32.
  virtual Vector vector(const std::vector<TensorPart>& parts) = 0;
};

}  // namespace zinfer::gpu::models
