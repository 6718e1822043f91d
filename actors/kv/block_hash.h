// The key of a full KV block in the prefix cache: a hash chain over the tokens, so that a block's
// key names its whole prefix (the parent's key and its own tokens), not only its own 16 tokens.
#pragma once

#include <cstdint>
#include <span>

namespace zinfer::kv {

// The "parent" of the first block of every sequence.
inline constexpr uint64_t kRootBlockHash = 0x9e3779b97f4a7c15ull;

// Key of a block holding `tokens` whose preceding block has key `parent`.
uint64_t chain_block_hash(uint64_t parent, std::span<const int32_t> tokens);

}  // namespace zinfer::kv
