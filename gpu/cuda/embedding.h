// Token embedding lookup into the float32 residual stream.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace zinfer::gpu::cuda {

// out[t, :] = table[id(t), :] as float32, where id(t) = last_sampled[from_slot[t]] when
// from_slot[t] >= 0 (a decode input that never left the device) and token_ids[t] otherwise.
// table: [table_rows, hidden] bf16, the vocabulary's rows [row_begin, row_begin + table_rows)
// (all of it, or a tensor-parallel rank's slice: ids outside the slice give zero rows, which the
// ranks' sum fills); out: [num_tokens, hidden] float. Ids outside [0, vocab) are clamped to 0 and
// counted into *bad_ids (the host reports them after the step).
cudaError_t launch_embedding(const __nv_bfloat16* table, int32_t row_begin, int32_t table_rows,
                             const int32_t* token_ids, const int32_t* from_slot, const int32_t* last_sampled,
                             int32_t num_tokens, int32_t hidden, int32_t vocab, float* out, int32_t* bad_ids,
                             cudaStream_t stream);

}  // namespace zinfer::gpu::cuda
