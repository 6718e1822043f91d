#include "fake_executor.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace zinfer::scheduler::testing {

FakeExecutor::FakeExecutor(int32_t num_device_blocks, int32_t num_host_blocks, int32_t block_size, int32_t vocab)
    : block_size_(block_size),
      vocab_(vocab),
      device_(static_cast<size_t>(num_device_blocks) * block_size, -1),
      host_(static_cast<size_t>(num_host_blocks) * block_size, -1) {}

int32_t FakeExecutor::next_token(const std::vector<int32_t>& history, int64_t seed, int32_t sample_index,
                                 float temperature, int32_t vocab) {
  uint64_t h = 1469598103934665603ull;
  for (int32_t t : history) h = (h ^ static_cast<uint32_t>(t)) * 1099511628211ull;
  if (temperature > 0.0f) {
    h = (h ^ static_cast<uint64_t>(seed)) * 1099511628211ull;
    h = (h ^ static_cast<uint64_t>(sample_index)) * 1099511628211ull;
  }
  h ^= h >> 29;
  return static_cast<int32_t>(h % static_cast<uint64_t>(vocab));
}

void FakeExecutor::copy_block(std::vector<int32_t>& from_pool, int32_t from, std::vector<int32_t>& to_pool, int32_t to) {
  if (from < 0 || (static_cast<size_t>(from) + 1) * block_size_ > from_pool.size() || to < 0 ||
      (static_cast<size_t>(to) + 1) * block_size_ > to_pool.size()) {
    throw std::runtime_error("fake executor: block copy " + std::to_string(from) + " -> " + std::to_string(to) + " out of range");
  }
  std::copy_n(from_pool.begin() + static_cast<size_t>(from) * block_size_, block_size_,
              to_pool.begin() + static_cast<size_t>(to) * block_size_);
  ++copies_;
}

int32_t& FakeExecutor::slot(const std::vector<int32_t>& table, int32_t pos, uint64_t seq_id) {
  const size_t logical = static_cast<size_t>(pos / block_size_);
  if (logical >= table.size()) {
    throw std::runtime_error("fake executor: sequence " + std::to_string(seq_id) + " has no block for position " +
                             std::to_string(pos));
  }
  const size_t index = static_cast<size_t>(table[logical]) * block_size_ + pos % block_size_;
  if (index >= device_.size()) throw std::runtime_error("fake executor: block out of range");
  return device_[index];
}

protocol::StepResult FakeExecutor::run(const protocol::StepPlan& plan) {
  protocol::StepPlan whole = plan;
  tables_.lend(whole);
  protocol::StepResult result = run_whole(whole);
  for (auto& w : whole.seqs) tables_.take_back(w.seq_id, std::move(w.block_table));
  return result;
}

protocol::StepResult FakeExecutor::run_whole(const protocol::StepPlan& plan) {
  for (uint64_t id : plan.finished) last_sampled_.erase(id);
  for (const auto& c : plan.swap_out) copy_block(device_, c.src, host_, c.dst);
  for (const auto& c : plan.swap_in) copy_block(host_, c.src, device_, c.dst);
  for (const auto& c : plan.copy) copy_block(device_, c.src, device_, c.dst);

  protocol::StepResult result;
  result.step_id = plan.step_id;
  std::unordered_map<uint64_t, int32_t> sampled_now;
  for (const auto& w : plan.seqs) {
    std::vector<int32_t> fed = w.token_ids;
    if (w.use_last_sampled) {
      auto it = last_sampled_.find(w.seq_id);
      if (it == last_sampled_.end()) {
        throw std::runtime_error("fake executor: use_last_sampled for sequence " + std::to_string(w.seq_id) +
                                 " which sampled nothing before");
      }
      fed = {it->second};
      ++use_last_sampled_;
    }
    if (static_cast<int32_t>(fed.size()) != w.num_tokens) throw std::runtime_error("fake executor: num_tokens mismatch");
    for (int32_t j = 0; j < w.num_tokens; ++j) slot(w.block_table, w.start_pos + j, w.seq_id) = fed[j];
    if (!w.sample) continue;
    std::vector<int32_t> history;
    const int32_t end = w.start_pos + w.num_tokens;
    for (int32_t pos = 0; pos < end; ++pos) {
      int32_t t = slot(w.block_table, pos, w.seq_id);
      if (t < 0) {
        throw std::runtime_error("fake executor: sequence " + std::to_string(w.seq_id) + " reads unwritten position " +
                                 std::to_string(pos));
      }
      history.push_back(t);
    }
    protocol::SeqOutput o;
    o.seq_id = w.seq_id;
    o.token = next_token(history, w.seed, w.sample_index, w.temperature, vocab_);
    o.logprob = -0.01f * static_cast<float>(o.token % 100);
    for (int32_t k = 0; k < w.top_logprobs; ++k) o.top_logprobs.push_back({(o.token + k) % vocab_, o.logprob - k});
    sampled_now[w.seq_id] = o.token;
    result.outputs.push_back(std::move(o));
  }
  for (auto& [id, t] : sampled_now) last_sampled_[id] = t;
  for (const auto& want : plan.prompt_scoring) {
    auto w = std::find_if(plan.seqs.begin(), plan.seqs.end(), [&](const protocol::SeqWork& s) { return s.seq_id == want.seq_id; });
    if (w == plan.seqs.end() || w->use_last_sampled) {
      throw std::runtime_error("fake executor: prompt scoring of sequence " + std::to_string(want.seq_id) +
                               ", which feeds no token ids");
    }
    protocol::PromptLogprobs lp;
    lp.id = want.seq_id;
    lp.first_position = w->start_pos + 1;
    for (size_t i = 0; i < w->token_ids.size(); ++i) {
      const int32_t next = i + 1 < w->token_ids.size() ? w->token_ids[i + 1] : want.next_token;
      if (next < 0) break;
      const int32_t position = w->start_pos + static_cast<int32_t>(i) + 1;
      lp.logprobs.push_back(-static_cast<float>(position * 1000 + next));
      lp.ranks.push_back(position);
      std::vector<protocol::TopLogprob> top;
      for (int32_t k = 0; k < want.top_logprobs; ++k) top.push_back({k, -static_cast<float>(k)});
      lp.top_logprobs.push_back(std::move(top));
    }
    result.prompt_logprobs.push_back(std::move(lp));
  }
  return result;
}

}  // namespace zinfer::scheduler::testing
