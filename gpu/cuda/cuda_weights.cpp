#include "gpu/cuda/cuda_weights.h"

#include <stdexcept>

#include "gpu/cuda/cuda_check.h"
#include "gpu/cuda/random_fill.h"
#include "gpu/quant/checkpoint_reader.h"
#include "gpu/tensor_slice.h"

namespace zinfer::gpu::cuda {
namespace {

size_t numel(const std::vector<int64_t>& s) {
  size_t n = 1;
  for (int64_t d : s) n *= static_cast<size_t>(d);
  return n;
}

// Converts one tensor into the device element type through a host staging vector.
void upload_tensor(const TensorView& t, bool as_float, std::byte* dst, std::vector<float>& scratch,
                   std::vector<uint16_t>& scratch16) {
  const size_t n = static_cast<size_t>(t.numel());
  if (!as_float && t.dtype == DType::kBF16) {
    check_cuda(cudaMemcpy(dst, t.data, n * 2, cudaMemcpyHostToDevice), "upload of a bf16 weight");
    return;
  }
  if (t.dtype != DType::kF32 && t.dtype != DType::kBF16 && t.dtype != DType::kF16) {
    throw std::runtime_error("tensor " + t.name + " in " + t.file + " has dtype " + dtype_name(t.dtype) +
                             "; the CUDA backend loads float32, bfloat16 and float16 weights");
  }
  scratch.resize(n);
  to_float32(t, scratch.data());
  if (as_float) {
    check_cuda(cudaMemcpy(dst, scratch.data(), n * 4, cudaMemcpyHostToDevice), "upload of a float weight");
    return;
  }
  scratch16.resize(n);
  for (size_t i = 0; i < n; ++i) scratch16[i] = float_to_bf16(scratch[i]);
  check_cuda(cudaMemcpy(dst, scratch16.data(), n * 2, cudaMemcpyHostToDevice), "upload of a weight");
}

}  // namespace

int32_t CudaWeightStore::add(const std::vector<models::TensorPart>& parts, bool as_float) {
  if (storage_.get() != nullptr) throw std::logic_error("a weight was declared after the CUDA weights were allocated");
  Slot s;
  s.parts = parts;
  s.as_float = as_float;
  s.offset = total_;
  size_t elems = 0;
  for (const models::TensorPart& p : parts) {
    const std::vector<int64_t> shape = models::sliced_shape(p);
    elems += numel(shape);
    s.rows += shape.empty() ? 1 : shape[0];
    if (shape.size() == 2) s.cols = shape[1];
  }
  s.bytes = elems * (as_float ? 4 : 2);
  total_ += (s.bytes + 255) / 256 * 256;  // 256-byte alignment for cuBLASLt and vector loads
  slots_.push_back(std::move(s));
  return static_cast<int32_t>(slots_.size() - 1);
}

models::Linear CudaWeightStore::linear(const std::vector<models::TensorPart>& parts) {
  return models::Linear{add(parts, false)};
}

models::Vector CudaWeightStore::vector(const std::vector<models::TensorPart>& parts) {
  return models::Vector{add(parts, true)};
}

void CudaWeightStore::allocate() { storage_ = DeviceBuffer(total_, "model weights"); }

const void* CudaWeightStore::address(int32_t id) const {
  return storage_.as<std::byte>() + slots_.at(static_cast<size_t>(id)).offset;
}

void CudaWeightStore::upload(const WeightSet& checkpoint, const quant::QuantConfig& quantization) {
  quant::CheckpointReader reader(checkpoint, quantization);
  allocate();
  auto* base = storage_.as<std::byte>();
  std::vector<float> scratch;
  std::vector<uint16_t> scratch16;
  for (const Slot& s : slots_) {
    size_t at = s.offset;
    for (const models::TensorPart& p : s.parts) {
      const quant::ResolvedTensor whole = reader.get(p.name, p.shape);
      const TensorSlice slice(whole.view(), p);
      upload_tensor(slice.view(), s.as_float, base + at, scratch, scratch16);
      at += numel(models::sliced_shape(p)) * (s.as_float ? 4 : 2);
    }
  }
  reader.finish();
}

void CudaWeightStore::fill_random(uint64_t seed) {
  allocate();
  auto* base = storage_.as<std::byte>();
  uint64_t k = seed;
  for (const Slot& s : slots_) {
    if (s.as_float) {  // norm weights near 1, biases near 0
      const bool is_bias = s.parts[0].name.find("bias") != std::string::npos;
      check_cuda(launch_fill_random_f32(reinterpret_cast<float*>(base + s.offset), s.bytes / 4, ++k,
                                        is_bias ? 0.f : 1.f, 0.05f, nullptr),
                 "random weights");
    } else {
      check_cuda(launch_fill_random_bf16(reinterpret_cast<__nv_bfloat16*>(base + s.offset), s.bytes / 2, ++k, 0.f,
                                         0.02f, nullptr),
                 "random weights");
    }
  }
  check_cuda(cudaDeviceSynchronize(), "random weights");
}

}  // namespace zinfer::gpu::cuda
