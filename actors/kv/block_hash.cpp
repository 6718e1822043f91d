#include "actors/kv/block_hash.h"

namespace zinfer::kv {

namespace {

// splitmix64's finalizer: every input bit affects every output bit, cheap enough to run per token.
uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

}  // namespace

uint64_t chain_block_hash(uint64_t parent, std::span<const int32_t> tokens) {
  uint64_t h = mix(parent ^ (0x632be59bd9b4e019ull + tokens.size()));
  for (int32_t t : tokens) h = mix(h ^ static_cast<uint32_t>(t));
  return h;
}

}  // namespace zinfer::kv
