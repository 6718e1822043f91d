// SHA-256 (FIPS 180-4), for the prefix cache's block keys (block_hash.h). Written here rather than
// taken from a crypto library: it is the one primitive the KV manager needs, the library stays
// free of dependencies (it is tested alone and built on the GPU machine from the same sources),
// and the test vectors of the standard check it (tests/kv/sha256_test.cpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace zinfer::kv {

using Sha256Digest = std::array<uint8_t, 32>;

class Sha256 {
 public:
  Sha256();
  void update(std::span<const uint8_t> bytes);
  // The digest of everything updated so far; the object must not be updated afterwards.
  Sha256Digest finish();

  static Sha256Digest of(std::span<const uint8_t> bytes) {
    Sha256 h;
    h.update(bytes);
    return h.finish();
  }

 private:
  void compress(const uint8_t* block);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

}  // namespace zinfer::kv
