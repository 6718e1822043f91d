#include "gpu/cuda/cuda_weights.h"

#include <cstdio>
#include <optional>
#include <stdexcept>

#include "gpu/cuda/cuda_check.h"
#include "gpu/cuda/random_fill.h"
#include "gpu/quant/checkpoint_reader.h"
#include "gpu/quant/int4_tiles.h"
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
  const Slot& s = slots_.at(static_cast<size_t>(id));
  if (s.own) return own_.at(s.own_index).get();
  return storage_.as<std::byte>() + s.offset;
}

const __nv_bfloat16* CudaWeightStore::matrix(models::Linear w) const {
  const Slot& s = slots_.at(static_cast<size_t>(w.id));
  if (s.int4) throw std::logic_error("linear layer " + s.parts[0].name + " is int4; its ops run the W4A16 kernel");
  return static_cast<const __nv_bfloat16*>(address(w.id));
}

W4Weight CudaWeightStore::w4(models::Linear w) const {
  const Slot& s = slots_.at(static_cast<size_t>(w.id));
  if (!s.int4) throw std::logic_error("linear layer " + s.parts[0].name + " is not int4");
  return s.w4;
}

std::vector<W4Weight> CudaWeightStore::int4_layers() const {
  std::vector<W4Weight> out;
  for (const Slot& s : slots_)
    if (s.int4) out.push_back(s.w4);
  return out;
}

size_t CudaWeightStore::bytes() const {
  size_t total = storage_.bytes() + fp8_.bytes();
  for (const DeviceBuffer& b : own_) total += b.bytes();
  return total;
}

void CudaWeightStore::upload_quantized(Slot& s, quant::CheckpointReader& reader, std::string& log) {
  std::vector<quant::IntWeight> parts;
  for (const models::TensorPart& p : s.parts) {
    std::optional<quant::IntWeight> w = reader.get_int(p.name, p.shape);
    if (!w) throw std::logic_error("tensor " + p.name + " was found quantized, then read as dense");
    parts.push_back(std::move(*w));
  }
  std::vector<const quant::IntWeight*> stacked;  // a fused layer's parts, read where they lie
  for (const quant::IntWeight& w : parts) stacked.push_back(&w);
  const std::string why = quant::int4_tiles_unsupported(stacked);
  s.own_index = own_.size();
  if (why.empty()) {
    const quant::Int4Tiles t = quant::make_int4_tiles(stacked);
    auto aligned = [](size_t b) { return (b + 255) / 256 * 256; };
    const size_t words = aligned(t.words.size() * 4), scales = aligned(t.scales.size() * 4),
                 zeros = aligned(t.zeros.size() * 4), perm = aligned(t.perm.size() * 4);
    own_.emplace_back(words + scales + zeros + perm, "int4 weights");
    auto* base = own_.back().as<std::byte>();
    check_cuda(cudaMemcpy(base, t.words.data(), t.words.size() * 4, cudaMemcpyHostToDevice), "upload of int4 weights");
    check_cuda(cudaMemcpy(base + words, t.scales.data(), t.scales.size() * 4, cudaMemcpyHostToDevice), "upload of scales");
    check_cuda(cudaMemcpy(base + words + scales, t.zeros.data(), t.zeros.size() * 4, cudaMemcpyHostToDevice),
               "upload of zero points");
    if (!t.perm.empty())
      check_cuda(cudaMemcpy(base + words + scales + zeros, t.perm.data(), t.perm.size() * 4, cudaMemcpyHostToDevice),
                 "upload of the act-order permutation");
    s.int4 = true;
    s.w4.words = reinterpret_cast<const uint4*>(base);
    s.w4.scales = reinterpret_cast<const float*>(base + words);
    s.w4.zeros = reinterpret_cast<const uint32_t*>(base + words + scales);
    s.w4.perm = t.perm.empty() ? nullptr : reinterpret_cast<const int32_t*>(base + words + scales + zeros);
    s.w4.n = static_cast<int32_t>(t.rows), s.w4.k = static_cast<int32_t>(t.cols);
    s.w4.group_size = static_cast<int32_t>(t.group_size);
    return;
  }
  log += (log.empty() ? "" : "; ") + s.parts[0].name + ": " + why;
  own_.emplace_back(s.bytes, "dequantized weights");
  std::vector<uint16_t> bf16;
  size_t at = 0;
  for (const quant::IntWeight& w : parts) {
    const std::vector<float> dense = w.to_dense();
    bf16.resize(dense.size());
    for (size_t i = 0; i < dense.size(); ++i) bf16[i] = float_to_bf16(dense[i]);
    check_cuda(cudaMemcpy(own_.back().as<std::byte>() + at, bf16.data(), bf16.size() * 2, cudaMemcpyHostToDevice),
               "upload of a dequantized weight");
    at += bf16.size() * 2;
  }
}

