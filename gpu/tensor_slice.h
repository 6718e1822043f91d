// The part of a checkpoint tensor that a weight store keeps (models::TensorPart's rows and
// columns: a tensor-parallel rank's slice). A run of whole rows is a view into the file's
// mapping; a column range, or rows past the tensor's end (zeros: a padded vocabulary), are
// copied.
#pragma once

#include <cstddef>
#include <vector>

#include "gpu/models/weight_store.h"
#include "gpu/safetensors.h"

namespace zinfer::gpu {

class TensorSlice {
 public:
  // `whole` is the checkpoint tensor, already checked against part.shape. A range outside the
  // tensor (other than rows past its end) throws SafetensorsError naming the tensor and file.
  TensorSlice(const TensorView& whole, const models::TensorPart& part);
  TensorSlice(const TensorSlice&) = delete;
  TensorSlice& operator=(const TensorSlice&) = delete;

  const TensorView& view() const { return view_; }

 private:
  TensorView view_;
  std::vector<std::byte> storage_;
};

}  // namespace zinfer::gpu
