// The values the BlockManager hands out: plans (checked, nothing changed yet), the result of
// committing them, and statistics.
#pragma once

#include <cstdint>
#include <vector>

#include "actors/kv/block_hash.h"
#include "protocol/messages.h"

namespace zinfer::kv {

struct KvConfig {
  int32_t block_size = 16;
  int32_t num_device_blocks = 0;
  int32_t num_host_blocks = 0;
  bool enable_prefix_caching = true;
};

// The cached full blocks a new sequence can start with.
struct PrefixMatch {
  std::vector<int32_t> blocks;   // device blocks, in order
  BlockHash root = root_block_hash();       // the parent of the first block (salted_root_hash)
  BlockHash last_hash = root_block_hash();  // chain key of the last matched block
  int32_t num_tokens = 0;        // blocks.size() * block_size
  int32_t num_looked_up = 0;     // tokens offered for the lookup (hit-rate denominator)
  uint64_t version = 0;          // the manager version it was matched against
};

// What allocate() would do. `feasible` false means: not enough blocks; committing it is an error.
// A plan is valid only until the next change to the manager (committing a stale plan throws).
struct AllocationPlan {
  uint64_t seq_id = 0;
  bool feasible = false;
  bool new_sequence = false;     // the sequence has no blocks yet (it starts from `prefix`)
  PrefixMatch prefix;
  int32_t target_slots = 0;      // token positions the sequence will have slots for
  int32_t num_fresh_blocks = 0;  // blocks taken from the pool for new positions
  bool copy_on_write = false;    // the shared, partly filled last block is copied first
  int32_t blocks_needed = 0;     // fresh + copy + cached hits that were evictable
  uint64_t version = 0;
};

struct Allocation {
  std::vector<protocol::BlockCopy> copies;  // device -> device (copy-on-write)
  int32_t num_cached_tokens = 0;            // positions served by the prefix cache
};

struct SwapPlan {
  uint64_t seq_id = 0;
  bool feasible = false;
  int32_t num_blocks = 0;
  uint64_t version = 0;
};

struct KvStats {
  int32_t num_device_blocks = 0;
  int32_t free_device_blocks = 0;    // includes cached blocks nobody references (evictable)
  int32_t cached_free_blocks = 0;
  int32_t num_host_blocks = 0;
  int32_t free_host_blocks = 0;
  double usage = 0.0;                // device blocks referenced / all device blocks
  int64_t prefix_lookup_tokens = 0;
  int64_t prefix_hit_tokens = 0;
  double prefix_hit_rate = 0.0;      // hit tokens / looked-up tokens
  int64_t evictions = 0;
};

}  // namespace zinfer::kv
