#include "gpu/tensor_slice.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace zinfer::gpu {

TensorSlice::TensorSlice(const TensorView& whole, const models::TensorPart& part) : view_(whole) {
  if (part.rows.all() && part.cols.all()) return;
  auto fail = [&](const std::string& what) {
    throw SafetensorsError("tensor " + whole.name + " in " + whole.file + ": " + what);
  };
  if (whole.shape.empty() || whole.shape.size() > 2) fail("only 1-D and 2-D tensors can be sliced");
  const int64_t rows = whole.shape[0];
  const int64_t cols = whole.shape.size() == 2 ? whole.shape[1] : 1;
  const int64_t r0 = part.rows.begin, nr = part.rows.count < 0 ? rows - r0 : part.rows.count;
  const int64_t c0 = part.cols.begin, nc = part.cols.count < 0 ? cols - c0 : part.cols.count;
  if (r0 < 0 || nr < 0 || r0 > rows) fail("rows [" + std::to_string(r0) + ", +" + std::to_string(nr) + ") outside its " +
                                          std::to_string(rows) + " rows");
  if (c0 < 0 || nc < 0 || c0 + nc > cols || (whole.shape.size() == 1 && !part.cols.all()))
    fail("columns [" + std::to_string(c0) + ", +" + std::to_string(nc) + ") outside its " + std::to_string(cols) +
         " columns");
  const size_t elem = dtype_size(whole.dtype);
  const size_t row_bytes = static_cast<size_t>(cols) * elem;
  view_.shape[0] = nr;
  if (whole.shape.size() == 2) view_.shape[1] = nc;
  view_.nbytes = static_cast<size_t>(nr) * static_cast<size_t>(nc) * elem;
  const int64_t present = std::min(nr, rows - r0);  // rows inside the tensor; the rest are zeros
  if (nc == cols && present == nr) {
    view_.data = whole.data + static_cast<size_t>(r0) * row_bytes;
    return;
  }
  storage_.assign(view_.nbytes, std::byte{0});
  const size_t out_row = static_cast<size_t>(nc) * elem;
  for (int64_t r = 0; r < present; ++r)
    std::memcpy(storage_.data() + static_cast<size_t>(r) * out_row,
                whole.data + static_cast<size_t>(r0 + r) * row_bytes + static_cast<size_t>(c0) * elem, out_row);
  view_.data = storage_.data();
}

}  // namespace zinfer::gpu
