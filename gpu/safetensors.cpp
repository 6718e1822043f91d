// The safetensors reader: map the file, parse and validate the JSON header, expose views.
#include "gpu/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

namespace zinfer::gpu {
namespace {

// Headers of real checkpoints are a few MB at most; a larger length means a corrupt file.
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;

DType parse_dtype(const std::string& s, const std::string& where) {
  static const std::pair<const char*, DType> kNames[] = {
      {"F32", DType::kF32},   {"F16", DType::kF16}, {"BF16", DType::kBF16},       {"I32", DType::kI32},
      {"I8", DType::kI8},     {"U8", DType::kU8},   {"F8_E4M3", DType::kF8E4M3},  {"F8_E5M2", DType::kF8E5M2}, {"I64", DType::kI64},
      {"F64", DType::kF64},   {"BOOL", DType::kBool}};
  for (const auto& [name, dtype] : kNames)
    if (s == name) return dtype;
  throw SafetensorsError(where + ": unsupported dtype '" + s + "'");
}

struct Range {
  uint64_t begin, end;
  std::string name;
};

}  // namespace

std::string shape_string(const std::vector<int64_t>& shape) {
  std::ostringstream out;
  out << '[';
  for (size_t i = 0; i < shape.size(); ++i) out << (i ? ", " : "") << shape[i];
  out << ']';
  return out.str();
}

SafetensorsFile::SafetensorsFile(const std::string& path) : path_(path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw SafetensorsError(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    throw SafetensorsError(path + ": cannot stat: " + std::strerror(err));
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ < 8) {
    ::close(fd);
    throw SafetensorsError(path + ": truncated file (" + std::to_string(size_) +
                           " bytes, less than the 8-byte header length)");
  }
  map_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);  // the mapping keeps the file alive
  if (map_ == MAP_FAILED) {
    map_ = nullptr;
    throw SafetensorsError(path + ": mmap failed: " + std::strerror(errno));
  }
  try {
    const auto* bytes = static_cast<const unsigned char*>(map_);
    uint64_t header_len = 0;
    for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | bytes[i];  // little-endian
    if (header_len > kMaxHeaderBytes)
      throw SafetensorsError(path + ": header length " + std::to_string(header_len) +
                             " exceeds the 100 MB limit (corrupt file?)");
    if (header_len > size_ - 8)
      throw SafetensorsError(path + ": header length " + std::to_string(header_len) +
                             " runs past the end of the file (" + std::to_string(size_) + " bytes): truncated file");
    nlohmann::json header;
    try {
      header = nlohmann::json::parse(reinterpret_cast<const char*>(bytes + 8),
                                     reinterpret_cast<const char*>(bytes + 8 + header_len));
    } catch (const nlohmann::json::exception& e) {
      throw SafetensorsError(path + ": header is not valid JSON: " + e.what());
    }
    if (!header.is_object()) throw SafetensorsError(path + ": header is not a JSON object");

    const std::byte* data_begin = static_cast<const std::byte*>(map_) + 8 + header_len;
    const uint64_t data_size = size_ - 8 - header_len;
    std::vector<Range> ranges;
    for (const auto& [name, entry] : header.items()) {
      const std::string where = path + ": tensor '" + name + "'";
      if (name == "__metadata__") {
        if (!entry.is_object()) throw SafetensorsError(path + ": __metadata__ is not an object");
        for (const auto& [k, v] : entry.items()) {
          if (!v.is_string()) throw SafetensorsError(path + ": __metadata__ value '" + k + "' is not a string");
          metadata_[k] = v.get<std::string>();
        }
        continue;
      }
      if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") ||
          !entry.contains("data_offsets"))
        throw SafetensorsError(where + ": entry needs dtype, shape and data_offsets");
      if (!entry["dtype"].is_string()) throw SafetensorsError(where + ": dtype is not a string");
      TensorView view;
      view.name = name;
      view.file = path;
      view.dtype = parse_dtype(entry["dtype"].get<std::string>(), where);
      const auto& shape = entry["shape"];
      if (!shape.is_array()) throw SafetensorsError(where + ": shape is not an array");
      uint64_t numel = 1;
      for (const auto& d : shape) {
        if (!d.is_number_unsigned() && !(d.is_number_integer() && d.get<int64_t>() >= 0))
          throw SafetensorsError(where + ": shape has a non-integer or negative dimension");
        uint64_t dim = d.get<uint64_t>();
        if (dim != 0 && numel > std::numeric_limits<uint64_t>::max() / 16 / dim)
          throw SafetensorsError(where + ": shape is too large");
        numel *= dim;
        view.shape.push_back(static_cast<int64_t>(dim));
      }
      const auto& offsets = entry["data_offsets"];
      if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
          !offsets[1].is_number_unsigned())
        throw SafetensorsError(where + ": data_offsets must be two non-negative integers");
      uint64_t begin = offsets[0].get<uint64_t>(), end = offsets[1].get<uint64_t>();
      if (begin > end)
        throw SafetensorsError(where + ": data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                               "] end before they begin");
      if (end > data_size)
        throw SafetensorsError(where + ": data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                               "] lie outside the file's " + std::to_string(data_size) +
                               " data bytes (truncated file?)");
      const uint64_t expected = numel * dtype_size(view.dtype);
      if (end - begin != expected)
        throw SafetensorsError(where + ": " + std::to_string(end - begin) + " bytes do not match dtype " +
                               dtype_name(view.dtype) + " x shape " + shape_string(view.shape) + " (" +
                               std::to_string(expected) + " bytes)");
      view.data = data_begin + begin;
      view.nbytes = static_cast<size_t>(end - begin);
      ranges.push_back({begin, end, name});
      tensors_.emplace(name, std::move(view));
    }
    // The data area must be covered exactly: no overlap, no holes, nothing after the last tensor.
    std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) {
      return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
    });
    uint64_t covered = 0;
    for (const auto& r : ranges) {
      if (r.begin < covered)
        throw SafetensorsError(path + ": tensor '" + r.name + "' overlaps the tensor before it (offset " +
                               std::to_string(r.begin) + " < " + std::to_string(covered) + ")");
      if (r.begin > covered)
        throw SafetensorsError(path + ": bytes [" + std::to_string(covered) + ", " + std::to_string(r.begin) +
                               ") before tensor '" + r.name + "' belong to no tensor");
      covered = r.end;
    }
    if (covered != data_size)
      throw SafetensorsError(path + ": the tensors cover " + std::to_string(covered) + " of " +
                             std::to_string(data_size) + " data bytes");
  } catch (...) {
    ::munmap(map_, size_);
    map_ = nullptr;
    throw;
  }
}

