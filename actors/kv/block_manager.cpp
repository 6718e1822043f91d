#include "actors/kv/block_manager.h"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>

#include "actors/kv/block_hash.h"

namespace zinfer::kv {

namespace {

std::string seq_name(uint64_t seq_id) { return "sequence " + std::to_string(seq_id); }

}  // namespace

BlockManager::BlockManager(const KvConfig& config)
    : config_(config),
      device_(config.num_device_blocks, config.block_size, config.enable_prefix_caching),
      host_(config.num_host_blocks, config.block_size, false) {
  const int32_t bs = config.block_size;
  if (bs > 0 && (bs & (bs - 1)) == 0) block_shift_ = std::countr_zero(static_cast<uint32_t>(bs));
}

const BlockManager::SeqBlocks* BlockManager::find(uint64_t seq_id) const {
  if (last_.entry && last_.seq_id == seq_id) return last_.entry;
  auto it = seqs_.find(seq_id);
  if (it == seqs_.end()) return nullptr;
  last_.seq_id = seq_id;
  last_.entry = &it->second;
  return last_.entry;
}

const BlockManager::SeqBlocks& BlockManager::get(uint64_t seq_id) const {
  const SeqBlocks* s = find(seq_id);
  if (!s) throw std::out_of_range("BlockManager: unknown " + seq_name(seq_id));
  return *s;
}

BlockManager::SeqBlocks& BlockManager::get(uint64_t seq_id) {
  return const_cast<SeqBlocks&>(static_cast<const BlockManager*>(this)->get(seq_id));
}

void BlockManager::check_version(uint64_t plan_version, const char* what, uint64_t seq_id) const {
  if (plan_version != version_) {
    throw std::logic_error(std::string("BlockManager: stale ") + what + " for " + seq_name(seq_id) +
                           " (made at version " + std::to_string(plan_version) + ", now " +
                           std::to_string(version_) + ")");
  }
}

void BlockManager::release_all(BlockPool& pool, const std::vector<int32_t>& table) {
  for (auto it = table.rbegin(); it != table.rend(); ++it) pool.release(*it);
}

PrefixMatch BlockManager::match_prefix(std::span<const int32_t> tokens, int32_t max_cached_tokens,
                                       const BlockHash& root) const {
  PrefixMatch m;
  m.root = root;
  m.last_hash = root;
  m.version = version_;
  m.num_looked_up = static_cast<int32_t>(tokens.size());
  if (!config_.enable_prefix_caching) return m;
  const int32_t bs = config_.block_size;
  const int32_t limit = std::min<int32_t>(max_cached_tokens, static_cast<int32_t>(tokens.size()));
  for (int32_t start = 0; start + bs <= limit; start += bs) {
    auto block_tokens = tokens.subspan(start, bs);
    const BlockHash h = chain_block_hash(m.last_hash, block_tokens);
    auto hit = device_.lookup(h, m.last_hash, block_tokens);
    if (!hit) break;
    m.blocks.push_back(*hit);
    m.last_hash = h;
    m.num_tokens += bs;
  }
  return m;
}

AllocationPlan BlockManager::plan_allocation(uint64_t seq_id, int32_t target_slots, const PrefixMatch* prefix) const {
  AllocationPlan p;
  p.seq_id = seq_id;
  p.target_slots = target_slots;
  p.version = version_;
  if (target_slots < 0) throw std::invalid_argument("BlockManager: negative target_slots for " + seq_name(seq_id));
  const SeqBlocks* found = find(seq_id);
  if (!found) {
    p.new_sequence = true;
    if (prefix) {
      if (prefix->version != version_) {
        throw std::logic_error("BlockManager: stale prefix match for " + seq_name(seq_id));
      }
      p.prefix = *prefix;
    }
    if (target_slots < p.prefix.num_tokens) {
      throw std::invalid_argument("BlockManager: " + seq_name(seq_id) + " asks for " + std::to_string(target_slots) +
                                  " slots, fewer than its " + std::to_string(p.prefix.num_tokens) + " cached tokens");
    }
    int32_t evictable_hits = 0;
    for (int32_t b : p.prefix.blocks) evictable_hits += device_.ref_count(b) == 0 ? 1 : 0;
    p.num_fresh_blocks = blocks_for(target_slots) - static_cast<int32_t>(p.prefix.blocks.size());
    p.blocks_needed = p.num_fresh_blocks + evictable_hits;
  } else {
    const SeqBlocks& s = *found;
    if (s.where != Residence::kDevice) {
      throw std::logic_error("BlockManager: " + seq_name(seq_id) + " is swapped out; swap it in first");
    }
    p.num_fresh_blocks = std::max(0, blocks_for(target_slots) - static_cast<int32_t>(s.table.size()));
    p.copy_on_write = target_slots > s.num_slots && ends_inside_block(s.num_slots) &&
                      device_.ref_count(s.table.back()) > 1;
    p.blocks_needed = p.num_fresh_blocks + (p.copy_on_write ? 1 : 0);
  }
  p.feasible = p.blocks_needed <= device_.num_available();
  return p;
}

Allocation BlockManager::commit(const AllocationPlan& plan) {
  check_version(plan.version, "allocation plan", plan.seq_id);
  if (!plan.feasible) {
    throw std::logic_error("BlockManager: committing an infeasible allocation for " + seq_name(plan.seq_id));
  }
  Allocation out;
  SeqBlocks* s;
  if (plan.new_sequence) {
    SeqBlocks fresh;
    // Hits are retained before any take(), so that taking a fresh block cannot evict them.
    for (int32_t b : plan.prefix.blocks) device_.retain(b);
    fresh.table = plan.prefix.blocks;
    fresh.num_slots = plan.prefix.num_tokens;
    fresh.num_hashed = static_cast<int32_t>(plan.prefix.blocks.size());
    fresh.root = plan.prefix.root;
    fresh.last_hash = plan.prefix.last_hash;
    fresh.generation = next_generation_++;
    lookup_tokens_ += plan.prefix.num_looked_up;
    hit_tokens_ += plan.prefix.num_tokens;
    out.num_cached_tokens = plan.prefix.num_tokens;
    s = &seqs_.emplace(plan.seq_id, std::move(fresh)).first->second;
  } else {
    s = &get(plan.seq_id);
  }
  if (plan.copy_on_write) {
    int32_t shared = s->table.back();
    int32_t own = device_.take();
    out.copies.push_back(protocol::BlockCopy{shared, own});
    device_.release(shared);
    s->table.back() = own;
    s->generation = next_generation_++;
  }
  for (int32_t i = 0; i < plan.num_fresh_blocks; ++i) s->table.push_back(device_.take());
  s->num_slots = std::max(s->num_slots, plan.target_slots);
  ++version_;
  return out;
}

void BlockManager::fork(uint64_t parent_id, uint64_t child_id) {
  const SeqBlocks& parent = get(parent_id);
  if (parent.where != Residence::kDevice) {
    throw std::logic_error("BlockManager: cannot fork swapped-out " + seq_name(parent_id));
  }
  if (seqs_.count(child_id)) throw std::logic_error("BlockManager: fork target " + seq_name(child_id) + " exists");
  SeqBlocks child = parent;
  child.generation = next_generation_++;
  for (int32_t b : child.table) device_.retain(b);
  seqs_.emplace(child_id, std::move(child));
  ++version_;
}

bool BlockManager::free(uint64_t seq_id) {
  auto it = seqs_.find(seq_id);
  if (it == seqs_.end()) return false;
  release_all(it->second.where == Residence::kDevice ? device_ : host_, it->second.table);
  if (last_.entry == &it->second) last_.entry = nullptr;
  seqs_.erase(it);
  ++version_;
  return true;
}

void BlockManager::cache_full_blocks(uint64_t seq_id, std::span<const int32_t> tokens, int32_t num_computed_tokens) {
  if (!config_.enable_prefix_caching) return;
  SeqBlocks& s = get(seq_id);
  if (s.where != Residence::kDevice) return;
  const int32_t bs = config_.block_size;
  const int32_t full = std::min<int32_t>(num_computed_tokens / bs, static_cast<int32_t>(s.table.size()));
  if (static_cast<int64_t>(tokens.size()) < static_cast<int64_t>(full) * bs) {
    throw std::invalid_argument("BlockManager: " + seq_name(seq_id) + " has " + std::to_string(full) +
                                " full blocks but only " + std::to_string(tokens.size()) + " tokens were given");
  }
  if (s.num_hashed == 0) s.last_hash = s.root;
  for (int32_t i = s.num_hashed; i < full; ++i) {
    auto block_tokens = tokens.subspan(static_cast<size_t>(i) * bs, bs);
    const BlockHash parent = s.last_hash;
    s.last_hash = chain_block_hash(parent, block_tokens);
    device_.register_block(s.table[i], s.last_hash, parent, block_tokens);
  }
  s.num_hashed = std::max(s.num_hashed, full);
}

SwapPlan BlockManager::plan_swap_out(uint64_t seq_id) const {
  const SeqBlocks& s = get(seq_id);
  if (s.where != Residence::kDevice) throw std::logic_error("BlockManager: " + seq_name(seq_id) + " is already on the host");
  SwapPlan p{seq_id, false, static_cast<int32_t>(s.table.size()), version_};
  p.feasible = p.num_blocks <= host_.num_available();
  return p;
}

std::vector<protocol::BlockCopy> BlockManager::commit_swap_out(const SwapPlan& plan) {
  check_version(plan.version, "swap-out plan", plan.seq_id);
  if (!plan.feasible) throw std::logic_error("BlockManager: committing an infeasible swap-out of " + seq_name(plan.seq_id));
  SeqBlocks& s = get(plan.seq_id);
  std::vector<protocol::BlockCopy> copies;
  std::vector<int32_t> host_table;
  copies.reserve(s.table.size());
  host_table.reserve(s.table.size());
  for (int32_t b : s.table) {
    int32_t h = host_.take();
    copies.push_back(protocol::BlockCopy{b, h});
    host_table.push_back(h);
  }
  release_all(device_, s.table);
  s.table = std::move(host_table);
  s.generation = next_generation_++;
  s.where = Residence::kHost;
  s.num_hashed = 0;  // its device blocks are new after swap-in; they are hashed again then
  s.last_hash = s.root;
  ++version_;
  return copies;
}

SwapPlan BlockManager::plan_swap_in(uint64_t seq_id, int32_t reserve_blocks) const {
  const SeqBlocks& s = get(seq_id);
  if (s.where != Residence::kHost) throw std::logic_error("BlockManager: " + seq_name(seq_id) + " is not swapped out");
  SwapPlan p{seq_id, false, static_cast<int32_t>(s.table.size()), version_};
  p.feasible = p.num_blocks + std::max(0, reserve_blocks) <= device_.num_available();
  return p;
}

std::vector<protocol::BlockCopy> BlockManager::commit_swap_in(const SwapPlan& plan) {
  check_version(plan.version, "swap-in plan", plan.seq_id);
  if (!plan.feasible) throw std::logic_error("BlockManager: committing an infeasible swap-in of " + seq_name(plan.seq_id));
  SeqBlocks& s = get(plan.seq_id);
  std::vector<protocol::BlockCopy> copies;
  std::vector<int32_t> device_table;
  copies.reserve(s.table.size());
  device_table.reserve(s.table.size());
  for (int32_t h : s.table) {
    int32_t d = device_.take();
    copies.push_back(protocol::BlockCopy{h, d});
    device_table.push_back(d);
  }
  release_all(host_, s.table);
  s.table = std::move(device_table);
  s.generation = next_generation_++;
  s.where = Residence::kDevice;
  ++version_;
  return copies;
}

KvStats BlockManager::stats() const {
  KvStats st;
  st.num_device_blocks = device_.num_blocks();
  st.free_device_blocks = device_.num_available();
  st.cached_free_blocks = device_.num_evictable();
  st.num_host_blocks = host_.num_blocks();
  st.free_host_blocks = host_.num_available();
  st.usage = st.num_device_blocks > 0 ? static_cast<double>(device_.num_in_use()) / st.num_device_blocks : 0.0;
  st.prefix_lookup_tokens = lookup_tokens_;
  st.prefix_hit_tokens = hit_tokens_;
  st.prefix_hit_rate = lookup_tokens_ > 0 ? static_cast<double>(hit_tokens_) / lookup_tokens_ : 0.0;
  st.evictions = device_.num_evictions();
  return st;
}

}  // namespace zinfer::kv
