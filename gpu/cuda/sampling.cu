#include <algorithm>
#include <cfloat>
#include <type_traits>

#include "gpu/cuda/sampling.h"

namespace zinfer::gpu::cuda {
namespace {

constexpr int kThreads = 1024;

__host__ __device__ inline uint64_t mix64(uint64_t z) {
  // splitmix64's finaliser: a bijection with full avalanche.
  z ^= z >> 30;
  z *= 0xBF58476D1CE4E5B9ull;
  z ^= z >> 27;
  z *= 0x94D049BB133111EBull;
  z ^= z >> 31;
  return z;
}

__host__ __device__ inline double uniform_from(uint64_t seed, int32_t sample_index) {
  const uint64_t z = mix64(mix64(seed + 0x9E3779B97F4A7C15ull) ^
                           (static_cast<uint64_t>(static_cast<uint32_t>(sample_index)) * 0xD1B54A32D192ED03ull));
  return static_cast<double>(z >> 11) * (1.0 / 9007199254740992.0);  // 53 bits
}

// Order-preserving map of a float to an unsigned key (larger float -> larger key).
__device__ inline uint32_t order_key(float f) {
  const uint32_t bits = __float_as_uint(f);
  return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
}

struct ArgMax {
  float value;
  int32_t index;
};

__device__ inline ArgMax better(ArgMax a, ArgMax b) {
  if (b.value > a.value || (b.value == a.value && b.index < a.index && b.index >= 0) || a.index < 0) return b;
  return a;
}

template <typename T, typename Op>
__device__ T block_reduce(T v, Op op, T* scratch) {
  for (int o = 16; o > 0; o >>= 1) {
    if constexpr (sizeof(T) == 8 && !std::is_same_v<T, double>) {
      ArgMax other;
      other.value = __shfl_xor_sync(0xffffffffu, v.value, o);
      other.index = __shfl_xor_sync(0xffffffffu, v.index, o);
      v = op(v, other);
    } else {
      v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
    }
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();  // scratch may still be read from the previous reduction
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  T total = scratch[0];
  for (int w = 1; w < kThreads / 32; ++w) total = op(total, scratch[w]);
  return total;
}

// A slice's (or a row's) maximum, its first index, and the sum of exp(logit - max) over the
// slice. Combining two is exact up to the rounding of the rescaled sums.
struct RowStats {
  float max;
  int32_t argmax;  // -1: no finite logit yet
  float sum;
};

__device__ inline RowStats combine(RowStats a, RowStats b) {
  if (b.argmax < 0) return a;
  if (a.argmax < 0) return b;
  const float m = fmaxf(a.max, b.max);
  RowStats r;
  r.max = m;
  r.argmax = a.max > b.max ? a.argmax : b.max > a.max ? b.argmax : min(a.argmax, b.argmax);
  r.sum = a.sum * expf(a.max - m) + b.sum * expf(b.max - m);
  return r;
}

__device__ inline RowStats warp_combine(RowStats v) {
  for (int o = 16; o > 0; o >>= 1) {
    RowStats other;
    other.max = __shfl_xor_sync(0xffffffffu, v.max, o);
    other.argmax = __shfl_xor_sync(0xffffffffu, v.argmax, o);
    other.sum = __shfl_xor_sync(0xffffffffu, v.sum, o);
    v = combine(v, other);
  }
  return v;
}

constexpr int kStatThreads = 256;
constexpr int kStatSlice = 4096;      // logits per block of the statistics kernel
constexpr int kMaxStatBlocks = 64;    // per row (larger vocabularies get longer slices)

int stat_slice(int vocab, int blocks) { return (vocab + blocks - 1) / blocks; }

// Block (slice, row): one pass over the slice, each thread an online max/sum over its logits
// (in increasing index order, so a tie keeps the first index), then the block's combination.
// With alt_row set, a row whose alt_row entry is non-zero is read from alt instead.
__global__ void __launch_bounds__(kStatThreads) row_stats_kernel(const float* logits, const float* alt,
                                                                const int32_t* alt_row, int vocab, int slice,
                                                                RowStats* partials) {
  __shared__ RowStats warp_stats[kStatThreads / 32];
  const int row = blockIdx.y;
  const float* l = (alt_row != nullptr && alt_row[row] != 0 ? alt : logits) + static_cast<int64_t>(row) * vocab;
  const int begin = blockIdx.x * slice, end = min(vocab, begin + slice);
  RowStats mine{-INFINITY, -1, 0.f};
  for (int i = begin + threadIdx.x; i < end; i += kStatThreads) {
    const float x = l[i];
    if (!(x > -INFINITY)) continue;  // -inf (masked) adds nothing; NaN is never the maximum
    if (mine.argmax < 0 || x > mine.max) {
      mine.sum = (mine.argmax < 0 ? 0.f : mine.sum * expf(mine.max - x)) + 1.f;
      mine.max = x;
      mine.argmax = i;
    } else {
      mine.sum += expf(x - mine.max);
    }
  }
  mine = warp_combine(mine);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) warp_stats[warp] = mine;
  __syncthreads();
  if (warp == 0) {
    RowStats v = lane < kStatThreads / 32 ? warp_stats[lane] : RowStats{-INFINITY, -1, 0.f};
    v = warp_combine(v);
    if (lane == 0) partials[static_cast<int64_t>(row) * gridDim.x + blockIdx.x] = v;
  }
}

__global__ void __launch_bounds__(kThreads) sampling_kernel(SamplingBatch b, int stat_blocks) {
  __shared__ float f_scratch[32];
  __shared__ ArgMax a_scratch[32];
  __shared__ float chunk_sums[kThreads];
  __shared__ int32_t chosen[kMaxTopLogprobs];
  __shared__ int32_t picked;

  const int row = blockIdx.x;
  const float* logits = b.logits + static_cast<int64_t>(row) * b.vocab;
  const int V = b.vocab;
  auto sum_op = [](float x, float y) { return x + y; };
  auto arg_op = [](ArgMax x, ArgMax y) { return better(x, y); };

  // The row's statistics from the slices' partials (the first warp combines them): of the raw
  // logits (the logprobs' normaliser) and, when rows have rules, of the logits drawn from.
  __shared__ RowStats row_stats, draw_stats;
  if (threadIdx.x < 32) {
    const RowStats* part = reinterpret_cast<const RowStats*>(b.scratch) + static_cast<int64_t>(row) * stat_blocks;
    RowStats v{-INFINITY, -1, 0.f};
    for (int i = threadIdx.x; i < stat_blocks; i += 32) v = combine(v, part[i]);
    v = warp_combine(v);
    RowStats d = v;
    if (b.processed != nullptr) {
      const RowStats* dpart = part + static_cast<int64_t>(b.num_rows) * stat_blocks;
      d = RowStats{-INFINITY, -1, 0.f};
      for (int i = threadIdx.x; i < stat_blocks; i += 32) d = combine(d, dpart[i]);
      d = warp_combine(d);
    }
    if (threadIdx.x == 0) row_stats = v, draw_stats = d;
  }
  __syncthreads();
  const float log_z = (row_stats.argmax < 0 ? logits[0] : row_stats.max) + logf(row_stats.sum);
  // The logits the token is drawn from: the processed row, unless its rules masked every token
  // (then the raw row, as the CPU sampler does).
  const float* draw = logits;
  RowStats ds = row_stats;
  if (b.processed != nullptr && b.processed_row[row] != 0 && draw_stats.argmax >= 0) {
    draw = b.processed + static_cast<int64_t>(row) * b.vocab;
    ds = draw_stats;
  }
  ArgMax best{ds.max, ds.argmax};
  if (best.index < 0) best = ArgMax{logits[0], 0};  // no finite logit: token 0, as before
  const float max_logit = best.value;

  const float temperature = b.temperature[row];
  int32_t token = best.index;
  if (temperature > 0.f) {
    const float inv_t = 1.f / temperature;
    // Candidates are the tokens whose key is >= threshold; top-k and min_p, then top-p, raise it.
    uint32_t threshold = 0;
    const int top_k = b.top_k[row];
    if (top_k > 0 && top_k < V) {
      // Largest threshold with at least top_k tokens at or above it: the k-th largest value.
      uint32_t lo = 0, hi = 0xFFFFFFFFu;
      while (lo < hi) {
        // 64-bit midpoint: hi - lo + 1 overflows 32 bits on the first step.
        const uint32_t mid = static_cast<uint32_t>(lo + (static_cast<uint64_t>(hi) - lo + 1) / 2);
        float count = 0.f;
        for (int i = threadIdx.x; i < V; i += kThreads) count += order_key(draw[i]) >= mid ? 1.f : 0.f;
        if (block_reduce(count, sum_op, f_scratch) >= static_cast<float>(top_k)) lo = mid; else hi = mid - 1;
      }
      threshold = lo;
    }
    const float min_p = b.min_p != nullptr ? b.min_p[row] : 0.f;
    if (min_p > 0.f) {
      // vLLM's min_p keeps p >= min_p * p_max of softmax(logits / T): logits >= max + T log(min_p).
      threshold = max(threshold, order_key(max_logit + temperature * logf(min_p)));
    }
    auto weight = [&](int i) {
      const float l = draw[i];
      return order_key(l) >= threshold ? expf((l - max_logit) * inv_t) : 0.f;
    };
    float mass = 0.f;
    for (int i = threadIdx.x; i < V; i += kThreads) mass += weight(i);
    mass = block_reduce(mass, sum_op, f_scratch);
    const float top_p = b.top_p[row];
    if (top_p < 1.f) {
      // Largest threshold whose kept mass still reaches top_p of the candidates' mass.
      const float need = top_p * mass;
      uint32_t lo = threshold, hi = order_key(max_logit);
      while (lo < hi) {
        const uint32_t mid = static_cast<uint32_t>(lo + (static_cast<uint64_t>(hi) - lo + 1) / 2);
        float kept = 0.f;
        for (int i = threadIdx.x; i < V; i += kThreads) {
          const float l = draw[i];
          kept += order_key(l) >= mid ? expf((l - max_logit) * inv_t) : 0.f;
        }
        if (block_reduce(kept, sum_op, f_scratch) >= need) lo = mid; else hi = mid - 1;
      }
      threshold = lo;
      mass = 0.f;
      for (int i = threadIdx.x; i < V; i += kThreads) mass += weight(i);
      mass = block_reduce(mass, sum_op, f_scratch);
    }
    // Inverse CDF in vocabulary order: each thread owns a contiguous chunk.
    const float target = static_cast<float>(uniform_from(b.seed[row], b.sample_index[row]) * mass);
    const int chunk = (V + kThreads - 1) / kThreads;
    const int begin = threadIdx.x * chunk, end = min(V, begin + chunk);
    float local = 0.f;
    int last_kept = -1;
    for (int i = begin; i < end; ++i) {
      const float w = weight(i);
      local += w;
      if (w > 0.f) last_kept = i;
    }
    chunk_sums[threadIdx.x] = local;
    if (threadIdx.x == 0) picked = -1;
    __syncthreads();
    if (threadIdx.x == 0) {
      float run = 0.f;  // exclusive prefix sums, in place
      for (int t = 0; t < kThreads; ++t) {
        const float s = chunk_sums[t];
        chunk_sums[t] = run;
        run += s;
      }
    }
    __syncthreads();
    const float prefix = chunk_sums[threadIdx.x];
    if (local > 0.f && target >= prefix && target < prefix + local) {
      float run = prefix;
      int found = last_kept;
      for (int i = begin; i < end; ++i) {
        const float w = weight(i);
        run += w;
        if (w > 0.f && target < run) {
          found = i;
          break;
        }
      }
      atomicMax(&picked, found);
    }
    // Rounding can leave the target past the last chunk's sum: take the last kept token.
    ArgMax last{last_kept >= 0 ? static_cast<float>(last_kept) : -INFINITY, last_kept};
    last = block_reduce(last, arg_op, a_scratch);
    __syncthreads();
    token = picked >= 0 ? picked : last.index;
    if (token < 0) token = best.index;
  }

  if (threadIdx.x == 0) {
    b.out_token[row] = token;
    b.out_logprob[row] = logits[token] - log_z;
    if (b.dest_slot != nullptr && b.dest_slot[row] >= 0) b.last_sampled[b.dest_slot[row]] = token;
    if (b.count_row != nullptr && b.count_row[row] >= 0) ++b.counts[static_cast<int64_t>(b.count_row[row]) * V + token];
  }
  const int n_top = min(b.num_top[row], kMaxTopLogprobs);
  for (int k = 0; k < n_top; ++k) {
    ArgMax cand{-INFINITY, -1};
    for (int i = threadIdx.x; i < V; i += kThreads) {
      bool taken = false;
      for (int c = 0; c < k; ++c) taken |= chosen[c] == i;
      if (!taken) cand = better(cand, ArgMax{logits[i], i});
    }
    cand = block_reduce(cand, arg_op, a_scratch);
    if (threadIdx.x == 0) {
      chosen[k] = cand.index;
      b.out_top_ids[row * kMaxTopLogprobs + k] = cand.index;
      b.out_top_logprobs[row * kMaxTopLogprobs + k] = cand.value - log_z;
    }
    __syncthreads();
  }
}

// Block (slice, row): the rules over one slice of kStatSlice logits. One block per row left a
// row's 128K logits, their counts and the processed copy (1.5 MB) to one SM's few hundred threads,
// latency-bound (0.24 ms at 64 rows, docs/benchmarks/sampling.md); slices spread them over the
// card as the statistics kernel does. Each block applies the list entries that fall in its slice,
// in the same order as a whole-row pass (every rule touches each logit only through its own index).
__global__ void __launch_bounds__(kStatThreads) sampling_rules_kernel(SamplingRulesBatch b) {
  const int row = blockIdx.y;
  if (b.processed_row[row] == 0) return;
  const int V = b.vocab;
  const int begin = blockIdx.x * kStatSlice, end = min(V, begin + kStatSlice);
  if (begin >= end) return;
  const float* l = b.logits + static_cast<int64_t>(row) * V;
  float* out = b.processed + static_cast<int64_t>(row) * V;
  const int32_t* idx = b.list_index + row * kRuleLists * 2;
  const int32_t* allowed = b.lists + idx[2 * kAllowedList];
  const int n_allowed = idx[2 * kAllowedList + 1];
  const int32_t* bias = b.lists + idx[2 * kBiasList];
  const int n_bias = idx[2 * kBiasList + 1];
  const int32_t* banned = b.lists + idx[2 * kBannedList];
  const int n_banned = idx[2 * kBannedList + 1];
  const int32_t cr = b.count_row[row];
  const uint32_t* c = cr >= 0 ? b.counts + static_cast<int64_t>(cr) * V : nullptr;
  const float rep = b.repetition[row], freq = b.frequency[row], pres = b.presence[row];
  auto penalize = [&](float x, int i) {
    if (c == nullptr) return x;
    const uint32_t w = c[i];
    if (w == 0) return x;
    const uint32_t n = w & ~kPromptBit;
    x = x > 0.f ? x / rep : x * rep;
    x -= freq * static_cast<float>(n);
    if (n > 0) x -= pres;
    return x;
  };
  auto mine = [&](int id) { return id >= begin && id < end; };
  // The penalties apply after logit_bias (their repetition factor depends on the sign): with a
  // bias they take a pass of their own.
  const bool late_penalties = n_bias > 0;
  for (int i = begin + threadIdx.x; i < end; i += kStatThreads) {
    float x = n_allowed > 0 ? -INFINITY : l[i];
    if (n_allowed == 0 && !late_penalties) x = penalize(x, i);
    out[i] = x;
  }
  __syncthreads();
  for (int j = threadIdx.x; j < n_allowed; j += kStatThreads) {
    const int id = allowed[j];
    if (mine(id)) out[id] = late_penalties ? l[id] : penalize(l[id], id);
  }
  __syncthreads();
  if (late_penalties) {
    for (int j = threadIdx.x; j < n_bias; j += kStatThreads)
      if (mine(bias[2 * j])) out[bias[2 * j]] += __int_as_float(bias[2 * j + 1]);
    __syncthreads();
    if (c != nullptr)
      for (int i = begin + threadIdx.x; i < end; i += kStatThreads) out[i] = penalize(out[i], i);
    __syncthreads();
  }
  for (int j = threadIdx.x; j < n_banned; j += kStatThreads)
    if (mine(banned[j])) out[banned[j]] = -INFINITY;
  if (b.masks != nullptr && b.mask_row[row] >= 0) {
    const uint32_t* m = b.masks + static_cast<int64_t>(b.mask_row[row]) * b.mask_words;
    for (int i = begin + threadIdx.x; i < end; i += kStatThreads)
      if (((m[i >> 5] >> (i & 31)) & 1u) == 0) out[i] = -INFINITY;
  }
}

__global__ void count_tokens_kernel(uint32_t* counts, int vocab, const int32_t* entries, int n) {
  const int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= n) return;
  const uint32_t word = static_cast<uint32_t>(entries[2 * e + 1]);
  uint32_t* at = counts + static_cast<int64_t>(entries[2 * e]) * vocab + (word & ~kPromptBit);
  if (word & kPromptBit) {
    atomicOr(at, kPromptBit);
  } else {
    atomicAdd(at, 1u);
  }
}

}  // namespace

