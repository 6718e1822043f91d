// The residual exchange (gpu/cuda/residual_exchange.h) between the GPUs of this machine: the
// row-parallel GEMV with GemvOutput::kExchange gives every rank residual + the sum of the ranks'
// products, against float64, the same bits on every rank, over eager calls and CUDA-graph
// replays (the exchange numbers live on the device) and across a reset, at 1, 2 and 3 rows and an
// output count that is no multiple of the blocks' row groups; and a GEMV whose peer never runs is
// released by the abort flag. Skips without two CUDA devices.
#include <gtest/gtest.h>

#include <barrier>
#include <chrono>
#include <cmath>
#include <random>
#include <thread>
#include <vector>

#include "gpu/cuda/gemv.h"
#include "gpu/cuda/residual_exchange.h"
#include "tests/cuda/cuda_test_util.h"

#if __has_include(<nccl.h>)
#include <nccl.h>
#define ZINFER_TEST_NCCL 1
#endif

namespace zinfer::gpu::cuda::test {
namespace {

#ifdef ZINFER_TEST_NCCL

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
  return n;
}

struct Group {
  std::vector<ncclComm_t> comms;
  explicit Group(int size) : comms(size) {
    std::vector<int> devices(size);
    for (int r = 0; r < size; ++r) devices[r] = r;
    if (ncclCommInitAll(comms.data(), size, devices.data()) != ncclSuccess) throw std::runtime_error("ncclCommInitAll");
  }
  ~Group() {
    for (ncclComm_t c : comms) ncclCommDestroy(c);
  }
};

// One rank's share of a row-parallel layer y = x · W^T: W [n, K] split along K, its columns
// [r·k, (r+1)·k), and x likewise.
struct RankData {
  std::vector<__nv_bfloat16> w, x;  // [n, k], [m, k]
};

std::vector<__nv_bfloat16> random_bf16(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<__nv_bfloat16> v(n);
  for (auto& e : v) e = __float2bfloat16(d(rng));
  return v;
}

template <typename Body>
void on_every_rank(int size, Body body) {
  std::vector<std::thread> threads;
  std::vector<std::string> errors(size);
  for (int r = 0; r < size; ++r) {
    threads.emplace_back([&, r] {
      try {
        check_cuda(cudaSetDevice(r), "cudaSetDevice");
        body(r);
      } catch (const std::exception& e) {
        errors[r] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < size; ++r) EXPECT_EQ(errors[r], "") << "rank " << r;
}

TEST(ResidualExchange, PartialsSumToTheWholeProductOnEveryRankAlike) {
  ZINFER_REQUIRE_CUDA();
  const int size = std::min(device_count(), 4);
  if (size < 2) GTEST_SKIP() << "needs 2 CUDA devices";
  const int n = 203, k = 136;  // per rank: k of the layer's size * k inputs
  Group group(size);
  ExchangeAbortFlag aborted;
  for (int m : {1, 2, 3}) {
    std::mt19937 rng(7 + m);
    std::vector<RankData> data(size);
    for (auto& d : data) {
      d.w = random_bf16(static_cast<size_t>(n) * k, rng);
      d.x = random_bf16(static_cast<size_t>(m) * k, rng);
    }
    std::vector<float> start(static_cast<size_t>(m) * n);
    std::uniform_real_distribution<float> d(-4.f, 4.f);
    for (auto& v : start) v = d(rng);
    // 27 exchanges: three eager (a reset after two), then a graph of eight replayed three times;
    // each adds the whole product to the residual.
    const int calls = 27;
    std::vector<double> expect(start.begin(), start.end()), magnitude(start.size(), 0.0);
    for (int c = 0; c < calls; ++c)
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
          double sum = 0, mag = 0;
          for (int r = 0; r < size; ++r)
            for (int kk = 0; kk < k; ++kk) {
              const double p = static_cast<double>(__bfloat162float(data[r].x[i * k + kk])) *
                               __bfloat162float(data[r].w[static_cast<size_t>(j) * k + kk]);
              sum += p;
              mag += std::fabs(p);
            }
          expect[i * n + j] += sum;
          magnitude[i * n + j] += mag + std::fabs(expect[i * n + j]);
        }
    std::vector<std::vector<float>> got(size);
    std::barrier ranks_idle(size);
    on_every_rank(size, [&](int r) {
      ResidualExchange exchange(group.comms[r], r, size, static_cast<size_t>(8) * n, aborted.device());
      DeviceArray<__nv_bfloat16> w(data[r].w), x(data[r].x);
      DeviceArray<float> residual(start);
      cudaStream_t stream;
      check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
      auto once = [&] {
        check_cuda(launch_gemv(exchange_gemv_args(x.get(), w.get(), exchange.view(), residual.get(), m, n, k), stream),
                   "gemv with the exchange");
      };
      once();
      once();
      // A reset between steps (every rank idle in between) clears the numbers; exchanges go on.
      check_cuda(cudaStreamSynchronize(stream), "sync");
      ranks_idle.arrive_and_wait();
      exchange.reset();
      ranks_idle.arrive_and_wait();
      once();
      cudaGraph_t graph;
      cudaGraphExec_t exec;
      check_cuda(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "capture");
      for (int i = 0; i < 8; ++i) once();  // back to back: a block may start after another ended
      check_cuda(cudaStreamEndCapture(stream, &graph), "capture");
      check_cuda(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
      for (int i = 0; i < 3; ++i) check_cuda(cudaGraphLaunch(exec, stream), "graph launch");
      check_cuda(cudaStreamSynchronize(stream), "sync");
      got[r] = residual.download();
      cudaGraphExecDestroy(exec);
      cudaGraphDestroy(graph);
      cudaStreamDestroy(stream);
    });
    for (int r = 1; r < size; ++r) EXPECT_EQ(got[r], got[0]) << "rank " << r << " differs from rank 0, m " << m;
    ASSERT_EQ(got[0].size(), expect.size());
    for (size_t i = 0; i < expect.size(); ++i)
      ASSERT_NEAR(got[0][i], expect[i], 1e-5 * magnitude[i]) << "element " << i << ", m " << m;
  }
}

TEST(ResidualExchange, AbortReleasesARankWhosePeerNeverArrives) {
  ZINFER_REQUIRE_CUDA();
  if (device_count() < 2) GTEST_SKIP() << "needs 2 CUDA devices";
  Group group(2);
  ExchangeAbortFlag aborted;
  on_every_rank(2, [&](int r) {
    const int n = 64, k = 16;
    ResidualExchange exchange(group.comms[r], r, 2, n, aborted.device());
    if (r != 0) return;  // rank 1 fails before it pushes
    DeviceArray<float> residual(std::vector<float>(n, 1.f));
    DeviceArray<__nv_bfloat16> w(std::vector<__nv_bfloat16>(n * k, __float2bfloat16(0.5f)));
    DeviceArray<__nv_bfloat16> x(std::vector<__nv_bfloat16>(k, __float2bfloat16(1.f)));
    cudaStream_t stream;
    check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
    check_cuda(launch_gemv(exchange_gemv_args(x.get(), w.get(), exchange.view(), residual.get(), 1, n, k), stream),
               "gemv with the exchange");
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_EQ(cudaStreamQuery(stream), cudaErrorNotReady) << "the GEMV did not wait for its peer";
    aborted.raise();
    check_cuda(cudaStreamSynchronize(stream), "the GEMV after the abort");
    cudaStreamDestroy(stream);
  });
}

#endif

}  // namespace
}  // namespace zinfer::gpu::cuda::test
