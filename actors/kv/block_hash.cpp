#include "actors/kv/block_hash.h"

#include <string_view>

namespace zinfer::kv {

const BlockHash& root_block_hash() {
  static const BlockHash root = [] {
    constexpr std::string_view kLabel = "zinfer prefix cache root";
    BlockHash h;
    h.bytes = Sha256::of(std::span(reinterpret_cast<const uint8_t*>(kLabel.data()), kLabel.size()));
    return h;
  }();
  return root;
}

BlockHash salted_root_hash(std::string_view salt) {
  if (salt.empty()) return root_block_hash();
  Sha256 sha;
  sha.update(root_block_hash().bytes);
  constexpr std::string_view kLabel = "cache_salt";
  sha.update(std::span(reinterpret_cast<const uint8_t*>(kLabel.data()), kLabel.size()));
  sha.update(std::span(reinterpret_cast<const uint8_t*>(salt.data()), salt.size()));
  BlockHash h;
  h.bytes = sha.finish();
  return h;
}

BlockHash chain_block_hash(const BlockHash& parent, std::span<const int32_t> tokens) {
  Sha256 sha;
  sha.update(parent.bytes);
  // Tokens in a fixed byte order, so that keys do not depend on the host's; a block is 16 tokens
  // by default, so the buffer is sized for that and flushed when full.
  uint8_t buf[256];
  size_t n = 0;
  for (int32_t t : tokens) {
    const auto u = static_cast<uint32_t>(t);
    buf[n++] = static_cast<uint8_t>(u);
    buf[n++] = static_cast<uint8_t>(u >> 8);
    buf[n++] = static_cast<uint8_t>(u >> 16);
    buf[n++] = static_cast<uint8_t>(u >> 24);
    if (n == sizeof buf) {
      sha.update(std::span<const uint8_t>(buf, n));
      n = 0;
    }
  }
  sha.update(std::span<const uint8_t>(buf, n));
  BlockHash out;
  out.bytes = sha.finish();
  return out;
}

}  // namespace zinfer::kv
