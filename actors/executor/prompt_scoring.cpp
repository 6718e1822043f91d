#include "actors/executor/prompt_scoring.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace zinfer::actors {

TokenScore score_token(std::span<const float> logits, int32_t token, int32_t top) {
  if (token < 0 || static_cast<size_t>(token) >= logits.size()) {
    throw std::invalid_argument("prompt scoring: token id " + std::to_string(token) + " is outside the vocabulary");
  }
  const float max = *std::max_element(logits.begin(), logits.end());
  double sum = 0.0;
  for (const float x : logits) sum += std::exp(static_cast<double>(x - max));
  const double log_z = static_cast<double>(max) + std::log(sum);
  TokenScore s;
  const float x = logits[static_cast<size_t>(token)];
  s.logprob = static_cast<float>(static_cast<double>(x) - log_z);
  s.rank = 1 + static_cast<int32_t>(std::count_if(logits.begin(), logits.end(), [x](float y) { return y > x; }));
  const size_t k = std::min(static_cast<size_t>(std::max(0, top)), logits.size());
  if (k > 0) {
    std::vector<int32_t> ids(logits.size());
    std::iota(ids.begin(), ids.end(), 0);
    auto better = [&](int32_t a, int32_t b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); };
    std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(k), ids.end(), better);
    for (size_t i = 0; i < k; ++i) {
      s.top.push_back({ids[i], static_cast<float>(static_cast<double>(logits[ids[i]]) - log_z)});
    }
  }
  return s;
}

std::vector<protocol::PromptLogprobs> score_prompts(gpu::Backend& backend, std::span<const protocol::PromptScoring> scoring,
                                                    const gpu::BatchInput& batch, int32_t max_piece) {
  std::vector<protocol::PromptLogprobs> out;
  const auto vocab = static_cast<size_t>(backend.config().vocab_size);
  for (const protocol::PromptScoring& want : scoring) {
    auto it = std::find_if(batch.seqs.begin(), batch.seqs.end(),
                           [&](const gpu::SequenceInput& s) { return s.seq_id == want.seq_id; });
    if (it == batch.seqs.end() || it->use_last_sampled) {
      throw std::invalid_argument("prompt scoring names sequence " + std::to_string(want.seq_id) +
                                  ", which feeds no token ids in this step");
    }
    const gpu::SequenceInput& seq = *it;
    const auto n = static_cast<int32_t>(seq.token_ids.size());
    protocol::PromptLogprobs lp;
    lp.id = seq.seq_id;
    lp.first_position = seq.start_pos + 1;
    for (int32_t begin = 0; begin < n; begin += max_piece) {
      const int32_t end = std::min(n, begin + max_piece);
      gpu::SequenceInput piece;
      piece.seq_id = seq.seq_id;
      piece.token_ids.assign(seq.token_ids.begin() + begin, seq.token_ids.begin() + end);
      piece.num_tokens = end - begin;
      piece.start_pos = seq.start_pos + begin;
      piece.block_table = seq.block_table;
      const std::vector<float> logits = backend.forward_logits(piece);
      for (int32_t i = begin; i < end; ++i) {
        const int32_t next = i + 1 < n ? seq.token_ids[static_cast<size_t>(i + 1)] : want.next_token;
        if (next < 0) break;  // the work's last position predicts a generated token
        const std::span<const float> row(logits.data() + static_cast<size_t>(i - begin) * vocab, vocab);
        TokenScore s = score_token(row, next, want.top_logprobs);
        lp.logprobs.push_back(s.logprob);
        lp.ranks.push_back(s.rank);
        lp.top_logprobs.push_back(std::move(s.top));
      }
    }
    out.push_back(std::move(lp));
  }
  return out;
}

}  // namespace zinfer::actors
