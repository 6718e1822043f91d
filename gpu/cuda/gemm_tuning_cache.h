// The cuBLASLt algorithms chosen at start-up (gemm.h), kept in a text file so that a restart on
// the same GPU with the same libraries skips the timing. The file's first lines name the device
// and the library versions; a file written for anything else is ignored and rewritten. Each
// entry is one product shape (rows m, n, k, output type, accumulate) and the algorithm's opaque
// words (cublasLtMatmulAlgo_t::data), which cuBLASLt documents as reusable with the same version.
#pragma once

#include <cublasLt.h>

#include <cstdint>
#include <map>
#include <string>
#include <tuple>

namespace zinfer::gpu::cuda {

struct GemmTuneKey {
  int64_t m = 0, n = 0, k = 0;
  bool f32_out = false;
  bool accumulate = false;
  auto tie() const { return std::tie(m, n, k, f32_out, accumulate); }
  bool operator<(const GemmTuneKey& o) const { return tie() < o.tie(); }
};

class GemmTuningCache {
 public:
  // path: the file ("" = keep nothing on disk). device: the GPU and library versions the
  // entries are valid for. An unreadable or foreign file starts an empty cache.
  GemmTuningCache(std::string path, std::string device);

  bool find(const GemmTuneKey& key, cublasLtMatmulAlgo_t* algo) const;
  void put(const GemmTuneKey& key, const cublasLtMatmulAlgo_t& algo);
  void erase(const GemmTuneKey& key);
  // Writes the file when an entry changed: a fresh file in the same folder (mkstemp, never a
  // predictable name) renamed over the old one, so a reader never sees half a file. Returns
  // false (and leaves the old file) when the folder cannot be written.
  bool save();

  const std::string& path() const { return path_; }
  size_t size() const { return entries_.size(); }
  size_t loaded() const { return loaded_; }

  // The default file for `device` under dir ("auto": $XDG_CACHE_HOME/zinfer, else
  // $HOME/.cache/zinfer; "" or "off": none).
  static std::string default_path(const std::string& dir, const std::string& device);

 private:
  std::string path_, device_;
  std::map<GemmTuneKey, cublasLtMatmulAlgo_t> entries_;
  size_t loaded_ = 0;
  bool dirty_ = false;
};

}  // namespace zinfer::gpu::cuda
