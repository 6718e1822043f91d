#include "gpu/models/tensor_parallel.h"

#include <string>

namespace zinfer::gpu::models {
namespace {

Range even_split(int64_t n, TensorParallel tp, const char* field, const ModelConfig& c) {
  if (n % tp.size != 0) {
    throw ModelConfigError(c.architecture_name + ": " + field + " " + std::to_string(n) +
                           " is not divisible by tensor_parallel_size " + std::to_string(tp.size));
  }
  const int64_t count = n / tp.size;
  return {tp.rank * count, count};
}

}  // namespace

std::vector<int64_t> sliced_shape(const TensorPart& part) {
  std::vector<int64_t> s = part.shape;
  if (!s.empty() && part.rows.count >= 0) s[0] = part.rows.count;
  if (s.size() >= 2 && part.cols.count >= 0) s[1] = part.cols.count;
  return s;
}

bool whole(const TensorPart& part) {
  auto full = [&](const Range& r, size_t dim) {
    return r.all() || (r.begin == 0 && part.shape.size() > dim && r.count == part.shape[dim]);
  };
  return full(part.rows, 0) && full(part.cols, 1);
}

Sharding shard(const ModelConfig& c, TensorParallel tp) {
  if (tp.size < 1 || tp.rank < 0 || tp.rank >= tp.size) {
    throw ModelConfigError("tensor-parallel rank " + std::to_string(tp.rank) + " of " + std::to_string(tp.size) +
                           " is not a rank of the group");
  }
  Sharding s;
  s.tp = tp;
  s.q_heads = even_split(c.num_attention_heads, tp, "num_attention_heads", c);
  s.intermediate = even_split(c.intermediate_size, tp, "intermediate_size", c);
  const int64_t kv = c.num_key_value_heads;
  if (kv >= tp.size) {
    s.kv_heads = even_split(kv, tp, "num_key_value_heads", c);
  } else {
    if (tp.size % kv != 0) {
      throw ModelConfigError(c.architecture_name + ": tensor_parallel_size " + std::to_string(tp.size) +
                             " is not a multiple of num_key_value_heads " + std::to_string(kv) +
                             " (each key/value head must be kept by the same number of ranks)");
    }
    s.kv_heads = {tp.rank / (tp.size / kv), 1};
  }
  const int64_t per_rank = (int64_t{c.vocab_size} + tp.size - 1) / tp.size;
  s.vocab = {tp.rank * per_rank, per_rank};
  return s;
}

ModelConfig local_config(const ModelConfig& c, TensorParallel tp) {
  const Sharding s = shard(c, tp);
  ModelConfig local = c;
  local.num_attention_heads = static_cast<int32_t>(s.q_heads.count);
  local.num_key_value_heads = static_cast<int32_t>(s.kv_heads.count);
  local.intermediate_size = static_cast<int32_t>(s.intermediate.count);
  return local;
}

}  // namespace zinfer::gpu::models