SafetensorsFile::~SafetensorsFile() {
  if (map_) ::munmap(map_, size_);
}

WeightSet::WeightSet(const std::string& model_dir) {
  namespace fs = std::filesystem;
  const fs::path dir(model_dir);
  const fs::path single = dir / "model.safetensors";
  const fs::path index_path = dir / "model.safetensors.index.json";
  if (fs::exists(index_path)) {
    std::ifstream in(index_path);
    nlohmann::json index;
    try {
      in >> index;
    } catch (const nlohmann::json::exception& e) {
      throw SafetensorsError(index_path.string() + ": not valid JSON: " + e.what());
    }
    if (!index.contains("weight_map") || !index["weight_map"].is_object())
      throw SafetensorsError(index_path.string() + ": no weight_map object");
    std::map<std::string, SafetensorsFile*> by_shard;
    for (const auto& [name, shard] : index["weight_map"].items()) {
      if (!shard.is_string()) throw SafetensorsError(index_path.string() + ": weight_map['" + name + "'] is not a string");
      const std::string shard_name = shard.get<std::string>();
      if (shard_name.find('/') != std::string::npos || shard_name == "..")
        throw SafetensorsError(index_path.string() + ": shard name '" + shard_name + "' is not a file in the folder");
      auto it = by_shard.find(shard_name);
      if (it == by_shard.end()) {
        files_.push_back(std::make_unique<SafetensorsFile>((dir / shard_name).string()));
        it = by_shard.emplace(shard_name, files_.back().get()).first;
      }
      auto t = it->second->tensors().find(name);
      if (t == it->second->tensors().end())
        throw SafetensorsError(index_path.string() + ": tensor '" + name + "' is not in its shard " +
                               it->second->path());
      index_[name] = &t->second;
    }
  } else if (fs::exists(single)) {
    files_.push_back(std::make_unique<SafetensorsFile>(single.string()));
    for (const auto& [name, view] : files_.back()->tensors()) index_[name] = &view;
  } else {
    throw SafetensorsError(model_dir + ": neither model.safetensors nor model.safetensors.index.json found");
  }
}

bool WeightSet::has(const std::string& name) const { return index_.count(name) != 0; }

const TensorView& WeightSet::get(const std::string& name) const {
  auto it = index_.find(name);
  if (it == index_.end()) throw SafetensorsError("tensor '" + name + "' not found in the checkpoint");
  return *it->second;
}

const TensorView& WeightSet::get(const std::string& name, const std::vector<int64_t>& expected_shape) const {
  const TensorView& view = get(name);
  if (view.shape != expected_shape)
    throw SafetensorsError(view.file + ": tensor '" + name + "' has shape " + shape_string(view.shape) +
                           ", expected " + shape_string(expected_shape));
  return view;
}

std::vector<std::string> WeightSet::names() const {
  std::vector<std::string> out;
  out.reserve(index_.size());
  for (const auto& [name, view] : index_) out.push_back(name);
  return out;
}

}  // namespace zinfer::gpu
