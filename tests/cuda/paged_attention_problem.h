// A paged-attention problem for the GPU tests (attention_test.cpp, attention_prefill_test.cpp):
// a varlen batch of sequences with cached prefixes, their K/V in shuffled physical blocks of
// `block_size` keys ([num_blocks, block_size, kv_heads, head_dim], bf16-rounded), prefill tiles
// of kPrefillTileQueries, a float64 reference, and the device copy as a PagedKv.
#pragma once

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "gpu/cuda/attention.h"
#include "tests/cuda/cuda_test_util.h"

namespace zinfer::gpu::cuda::test {

struct SeqSpec {
  int start_pos;
  int q_len;
};

struct Problem {
  int Hq = 0, Hkv = 0, D = 0, bs = 16;
  int window = 0;  // sliding window; 0 = none
  std::vector<SeqSpec> seqs;
  int num_blocks = 0;
  std::vector<float> q, k, v;  // q [T, Hq, D]; k, v [num_blocks, bs, Hkv, D] (bf16-rounded)
  std::vector<int32_t> positions, token_seq, seq_offset, block_tables, tiles;
  int T = 0;
};

inline Problem make_problem(int Hq, int Hkv, int D, const std::vector<SeqSpec>& seqs, uint32_t seed, int window = 0,
                     int block_size = 16) {
  Problem p;
  p.window = window;
  p.bs = block_size;
  p.Hq = Hq;
  p.Hkv = Hkv;
  p.D = D;
  p.seqs = seqs;
  std::mt19937 rng(seed);
  int blocks_needed = 0;
  for (const SeqSpec& s : seqs) blocks_needed += (s.start_pos + s.q_len + p.bs - 1) / p.bs;
  p.num_blocks = blocks_needed + 3;
  std::vector<int32_t> perm(p.num_blocks);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  int next = 0;
  for (size_t si = 0; si < seqs.size(); ++si) {
    const SeqSpec& s = seqs[si];
    p.seq_offset.push_back(static_cast<int32_t>(p.block_tables.size()));
    for (int b = 0; b < (s.start_pos + s.q_len + p.bs - 1) / p.bs; ++b) p.block_tables.push_back(perm[next++]);
    for (int q0 = 0; q0 < s.q_len; q0 += kPrefillTileQueries) {
      p.tiles.push_back(p.T + q0);
      p.tiles.push_back(std::min(kPrefillTileQueries, s.q_len - q0));
      p.tiles.push_back(static_cast<int32_t>(si));
    }
    for (int i = 0; i < s.q_len; ++i) {
      p.positions.push_back(s.start_pos + i);
      p.token_seq.push_back(static_cast<int32_t>(si));
    }
    p.T += s.q_len;
  }
  auto rounded = [&](size_t n) {
    std::vector<float> x = random_floats(n, rng);
    for (float& f : x) f = round_bf16(f);
    return x;
  };
  p.q = rounded(static_cast<size_t>(p.T) * Hq * D);
  p.k = rounded(static_cast<size_t>(p.num_blocks) * p.bs * Hkv * D);
  p.v = rounded(static_cast<size_t>(p.num_blocks) * p.bs * Hkv * D);
  return p;
}

// The cache row of key `key` of sequence `seq`, through its block table.
inline int cache_slot(const Problem& p, int seq, int key) {
  return p.block_tables[p.seq_offset[seq] + key / p.bs] * p.bs + key % p.bs;
}

inline std::vector<double> reference(const Problem& p) {
  std::vector<double> out(static_cast<size_t>(p.T) * p.Hq * p.D);
  const double scale = 1.0 / std::sqrt(static_cast<double>(p.D));
  for (int t = 0; t < p.T; ++t) {
    const int seq = p.token_seq[t], ctx = p.positions[t] + 1;
    // The CPU backend's (and transformers') window: position pos sees keys pos - window < j <= pos.
    const int first = p.window > 0 ? std::max(0, ctx - p.window) : 0;
    for (int h = 0; h < p.Hq; ++h) {
      const int kvh = h / (p.Hq / p.Hkv);
      std::vector<double> s(ctx, 0.0);
      double mx = -1e300;
      for (int j = first; j < ctx; ++j) {
        const int slot = cache_slot(p, seq, j);
        double dot = 0;
        for (int d = 0; d < p.D; ++d) dot += p.q[(t * p.Hq + h) * p.D + d] * static_cast<double>(p.k[(slot * p.Hkv + kvh) * p.D + d]);
        s[j] = dot * scale;
        mx = std::max(mx, s[j]);
      }
      double z = 0;
      for (int j = first; j < ctx; ++j) z += (s[j] = std::exp(s[j] - mx));
      for (int d = 0; d < p.D; ++d) {
        double acc = 0;
        for (int j = first; j < ctx; ++j) {
          const int slot = cache_slot(p, seq, j);
          acc += s[j] * p.v[(slot * p.Hkv + kvh) * p.D + d];
        }
        out[(t * p.Hq + h) * p.D + d] = acc / z;
      }
    }
  }
  return out;
}

struct DeviceProblem {
  explicit DeviceProblem(const Problem& p)
      : q(to_bf16(p.q)), k(to_bf16(p.k)), v(to_bf16(p.v)), out(p.q.size()), positions(p.positions),
        token_seq(p.token_seq), seq_offset(p.seq_offset), block_tables(p.block_tables), tiles(p.tiles) {
    kv.q = q.get();
    kv.k_cache = k.get();
    kv.v_cache = v.get();
    kv.out = out.get();
    kv.positions = positions.get();
    kv.token_seq = token_seq.get();
    kv.seq_block_offset = seq_offset.get();
    kv.block_tables = block_tables.get();
    kv.num_heads = p.Hq;
    kv.num_kv_heads = p.Hkv;
    kv.head_dim = p.D;
    kv.block_size = p.bs;
    kv.scale = 1.0f / std::sqrt(static_cast<float>(p.D));
    kv.sliding_window = p.window;
  }
  DeviceArray<__nv_bfloat16> q, k, v, out;
  DeviceArray<int32_t> positions, token_seq, seq_offset, block_tables, tiles;
  PagedKv kv;
};

// A split-K launch's workspace for problem p: the partials and the zeroed split counters.
struct SplitWorkspace {
  SplitWorkspace(const Problem& p, int splits)
      : splits(splits),
        acc(static_cast<size_t>(p.T) * p.Hq * splits * p.D),
        ml(static_cast<size_t>(p.T) * p.Hq * splits * 2),
        counters(std::vector<uint32_t>(static_cast<size_t>(p.T) * p.Hq, 0)) {}
  DecodeWork work(const int32_t* tokens, int num_tokens) {
    return DecodeWork{tokens, num_tokens, splits, acc.get(), ml.get(), counters.get()};
  }
  int splits;
  DeviceArray<float> acc, ml;
  DeviceArray<uint32_t> counters;
};

}  // namespace zinfer::gpu::cuda::test
