// Programmatic dependent launch (Hopper): a kernel launched with the attribute
// cudaLaunchAttributeProgrammaticStreamSerialization may start while the kernel before it in the
// stream is still running, once every block of that kernel has called launch_dependents() (or
// ended). It must call wait_for_previous_kernel() before it reads anything the previous kernel
// writes: that waits for the whole previous grid and makes its writes visible. Without the
// attribute both are no-ops, so the same kernel serves both launches.
//
// Why: in a decode step of one or two tokens every kernel is short, and the gap between one
// kernel's end and the next one's first loads is a visible part of the step; a kernel that starts
// early can fetch what does not depend on its predecessor (weights, block tables) meanwhile.
#pragma once

#include <cuda_runtime.h>

namespace zinfer::gpu::cuda {

__device__ __forceinline__ void wait_for_previous_kernel() { asm volatile("griddepcontrol.wait;" ::: "memory"); }
__device__ __forceinline__ void allow_next_kernel() { asm volatile("griddepcontrol.launch_dependents;" :::); }

// Launch configuration with the attribute set (or not): config.attrs points into *this.
struct ProgrammaticLaunch {
  cudaLaunchConfig_t config{};
  cudaLaunchAttribute attribute[1];
  ProgrammaticLaunch(dim3 grid, dim3 block, size_t smem, cudaStream_t stream, bool programmatic) {
    config.gridDim = grid;
    config.blockDim = block;
    config.dynamicSmemBytes = smem;
    config.stream = stream;
    attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute[0].val.programmaticStreamSerializationAllowed = 1;
    config.attrs = attribute;
    config.numAttrs = programmatic ? 1 : 0;
  }
  ProgrammaticLaunch(const ProgrammaticLaunch&) = delete;
  ProgrammaticLaunch& operator=(const ProgrammaticLaunch&) = delete;
};

}  // namespace zinfer::gpu::cuda
