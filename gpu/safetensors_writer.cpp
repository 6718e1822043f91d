#include "gpu/safetensors_writer.h"

#include <cstring>
#include <fstream>

#include <nlohmann/json.hpp>

namespace zinfer::gpu {

void SafetensorsWriter::add(const std::string& name, DType dtype, const std::vector<int64_t>& shape,
                            std::vector<std::byte> bytes) {
  uint64_t numel = 1;
  for (int64_t d : shape) {
    if (d < 0) throw SafetensorsError("tensor '" + name + "': negative dimension");
    numel *= static_cast<uint64_t>(d);
  }
  if (bytes.size() != numel * dtype_size(dtype))
    throw SafetensorsError("tensor '" + name + "': " + std::to_string(bytes.size()) + " bytes for " +
                           std::to_string(numel) + " elements of " + dtype_name(dtype));
  if (name == "__metadata__") throw SafetensorsError("'__metadata__' is not a tensor name");
  tensors_[name] = Entry{dtype, shape, std::move(bytes)};
}

void SafetensorsWriter::add_f32(const std::string& name, const std::vector<int64_t>& shape,
                                const std::vector<float>& values) {
  std::vector<std::byte> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  add(name, DType::kF32, shape, std::move(bytes));
}

void SafetensorsWriter::add_bf16(const std::string& name, const std::vector<int64_t>& shape,
                                 const std::vector<float>& values) {
  std::vector<std::byte> bytes(values.size() * 2);
  for (size_t i = 0; i < values.size(); ++i) {
    uint16_t bits = float_to_bf16(values[i]);
    std::memcpy(bytes.data() + 2 * i, &bits, 2);
  }
  add(name, DType::kBF16, shape, std::move(bytes));
}

void SafetensorsWriter::write(const std::string& path) const {
  nlohmann::json header = nlohmann::json::object();
  if (!metadata_.empty()) header["__metadata__"] = metadata_;
  uint64_t offset = 0;
  for (const auto& [name, entry] : tensors_) {
    header[name] = {{"dtype", dtype_name(entry.dtype)},
                    {"shape", entry.shape},
                    {"data_offsets", {offset, offset + entry.bytes.size()}}};
    offset += entry.bytes.size();
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // JSON allows trailing whitespace
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw SafetensorsError(path + ": cannot open for writing");
  unsigned char len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>((uint64_t(text.size()) >> (8 * i)) & 0xff);
  out.write(reinterpret_cast<const char*>(len), 8);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  for (const auto& [name, entry] : tensors_)
    out.write(reinterpret_cast<const char*>(entry.bytes.data()), static_cast<std::streamsize>(entry.bytes.size()));
  out.close();
  if (!out) throw SafetensorsError(path + ": write failed");
}

}  // namespace zinfer::gpu
