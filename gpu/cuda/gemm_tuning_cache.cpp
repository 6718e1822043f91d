#include "gpu/cuda/gemm_tuning_cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

namespace zinfer::gpu::cuda {
namespace {

constexpr const char* kMagic = "# zinfer cuBLASLt tuning v1";

}  // namespace

GemmTuningCache::GemmTuningCache(std::string path, std::string device) : path_(std::move(path)), device_(std::move(device)) {
  if (path_.empty()) return;
  std::ifstream in(path_);
  std::string magic, device_line;
  if (!in || !std::getline(in, magic) || magic != kMagic || !std::getline(in, device_line) ||
      device_line != "device " + device_) {
    return;
  }
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    GemmTuneKey key;
    int f32 = 0, acc = 0;
    cublasLtMatmulAlgo_t algo{};
    if (!(fields >> key.m >> key.n >> key.k >> f32 >> acc)) continue;
    bool ok = true;
    for (uint64_t& word : algo.data) ok = ok && static_cast<bool>(fields >> std::hex >> word);
    if (!ok) continue;
    key.f32_out = f32 != 0;
    key.accumulate = acc != 0;
    entries_[key] = algo;
  }
  loaded_ = entries_.size();
}

bool GemmTuningCache::find(const GemmTuneKey& key, cublasLtMatmulAlgo_t* algo) const {
  auto it = entries_.find(key);
  if (it == entries_.end()) return false;
  *algo = it->second;
  return true;
}

void GemmTuningCache::put(const GemmTuneKey& key, const cublasLtMatmulAlgo_t& algo) {
  entries_[key] = algo;
  dirty_ = true;
}

void GemmTuningCache::erase(const GemmTuneKey& key) { dirty_ |= entries_.erase(key) > 0; }

bool GemmTuningCache::save() {
  if (path_.empty() || !dirty_) return true;
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path target(path_);
  fs::create_directories(target.parent_path(), ec);
  std::string tmpl = (target.parent_path() / (target.filename().string() + ".XXXXXX")).string();
  const int fd = mkstemp(tmpl.data());
  if (fd < 0) return false;
  std::ostringstream out;
  out << kMagic << "\ndevice " << device_ << "\n";
  for (const auto& [key, algo] : entries_) {
    out << std::dec << key.m << ' ' << key.n << ' ' << key.k << ' ' << int(key.f32_out) << ' ' << int(key.accumulate);
    for (uint64_t word : algo.data) out << ' ' << std::hex << word;
    out << '\n';
  }
  const std::string text = out.str();
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const bool closed = ::close(fd) == 0;
  if (!written || !closed || std::rename(tmpl.c_str(), path_.c_str()) != 0) {
    std::remove(tmpl.c_str());
    return false;
  }
  dirty_ = false;
  return true;
}

std::string GemmTuningCache::default_path(const std::string& dir, const std::string& device) {
  if (dir.empty() || dir == "off") return "";
  std::string base = dir;
  if (dir == "auto") {
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') base = std::string(xdg) + "/zinfer";
    else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') base = std::string(home) + "/.cache/zinfer";
    else return "";
  }
  // One file per device and library versions: a name from the hash of the key, the key itself
  // inside the file.
  char name[64];
  std::snprintf(name, sizeof(name), "gemm-%016zx.txt", std::hash<std::string>{}(device));
  return base + "/" + name;
}

}  // namespace zinfer::gpu::cuda
