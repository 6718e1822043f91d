// Embedding, RMSNorm+residual, SiLU·mul and the fused q/k/v rope + cache write, each against a
// float64 computation on the host at odd sizes.
#include <gtest/gtest.h>

#include "gpu/cuda/embedding.h"
#include "gpu/cuda/qkv_rope.h"
#include "gpu/cuda/rmsnorm.h"
#include "gpu/cuda/silu_mul.h"
#include "tests/cuda/cuda_test_util.h"

namespace zinfer::gpu::cuda::test {
namespace {

TEST(CudaEmbedding, GathersRowsAndDeviceSideTokens) {
  ZINFER_REQUIRE_CUDA();
  std::mt19937 rng(1);
  const int V = 54, H = 97, T = 17;
  const std::vector<float> table = random_floats(static_cast<size_t>(V) * H, rng);
  std::vector<int32_t> ids(T), from_slot(T, -1);
  for (int t = 0; t < T; ++t) ids[t] = (t * 7 + 3) % V;
  from_slot[4] = 2;  // token 4 comes from the device-side slot 2
  const std::vector<int32_t> last = {0, 0, 41};
  DeviceArray<__nv_bfloat16> d_table(to_bf16(table));
  DeviceArray<int32_t> d_ids(ids), d_from(from_slot), d_last(last), d_bad(std::vector<int32_t>{0});
  DeviceArray<float> d_out(static_cast<size_t>(T) * H);
  d_out.poison();
  check_cuda(launch_embedding(d_table.get(), 0, V, d_ids.get(), d_from.get(), d_last.get(), T, H, V, d_out.get(),
                              d_bad.get(), nullptr),
             "embedding");
  const std::vector<float> out = d_out.download();
  for (int t = 0; t < T; ++t) {
    const int id = t == 4 ? 41 : ids[t];
    for (int i = 0; i < H; ++i) ASSERT_EQ(out[t * H + i], round_bf16(table[id * H + i])) << t << "," << i;
  }
  EXPECT_EQ(d_bad.download()[0], 0);

  // A tensor-parallel rank's slice: rows [20, 40) of the vocabulary; other ids give zero rows.
  DeviceArray<__nv_bfloat16> d_slice(to_bf16(std::vector<float>(table.begin() + 20 * H, table.begin() + 40 * H)));
  d_out.poison();
  check_cuda(launch_embedding(d_slice.get(), 20, 20, d_ids.get(), d_from.get(), d_last.get(), T, H, V, d_out.get(),
                              d_bad.get(), nullptr),
             "embedding of a vocabulary slice");
  const std::vector<float> sliced = d_out.download();
  for (int t = 0; t < T; ++t) {
    const int id = t == 4 ? 41 : ids[t];
    for (int i = 0; i < H; ++i) {
      const float want = id >= 20 && id < 40 ? round_bf16(table[id * H + i]) : 0.0f;
      ASSERT_EQ(sliced[t * H + i], want) << t << "," << i;
    }
  }
}

// H = 97 runs the one-element kernel, 4104 (a multiple of 8, not of the block's 256 x 8) the
// 16-byte one.
class CudaRmsNorm : public ::testing::TestWithParam<int> {};
INSTANTIATE_TEST_SUITE_P(Widths, CudaRmsNorm, ::testing::Values(97, 4104));

TEST_P(CudaRmsNorm, NormalisesRowsAndGathers) {
  ZINFER_REQUIRE_CUDA();
  std::mt19937 rng(2);
  const int T = 17, H = GetParam();
  const float eps = 1e-5f;
  const std::vector<float> residual = random_floats(static_cast<size_t>(T) * H, rng, 2.f);
  const std::vector<float> weight = random_floats(H, rng);
  DeviceArray<float> d_res(residual), d_w(weight);
  DeviceArray<__nv_bfloat16> d_out(static_cast<size_t>(T) * H);
  d_out.poison();
  check_cuda(launch_rmsnorm(d_res.get(), d_w.get(), d_out.get(), T, H, eps, nullptr), "rmsnorm");
  EXPECT_EQ(d_res.download(), residual);  // read only
  const std::vector<float> out = to_float(d_out.download());
  std::vector<double> ref(out.size());
  for (int t = 0; t < T; ++t) {
    double ss = 0;
    for (int i = 0; i < H; ++i) ss += static_cast<double>(residual[t * H + i]) * residual[t * H + i];
    const double inv = 1.0 / std::sqrt(ss / H + eps);
    for (int i = 0; i < H; ++i) ref[t * H + i] = residual[t * H + i] * inv * weight[i];
  }
  EXPECT_LT(relative_error(out, ref), 5e-3);  // bf16 output

  // The gathered form: only rows 16 and 3, written to output rows 0 and 1.
  DeviceArray<int32_t> d_rows(std::vector<int32_t>{16, 3});
  DeviceArray<__nv_bfloat16> d_out2(2 * static_cast<size_t>(H));
  d_out2.poison();
  check_cuda(launch_rmsnorm(d_res.get(), d_w.get(), d_out2.get(), 2, H, eps, nullptr, d_rows.get()), "rmsnorm rows");
  const std::vector<float> out2 = to_float(d_out2.download());
  for (int i = 0; i < H; ++i) {
    EXPECT_EQ(out2[i], out[16 * H + i]);
    EXPECT_EQ(out2[H + i], out[3 * H + i]);
  }
}

// I = 97: the one-element kernel; 4104: the 16-byte one.
class CudaSiluMul : public ::testing::TestWithParam<int> {};
INSTANTIATE_TEST_SUITE_P(Widths, CudaSiluMul, ::testing::Values(97, 4104));

TEST_P(CudaSiluMul, MatchesFloat64) {
  ZINFER_REQUIRE_CUDA();
  std::mt19937 rng(3);
  const int T = 17, I = GetParam();
  const std::vector<float> gu = random_floats(static_cast<size_t>(T) * 2 * I, rng, 3.f);
  DeviceArray<__nv_bfloat16> d_gu(to_bf16(gu)), d_out(static_cast<size_t>(T) * I);
  d_out.poison();
  check_cuda(launch_silu_mul(d_gu.get(), d_out.get(), T, I, nullptr), "silu_mul");
  const std::vector<float> out = to_float(d_out.download());
  std::vector<double> ref(out.size());
  for (int t = 0; t < T; ++t) {
    for (int i = 0; i < I; ++i) {
      const double g = round_bf16(gu[t * 2 * I + i]), u = round_bf16(gu[t * 2 * I + I + i]);
      ref[t * I + i] = g / (1 + std::exp(-g)) * u;
    }
  }
  EXPECT_LT(relative_error(out, ref), 5e-3);
}

// Host float64 version of qkv_rope for one head vector.
std::vector<double> ref_head(const std::vector<float>& qkv, int row_offset, const std::vector<float>& bias, int bias_offset,
                             const std::vector<float>* norm, const std::vector<float>& inv_freq, int pos, int D,
                             bool rotate, double eps) {
  std::vector<double> x(D);
  double ss = 0;
  for (int i = 0; i < D; ++i) {
    x[i] = static_cast<double>(round_bf16(qkv[row_offset + i])) + bias[bias_offset + i];
    ss += x[i] * x[i];
  }
  if (norm != nullptr) {
    const double inv = 1.0 / std::sqrt(ss / D + eps);
    for (int i = 0; i < D; ++i) x[i] = x[i] * inv * (*norm)[i];
  }
  if (!rotate) return x;
  std::vector<double> out(D);
  for (int i = 0; i < D / 2; ++i) {
    const double a = static_cast<double>(pos) * inv_freq[i];
    out[i] = x[i] * std::cos(a) - x[i + D / 2] * std::sin(a);
    out[i + D / 2] = x[i + D / 2] * std::cos(a) + x[i] * std::sin(a);
  }
  return out;
}

void run_qkv_rope_case(int D, bool with_norm, int T = 17, int Hq = 6, int Hkv = 2) {
  std::mt19937 rng(4 + D);
  const int bs = 16, blocks = (T + bs - 1) / bs + 4;
  const int total = (Hq + 2 * Hkv) * D;
  const double eps = 1e-6;
  const std::vector<float> qkv = random_floats(static_cast<size_t>(T) * total, rng);
  const std::vector<float> bias = random_floats(total, rng, 0.1f);
  const std::vector<float> qn = random_floats(D, rng), kn = random_floats(D, rng);
  std::vector<float> inv_freq(D / 2);
  for (int i = 0; i < D / 2; ++i) inv_freq[i] = static_cast<float>(std::pow(10000.0, -2.0 * i / D));
  std::vector<int32_t> pos(T), slot(T);
  for (int t = 0; t < T; ++t) {
    pos[t] = 3 + 29 * t;           // far-out positions exercise the angle arithmetic
    slot[t] = (t * 37 + 5) % (blocks * bs);  // scattered, distinct slots
  }
  DeviceArray<__nv_bfloat16> d_qkv(to_bf16(qkv)), d_q(static_cast<size_t>(T) * Hq * D);
  DeviceArray<__nv_bfloat16> d_k(static_cast<size_t>(blocks) * bs * Hkv * D), d_v(static_cast<size_t>(blocks) * bs * Hkv * D);
  DeviceArray<float> d_bias(bias), d_qn(qn), d_kn(kn), d_freq(inv_freq);
  DeviceArray<int32_t> d_pos(pos), d_slot(slot);
  d_q.poison();
  d_k.poison();
  d_v.poison();
  QkvRopeParams p;
  p.qkv = d_qkv.get();
  p.bias = d_bias.get();
  p.q_norm = with_norm ? d_qn.get() : nullptr;
  p.k_norm = with_norm ? d_kn.get() : nullptr;
  p.inv_freq = d_freq.get();
  p.positions = d_pos.get();
  p.slot_mapping = d_slot.get();
  p.q_out = d_q.get();
  p.k_cache = d_k.get();
  p.v_cache = d_v.get();
  p.num_tokens = T;
  p.num_heads = Hq;
  p.num_kv_heads = Hkv;
  p.head_dim = D;
  p.norm_eps = static_cast<float>(eps);
  check_cuda(launch_qkv_rope(p, nullptr), "qkv_rope");
  const std::vector<float> q = to_float(d_q.download()), k = to_float(d_k.download()), v = to_float(d_v.download());
  std::vector<float> got;
  std::vector<double> ref;
  for (int t = 0; t < T; ++t) {
    for (int h = 0; h < Hq + 2 * Hkv; ++h) {
      const bool is_q = h < Hq, is_v = h >= Hq + Hkv;
      const std::vector<float>* norm = with_norm && !is_v ? (is_q ? &qn : &kn) : nullptr;
      const std::vector<double> r = ref_head(qkv, t * total + h * D, bias, h * D, norm, inv_freq, pos[t], D, !is_v, eps);
      for (int i = 0; i < D; ++i) {
        ref.push_back(r[i]);
        if (is_q) got.push_back(q[(t * Hq + h) * D + i]);
        else if (is_v) got.push_back(v[(slot[t] * Hkv + (h - Hq - Hkv)) * D + i]);
        else got.push_back(k[(slot[t] * Hkv + (h - Hq)) * D + i]);
      }
    }
  }
  EXPECT_LT(relative_error(got, ref), 5e-3) << "head_dim " << D << " norm " << with_norm << " tokens " << T;
}

// Steps of 1-63 tokens (a warp per head) and of 64 or more (blocks walking the tokens, a warp per
// run of heads), head dims 24 … 256 (a lane's pairs partly idle at 24-64, two per lane at 256), and
// more heads than that kernel's warps hold (a block per token).
TEST(CudaQkvRope, BiasNormRopeAndCacheWrite) {
  ZINFER_REQUIRE_CUDA();
  run_qkv_rope_case(64, true);
  run_qkv_rope_case(128, false);
  run_qkv_rope_case(32, true);
  for (const int D : {24, 64, 128, 256}) {
    run_qkv_rope_case(D, true, 70);
    run_qkv_rope_case(D, false, 65);
  }
  run_qkv_rope_case(128, true, 66, 48, 8);
}

}  // namespace
}  // namespace zinfer::gpu::cuda::test
