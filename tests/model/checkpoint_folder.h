// A checkpoint folder (config.json + model.safetensors) held in memory, to edit and write
// elsewhere: the quantized-checkpoint tests build broken and converted variants of the fixtures.
#pragma once

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpu/safetensors.h"
#include "gpu/safetensors_writer.h"

namespace zinfer::gpu::test {

struct Entry {
  DType dtype;
  std::vector<int64_t> shape;
  std::vector<std::byte> bytes;
};

struct Folder {
  nlohmann::json config;
  std::map<std::string, Entry> tensors;

  explicit Folder(const std::filesystem::path& dir) {
    std::ifstream in(dir / "config.json");
    config = nlohmann::json::parse(in);
    const SafetensorsFile f((dir / "model.safetensors").string());
    for (const auto& [name, t] : f.tensors())
      tensors[name] = {t.dtype, t.shape, std::vector<std::byte>(t.data, t.data + t.nbytes)};
  }
  void write(const std::filesystem::path& dir) const {
    std::ofstream(dir / "config.json") << config.dump(2);
    SafetensorsWriter w;
    for (const auto& [name, e] : tensors) w.add(name, e.dtype, e.shape, e.bytes);
    w.write((dir / "model.safetensors").string());
  }
  TensorView view(const std::string& name) const {
    const Entry& e = tensors.at(name);
    TensorView v;
    v.name = name;
    v.dtype = e.dtype;
    v.shape = e.shape;
    v.data = e.bytes.data();
    v.nbytes = e.bytes.size();
    v.file = "memory";
    return v;
  }
};

}  // namespace zinfer::gpu::test
