// Pieces of split-K decode attention shared between its .cu files (not part of attention.h).
#pragma once

#include <cuda_runtime.h>

#include "gpu/cuda/attention.h"

namespace zinfer::gpu::cuda {

// Tensor-core decode for head_dim D in {64, 128}, any GQA group (instantiated in
// attention_decode_mma_d64.cu / _d128.cu). Launches the merge itself when work.num_splits > 1.
template <int D>
cudaError_t launch_decode_mma(const PagedKv& kv, const DecodeWork& work, cudaStream_t stream);

// Merges work.num_splits partial results per (token, head) into kv.out with their log-sum-exp
// weights (attention_decode.cu). Partials: index ((token list index * num_heads + head) *
// num_splits + split); an empty split has m = -inf.
cudaError_t launch_decode_merge(const PagedKv& kv, const DecodeWork& work, cudaStream_t stream);

}  // namespace zinfer::gpu::cuda
