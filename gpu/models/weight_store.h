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

// One rank of a tensor-parallel group of `size` ranks (tensor_parallel.h says what each holds).
struct TensorParallel {
  int32_t rank = 0;
  int32_t size = 1;
};

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

// A range of a tensor's rows or columns; count -1 is all of them from begin.
struct Range {
  int64_t begin = 0;
  int64_t count = -1;
  bool all() const { return begin == 0 && count < 0; }
};

// One checkpoint tensor, the shape it must have, and the part of it this store keeps: a rank of
// a tensor-parallel group keeps its slice (tensor_parallel.h). Rows past the tensor's end read as
// zeros (a vocabulary padded to a multiple of the group size); columns must lie inside it.
struct TensorPart {
  std::string name;
  std::vector<int64_t> shape;
  Range rows = {};  // of dimension 0
  Range cols = {};  // of dimension 1 (2-D tensors)
};

// The shape a part has once sliced.
std::vector<int64_t> sliced_shape(const TensorPart& part);
// Whether the part is its whole tensor (a single rank's ranges may name the full extent).
bool whole(const TensorPart& part);

class WeightStore {
 public:
  virtual ~WeightStore() = default;
  // W is the parts stacked by rows (each [rows_i, in_features]): q/k/v or gate/up fused into one
  // matrix so that a layer runs one GEMM where the checkpoint has several. A missing tensor or a
  // wrong shape throws, naming the tensor.
  virtual Linear linear(const std::vector<TensorPart>& parts) = 0;
  // The parts concatenated, as float32.
  virtual Vector vector(const std::vector<TensorPart>& parts) = 0;
  // The rank of the tensor-parallel group this store loads for ({0, 1}: the whole model).
  virtual TensorParallel parallel() const { return {}; }
};

}  // namespace zinfer::gpu::models
