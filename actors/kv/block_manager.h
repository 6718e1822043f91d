// The KV manager's bookkeeping: a block table per sequence over a device pool and a host pool,
// automatic prefix caching, copy-on-write after fork, swap plans, statistics. It owns the
// lifetime of blocks, not the meaning of the bytes in them.
//
// Every change is planned first and committed second: plan_* functions look, never change, and
// report whether the change fits; commit_* applies a feasible plan in full. So a caller never sees
// a half-applied allocation. A plan made before any other change is the only one that may be
// committed (each commit bumps a version; committing an older plan throws std::logic_error).
//
// Prefix caching: a block joins the cache only once it is full *and* computed (the caller says so
// through cache_full_blocks after the step that wrote it has run), so a hit never reads KV that a
// step still in flight is writing. Shared blocks are never written: only full blocks are shared
// through the cache, and a partly filled block shared after fork() is copied before a write.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "actors/kv/block_pool.h"
#include "actors/kv/kv_types.h"

namespace zinfer::kv {

enum class Residence { kDevice, kHost };

class BlockManager {
 public:
  explicit BlockManager(const KvConfig& config);

  const KvConfig& config() const { return config_; }
  int32_t block_size() const { return config_.block_size; }
  int32_t blocks_for(int64_t num_tokens) const {
    if (block_shift_ >= 0 && num_tokens >= 0) {
      return static_cast<int32_t>((num_tokens + config_.block_size - 1) >> block_shift_);
    }
    return static_cast<int32_t>((num_tokens + config_.block_size - 1) / config_.block_size);
  }

  // ---- allocation -----------------------------------------------------------------------------
  // The cached blocks a sequence with these tokens may start with, covering at most
  // `max_cached_tokens` positions (the caller keeps at least one token to compute).
  // `root` is the parent key of the first block: salted_root_hash(request's cache_salt); a new
  // sequence allocated with this match keys its blocks from it.
  PrefixMatch match_prefix(std::span<const int32_t> tokens, int32_t max_cached_tokens,
                           const BlockHash& root = root_block_hash()) const;
  // Plans slots for positions [0, target_slots) of `seq_id`. A sequence without blocks starts
  // from `prefix` (may be null: no cache hit); one with blocks grows its table, copying its last
  // block first when it is shared and partly filled and the new positions start inside it.
  AllocationPlan plan_allocation(uint64_t seq_id, int32_t target_slots, const PrefixMatch* prefix = nullptr) const;
  bool can_allocate(uint64_t seq_id, int32_t target_slots) const {
    return plan_allocation(seq_id, target_slots).feasible;
  }
  Allocation commit(const AllocationPlan& plan);

  // The child starts with the parent's table, sharing every block (counts +1). Always fits.
  void fork(uint64_t parent_id, uint64_t child_id);
  // Returns every block of the sequence (device or host) to its pool. False if unknown.
  bool free(uint64_t seq_id);

  // Registers the sequence's full blocks within its first `num_computed_tokens` positions in the
  // prefix cache; `tokens` holds at least that many tokens of the sequence.
  void cache_full_blocks(uint64_t seq_id, std::span<const int32_t> tokens, int32_t num_computed_tokens);

  // ---- swap -----------------------------------------------------------------------------------
  // Swap-out moves the sequence's blocks to the host pool (device -> host copies); swap-in
  // brings them back to fresh device blocks, leaving `reserve_blocks` more device blocks free
  // (the caller's next slots). Both either apply in full or change nothing.
  SwapPlan plan_swap_out(uint64_t seq_id) const;
  std::vector<protocol::BlockCopy> commit_swap_out(const SwapPlan& plan);
  SwapPlan plan_swap_in(uint64_t seq_id, int32_t reserve_blocks = 0) const;
  std::vector<protocol::BlockCopy> commit_swap_in(const SwapPlan& plan);

  // ---- inspection ---------------------------------------------------------------------------
  bool has(uint64_t seq_id) const { return seqs_.count(seq_id) != 0; }
  Residence residence(uint64_t seq_id) const { return get(seq_id).where; }
  const std::vector<int32_t>& block_table(uint64_t seq_id) const { return get(seq_id).table; }
  // Changes whenever the sequence's table changes other than by blocks appended at its end (a
  // new or forked sequence, copy-on-write of its last block, swap-out, swap-in); never 0 and
  // never reused, so that equal generations mean "only appended since" (a block-table sender
  // skips comparing what it sent, protocol/block_table_delta.h).
  uint64_t table_generation(uint64_t seq_id) const { return get(seq_id).generation; }
  int32_t num_slots(uint64_t seq_id) const { return get(seq_id).num_slots; }
  size_t num_sequences() const { return seqs_.size(); }
  const BlockPool& device_pool() const { return device_; }
  const BlockPool& host_pool() const { return host_; }
  KvStats stats() const;

 private:
  struct SeqBlocks {
    std::vector<int32_t> table;
    int32_t num_slots = 0;      // positions with a slot
    Residence where = Residence::kDevice;
    int32_t num_hashed = 0;     // leading blocks whose chain key is known
    BlockHash root = root_block_hash();       // the parent key of its first block (cache salt)
    BlockHash last_hash = root_block_hash();  // chain key of block num_hashed - 1 (root when 0)
    uint64_t generation = 0;    // table_generation()
  };

  // The sequence's entry, or null. Answers a repeated question from last_ (see there).
  const SeqBlocks* find(uint64_t seq_id) const;
  const SeqBlocks& get(uint64_t seq_id) const;
  SeqBlocks& get(uint64_t seq_id);
  void check_version(uint64_t plan_version, const char* what, uint64_t seq_id) const;
  // Releases `table` to `pool` last block first, so that the tail of a prefix is evicted before
  // its head (a later request sharing a shorter prefix still hits).
  static void release_all(BlockPool& pool, const std::vector<int32_t>& table);

  // True when `num_slots` ends inside a block (its last block is partly filled).
  bool ends_inside_block(int32_t num_slots) const {
    if (block_shift_ >= 0) return (num_slots & (config_.block_size - 1)) != 0;
    return num_slots % config_.block_size != 0;
  }

  KvConfig config_;
  // log2(block_size) when it is a power of two (16, the default, and every size in use), else
  // -1: planning a step divides by the block size twice per sequence, and an integer division
  // was a quarter of plan_allocation's time.
  int32_t block_shift_ = -1;
  BlockPool device_;
  BlockPool host_;
  std::unordered_map<uint64_t, SeqBlocks> seqs_;
  // The entry found last: planning a sequence asks about it several times in a row (plan,
  // commit, its table), and each look-up in seqs_ is a division and a pointer chase, a few
  // hundred per step. Entries of an unordered_map stay put until erased: free() forgets it. A
  // copy of the manager starts without it (it would point into the other map).
  struct LastFound {
    uint64_t seq_id = 0;
    const SeqBlocks* entry = nullptr;
    LastFound() = default;
    LastFound(const LastFound&) {}
    LastFound& operator=(const LastFound&) {
      entry = nullptr;
      return *this;
    }
  };
  mutable LastFound last_;
  uint64_t version_ = 0;
  uint64_t next_generation_ = 1;
  int64_t lookup_tokens_ = 0;
  int64_t hit_tokens_ = 0;
};

}  // namespace zinfer::kv
