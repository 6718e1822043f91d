#include "gpu/cuda/embedding.h"

namespace zinfer::gpu::cuda {
namespace {

__global__ void embedding_kernel(const __nv_bfloat16* __restrict__ table, int32_t row_begin, int32_t table_rows,
                                 const int32_t* token_ids, const int32_t* from_slot, const int32_t* last_sampled,
                                 int32_t hidden, int32_t vocab, float* __restrict__ out, int32_t* bad_ids) {
  const int32_t t = blockIdx.x;
  int32_t id = token_ids[t];
  if (from_slot != nullptr && from_slot[t] >= 0) id = last_sampled[from_slot[t]];
  if (id < 0 || id >= vocab) {
    if (threadIdx.x == 0) atomicAdd(bad_ids, 1);
    id = 0;
  }
  float* dst = out + static_cast<int64_t>(t) * hidden;
  const int32_t local = id - row_begin;
  if (local < 0 || local >= table_rows) {
    for (int32_t i = threadIdx.x; i < hidden; i += blockDim.x) dst[i] = 0.0f;
    return;
  }
  const __nv_bfloat16* row = table + static_cast<int64_t>(local) * hidden;
  for (int32_t i = threadIdx.x; i < hidden; i += blockDim.x) dst[i] = __bfloat162float(row[i]);
}

}  // namespace

cudaError_t launch_embedding(const __nv_bfloat16* table, int32_t row_begin, int32_t table_rows,
                             const int32_t* token_ids, const int32_t* from_slot, const int32_t* last_sampled,
                             int32_t num_tokens, int32_t hidden, int32_t vocab, float* out, int32_t* bad_ids,
                             cudaStream_t stream) {
  if (num_tokens == 0) return cudaSuccess;
  embedding_kernel<<<num_tokens, 256, 0, stream>>>(table, row_begin, table_rows, token_ids, from_slot, last_sampled,
                                                   hidden, vocab, out, bad_ids);
  return cudaGetLastError();
}

}  // namespace zinfer::gpu::cuda
