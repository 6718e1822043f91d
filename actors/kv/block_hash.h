// The key of a full KV block in the prefix cache: a hash chain over the tokens, so that a block's
// key names its whole prefix (the parent's key and its own tokens), not only its own tokens.
//
// The key is SHA-256 of the parent's key and the block's tokens (as vLLM's sha256 block hashes):
// a request must not be able to make its blocks collide with another's and so be handed KV that
// another prompt computed. (The 64-bit mixing chain used before was invertible: colliding blocks
// could be computed in a second, tests/kv/prefix_collision_test.cpp has a pair.) The pool also
// keeps each cached block's parent key and tokens and compares both on a lookup
// (block_pool.h), so a hit needs the block's own tokens and its whole prefix chain to agree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <string_view>

#include "actors/kv/sha256.h"

namespace zinfer::kv {

struct BlockHash {
  Sha256Digest bytes{};
  friend bool operator==(const BlockHash&, const BlockHash&) = default;
};

// The "parent" of the first block of every sequence: SHA-256 of a fixed label.
const BlockHash& root_block_hash();

// The parent of the first block of a request with a cache salt (vLLM's cache_salt): SHA-256 of
// the root and the salt, so that requests with different salts never share a block. "" = the root.
BlockHash salted_root_hash(std::string_view salt);

// Key of a block holding `tokens` whose preceding block has key `parent`: SHA-256 over the
// parent's 32 bytes, then each token as 4 bytes little-endian.
BlockHash chain_block_hash(const BlockHash& parent, std::span<const int32_t> tokens);

// For hash tables: the digest's first 8 bytes (uniform already: no further mixing is needed).
struct BlockHashHasher {
  size_t operator()(const BlockHash& h) const noexcept {
    uint64_t x;
    std::memcpy(&x, h.bytes.data(), sizeof x);
    return static_cast<size_t>(x);
  }
};

}  // namespace zinfer::kv
