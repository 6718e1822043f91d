// zinfer-cuda-bench exchange: what a tensor-parallel decode step pays per all-reduce of its
// residual, on devices 0..tp-1 (one thread each, as the backend's ranks). Per layer, one token:
// the qkv GEMV with its norm prologue (it reads the residual), then a row-parallel GEMV
// (Llama-3-8B's o or down at TP = tp) and its all-reduce; 32 layers' worth of weights in one CUDA
// graph (the qkv matrices repeat every 4 layers), microseconds per layer against the pair's weight
// bytes at the copy rate:
//   residual   no all-reduce: what the two GEMVs cost on one rank;
//   nccl       the row-parallel GEMV, then NCCL's all-reduce of the residual in its symmetric window;
//   exchange   the row-parallel GEMV all-reducing through the residual exchange (residual_exchange.h);
//   exchange_local  the same with every rank on its own (no peer traffic): what the exchange
//              costs without NVLink.
#include <barrier>
#include <thread>

#include "gpu/cuda/gemv.h"
#include "gpu/cuda/nccl_group.h"
#include "gpu/cuda/residual_exchange.h"
#include "gpu/cuda/random_fill.h"
#include "tools/gpu/bench_common.h"

#if __has_include(<nccl.h>)
#include <nccl.h>
#endif

namespace zinfer::gpu::cuda::bench {

#if __has_include(<nccl.h>)

void bench_exchange(const Ceilings& ceil, int tp) {
  int devices = 0;
  check_cuda(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  if (devices < tp || tp < 2) {
    std::printf("exchange: needs %d devices (tensor parallel >= 2), found %d\n", tp, devices);
    return;
  }
  std::vector<ncclComm_t> comms(tp);
  std::vector<int> list(tp);
  for (int r = 0; r < tp; ++r) list[r] = r;
  if (ncclCommInitAll(comms.data(), tp, list.data()) != ncclSuccess) throw std::runtime_error("ncclCommInitAll");
  ExchangeAbortFlag aborted;
  std::barrier sync(tp);
  const int layers = 32, H = 4096;
  struct Shape {
    const char* name;
    int k;
  };
  const Shape shapes[] = {{"o", 4096 / tp}, {"down", 14336 / tp}};
  std::vector<std::thread> threads;
  for (int r = 0; r < tp; ++r) {
    threads.emplace_back([&, r] {
      check_cuda(cudaSetDevice(r), "cudaSetDevice");
      cudaStream_t stream;
      check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
      DeviceBuffer residual = nccl_symmetric_buffer(comms[r], H * 4, "bench residual");
      check_cuda(cudaMemset(residual.get(), 0, H * 4), "memset");
      ResidualExchange exchange(comms[r], r, tp, 8 * H, aborted.device());
      const int qkv_rows = 6144 / tp;
      const size_t qkv_elems = static_cast<size_t>(qkv_rows) * H;
      DeviceBuffer qkv_w(4 * qkv_elems * 2, "bench qkv weights"), qkv_out(qkv_rows * 2, "bench qkv output");
      DeviceBuffer norm(H * 4, "bench norm weight");
      check_cuda(launch_fill_random_bf16(qkv_w.as<__nv_bfloat16>(), 4 * qkv_elems, 3 + r, 0.f, 0.02f, stream), "fill");
      check_cuda(launch_fill_random_f32(norm.as<float>(), H, 4, 1.f, 0.1f, stream), "fill");
      ExchangeView local = exchange.view();  // every rank alone: its own staging area only
      local.stage[0] = exchange.view().stage[r];
      local.rank = 0;
      local.size = 1;
      for (const Shape& s : shapes) {
        DeviceBuffer w(static_cast<size_t>(layers) * H * s.k * 2, "bench weights");
        DeviceBuffer x(static_cast<size_t>(s.k) * 2, "bench input");
        check_cuda(launch_fill_random_bf16(w.as<__nv_bfloat16>(), static_cast<int64_t>(layers) * H * s.k, 1 + r, 0.f,
                                           0.02f, stream),
                   "fill");
        check_cuda(launch_fill_random_bf16(x.as<__nv_bfloat16>(), s.k, 2 + r, 0.f, 1.f, stream), "fill");
        auto weights = [&](int i) { return w.as<__nv_bfloat16>() + static_cast<size_t>(i) * H * s.k; };
        auto* res = residual.as<float>();
        // A layer's pair: the qkv GEMV with its norm prologue (it reads the residual), then o or down.
        auto qkv = [&](int i) {
          check_cuda(launch_gemv(normed_gemv_args(res, norm.as<float>(), 1e-5f,
                                                  qkv_w.as<__nv_bfloat16>() + (i % 4) * qkv_elems,
                                                  qkv_out.as<__nv_bfloat16>(), GemvOutput::kBf16, 1, qkv_rows, H),
                                 stream),
                     "qkv gemv");
        };
        const std::pair<const char*, std::function<void(int)>> variants[] = {
            {"residual",
             [&](int i) {
               qkv(i);
               check_cuda(launch_gemv(residual_gemv_args(x.as<__nv_bfloat16>(), weights(i), res, 1, H, s.k), stream),
                          "gemv");
             }},
            {"nccl",
             [&](int i) {
               qkv(i);
               check_cuda(launch_gemv(residual_gemv_args(x.as<__nv_bfloat16>(), weights(i), res, 1, H, s.k), stream),
                          "gemv");
               nccl_all_reduce_sum(comms[r], res, H, stream);
             }},
            {"exchange",
             [&](int i) {
               qkv(i);
               check_cuda(launch_gemv(exchange_gemv_args(x.as<__nv_bfloat16>(), weights(i), exchange.view(), res, 1, H,
                                                         s.k),
                                      stream),
                          "gemv");
             }},
            {"exchange_local",
             [&](int i) {
               qkv(i);
               check_cuda(
                   launch_gemv(exchange_gemv_args(x.as<__nv_bfloat16>(), weights(i), local, res, 1, H, s.k), stream),
                   "gemv");
             }},
        };
        for (const auto& [name, enqueue] : variants) {
          const double us = graph_us(enqueue, layers, stream, [&] { sync.arrive_and_wait(); });
          // The pair's weight bytes at the copy rate.
          const double floor_us = (static_cast<double>(H) * s.k + qkv_elems) * 2 / (ceil.copy_gbps * 1e3);
          if (r == 0) report(std::string("exchange_tp") + std::to_string(tp) + "_" + s.name + "_" + name + "_us", us,
                             "us", floor_us, us / floor_us);
        }
      }
      check_cuda(cudaStreamSynchronize(stream), "sync");
      cudaStreamDestroy(stream);
      sync.arrive_and_wait();
    });
  }
  for (auto& t : threads) t.join();
  for (ncclComm_t c : comms) ncclCommDestroy(c);
}

#else

void bench_exchange(const Ceilings&, int) { std::printf("exchange: this build has no NCCL\n"); }

#endif

}  // namespace zinfer::gpu::cuda::bench
