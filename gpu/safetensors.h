// Reading Hugging Face .safetensors files: an 8-byte little-endian header length, a JSON header
// {name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {...}}, then the raw bytes.
// Files are memory-mapped; a tensor is a view into the mapping. Every structural problem
// (truncated file, overlong header, offsets outside the file, overlapping or misordered ranges,
// a dtype/shape that does not match its byte count) is a SafetensorsError naming file and tensor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace zinfer::gpu {

class SafetensorsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// kF8E5M2 is read so that an fp8 loader can refuse it by name (gpu/quant/fp8_checkpoint.h).
enum class DType { kF32, kF16, kBF16, kI32, kI8, kU8, kF8E4M3, kF8E5M2, kI64, kF64, kBool };

const char* dtype_name(DType dtype);
size_t dtype_size(DType dtype);
// "[4096, 128]": a shape as error messages write it.
std::string shape_string(const std::vector<int64_t>& shape);

struct TensorView {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  const std::byte* data = nullptr;  // into the file's mapping
  size_t nbytes = 0;
  std::string file;                 // for error messages
  int64_t numel() const;
};

// One mapped .safetensors file.
class SafetensorsFile {
 public:
  explicit SafetensorsFile(const std::string& path);  // throws SafetensorsError
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& path() const { return path_; }
  const std::map<std::string, TensorView>& tensors() const { return tensors_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

 private:
  std::string path_;
  void* map_ = nullptr;
  size_t size_ = 0;
  std::map<std::string, TensorView> tensors_;
  std::map<std::string, std::string> metadata_;
};

// All tensors of a model folder: model.safetensors, or the shards that
// model.safetensors.index.json names.
class WeightSet {
 public:
  explicit WeightSet(const std::string& model_dir);  // throws SafetensorsError
  bool has(const std::string& name) const;
  // The tensor, checked against an expected shape; throws SafetensorsError naming the tensor.
  const TensorView& get(const std::string& name, const std::vector<int64_t>& expected_shape) const;
  const TensorView& get(const std::string& name) const;
  std::vector<std::string> names() const;

 private:
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, const TensorView*> index_;
};

// Converts a tensor's elements to float32 (F32/F16/BF16).
void to_float32(const TensorView& t, float* out);
// Elements [first, first + count) of t (in its row-major order) into out.
void to_float32(const TensorView& t, int64_t first, int64_t count, float* out);
float bf16_to_float(uint16_t bits);
uint16_t float_to_bf16(float f);  // round to nearest even
float fp16_to_float(uint16_t bits);
uint16_t float_to_fp16(float f);

}  // namespace zinfer::gpu
