// A weight store's linear layer (the checkpoint tensors stacked by rows, each sliced to a
// tensor-parallel rank's part: gpu/models/weight_store.h) as one FP8 layer, for the stores that
// run FP8 layers in FP8 (the CPU's Fp8Matrix, the CUDA backend's fp8 layers).
#pragma once

#include <optional>
#include <vector>

#include "gpu/models/weight_store.h"
#include "gpu/quant/checkpoint_reader.h"
#include "gpu/quant/fp8.h"

namespace zinfer::gpu::quant {

// The parts as one FP8 layer when the checkpoint stores them in fp8 (or online FP8 quantizes
// them); nullopt when all are dense (read them with reader.get()). A fused layer with fp8 and
// dense parts is a SafetensorsError naming a dense one.
std::optional<Fp8Weight> read_fp8_linear(CheckpointReader& reader, const std::vector<models::TensorPart>& parts);

}  // namespace zinfer::gpu::quant
