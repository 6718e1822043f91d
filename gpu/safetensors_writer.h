// Writing .safetensors files (make-model, tests): tensors are added with their raw bytes, then the
// file is written with a JSON header padded to 8 bytes so that every tensor starts aligned.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gpu/safetensors.h"

namespace zinfer::gpu {

class SafetensorsWriter {
 public:
  // Raw little-endian element bytes; their count must equal numel(shape) * dtype_size(dtype).
  void add(const std::string& name, DType dtype, const std::vector<int64_t>& shape, std::vector<std::byte> bytes);
  void add_f32(const std::string& name, const std::vector<int64_t>& shape, const std::vector<float>& values);
  // Rounds each value to bfloat16 (nearest even).
  void add_bf16(const std::string& name, const std::vector<int64_t>& shape, const std::vector<float>& values);
  void set_metadata(const std::string& key, const std::string& value) { metadata_[key] = value; }
  // Writes the file; throws SafetensorsError naming the path on an I/O failure.
  void write(const std::string& path) const;

 private:
  struct Entry {
    DType dtype;
    std::vector<int64_t> shape;
    std::vector<std::byte> bytes;
  };
  std::map<std::string, Entry> tensors_;
  std::map<std::string, std::string> metadata_{{"format", "pt"}};
};

}  // namespace zinfer::gpu