void CudaWeightStore::upload(const WeightSet& checkpoint, const quant::QuantConfig& quantization) {
  quant::CheckpointReader reader(checkpoint, quantization);
  // Quantized layers a single rank holds whole get their own allocations; the shared one is laid
  // out again without them, and without the FP8 layers, which go to fp8_ (e4m3 on the device).
  for (Slot& s : slots_) {
    if (s.as_float || tp_.size != 1) continue;
    bool all = true;
    for (const models::TensorPart& p : s.parts)
      all = all && models::whole(p) && reader.stores_quantized(p.name);
    s.own = all;
  }
  total_ = 0;
  for (size_t id = 0; id < slots_.size(); ++id) {
    Slot& s = slots_[id];
    if (s.own) continue;
    if (!s.as_float && fp8_.load(static_cast<int32_t>(id), reader, s.parts)) s.bytes = 0;
    s.offset = total_;
    total_ += (s.bytes + 255) / 256 * 256;
  }
  allocate();
  auto* base = storage_.as<std::byte>();
  std::vector<float> scratch;
  std::vector<uint16_t> scratch16;
  std::string dense_log;
  int32_t int4_layers = 0, dense_layers = 0;
  for (size_t id = 0; id < slots_.size(); ++id) {
    Slot& s = slots_[id];
    if (s.own) {
      upload_quantized(s, reader, dense_log);
      ++(s.int4 ? int4_layers : dense_layers);
      continue;
    }
    if (fp8_.has(models::Linear{static_cast<int32_t>(id)})) continue;
    size_t at = s.offset;
    for (const models::TensorPart& p : s.parts) {
      const quant::ResolvedTensor whole = reader.get(p.name, p.shape);
      if (whole.dequantized()) ++dense_layers;
      const TensorSlice slice(whole.view(), p);
      upload_tensor(slice.view(), s.as_float, base + at, scratch, scratch16);
      at += numel(models::sliced_shape(p)) * (s.as_float ? 4 : 2);
    }
  }
  reader.finish();
  if (!fp8_.empty() && tp_.rank == 0)
    std::fprintf(stderr, "zinfer cuda: %s: %d linear layers FP8 W8A8 (e4m3 weights; products of %d row on the fp8 "
                         "GEMV quantizing its input, up to %d rows on the fp8 mma kernel, more on cuBLASLt's e4m3 "
                         "GEMM applying the scales, fp8_linear.h)\n",
                 quantization.online                                      ? "online fp8 of a dense checkpoint"
                 : quantization.method == quant::Method::kCompressedTensors ? "compressed-tensors float-quantized"
                                                                              : "fp8 checkpoint",
                 fp8_.size(), Fp8Layers::kGemvRows, Fp8Layers::kMmaRows);
  // A compressed-tensors checkpoint may hold FP8 groups only (then there is no integer layer to tell of).
  if (quantization.quantized() && quantization.method != quant::Method::kFp8 && tp_.rank == 0 &&
      (fp8_.empty() || int4_layers + dense_layers > 0)) {
    std::fprintf(stderr, "zinfer cuda: %s checkpoint: %d linear layers int4 (W4A16 tensor-core kernel up to %d rows, "
                         "dequantized to bf16 for cuBLASLt above); %d dequantized to bf16 at load%s%s\n",
                 quant::method_name(quantization.method), int4_layers, kW4GemmMaxRows, dense_layers,
                 tp_.size > 1 ? " (a tensor-parallel rank keeps bf16 slices)" : "",
                 dense_log.empty() ? "" : (" (" + dense_log + ")").c_str());
  }
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