cudaError_t launch_sampling_rules(const SamplingRulesBatch& batch, cudaStream_t stream) {
  if (batch.num_rows == 0) return cudaSuccess;
  const dim3 grid((batch.vocab + kStatSlice - 1) / kStatSlice, batch.num_rows);
  sampling_rules_kernel<<<grid, kStatThreads, 0, stream>>>(batch);
  return cudaGetLastError();
}

cudaError_t launch_count_tokens(uint32_t* counts, int32_t vocab, const int32_t* entries, int32_t n,
                                cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  count_tokens_kernel<<<(n + 255) / 256, 256, 0, stream>>>(counts, vocab, entries, n);
  return cudaGetLastError();
}

double sampling_uniform(uint64_t seed, int32_t sample_index) { return uniform_from(seed, sample_index); }

int32_t sampling_stat_blocks(int32_t vocab) {
  return std::clamp((vocab + kStatSlice - 1) / kStatSlice, 1, kMaxStatBlocks);
}

size_t sampling_scratch_bytes(int32_t num_rows, int32_t vocab) {
  return 2 * static_cast<size_t>(num_rows) * sampling_stat_blocks(vocab) * sizeof(RowStats);
}

cudaError_t launch_sampling(const SamplingBatch& batch, cudaStream_t stream) {
  if (batch.num_rows == 0) return cudaSuccess;
  if (batch.vocab <= 0 || batch.scratch == nullptr) return cudaErrorInvalidValue;
  const int blocks = sampling_stat_blocks(batch.vocab);
  auto* partials = reinterpret_cast<RowStats*>(batch.scratch);
  row_stats_kernel<<<dim3(blocks, batch.num_rows), kStatThreads, 0, stream>>>(
      batch.logits, nullptr, nullptr, batch.vocab, stat_slice(batch.vocab, blocks), partials);
  if (batch.processed != nullptr) {
    if (batch.processed_row == nullptr) return cudaErrorInvalidValue;
    row_stats_kernel<<<dim3(blocks, batch.num_rows), kStatThreads, 0, stream>>>(
        batch.logits, batch.processed, batch.processed_row, batch.vocab, stat_slice(batch.vocab, blocks),
        partials + static_cast<size_t>(batch.num_rows) * blocks);
  }
  sampling_kernel<<<batch.num_rows, kThreads, 0, stream>>>(batch, blocks);
  return cudaGetLastError();
}

}  // namespace zinfer::gpu::cuda
